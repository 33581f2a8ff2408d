# The fuzzing build (SPECC_BUILD_FUZZER=ON): every target of the project is
# compiled with libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link)
# and SPECC_FUZZER_SANITIZERS, with assertions on, so that the fuzzer sees and
# checks the project's own code; tools/specc-fuzz links libFuzzer's main. The
# LLVM/MLIR libraries stay as installed (no instrumentation, no assertions).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "SPECC_BUILD_FUZZER needs clang and libFuzzer "
    "(e.g. CC=clang-22 CXX=clang++-22, Debian's clang-22 and libfuzzer-22-dev); "
    "found ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}")
endif()

set(SPECC_FUZZER_COMPILE_FLAGS -fsanitize=fuzzer-no-link -fno-omit-frame-pointer -UNDEBUG)
set(SPECC_FUZZER_LINK_FLAGS)
if(SPECC_FUZZER_SANITIZERS)
  list(APPEND SPECC_FUZZER_COMPILE_FLAGS -fsanitize=${SPECC_FUZZER_SANITIZERS})
  list(APPEND SPECC_FUZZER_LINK_FLAGS -fsanitize=${SPECC_FUZZER_SANITIZERS})
endif()

include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }
]] SPECC_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT SPECC_HAVE_LIBFUZZER)
  message(FATAL_ERROR "SPECC_BUILD_FUZZER: ${CMAKE_CXX_COMPILER} cannot link "
    "-fsanitize=fuzzer (Debian: libfuzzer-22-dev)")
endif()

add_compile_options(${SPECC_FUZZER_COMPILE_FLAGS})
add_link_options(${SPECC_FUZZER_LINK_FLAGS})
message(STATUS "Fuzzing build: ${SPECC_FUZZER_COMPILE_FLAGS}")
