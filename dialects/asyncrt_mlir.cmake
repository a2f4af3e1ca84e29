# Helpers for the compiler-side (MLIR) targets. Included by dialects/,
# include/asyncrt/dialects/ and tools/asyncrt-opt only, so LLVM's CMake
# modules, include paths and flags never reach the runtime libraries.
if(NOT COMMAND mlir_tablegen)
  list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
  include(TableGen)
  include(AddLLVM)
  include(AddMLIR)
endif()

# LLVM_DEFINITIONS is one space-separated string in LLVMConfig.cmake.
separate_arguments(ASYNCRT_LLVM_DEFINITIONS UNIX_COMMAND "${LLVM_DEFINITIONS}")

# asyncrt_mlir_target(<target>)
#   Gives <target> the MLIR/LLVM headers, definitions and the code-generation
#   flags the installed libMLIR.so/libLLVM.so were built with (exceptions and
#   RTTI must match, or typeinfo/unwind tables disagree across the boundary),
#   and links it against the two shared libraries.
function(asyncrt_mlir_target target)
  target_include_directories(${target} SYSTEM PUBLIC
    ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  target_include_directories(${target} PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
  target_compile_definitions(${target} PUBLIC ${ASYNCRT_LLVM_DEFINITIONS})
  if(NOT LLVM_ENABLE_EH)
    target_compile_options(${target} PRIVATE -fno-exceptions)
  endif()
  if(NOT LLVM_ENABLE_RTTI)
    target_compile_options(${target} PRIVATE -fno-rtti)
  endif()
  target_link_libraries(${target} PUBLIC MLIR LLVM)
endfunction()

# asyncrt_dialect_tablegen(<td stem> <dialect name> [TYPES])
#   Runs mlir-tblgen on <stem>_ops.td in the current source directory and
#   writes <stem>_{dialect,ops[,types]}.{h,cc}.inc into the matching build
#   directory (build/include/asyncrt/dialects/<d>/). Defines the target
#   asyncrt_<stem>_inc_gen that the dialect library depends on.
function(asyncrt_dialect_tablegen stem dialect)
  cmake_parse_arguments(ARG "TYPES" "" "" ${ARGN})
  set(LLVM_TARGET_DEFINITIONS ${stem}_ops.td)
  mlir_tablegen(${stem}_dialect.h.inc -gen-dialect-decls -dialect=${dialect})
  mlir_tablegen(${stem}_dialect.cc.inc -gen-dialect-defs -dialect=${dialect})
  mlir_tablegen(${stem}_ops.h.inc -gen-op-decls)
  mlir_tablegen(${stem}_ops.cc.inc -gen-op-defs)
  if(ARG_TYPES)
    mlir_tablegen(${stem}_types.h.inc -gen-typedef-decls
                  -typedefs-dialect=${dialect})
    mlir_tablegen(${stem}_types.cc.inc -gen-typedef-defs
                  -typedefs-dialect=${dialect})
  endif()
  add_public_tablegen_target(asyncrt_${stem}_inc_gen)
endfunction()
