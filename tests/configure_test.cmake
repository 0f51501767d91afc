# Configuring wham as the top-level project without Catch2 and Google Benchmark
# (cmake -DWHAM_SOURCE_DIR=... -DWORK=... -DCUDA_COMPILER=... -P ...): by default the tests and
# benchmarks are left out with one message naming what is missing, and the rest configures;
# -DWHAM_BUILD_TESTS=ON makes the missing Catch2 an error.
set(common -S ${WHAM_SOURCE_DIR} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
    -DCMAKE_CUDA_ARCHITECTURES=90
    -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)

file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} ${common} -B ${WORK}/auto
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring without Catch2 and Google Benchmark failed (${rc}):\n${out}${err}")
endif()
string(REGEX MATCHALL "-- wham: " starts "${out}")
list(LENGTH starts count)
string(REGEX MATCH "-- wham: [^\n]*" lines "${out}")
if(NOT count EQUAL 1 OR NOT lines MATCHES "tests left out, Catch2"
   OR NOT lines MATCHES "benchmarks left out, Google Benchmark"
   OR NOT lines MATCHES "WHAM_BUILD_TESTS=ON")
  message(FATAL_ERROR "expected one message naming Catch2, Google Benchmark and the options, got:\n${lines}")
endif()
if(EXISTS ${WORK}/auto/tests OR EXISTS ${WORK}/auto/bench OR NOT EXISTS ${WORK}/auto/examples)
  message(FATAL_ERROR "tests or benchmarks configured without their dependency, or no examples")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} ${common} -B ${WORK}/required -DWHAM_BUILD_TESTS=ON
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "WHAM_BUILD_TESTS=ON needs Catch2")
  message(FATAL_ERROR "-DWHAM_BUILD_TESTS=ON without Catch2 did not fail with its message (${rc}):\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "configures without Catch2 and Google Benchmark; ON requires them")
