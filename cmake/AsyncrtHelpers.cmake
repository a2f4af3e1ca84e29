# asyncrt_cc_library(NAME <name> SRCS ... [DEPS ...])
#   A runtime library target asyncrt_<name>, aliased asyncrt::<name>. Public
#   headers come from include/, private ones from the source tree root.
function(asyncrt_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(asyncrt_${ARG_NAME} ${ARG_SRCS})
  add_library(asyncrt::${ARG_NAME} ALIAS asyncrt_${ARG_NAME})
  target_include_directories(asyncrt_${ARG_NAME}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(asyncrt_${ARG_NAME} PUBLIC ${ARG_DEPS})
  if(ASYNCRT_ASYNC_VALUE_ACCOUNTING)
    target_compile_definitions(asyncrt_${ARG_NAME}
      PUBLIC ASYNCRT_ASYNC_VALUE_ACCOUNTING)
  endif()
endfunction()

# asyncrt_cc_test(NAME <name> SRCS ... [DEPS ...] [LABELS ...])
#   A GoogleTest binary registered with ctest, one ctest entry per test.
function(asyncrt_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest
                        GTest::gtest_main GTest::gmock)
  set(properties TIMEOUT 300)
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60
    PROPERTIES ${properties})
endfunction()
