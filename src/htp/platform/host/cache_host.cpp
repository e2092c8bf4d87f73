// Cache maintenance on the host (platform.h): x86 keeps caches coherent between cores and
// processes, so only the ordering of stores is left to do.
#include "htp/platform/platform.h"

namespace hexllm::htp {

void platform_cache_clean(const void*, size_t) {}

void platform_write_barrier() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

}  // namespace hexllm::htp
