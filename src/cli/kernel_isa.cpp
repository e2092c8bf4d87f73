// Which x86 kernel path the device runtime runs (htp/vec, and the vmath table that follows
// it), for --help, bench and the HEXLLM_ISA check at start-up.
#include <string>

#include "cli/commands.h"
#include "htp/vec/vec.h"
#include "htp/vmath/vmath.h"

namespace hexllm::cli {

std::string kernel_path_note() {
  using namespace hexllm::htp;
  std::string usable;
  for (const char* n : kVecIsaNames)
    if (vec_isa_kernels(n) != nullptr) usable += (usable.empty() ? "" : ", ") + std::string(n);
  const vec_kernels* k = htp_vec_resolve();
  const char* forced = vec_isa_forced();
  std::string s = k != nullptr ? k->name : "none";
  if (k != nullptr && *k->gemv_variant != '\0') s += std::string(", ") + k->gemv_variant;
  if (k != nullptr) s += std::string(", vmath ") + vmath_select().name;
  s += forced != nullptr ? " (forced by HEXLLM_ISA)" : " (best for this CPU)";
  return s + "; usable here: " + usable +
         "; HEXLLM_ISA=generic|avx2|avxvnni|avx512|amx forces one, HEXLLM_ISA=exact the best with bit-exact matmuls";
}

std::string kernel_isa_error() {
  using namespace hexllm::htp;
  const char* forced = vec_isa_forced();
  if (forced == nullptr || htp_vec_resolve() != nullptr) return {};
  return std::string("HEXLLM_ISA=") + forced +
         (vec_isa_known(forced) ? ": this CPU or OS lacks that instruction set" : ": no such kernel path") +
         "\nkernels: " + kernel_path_note();
}

}  // namespace hexllm::cli
