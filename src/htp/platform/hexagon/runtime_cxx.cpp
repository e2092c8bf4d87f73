// Entry points the compiler's generated code calls besides the arithmetic helpers: the
// aligned-copy memcpy variant, and the C++ ABI hooks of a freestanding program (guarded
// function-local statics, static destructors, pure virtual calls).
#include <stddef.h>
#include <stdint.h>

#include "htp/platform/hexagon/syscall.h"
#include "htp/platform/platform.h"

extern "C" {

void* memcpy(void* dst, const void* src, size_t n);

// Emitted for copies known to be 8-byte aligned and a multiple of 8 bytes, at least 32.
void* __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void* dst, const void* src, size_t n) {
  return memcpy(dst, src, n);
}

// Guarded statics. Byte 0 of the guard is "done" (the compiler tests it inline); byte 1 is
// held by the thread running the initialiser, and others wait for it.
int __cxa_guard_acquire(uint64_t* guard) {
  auto* g = (uint8_t*)guard;
  for (;;) {
    if (__atomic_load_n(&g[0], __ATOMIC_ACQUIRE) != 0) return 0;
    uint8_t expected = 0;
    if (__atomic_compare_exchange_n(&g[1], &expected, (uint8_t)1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return 1;
    hexllm::htp::platform_yield();
  }
}

void __cxa_guard_release(uint64_t* guard) {
  auto* g = (uint8_t*)guard;
  __atomic_store_n(&g[0], (uint8_t)1, __ATOMIC_RELEASE);
  __atomic_store_n(&g[1], (uint8_t)0, __ATOMIC_RELEASE);
}

void __cxa_guard_abort(uint64_t* guard) { __atomic_store_n(&((uint8_t*)guard)[1], (uint8_t)0, __ATOMIC_RELEASE); }

// The process never runs static destructors: it ends with exit_group.
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
void* __dso_handle = nullptr;

void __cxa_pure_virtual() {
  static const char msg[] = "hexllm-htp: pure virtual call\n";
  hexllm::htp::hx::sys(hexllm::htp::hx::SYS_write, 2, msg, sizeof msg - 1);
  hexllm::htp::hx::exit_group(134);
}

}  // extern "C"
