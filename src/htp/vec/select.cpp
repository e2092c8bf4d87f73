// Choice of the kernel table: at run time on x86, at compile time on Hexagon (every v67+ core
// has 128-byte HVX).
#include "htp/vec/vec.h"

namespace hexllm::htp {

const char* const kVecIsaNames[kVecIsaCount] = {"amx", "avx512", "avxvnni", "avx2", "generic"};

namespace {
bool same_name(const char* a, const char* b) {
  for (;; a++, b++) {
    if (*a != *b) return false;
    if (*a == '\0') return true;
  }
}
}  // namespace

bool vec_isa_known(const char* name) {
  if (same_name(name, kVecIsaExact)) return true;
  for (const char* n : kVecIsaNames)
    if (same_name(n, name)) return true;
  return false;
}

const vec_kernels* vec_isa_best_exact() {
  for (const char* n : kVecIsaNames)
    if (const vec_kernels* k = vec_isa_kernels(n); k != nullptr && k->gemm_exact()) return k;
  return &vec_generic_kernels();
}

#if !defined(__x86_64__)
// Non-x86 builds (Hexagon) carry only the generic table and no environment.
const vec_kernels* vec_avx2_kernels() { return nullptr; }
const vec_kernels* vec_avxvnni_kernels() { return nullptr; }
const vec_kernels* vec_avx512_kernels() { return nullptr; }
const vec_kernels* vec_avx512_kernels_gemv(bool) { return nullptr; }
bool vec_cpu_zmm_gemv() { return false; }
const vec_kernels* vec_amx_kernels() { return nullptr; }
const vec_kernels* vec_isa_kernels(const char* name) {
  return same_name(name, "generic") || same_name(name, kVecIsaExact) ? &vec_generic_kernels() : nullptr;
}
const char* vec_isa_forced() { return nullptr; }
void vec_isa_unusable(const char*) {}
#else
void vec_isa_unusable(const char* name);  // x86_cpu.cpp
#endif
#if !defined(__hexagon__)
const vec_kernels* vec_hvx_kernels() { return nullptr; }
#endif

const vec_kernels* htp_vec_resolve() {
  if (const char* f = vec_isa_forced()) return vec_isa_kernels(f);
  for (const char* n : kVecIsaNames)
    if (const vec_kernels* k = vec_isa_kernels(n)) return k;
  return &vec_generic_kernels();
}

const vec_kernels& htp_vec_select() {
#if defined(__hexagon__)
  return *vec_hvx_kernels();
#else
  static const vec_kernels* const k = htp_vec_resolve();
  if (k == nullptr) vec_isa_unusable(vec_isa_forced());
  return k != nullptr ? *k : vec_generic_kernels();
#endif
}

}  // namespace hexllm::htp
