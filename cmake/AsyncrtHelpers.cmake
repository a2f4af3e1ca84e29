# asyncrt_library_settings(<target> <deps>)
#   What every AsyncRT library target shares: public headers from include/
#   (include/ of an installed tree), private ones from the source root, its
#   dependencies, and the async value accounting definition.
function(asyncrt_library_settings target deps)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${deps})
  if(ASYNCRT_ASYNC_VALUE_ACCOUNTING)
    target_compile_definitions(${target} PUBLIC ASYNCRT_ASYNC_VALUE_ACCOUNTING)
  endif()
endfunction()

# asyncrt_cc_library(NAME <name> SRCS ... [DEPS ...])
#   A runtime library target asyncrt_<name>, aliased asyncrt::<name>. Public
#   headers come from include/, private ones from the source tree root.
function(asyncrt_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(asyncrt_${ARG_NAME} ${ARG_SRCS})
  add_library(asyncrt::${ARG_NAME} ALIAS asyncrt_${ARG_NAME})
  asyncrt_library_settings(asyncrt_${ARG_NAME} "${ARG_DEPS}")
  set_target_properties(asyncrt_${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY ASYNCRT_INSTALLED_TARGETS
    asyncrt_${ARG_NAME})
endfunction()

# asyncrt_cc_test(NAME <name> SRCS ... [DEPS ...] [LABELS ...]
#                 [ENVIRONMENT VAR=value])
#   A GoogleTest binary registered with ctest, one ctest entry per test.
function(asyncrt_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS;ENVIRONMENT" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest
                        GTest::gtest_main GTest::gmock)
  set(properties TIMEOUT 300)
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  if(ARG_ENVIRONMENT)
    # One variable: gtest_discover_tests passes a list on as separate
    # property arguments.
    list(APPEND properties ENVIRONMENT "${ARG_ENVIRONMENT}")
  endif()
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60
    PROPERTIES ${properties})
endfunction()

# asyncrt_kernel_library(NAME <name> SRCS ... [DEPS ...] [TESTONLY])
#   A kernel, op or native-function library that registers itself: its
#   sources include a static_registration.cc whose static initializers add
#   the library to the registration lists a Runtime applies. The code is the
#   static library asyncrt_<name>; consumers link asyncrt::<name>, which
#   links it whole ($<LINK_LIBRARY:WHOLE_ARCHIVE>, CMake's alwayslink), so
#   the linker never drops the registration unit nobody calls. Exported like
#   the other libraries, the same holds for an installed AsyncRT. TESTONLY
#   libraries are not installed.
function(asyncrt_kernel_library)
  cmake_parse_arguments(ARG "TESTONLY" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(asyncrt_${ARG_NAME} STATIC ${ARG_SRCS})
  asyncrt_library_settings(asyncrt_${ARG_NAME} "${ARG_DEPS}")
  # Installed, the code is AsyncRT::<name>_code and AsyncRT::<name> links
  # it whole.
  set_target_properties(asyncrt_${ARG_NAME} PROPERTIES
    EXPORT_NAME ${ARG_NAME}_code)
  add_library(asyncrt_${ARG_NAME}_alwayslink INTERFACE)
  target_link_libraries(asyncrt_${ARG_NAME}_alwayslink INTERFACE
    "$<BUILD_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,asyncrt_${ARG_NAME}>>"
    "$<INSTALL_INTERFACE:$<LINK_LIBRARY:WHOLE_ARCHIVE,AsyncRT::${ARG_NAME}_code>>")
  set_target_properties(asyncrt_${ARG_NAME}_alwayslink PROPERTIES
    EXPORT_NAME ${ARG_NAME})
  add_library(asyncrt::${ARG_NAME} ALIAS asyncrt_${ARG_NAME}_alwayslink)
  if(NOT ARG_TESTONLY)
    set_property(GLOBAL APPEND PROPERTY ASYNCRT_INSTALLED_TARGETS
      asyncrt_${ARG_NAME} asyncrt_${ARG_NAME}_alwayslink)
  endif()
endfunction()
