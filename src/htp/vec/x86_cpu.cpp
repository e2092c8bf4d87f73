// x86 only: which kernel tables this CPU and OS can run (CPUID + XGETBV, read once), and the
// HEXLLM_ISA override. On x86 the device runtime is an ordinary hosted process, so reading the
// environment here is fine; the Hexagon build never compiles this file.
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "htp/vec/vec.h"

namespace hexllm::htp {
namespace {

struct Cpu {
  bool avx2 = false, avxvnni = false, avx512 = false, amx = false;
  bool amd = false;
};

// Linux hands out the 8 KiB AMX tile data state only to a process that asks for it
// (arch_prctl ARCH_REQ_XCOMP_PERM, since 5.16); without it the first tile instruction faults.
bool os_grants_amx_tiles() {
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

Cpu detect() {
  Cpu c;
  unsigned a, b, cx, d;
  if (!__get_cpuid(0, &a, &b, &cx, &d)) return c;
  c.amd = b == 0x68747541 && d == 0x69746e65 && cx == 0x444d4163;  // "AuthenticAMD"
  if (!__get_cpuid(1, &a, &b, &cx, &d)) return c;
  const bool fma = cx & (1u << 12), osxsave = cx & (1u << 27), f16c = cx & (1u << 29);
  if (!osxsave) return c;
  // The OS must save the registers: XMM|YMM (bits 1, 2), and opmask|ZMM_Hi256|Hi16_ZMM (5..7).
  const uint64_t xcr0 = xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6, os_zmm = (xcr0 & 0xe6) == 0xe6;
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  if (a7 >= 1) __cpuid_count(7, 1, a71, b71, c71, d71);
  const bool avx2 = b7 & (1u << 5);
  c.avx2 = os_ymm && avx2 && fma && f16c;
  c.avxvnni = c.avx2 && (a71 & (1u << 4));
  const bool f = b7 & (1u << 16), bw = b7 & (1u << 30), vl = b7 & (1u << 31), vnni = c7 & (1u << 11);
  c.avx512 = c.avx2 && os_zmm && f && bw && vl && vnni;
  // AMX-TILE and AMX-BF16 (CPUID.7.0:EDX bits 24, 22), AVX512-BF16 (CPUID.7.1:EAX bit 5) for the
  // conversions, XTILECFG|XTILEDATA saved (XCR0 bits 17, 18).
  const bool amx = (d7 & (1u << 24)) && (d7 & (1u << 22)) && (a71 & (1u << 5));
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;
  c.amx = c.avx512 && amx && os_amx && os_grants_amx_tiles();
  return c;
}

const Cpu& cpu() {
  static const Cpu c = detect();
  return c;
}

}  // namespace

// On AMD (Zen 4, measured) the zmm GEMV streams weights from DRAM at about half the ymm
// GEMV's rate, while from L2 the two run alike: the difference is how their access patterns
// (4 weight streams vs 1) meet the hardware prefetchers, so it goes by vendor. On a Zen 5 the
// zmm GEMV's whole-model generation was 4% slower (6 alternating pairs).
bool vec_cpu_zmm_gemv() { return !cpu().amd; }

const vec_kernels* vec_isa_kernels(const char* name) {
  if (strcmp(name, "generic") == 0) return &vec_generic_kernels();
  if (strcmp(name, kVecIsaExact) == 0) return vec_isa_best_exact();
  if (strcmp(name, "avx2") == 0) return cpu().avx2 ? vec_avx2_kernels() : nullptr;
  if (strcmp(name, "avxvnni") == 0) return cpu().avxvnni ? vec_avxvnni_kernels() : nullptr;
  if (strcmp(name, "avx512") == 0) return cpu().avx512 ? vec_avx512_kernels() : nullptr;
  if (strcmp(name, "amx") == 0) return cpu().amx ? vec_amx_kernels() : nullptr;
  return nullptr;
}

const char* vec_isa_forced() {
  const char* e = getenv("HEXLLM_ISA");
  return e != nullptr && *e != '\0' ? e : nullptr;
}

// A forced ISA that cannot run: the kernels must not silently fall back under a test or an
// A/B run that asked for one path.
void vec_isa_unusable(const char* name) {
  fprintf(stderr, "error: HEXLLM_ISA=%s: %s (usable here:", name,
          vec_isa_known(name) ? "this CPU or OS lacks it" : "no such instruction set");
  for (const char* n : kVecIsaNames)
    if (vec_isa_kernels(n) != nullptr) fprintf(stderr, " %s", n);
  fprintf(stderr, ")\n");
  exit(2);
}

}  // namespace hexllm::htp
