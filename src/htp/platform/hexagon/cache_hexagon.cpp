// Cache maintenance on Hexagon (platform.h). Devices of a group share DDR but not their data
// caches, so a device's writes are cleaned out of its caches before it signals a fence. User
// mode has no whole-cache operation (dccleanidx is privileged), so ranges go line by line.
#include "htp/platform/platform.h"

namespace hexllm::htp {

namespace {

// The smallest data-cache line of the Hexagon versions we build for: stepping by it reaches
// every line of a range whatever the line size is.
constexpr uintptr_t kLine = 32;

}  // namespace

void platform_cache_clean(const void* p, size_t bytes) {
  if (bytes == 0) return;
  uintptr_t a = (uintptr_t)p & ~(kLine - 1);
  const uintptr_t end = (uintptr_t)p + bytes;
  for (; a < end; a += kLine) __asm__ volatile("dccleaninva(%0)" : : "r"(a) : "memory");
}

void platform_write_barrier() {
  // syncht: every outstanding load, store and cache operation of this thread has completed.
  __asm__ volatile("syncht" : : : "memory");
  __asm__ volatile("barrier" : : : "memory");
}

}  // namespace hexllm::htp
