# Builds examples/consumer against wham, either installed into a scratch prefix
# (find_package) or as a subdirectory; fails the test on any error.
set(work ${WHAM_BINARY_DIR}/consumer_test/${MODE})
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})

# The installed package is built for two architectures (wham must compile for
# sm_80 as well as sm_90); the subdirectory build for sm_90 alone, to save CI time.
if(MODE STREQUAL "find_package")
  set(archs "80;90")
else()
  set(archs "90")
endif()
set(args -S ${WHAM_SOURCE_DIR}/examples/consumer -B ${work}/build "-DCMAKE_CUDA_ARCHITECTURES=${archs}")
if(MODE STREQUAL "find_package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${WHAM_BINARY_DIR} --prefix ${work}/prefix
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install failed (${rc})")
  endif()
  # The C library is installed under its versioned names, libwham.so -> libwham.so.0 -> the file.
  file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${work}/prefix
       ${work}/prefix/*/libwham.so*)
  list(TRANSFORM installed REPLACE "^.*/" "")
  list(SORT installed)
  string(REGEX MATCH "^[0-9]+" major "${WHAM_VERSION}")
  if(NOT installed STREQUAL "libwham.so;libwham.so.${major};libwham.so.${WHAM_VERSION}")
    message(FATAL_ERROR "installed C library files: '${installed}', expected libwham.so, "
            "libwham.so.${major} and libwham.so.${WHAM_VERSION}")
  endif()
  list(APPEND args -DCMAKE_PREFIX_PATH=${work}/prefix)
else()
  list(APPEND args -DWHAM_CONSUMER_SOURCE_DIR=${WHAM_SOURCE_DIR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${work}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
# wham's own tests must not be built for a project that merely uses it.
if(EXISTS ${work}/build/wham/tests)
  message(FATAL_ERROR "wham built its tests inside a consumer project")
endif()
message(STATUS "consumer (${MODE}) built")
