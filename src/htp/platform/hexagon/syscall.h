// Raw Linux system calls for Hexagon user mode: the number in r6, up to six arguments in r0-r5,
// `trap0(#1)`, the result (or -errno) in r0. Hexagon Linux uses the asm-generic 32-bit table.
#pragma once

#include <stdint.h>

namespace hexllm::htp::hx {

// asm-generic/unistd.h numbers (32-bit ABI: the mmap2/fstat64/time32 variants).
enum Sys : int32_t {
  SYS_close = 57,
  SYS_fstat64 = 80,
  SYS_write = 64,
  SYS_ppoll = 73,
  SYS_exit = 93,
  SYS_exit_group = 94,
  SYS_futex = 98,
  SYS_clock_gettime = 113,
  SYS_sched_setaffinity = 122,
  SYS_sched_getaffinity = 123,
  SYS_sched_yield = 124,
  SYS_kill = 129,
  SYS_getcpu = 168,
  SYS_getpid = 172,
  SYS_getppid = 173,
  SYS_sendmsg = 211,
  SYS_recvmsg = 212,
  SYS_munmap = 215,
  SYS_clone = 220,
  SYS_mmap2 = 222,
  SYS_mprotect = 226,
};

inline int32_t syscall6(int32_t n, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e, int32_t f) {
  register int32_t r6 __asm__("r6") = n;
  register int32_t r0 __asm__("r0") = a;
  register int32_t r1 __asm__("r1") = b;
  register int32_t r2 __asm__("r2") = c;
  register int32_t r3 __asm__("r3") = d;
  register int32_t r4 __asm__("r4") = e;
  register int32_t r5 __asm__("r5") = f;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r6), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5) : "memory");
  return r0;
}

template <typename A = int32_t, typename B = int32_t, typename C = int32_t, typename D = int32_t,
          typename E = int32_t, typename F = int32_t>
inline int32_t sys(Sys n, A a = 0, B b = 0, C c = 0, D d = 0, E e = 0, F f = 0) {
  return syscall6(n, (int32_t)(intptr_t)a, (int32_t)(intptr_t)b, (int32_t)(intptr_t)c, (int32_t)(intptr_t)d,
                  (int32_t)(intptr_t)e, (int32_t)(intptr_t)f);
}

// A failed call returns -errno, in [-4095, -1].
inline bool failed(int32_t r) { return r < 0 && r >= -4095; }
inline bool failed_ptr(int32_t r) { return (uint32_t)r >= (uint32_t)-4095; }

inline constexpr int32_t EINTR_ = 4;
inline constexpr int32_t EAGAIN_ = 11;

// Kernel ABI constants (asm-generic).
inline constexpr int32_t PROT_READ = 1, PROT_WRITE = 2, PROT_NONE = 0;
inline constexpr int32_t MAP_SHARED = 0x01, MAP_PRIVATE = 0x02, MAP_ANONYMOUS = 0x20, MAP_POPULATE = 0x8000;
inline constexpr int32_t FUTEX_WAIT = 0, FUTEX_WAKE = 1, FUTEX_PRIVATE_FLAG = 128;
inline constexpr int32_t CLOCK_MONOTONIC = 1;

struct timespec32 {
  int32_t tv_sec;
  int32_t tv_nsec;
};

[[noreturn]] inline void exit_group(int code) {
  for (;;) sys(SYS_exit_group, code);
}

}  // namespace hexllm::htp::hx
