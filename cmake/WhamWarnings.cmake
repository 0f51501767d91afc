# Warnings as errors on wham's own targets only (never pushed onto users).
function(wham_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endfunction()

# A CUDA executable of ours (benchmarks, examples): warnings, static runtime, line info for
# the sanitizer, the prebuilt instantiations where they are built, unless HEADERS is given:
# then what it calls compiles from the headers, for the target's own types only.
#   wham_cuda_executable(target [HEADERS] sources...)
function(wham_cuda_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "HEADERS" "" "")
  add_executable(${target} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE wham::wham)
  wham_target_warnings(${target})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  if(NOT arg_HEADERS)
    wham_use_prebuilt(${target})
  endif()
endfunction()

# Takes wham's public entry points for the standard types from wham::wham_kernels instead of
# compiling them in `target` (wham/prebuilt.hpp, forced in first: its `extern template`
# declarations keep the kernels out). Anything else the target calls, wham::detail and other
# types, still compiles from the headers. Without WHAM_BUILD_LIBRARY, nothing changes.
function(wham_use_prebuilt target)
  if(TARGET wham_kernels)
    target_link_libraries(${target} PRIVATE wham_kernels)
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:--pre-include wham/prebuilt.hpp>"
      "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include wham/prebuilt.hpp>")
  endif()
endfunction()
