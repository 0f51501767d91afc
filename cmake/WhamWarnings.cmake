# Warnings as errors on wham's own targets only (never pushed onto users).
function(wham_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endfunction()

# A CUDA executable of ours: warnings, static runtime, line info for the sanitizer.
function(wham_cuda_executable target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE wham::wham)
  wham_target_warnings(${target})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()
