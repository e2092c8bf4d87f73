// Host (x86-64 / aarch64 Linux) implementation of the device platform layer. The only device
// code allowed to use libc and POSIX.
#include "htp/platform/platform.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace hexllm::htp {

namespace {

size_t page_bytes() {
  static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return page;
}

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Sanitizer runtimes keep their own per-thread state on the stack we hand to pthread.
size_t min_stack_bytes() {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return 4u << 20;
#else
  return (size_t)PTHREAD_STACK_MIN;  // a sysconf() call on current glibc
#endif
}

}  // namespace

bool platform_thread_create(platform_thread* t, void (*fn)(void*), void* arg, size_t stack_bytes) {
  // Our own mapping with a PROT_NONE guard page at the low end, so an overflow faults at once.
  const size_t page = page_bytes();
  const size_t min_bytes = min_stack_bytes();
  const size_t bytes = round_up(stack_bytes < min_bytes ? min_bytes : stack_bytes, page);
  const size_t total = bytes + page;
  void* mem = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) return false;
  if (mprotect(mem, page, PROT_NONE) != 0) {
    munmap(mem, total);
    return false;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, (char*)mem + page, bytes);
  t->fn = fn;
  t->arg = arg;
  pthread_t th;
  const int rc = pthread_create(
      &th, &attr,
      [](void* p) -> void* {
        auto* self = (platform_thread*)p;
        self->fn(self->arg);
        return nullptr;
      },
      t);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    munmap(mem, total);
    return false;
  }
  t->handle = (uint64_t)th;
  t->stack = mem;
  t->stack_bytes = total;
  return true;
}

void platform_thread_join(platform_thread* t) {
  pthread_join((pthread_t)t->handle, nullptr);
  munmap(t->stack, t->stack_bytes);
  t->stack = nullptr;
  t->stack_bytes = 0;
}

void platform_futex_wait(uint32_t* addr, uint32_t expected) {
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void platform_futex_wake(uint32_t* addr, uint32_t n_waiters) {
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n_waiters > INT_MAX ? INT_MAX : (int)n_waiters, nullptr,
          nullptr, 0);
}

uint64_t platform_time_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t platform_cycles() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return platform_time_ns();
#endif
}

void* platform_mem_map(size_t bytes, size_t align) {
  const size_t page = page_bytes();
  if (bytes == 0 || (align & (align - 1)) != 0) return nullptr;
  if (align < page) align = page;
  bytes = round_up(bytes, page);
  // Over-map by align and trim both ends so that munmap(p, bytes) later undoes exactly this.
  const size_t total = bytes + align - page;
  char* mem = (char*)mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == (char*)MAP_FAILED) return nullptr;
  char* p = (char*)round_up((size_t)mem, align);
  if (p > mem) munmap(mem, (size_t)(p - mem));
  const size_t tail = (size_t)(mem + total - (p + bytes));
  if (tail > 0) munmap(p + bytes, tail);
  return p;
}

void platform_mem_unmap(void* p, size_t bytes) {
  if (p != nullptr) munmap(p, round_up(bytes, page_bytes()));
}

void platform_yield() { sched_yield(); }

}  // namespace hexllm::htp
