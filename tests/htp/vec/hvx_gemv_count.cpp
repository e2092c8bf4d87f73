// Freestanding Hexagon program for instruction counts under qemu (scripts/hexagon-insn-count.sh):
// runs the Q4_0 GEMV of one kernel table REPS times over 64 rows x K = 1024 (36 KiB of tiles).
//   hvx_gemv_count generic|hvx REPS
// The count of one GEMV is (count at REPS=3 - count at REPS=1) / 2: setup cancels out.
#include <stddef.h>
#include <stdint.h>

#include "base/fp16.h"
#include "htp/platform/platform_process.h"
#include "htp/vec/vec.h"

namespace {

using namespace hexllm;
using namespace hexllm::htp;

constexpr uint32_t kK = 1024, kRows = 64, kBlock = 144;
alignas(128) uint8_t g_w[kRows / 8 * (kK / 32) * kBlock];
alignas(128) uint8_t g_act[(kK / 32) * sizeof(htp_act_q8_32)];
alignas(128) float g_x[kK], g_dst[kRows];

uint32_t g_rng = 1;
uint32_t rnd() {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng ^ (g_rng >> 15);
}

void say(const char* s) {
  size_t n = 0;
  while (s[n]) n++;
  proc_write_stderr(s, n);
}

}  // namespace

extern "C" int main(int argc, char** argv) {
  if (argc != 3 || (argv[1][0] != 'g' && argv[1][0] != 'h')) {
    say("usage: hvx_gemv_count generic|hvx REPS\n");
    return 2;
  }
  uint32_t reps = 0;
  for (const char* p = argv[2]; *p >= '0' && *p <= '9'; p++) reps = reps * 10 + (uint32_t)(*p - '0');
  const vec_kernels& t = argv[1][0] == 'h' ? *vec_hvx_kernels() : vec_generic_kernels();
  for (size_t i = 0; i < sizeof g_w; i++) g_w[i] = (uint8_t)rnd();
  for (size_t b = 0; b < sizeof g_w / kBlock; b++)
    for (uint32_t r = 0; r < 8; r++) {
      const uint16_t h = fp32_to_fp16(0.01f);
      __builtin_memcpy(g_w + b * kBlock + 128 + 2 * r, &h, 2);
    }
  for (uint32_t i = 0; i < kK; i++) g_x[i] = (float)(int32_t)(rnd() >> 20) * 0.001f;
  t.quant_for_tile(HTP_TILE_Q4_0_X8)(g_x, g_act, kK);
  for (uint32_t i = 0; i < reps; i++) t.for_tile(HTP_TILE_Q4_0_X8).gemv(g_w, g_act, g_dst, kK, kRows);
  return g_dst[0] != g_dst[0];  // keeps the result live
}
