// Row-count dispatch for the x86 vmath tables (x86_avx2.cpp and x86_avx512.cpp include it):
// kernels that keep NR rows of accumulators in registers take NR as a template argument.
#pragma once
#include <stdint.h>

namespace hexllm::htp {
namespace {

// run.template operator()<NR>() for NR = nr, 1 <= nr <= Max.
template <int Max, class Run>
inline __attribute__((always_inline)) void by_rows(uint32_t nr, Run&& run) {
  if constexpr (Max > 0) {
    if (nr == (uint32_t)Max) run.template operator()<Max>();
    else by_rows<Max - 1>(nr, run);
  }
}

}  // namespace
}  // namespace hexllm::htp
