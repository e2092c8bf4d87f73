// Hexagon Linux user-mode implementation of platform.h (besides threads, threads.cpp): futex,
// clock, anonymous memory and yield, all raw system calls (syscall.h).
#include "htp/platform/hexagon/syscall.h"
#include "htp/platform/platform.h"

namespace hexllm::htp {

namespace {

constexpr size_t kPage = 4096;

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

void platform_futex_wait(uint32_t* addr, uint32_t expected) {
  hx::sys(hx::SYS_futex, addr, hx::FUTEX_WAIT | hx::FUTEX_PRIVATE_FLAG, expected, 0, 0, 0);
}

void platform_futex_wake(uint32_t* addr, uint32_t n_waiters) {
  hx::sys(hx::SYS_futex, addr, hx::FUTEX_WAKE | hx::FUTEX_PRIVATE_FLAG,
          n_waiters > 0x7fffffffu ? 0x7fffffff : (int32_t)n_waiters, 0, 0, 0);
}

uint64_t platform_time_ns() {
  hx::timespec32 ts{0, 0};
  hx::sys(hx::SYS_clock_gettime, hx::CLOCK_MONOTONIC, &ts);
  return (uint64_t)(uint32_t)ts.tv_sec * 1000000000ull + (uint64_t)(uint32_t)ts.tv_nsec;
}

// The emulator's cycle registers say nothing about real time; profiles use the clock.
uint64_t platform_cycles() { return platform_time_ns(); }

void* platform_mem_map(size_t bytes, size_t align) {
  if (bytes == 0 || (align & (align - 1)) != 0) return nullptr;
  if (align < kPage) align = kPage;
  bytes = round_up(bytes, kPage);
  // Over-map by align and trim both ends so that munmap(p, bytes) later undoes exactly this.
  const size_t total = bytes + align - kPage;
  if (total < bytes) return nullptr;
  const int32_t r = hx::sys(hx::SYS_mmap2, 0, total, hx::PROT_READ | hx::PROT_WRITE,
                            hx::MAP_PRIVATE | hx::MAP_ANONYMOUS, -1, 0);
  if (hx::failed_ptr(r)) return nullptr;
  char* mem = (char*)(intptr_t)r;
  char* p = (char*)round_up((size_t)mem, align);
  if (p > mem) hx::sys(hx::SYS_munmap, mem, (size_t)(p - mem));
  const size_t tail = (size_t)(mem + total - (p + bytes));
  if (tail > 0) hx::sys(hx::SYS_munmap, p + bytes, tail);
  return p;
}

void platform_mem_unmap(void* p, size_t bytes) {
  if (p != nullptr) hx::sys(hx::SYS_munmap, p, round_up(bytes, kPage));
}

void platform_yield() { hx::sys(hx::SYS_sched_yield); }

}  // namespace hexllm::htp
