// The host's monotonic clock in nanoseconds, for phase timings and timeouts.
#pragma once

#include <chrono>
#include <cstdint>

namespace hexllm {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace hexllm
