// The only seam between device code and the OS it runs on. Everything else in src/htp is
// freestanding; platform/<target>/ implements the functions declared here (host: Linux/POSIX;
// hexagon: Linux user mode with raw system calls, no libc). Atomics and pause are inline compiler builtins, valid on every target.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {

// ---- threads ----

// Owned by the caller and kept alive until platform_thread_join.
struct platform_thread {
  uint64_t handle;  // opaque, owned by the platform implementation
  void* stack;      // platform-allocated stack (with a guard page where the OS has one)
  size_t stack_bytes;
  void (*fn)(void*);
  void* arg;
};

// Starts fn(arg) on a new thread with a stack of at least stack_bytes. false on failure.
bool platform_thread_create(platform_thread* t, void (*fn)(void*), void* arg, size_t stack_bytes);
void platform_thread_join(platform_thread* t);

// ---- futex: sleep while *addr == expected; wake sleepers on addr ----

// Returns when woken, when *addr != expected at the time of the call, or spuriously.
void platform_futex_wait(uint32_t* addr, uint32_t expected);
void platform_futex_wake(uint32_t* addr, uint32_t n_waiters);
inline constexpr uint32_t PLATFORM_WAKE_ALL = 0x7fffffff;

// ---- time ----

uint64_t platform_time_ns();  // monotonic
uint64_t platform_cycles();   // a free-running cycle counter (for profiles; not calibrated)

// ---- memory ----

// Zeroed, read-write memory whose start is a multiple of align (a power of two); nullptr on failure.
void* platform_mem_map(size_t bytes, size_t align);
void platform_mem_unmap(void* p, size_t bytes);

// ---- cache maintenance (several devices sharing memory) ----

// Writes this device made to [p, p + bytes) reach memory and leave its caches, so that another
// device or the host reads them there (and this device re-reads them from there later). Host:
// nothing (x86 caches are coherent). Hexagon: dccleaninva on every line of the range.
void platform_cache_clean(const void* p, size_t bytes);
// Every cache operation and store before it has completed before any store after it (the
// step before a device publishes a fence). Host: a full fence. Hexagon: syncht, then barrier.
void platform_write_barrier();

// ---- scheduling ----

void platform_yield();

inline void platform_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#elif defined(__hexagon__)
  __asm__ volatile("pause(#1)");
#endif
}

// ---- atomics (compiler builtins; no libatomic needed for these widths) ----

template <typename T>
inline T atomic_load_relaxed(const T* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomic_load_acquire(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <typename T>
inline T atomic_load_seq(const T* p) {
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
template <typename T>
inline void atomic_store_relaxed(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline void atomic_store_release(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
template <typename T>
inline void atomic_store_seq(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomic_fetch_add(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomic_fetch_sub(T* p, T v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
}
// Replaces *p with `desired` if it still holds `expected`; false (and *p untouched) otherwise.
template <typename T>
inline bool atomic_cas(T* p, T expected, T desired) {
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
// As atomic_cas, acquiring on success; on failure *expected gets what *p holds.
template <typename T>
inline bool atomic_cas_acquire(T* p, T* expected, T desired) {
  return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
}
template <typename T>
inline T atomic_add_release(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}

}  // namespace hexllm::htp
