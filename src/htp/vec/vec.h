// Vector math for matrix products on the device runtime: activation quantizers and GEMV/GEMM
// micro-kernels over repacked weight tiles (htp/abi/tiles.h), chosen at run time on x86 and at
// compile time on Hexagon (HVX).
// Freestanding: no libc, no STL, no allocation.
//
// Numerics every implementation keeps (so SIMD paths can be checked against the generic one):
// - activation quantizers: d = amax / 127, q = round-half-even(x * (1/d)), |q| <= 127;
// - integer partial sums are exact (no saturation in any path);
// - per block (32) or super-block (256), in K order, each row accumulates
//     y = fma(d_w * d_a, (float)isum, y)      (plus the min/dmin term of Q4_1/Q5_1/Q4_K/Q5_K),
//   so quantized-weight kernels give the same bits on every implementation. Float-weight kernels
//   sum in a different order per implementation (equal within float rounding).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/htp_hwinfo.h"
#include "htp/abi/tiles.h"

namespace hexllm::htp {

// GEMV: dst[r] = dot(weight row r, activation row) for r < nrows. `w` points at the first row
// tile of the range; rows past nrows in the last tile are not stored.
using vec_gemv_fn = void (*)(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows);

// GEMM: dst[c * dst_stride + r] = dot(weight row r, activation row c) for c < nact, r < nrows.
// Activation row c starts at act + c * act_stride (bytes); dst_stride is in floats. Register
// blocking is 8 rows x 4 activation rows; the caller keeps the weight range small enough to stay
// in cache (L2 on x86, VTCM on the NPU) while all activation rows stream past it.
//
// Contract for both: outputs are overwritten (not accumulated); activation rows are 4-byte aligned
// (their blocks hold floats); weights and dst need no alignment.
using vec_gemm_fn = void (*)(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact,
                             float* dst, size_t dst_stride, uint32_t k, uint32_t nrows);

// Activation quantizer: k floats -> htp_act_row_bytes(tile type, k, format) bytes. k is a multiple of the
// block (32 or 256) for the quantized formats; HTP_ACT_F32 zero-pads to a multiple of 32.
using vec_quant_fn = void (*)(const float* x, uint8_t* act, uint32_t k);

struct vec_mm_kernels {
  vec_gemv_fn gemv;
  vec_gemm_fn gemm;
  // The GEMM over HTP_ACT_BF16 activation rows (any nact), or nullptr: quantized weights only;
  // sums in bf16 products and f32, so within bf16 rounding of the exact block sums above.
  vec_gemm_fn gemm_bf16 = nullptr;
};

struct vec_kernels {
  const char* name;  // one of kVecIsaNames, or "hvx"
  vec_mm_kernels mm[kHtpTileTypes];
  vec_quant_fn quant[HTP_ACT_TYPES];
  // Which GEMV a table with two takes ("zmm GEMV" or "ymm GEMV" on avx512 and amx), else "".
  const char* gemv_variant = "";
  // What the host should plan for (it reads them from htp_hwinfo): min_pass_rows, the act rows
  // per pass over the weights below which this table's GEMM loses to separate passes that each
  // carry all rows (the host then forms no fusion that chunks the rows finer; amx converts the
  // weights per pass); bf16_min_rows, the act rows from which quantized matmuls take bf16
  // activations and gemm_bf16 (0 for a table without one); gemv_unit_bytes, the weight bytes
  // per decode unit (0: the default), which sets how far apart a GEMV's weight streams run.
  htp_gemm_prefs gemm_prefs{0, 0, 0, 0};

  // Every quantized-weight GEMM the host may pick gives the block-exact sums above.
  bool gemm_exact() const { return gemm_prefs.bf16_min_rows == 0; }
  const vec_mm_kernels& for_tile(uint32_t tile_type) const { return mm[tile_type - HTP_TILE_FIRST]; }
  vec_quant_fn quant_for_tile(uint32_t tile_type) const { return quant[htp_tile_info(tile_type).act]; }
};

// Portable scalar kernels: the reference the other implementations are tested against.
const vec_kernels& vec_generic_kernels();

// x86 tables, or nullptr when not built for x86. Callers check CPU support (vec_isa_kernels).
const vec_kernels* vec_avx2_kernels();     // AVX2+FMA+F16C: vpmaddubsw
const vec_kernels* vec_avxvnni_kernels();  // + AVX-VNNI: vpdpbusd on ymm
const vec_kernels* vec_avx512_kernels();   // + AVX-512 F/BW/VL/VNNI: vpdpbusd on zmm in GEMM
// The avx512 table with the GEMV on zmm or on ymm; vec_avx512_kernels() takes this CPU's
// choice (vec_cpu_zmm_gemv). Tests run both.
const vec_kernels* vec_avx512_kernels_gemv(bool zmm_gemv);
// False on AMD CPUs: on Zen 4 the zmm GEMV streamed weights from DRAM at ~55% of the ymm
// GEMV's rate (DESIGN §7, vec layer); true elsewhere (the zmm GEMV was the faster on the Intel
// Xeon it was built on).
bool vec_cpu_zmm_gemv();
const vec_kernels* vec_amx_kernels();      // + AMX-TILE/BF16, AVX512-BF16: tdpbf16ps in the 32-block GEMMs

// Hexagon HVX (v67, 128-byte vectors) kernels, or nullptr when not built for Hexagon.
const vec_kernels* vec_hvx_kernels();

// Instruction-set names of the x86 build, best first: "amx", "avx512", "avxvnni", "avx2",
// "generic".
inline constexpr uint32_t kVecIsaCount = 5;
extern const char* const kVecIsaNames[kVecIsaCount];

// HEXLLM_ISA=exact: the best usable table whose GEMMs are bit-identical to the generic kernels
// (every path but amx), so results match the Hexagon build and any other x86 machine's.
inline constexpr const char* kVecIsaExact = "exact";
const vec_kernels* vec_isa_best_exact();

// True for a name in kVecIsaNames, or kVecIsaExact.
bool vec_isa_known(const char* name);

// The table called `name` (or the kVecIsaExact choice) when it is built and this CPU and OS can
// run it, else nullptr.
const vec_kernels* vec_isa_kernels(const char* name);

// The HEXLLM_ISA override (x86 builds), or nullptr when unset.
const char* vec_isa_forced();

// The table to use: the forced one (nullptr when it is not usable here), else the best usable.
const vec_kernels* htp_vec_resolve();

// The HVX table on Hexagon (chosen at compile time); elsewhere htp_vec_resolve(), once per
// process. A forced ISA this CPU lacks is fatal on x86 (a message naming it, exit status 2):
// hosts check htp_vec_resolve() at start-up to report it cleanly.
const vec_kernels& htp_vec_select();

}  // namespace hexllm::htp
