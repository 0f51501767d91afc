# Locates the XLA FFI headers (xla/ffi/api/ffi.h) that JAX ships, for the JAX handlers
# (src/jax, libwham_jax.so). WHAM_JAX_FFI_INCLUDE_DIR, when set, is taken as is; otherwise
# the Python interpreter that CMake finds is asked for jax.ffi.include_dir().
# Sets WHAM_JAX_FFI_FOUND and, where found, WHAM_JAX_FFI_INCLUDE_DIR (cached).
set(WHAM_JAX_FFI_INCLUDE_DIR "" CACHE PATH
    "Folder holding xla/ffi/api/ffi.h (default: jax.ffi.include_dir() of the Python found)")

function(wham_find_jax_ffi)
  set(dir "${WHAM_JAX_FFI_INCLUDE_DIR}")
  if(NOT dir)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      execute_process(
        COMMAND "${Python3_EXECUTABLE}" -c "import jax.ffi; print(jax.ffi.include_dir())"
        RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_QUIET
        OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(result EQUAL 0)
        set(dir "${out}")
      endif()
    endif()
  endif()
  if(dir AND EXISTS "${dir}/xla/ffi/api/ffi.h")
    set(WHAM_JAX_FFI_INCLUDE_DIR "${dir}" CACHE PATH
        "Folder holding xla/ffi/api/ffi.h (default: jax.ffi.include_dir() of the Python found)"
        FORCE)
    set(WHAM_JAX_FFI_FOUND ON PARENT_SCOPE)
  else()
    set(WHAM_JAX_FFI_FOUND OFF PARENT_SCOPE)
  endif()
endfunction()
