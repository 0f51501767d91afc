/* A C99 call site of wham::wham_c (libwham.so). */
#include <wham/wham.h>

#include <stdio.h>

int main(void) {
  int64_t n = 0;
  if (wham_iqp_num_params(4, WHAM_IQP, &n) != WHAM_SUCCESS) return 1;
  printf("wham %s: %lld iqp parameters for 4 qubits\n", wham_version(), (long long)n);
  return 0;
}
