// GEMV/GEMM kernels of every implementation against the float reference, SIMD against generic,
// and the activation quantizers against hand-derived values.
//
// Threshold: NMSE < 5e-4 against (reference dequantize_row of the weights) . (float
// activations) summed in double, the matmul threshold of ggml's test-backend-ops (DESIGN.md §7).
// The kernels' only approximation is the 8-bit activation quantization (d = amax/127: relative
// error variance ~ (amax/127)^2/12 per element, NMSE ~ 1e-4 for Gaussian inputs), so 5e-4 leaves
// margin while catching any layout or scale bug (those give NMSE ~ 1).
#include <gtest/gtest.h>

#include "htp/vec/repack.h"
#include "htp/vec/vec.h"
#include "vec_test_util.h"

namespace hexllm::htp {
namespace {

using test::kAllTiles;

// Every table this CPU can run (the generic one always).
std::vector<const vec_kernels*> impls() {
  std::vector<const vec_kernels*> v;
  for (const char* n : kVecIsaNames)
    if (const vec_kernels* k = vec_isa_kernels(n)) v.push_back(k);
  return v;
}

struct Problem {
  uint32_t tt, k, nrows, nact;
  std::vector<uint8_t> tiles;
  std::vector<float> x;     // nact rows of k activations
  std::vector<double> ref;  // nact x nrows
  std::vector<float> wf;    // nrows x k dequantized weights (reference dequantize_row)
};

// The problem of GGUF weight rows w (nrows x k of the tile's source type) and activations x.
Problem make_problem_of(uint32_t tt, uint32_t k, uint32_t nrows, uint32_t nact, std::vector<float> x,
                        const std::vector<uint8_t>& w) {
  const Type src = static_cast<Type>(htp_tile_info(tt).src);
  Problem p{tt, k, nrows, nact, {}, std::move(x), {}, {}};
  const size_t row = test::gguf_row_bytes(src, k);
  p.tiles.resize(htp_tiled_size(tt, nrows, k));
  EXPECT_TRUE(vec_repack(tt, w.data(), row, nrows, k, p.tiles.data()));
  p.wf.resize((size_t)nrows * k);
  p.ref.resize((size_t)nact * nrows);
  for (uint32_t r = 0; r < nrows; r++) {
    const float* wf = p.wf.data() + (size_t)r * k;
    quant::dequantize_row(src, w.data() + r * row, p.wf.data() + (size_t)r * k, k);
    for (uint32_t c = 0; c < nact; c++) {
      double s = 0;
      for (uint32_t i = 0; i < k; i++) s += (double)wf[i] * p.x[(size_t)c * k + i];
      p.ref[(size_t)c * nrows + r] = s;
    }
  }
  return p;
}

Problem make_problem(uint32_t tt, uint32_t k, uint32_t nrows, uint32_t nact, uint32_t seed) {
  std::mt19937 rng(seed);
  const Type src = static_cast<Type>(htp_tile_info(tt).src);
  std::vector<float> x = test::random_floats((size_t)nact * k, rng);
  return make_problem_of(tt, k, nrows, nact, std::move(x), test::random_matrix(src, nrows, k, rng));
}

// Quantized activations, nact rows of htp_act_row_bytes each.
std::vector<uint8_t> quantize(const vec_kernels& kern, const Problem& p) {
  const size_t ab = htp_act_row_bytes(p.tt, p.k);
  std::vector<uint8_t> act(ab * p.nact);
  for (uint32_t c = 0; c < p.nact; c++)
    kern.quant_for_tile(p.tt)(p.x.data() + (size_t)c * p.k, act.data() + c * ab, p.k);
  return act;
}

// Runs GEMM (and GEMV for each activation row); dst rows are padded with a canary.
std::vector<float> run(const vec_kernels& kern, const Problem& p, const std::vector<uint8_t>& act,
                       bool gemv) {
  const size_t ab = htp_act_row_bytes(p.tt, p.k);
  const size_t stride = p.nrows + 3;
  std::vector<float> dst(stride * p.nact, -777.0f);
  if (gemv) {
    for (uint32_t c = 0; c < p.nact; c++)
      kern.for_tile(p.tt).gemv(p.tiles.data(), act.data() + c * ab, dst.data() + c * stride, p.k, p.nrows);
  } else {
    kern.for_tile(p.tt).gemm(p.tiles.data(), act.data(), ab, p.nact, dst.data(), stride, p.k, p.nrows);
  }
  std::vector<float> out;
  for (uint32_t c = 0; c < p.nact; c++) {
    for (uint32_t r = 0; r < p.nrows; r++) out.push_back(dst[c * stride + r]);
    for (uint32_t r = p.nrows; r < stride; r++) EXPECT_EQ(dst[c * stride + r], -777.0f) << "wrote past nrows";
  }
  return out;
}

float bf16_value(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The activation values a quantized row stands for (d * q, or the bf16 values), from the
// documented act formats.
std::vector<float> act_values(const Problem& p, const std::vector<uint8_t>& act, uint32_t c,
                              uint32_t fmt = HTP_ACT_TYPES) {
  if (fmt == HTP_ACT_TYPES) fmt = htp_tile_info(p.tt).act;
  const uint8_t* a = act.data() + c * htp_act_row_bytes(p.tt, p.k, fmt);
  std::vector<float> v(p.k);
  for (uint32_t i = 0; i < p.k; i++) {
    switch (fmt) {
      case HTP_ACT_BF16:
        v[i] = bf16_value(((const uint16_t*)a)[i]);
        break;
      case HTP_ACT_Q8_32: {
        const auto& b = ((const htp_act_q8_32*)a)[i / 32];
        v[i] = b.d * b.q[i % 32];
        break;
      }
      case HTP_ACT_Q8_256: {
        const auto& b = ((const htp_act_q8_256*)a)[i / 256];
        v[i] = b.d * b.q[i % 256];
        break;
      }
      default:
        v[i] = ((const float*)a)[i];
    }
  }
  return v;
}

// A bf16 GEMM (gemm_bf16, over bf16 activation rows `act`) against the double-precision dot of
// the reference weights with the activations' bf16 values: each weight rounds to bf16 (2^-9
// relative) and products sum in f32, so every output is within 2^-8 of its sum |w * a|.
void expect_bf16_close(const Problem& p, const std::vector<uint8_t>& act, const std::vector<float>& got) {
  for (uint32_t c = 0; c < p.nact; c++) {
    const auto av = act_values(p, act, c, HTP_ACT_BF16);
    for (uint32_t r = 0; r < p.nrows; r++) {
      double want = 0, mag = 0;
      for (uint32_t i = 0; i < p.k; i++) {
        want += (double)p.wf[(size_t)r * p.k + i] * av[i];
        mag += std::fabs((double)p.wf[(size_t)r * p.k + i] * av[i]);
      }
      ASSERT_NEAR(got[(size_t)c * p.nrows + r], want, std::ldexp(mag, -8) + 1e-6) << "c" << c << " r" << r;
    }
  }
}

std::vector<uint32_t> ks_for(uint32_t tt) {
  const uint32_t kb = htp_tile_info(tt).kblock;
  if (kb == 256) return {256, 768};                 // one super-block; 3 super-blocks
  if (htp_tile_is_float(tt)) return {32, 160, 45};  // K % 32 != 0 pads
  return {32, 160, 2080};  // one block; K not a multiple of 256; 65 blocks (zmm GEMM K chunks of 64 + 1)
}

// Two checks per shape: (1) each output equals the double-precision dot of the reference
// weights with the values the quantized activations stand for, up to float accumulation error
// (1e-5 of sum|w*a|); (2) NMSE against the unquantized float reference below 5e-4, aggregated
// over kReps random problems of the shape: with few outputs (3 rows x 1 column) the ratio of sums
// is heavy-tailed (a near-zero reference output inflates it), so a single draw says little.
TEST(VecKernels, EveryImplMatchesFloatReference) {
  constexpr int kReps = 6;
  uint32_t seed = 1;
  for (const vec_kernels* kern : impls())
    for (uint32_t tt : kAllTiles)
      for (uint32_t k : ks_for(tt))
        for (uint32_t nrows : {8u, 21u, 3u})  // 21: a 2-tile pair, then a partial tile
          for (uint32_t nact : {1u, 3u, 4u, 9u}) {  // MatchesGenericBitForBit adds more
            if (k == 2080 && nact > 2) continue;
            SCOPED_TRACE(testing::Message() << kern->name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src))
                                            << " k=" << k << " rows=" << nrows << " nact=" << nact);
            for (bool gemv : {false, true}) {
              double num = 0, den = 0;
              for (int rep = 0; rep < kReps; rep++) {
                const Problem p = make_problem(tt, k, nrows, nact, seed++);
                const auto act = quantize(*kern, p);
                const auto got = run(*kern, p, act, gemv);
                for (uint32_t c = 0; c < nact; c++) {
                  const auto av = act_values(p, act, c);
                  for (uint32_t r = 0; r < nrows; r++) {
                    double s = 0, mag = 0;
                    for (uint32_t i = 0; i < k; i++) {
                      s += (double)p.wf[(size_t)r * k + i] * av[i];
                      mag += std::fabs((double)p.wf[(size_t)r * k + i] * av[i]);
                    }
                    const double g = got[(size_t)c * nrows + r], ref = p.ref[(size_t)c * nrows + r];
                    ASSERT_NEAR(g, s, 1e-5 * mag + 1e-6)
                        << (gemv ? "gemv" : "gemm") << " c" << c << " r" << r;
                    num += (g - ref) * (g - ref);
                    den += ref * ref;
                  }
                }
              }
              ASSERT_LT(num / den, 5e-4) << (gemv ? "gemv" : "gemm");
            }
          }
}

// The same quantized activations through generic and SIMD: quantized-weight kernels must give the
// same bits (same integer sums, same float ops in the same order per row; see vec.h). Float
// weights sum in different orders (4 partial sums in the AVX2 GEMV), so those agree to a few ulp
// of the row's magnitude: |diff| <= 1e-5 * sum|w*x|.
class VecIsa : public testing::TestWithParam<const char*> {};

TEST_P(VecIsa, MatchesGenericBitForBit) {
  const vec_kernels& g = vec_generic_kernels();
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  const vec_kernels& s = *sp;
  EXPECT_STREQ(s.name, GetParam());
  uint32_t seed = 100;
  for (uint32_t tt : kAllTiles)
    for (uint32_t k : ks_for(tt))
      // 13 rows: a tile pair with a partial second tile; 21: a full pair, then a partial tile.
      for (uint32_t nrows : {13u, 21u})
        for (uint32_t nact : {1u, 2u, 4u, 5u, 6u, 8u, 11u, 17u}) {
          if (k == 2080 && nact > 13) continue;
          SCOPED_TRACE(testing::Message() << s.name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src)) << " k=" << k
                                          << " rows=" << nrows << " nact=" << nact);
          const Problem p = make_problem(tt, k, nrows, nact, seed++);
          const auto act_g = quantize(g, p), act_s = quantize(s, p);
          ASSERT_EQ(act_g, act_s) << "activation quantizers differ";
          for (bool gemv : {false, true}) {
            if (gemv && nact > 2) continue;
            const auto a = run(g, p, act_g, gemv), b = run(s, p, act_g, gemv);
            for (size_t i = 0; i < a.size(); i++) {
              if (htp_tile_is_float(tt)) {
                ASSERT_NEAR(a[i], b[i], 1e-5 * std::sqrt((double)k) * 4) << i;
              } else {
                ASSERT_EQ(a[i], b[i]) << i << (gemv ? " gemv" : " gemm");
              }
            }
          }
        }
}

// GEMV shapes the small ones above miss: several tile pairs (the zmm GEMV reads two pairs at
// once, then one, then an odd tile), and K past one GEMV pass of activation blocks (256 blocks of
// 32 on zmm). `s`'s GEMV (and, with also_gemm, its GEMM of the one act row) against generic,
// bit for bit: 5 rows, a partial single tile; 45: two pairs, a pair with a partial second tile; 61: two
// double pairs, the last partial; 64: whole pairs only; 39: two pairs and a partial odd tile.
void expect_gemv_shapes_match_generic(const vec_kernels& s, bool also_gemm, uint32_t seed) {
  const vec_kernels& g = vec_generic_kernels();
  for (uint32_t tt : kAllTiles) {
    if (htp_tile_is_float(tt)) continue;  // float GEMV sums in another order (MatchesGenericBitForBit)
    const bool kq = htp_tile_info(tt).kblock == 256;
    for (uint32_t k : {kq ? 2304u : 8224u, kq ? 512u : 96u})
      for (uint32_t nrows : {5u, 45u, 61u, 64u, 39u}) {
        SCOPED_TRACE(testing::Message() << s.name << " " << s.gemv_variant << " "
                                        << type_name(static_cast<Type>(htp_tile_info(tt).src)) << " k=" << k
                                        << " rows=" << nrows);
        const Problem p = make_problem(tt, k, nrows, 1, seed++);
        const auto act = quantize(g, p);
        const auto want = run(g, p, act, true), v = run(s, p, act, true);
        for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(want[i], v[i]) << "gemv row " << i;
        if (!also_gemm) continue;
        const auto m = run(s, p, act, false);
        for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(want[i], m[i]) << "gemm row " << i;
      }
  }
}

// The largest integer sums a block can give: Q4_0 / Q4_1 rows whose codes are all 0 or all 15
// in either nibble against activations of +-127, both signs in every row (the int16 headroom
// of the vpmaddubsw path, x86_kernels.h: 8 groups of 2 * 15 * 127). Bit for bit against
// generic, and against the dequantized rows.
TEST_P(VecIsa, GemvOfExtremeCodesMatchesGeneric) {
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  const vec_kernels& g = vec_generic_kernels();
  constexpr uint32_t k = 512, nrows = 40;
  std::vector<float> x(k);
  for (uint32_t i = 0; i < k; i++) x[i] = (i % 3 == 0) != (i >= k / 2) ? -1.0f : 1.0f;
  const uint8_t patterns[4] = {0xFF, 0x00, 0xF0, 0x0F};
  for (uint32_t tt : {HTP_TILE_Q4_0_X8, HTP_TILE_Q4_1_X8}) {
    const Type src = static_cast<Type>(htp_tile_info(tt).src);
    const size_t row = test::gguf_row_bytes(src, k), bs = type_size(src);
    std::vector<uint8_t> w(row * nrows);
    for (uint32_t r = 0; r < nrows; r++)
      for (uint32_t b = 0; b < k / 32; b++) {
        uint8_t* blk = w.data() + r * row + b * bs;
        const uint16_t one = fp32_to_fp16(1.0f), zero = 0;
        std::memcpy(blk, &one, 2);
        if (src == Type::Q4_1) std::memcpy(blk + 2, &zero, 2);  // m = 0
        std::memset(blk + bs - 16, patterns[(r + b) % 4], 16);
      }
    SCOPED_TRACE(testing::Message() << sp->name << " " << type_name(src));
    const Problem p = make_problem_of(tt, k, nrows, 1, x, w);
    const auto act = quantize(g, p);
    const auto want = run(g, p, act, true), got = run(*sp, p, act, true);
    for (uint32_t r = 0; r < nrows; r++) {
      ASSERT_EQ(want[r], got[r]) << "row " << r;
      ASSERT_NEAR(got[r], p.ref[r], 1e-5 * std::fabs(p.ref[r]) + 1e-3) << "row " << r;
    }
  }
}

TEST_P(VecIsa, GemvTilePairsAndLongKMatchGeneric) {
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  expect_gemv_shapes_match_generic(*sp, true, 900);
}

// K-quant GEMM over more super-blocks than one pass of interleaved activation codes (8 on zmm):
// the second pass continues from the first's sums.
TEST_P(VecIsa, KQuantGemmLongKMatchesGeneric) {
  const vec_kernels& g = vec_generic_kernels();
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  uint32_t seed = 1300;
  for (uint32_t tt : {HTP_TILE_Q4_K_X8, HTP_TILE_Q5_K_X8, HTP_TILE_Q6_K_X8})
    for (uint32_t k : {2304u, 4352u})  // 9 and 17 super-blocks
      for (uint32_t nrows : {21u, 40u})
        for (uint32_t nact : {3u, 8u, 11u}) {
          SCOPED_TRACE(testing::Message() << sp->name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src))
                                          << " k=" << k << " rows=" << nrows << " nact=" << nact);
          const Problem p = make_problem(tt, k, nrows, nact, seed++);
          const auto act = quantize(g, p);
          const auto want = run(g, p, act, false), got = run(*sp, p, act, false);
          for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(want[i], got[i]) << i;
        }
}

// Batches the shapes above keep small: 16, 35 and 64 activation rows (whole and partial register
// blocks of the zmm GEMM, 12 rows each; the AMX GEMM's groups of 16 and 32 and a tail) over K
// past one activation chunk (65 blocks: 64 + 1; 9 super-blocks; AMX chunks of 8 blocks of 32),
// on 13, 45 and 32 weight rows.
TEST_P(VecIsa, GemmOfRowGroupsMatchesGeneric) {
  const vec_kernels& g = vec_generic_kernels();
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  uint32_t seed = 1700;
  for (uint32_t tt : kAllTiles) {
    if (htp_tile_is_float(tt)) continue;
    const bool kq = htp_tile_info(tt).kblock == 256;
    for (uint32_t k : {kq ? 512u : 160u, kq ? 2304u : 2080u})
      for (uint32_t nrows : {13u, 45u, 32u})
        for (uint32_t nact : {16u, 35u, 64u}) {
          SCOPED_TRACE(testing::Message() << sp->name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src))
                                          << " k=" << k << " rows=" << nrows << " nact=" << nact);
          const Problem p = make_problem(tt, k, nrows, nact, seed++);
          const auto act = quantize(g, p);
          const auto want = run(g, p, act, false), got = run(*sp, p, act, false);
          for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(want[i], got[i]) << i;
        }
  }
}

// bf16 activation rows of p.x by the generic quantizer (the reference), `stride` bytes apart.
std::vector<uint8_t> quantize_bf16(const Problem& p, size_t stride) {
  std::vector<uint8_t> act(stride * p.nact, 0xEE);
  for (uint32_t c = 0; c < p.nact; c++)
    vec_generic_kernels().quant[HTP_ACT_BF16](p.x.data() + (size_t)c * p.k, act.data() + c * stride, p.k);
  return act;
}

// gemm_bf16 over nrows weight rows from row tile t0, into dst columns from t0 * 8 (stride ds).
void run_bf16(const vec_kernels& kern, const Problem& p, const std::vector<uint8_t>& act, size_t stride,
              uint32_t t0, uint32_t nrows, std::vector<float>& dst, size_t ds) {
  kern.for_tile(p.tt).gemm_bf16(p.tiles.data() + t0 * htp_tile_row_bytes(p.tt, p.k), act.data(), stride, p.nact,
                                dst.data() + t0 * kHtpTileRows, ds, p.k, nrows);
}

// The bf16 GEMM (tables with gemm_prefs.bf16_min_rows) on every quantized format: single rows,
// partial and whole 16-row groups and pairs, K past one chunk of 8 blocks; within bf16 rounding
// of the exact sums, and nothing written past nrows.
TEST_P(VecIsa, Bf16GemmWithinBf16OfTheExactSums) {
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  if (sp->gemm_prefs.bf16_min_rows == 0) GTEST_SKIP() << GetParam() << ": no bf16 GEMM";
  uint32_t seed = 2900;
  for (uint32_t tt : kAllTiles) {
    if (htp_tile_is_float(tt)) {
      EXPECT_EQ(sp->for_tile(tt).gemm_bf16, nullptr) << "float weights keep their F32 activations";
      continue;
    }
    ASSERT_NE(sp->for_tile(tt).gemm_bf16, nullptr);
    const bool kq = htp_tile_info(tt).kblock == 256;
    for (uint32_t k : {kq ? 256u : 32u, kq ? 2304u : 2080u})
      for (uint32_t nrows : {13u, 21u, 32u, 45u})
        for (uint32_t nact : {1u, 3u, 16u, 17u, 35u, 64u}) {
          SCOPED_TRACE(testing::Message() << sp->name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src))
                                          << " k=" << k << " rows=" << nrows << " nact=" << nact);
          const Problem p = make_problem(tt, k, nrows, nact, seed++);
          const size_t stride = htp_act_row_bytes(tt, k, HTP_ACT_BF16);
          const auto act = quantize_bf16(p, stride);
          const size_t ds = nrows + 3;
          std::vector<float> dst(ds * nact, -777.0f);
          run_bf16(*sp, p, act, stride, 0, nrows, dst, ds);
          std::vector<float> got;
          for (uint32_t c = 0; c < nact; c++) {
            for (uint32_t r = 0; r < nrows; r++) got.push_back(dst[c * ds + r]);
            for (uint32_t r = nrows; r < ds; r++) ASSERT_EQ(dst[c * ds + r], -777.0f) << "wrote past nrows";
          }
          expect_bf16_close(p, act, got);
        }
  }
}

// An output of the bf16 GEMM depends only on its weight row, its act row and K: row-tile ranges
// (one starting at an odd tile), act rows at another stride, and the act rows split in two give
// exactly the whole call's bits (the matmul op splits units, chunks and devices so).
TEST_P(VecIsa, Bf16GemmSplitsGiveTheSameBits) {
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  if (sp->gemm_prefs.bf16_min_rows == 0) GTEST_SKIP() << GetParam() << ": no bf16 GEMM";
  for (uint32_t tt : {HTP_TILE_Q4_0_X8, HTP_TILE_Q6_K_X8, HTP_TILE_Q8_0_X8})
    for (uint32_t nact : {5u, 37u}) {
      SCOPED_TRACE(testing::Message() << type_name(static_cast<Type>(htp_tile_info(tt).src)) << " nact=" << nact);
      const uint32_t k = 512, nrows = 61;
      const Problem p = make_problem(tt, k, nrows, nact, 31);
      const size_t stride = htp_act_row_bytes(tt, k, HTP_ACT_BF16), padded = stride + 192;
      const auto act = quantize_bf16(p, stride), act2 = quantize_bf16(p, padded);
      std::vector<float> whole(nrows * nact, -1.0f), part(nrows * nact, -2.0f), halves(nrows * nact, -3.0f);
      run_bf16(*sp, p, act, stride, 0, nrows, whole, nrows);
      // tiles [0, 1), [1, 6) (an odd start: pairs 1-2, 3-4, 5), [6, 8) (rows 48..60, partial)
      run_bf16(*sp, p, act2, padded, 0, 8, part, nrows);
      run_bf16(*sp, p, act2, padded, 1, 40, part, nrows);
      run_bf16(*sp, p, act2, padded, 6, 13, part, nrows);
      ASSERT_EQ(part, whole);
      // act rows [0, h) and [h, nact) as two calls
      const uint32_t h = nact / 2;
      const vec_gemm_fn f = sp->for_tile(tt).gemm_bf16;
      f(p.tiles.data(), act.data(), stride, h, halves.data(), nrows, k, nrows);
      f(p.tiles.data(), act.data() + h * stride, stride, nact - h, halves.data() + h * nrows, nrows, k, nrows);
      ASSERT_EQ(halves, whole);
    }
}

// A table's bf16 quantizer gives the generic one's bits: random rows, K with a tail, and the
// special values of the rule (ties, denormals, infinities, NaNs, overflow on rounding).
TEST_P(VecIsa, Bf16QuantizerMatchesGeneric) {
  const vec_kernels* sp = vec_isa_kernels(GetParam());
  if (sp == nullptr) GTEST_SKIP() << GetParam() << ": not available on this CPU";
  if (sp->quant[HTP_ACT_BF16] == nullptr) GTEST_SKIP() << GetParam() << ": no bf16 activations";
  std::mt19937 rng(5);
  std::vector<float> x = test::random_floats(96, rng);
  const uint32_t specials[] = {0x3F808000u, 0x3F818000u, 0x00000001u, 0x80700000u, 0x7F800000u,
                               0xFF800000u, 0x7FC00000u, 0xFF800001u, 0x7F7FFFFFu, 0x3F7FFFFFu};
  for (size_t i = 0; i < std::size(specials); i++) std::memcpy(&x[3 * i], &specials[i], 4);
  for (uint32_t k : {96u, 64u, 45u, 7u}) {
    std::vector<uint8_t> a(2 * k + 8, 0xAB), b(2 * k + 8, 0xAB);
    vec_generic_kernels().quant[HTP_ACT_BF16](x.data(), a.data(), k);
    sp->quant[HTP_ACT_BF16](x.data(), b.data(), k);
    ASSERT_EQ(a, b) << "k=" << k;
  }
}

INSTANTIATE_TEST_SUITE_P(, VecIsa, testing::ValuesIn(kVecIsaNames),
                         [](const testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// The avx512 table exists with two GEMVs (zmm tile pairs, or the ymm kernel in EVEX form) and the
// CPU picks one; the parameterized tests above run only that one, so both run here.
TEST(VecKernels, Avx512BothGemvWidthsMatchGeneric) {
  if (vec_isa_kernels("avx512") == nullptr) GTEST_SKIP() << "avx512: not available on this CPU";
#if defined(__x86_64__)
  EXPECT_EQ(vec_avx512_kernels(), vec_avx512_kernels_gemv(!__builtin_cpu_is("amd"))) << "ymm GEMV on AMD only";
#endif
  for (bool zmm : {true, false}) {
    const vec_kernels& s = *vec_avx512_kernels_gemv(zmm);
    EXPECT_STREQ(s.gemv_variant, zmm ? "zmm GEMV" : "ymm GEMV");
    expect_gemv_shapes_match_generic(s, false, zmm ? 2100 : 2500);
  }
}

// A row-tile sub-range with padded activation rows gives exactly the corresponding outputs of the
// whole-matrix call (the matmul op hands each worker a tile range and strided VTCM rows).
TEST(VecKernels, TileRangesAndStrides) {
  for (const vec_kernels* kern : impls())
    for (uint32_t tt : {HTP_TILE_Q4_0_X8, HTP_TILE_Q6_K_X8, HTP_TILE_F16_X8, HTP_TILE_Q8_0_X8})
      // 21 rows: the AMX GEMM's path, where a range starting at an odd tile pairs other tiles.
      for (uint32_t nact : {5u, 21u}) {
        SCOPED_TRACE(testing::Message() << kern->name << " " << type_name(static_cast<Type>(htp_tile_info(tt).src))
                                        << " nact=" << nact);
        const uint32_t k = 512, nrows = 29;
        const Problem p = make_problem(tt, k, nrows, nact, 77);
        const auto act = quantize(*kern, p);
        const auto whole = run(*kern, p, act, false);
        const size_t ab = htp_act_row_bytes(tt, k), padded = ab + 40;
        std::vector<uint8_t> act2(padded * nact);
        for (uint32_t c = 0; c < nact; c++) std::memcpy(act2.data() + c * padded, act.data() + c * ab, ab);
        const size_t rb = htp_tile_row_bytes(tt, k);
        std::vector<float> part(nrows * nact, -1.0f);
        // tiles [1, 3) = rows 8..23, then tile 3 = rows 24..28 (partial)
        kern->for_tile(tt).gemm(p.tiles.data() + rb, act2.data(), padded, nact, part.data() + 8, nrows, k, 16);
        kern->for_tile(tt).gemm(p.tiles.data() + 3 * rb, act2.data(), padded, nact, part.data() + 24, nrows, k,
                                5);
        for (uint32_t c = 0; c < nact; c++)
          for (uint32_t r = 8; r < nrows; r++)
            ASSERT_EQ(part[c * nrows + r], whole[c * nrows + r]) << c << " " << r;
        // GEMV on the range [1, 3) agrees with GEMM's first column: bit for bit for quantized weights;
        // float GEMV sums in 4 partial accumulators (another order), so within rounding there.
        std::vector<float> v(16);
        kern->for_tile(tt).gemv(p.tiles.data() + rb, act2.data(), v.data(), k, 16);
        for (uint32_t r = 0; r < 16; r++) {
          if (htp_tile_is_float(tt))
            ASSERT_NEAR(v[r], whole[8 + r], 1e-5 * (1 + std::fabs(whole[8 + r]))) << r;
          else
            ASSERT_EQ(v[r], whole[8 + r]) << r;
        }
      }
}

TEST(VecKernels, SelectPicksTheBestUsableTable) {
  const char* forced = vec_isa_forced();
  if (forced != nullptr) {
    if (std::string(forced) == kVecIsaExact) {
      EXPECT_TRUE(htp_vec_select().gemm_exact());
      for (const vec_kernels* k : impls())
        if (k->gemm_exact()) {
          EXPECT_EQ(&htp_vec_select(), k) << "the best exact table";
          break;
        }
    } else {
      EXPECT_STREQ(htp_vec_select().name, forced);
    }
    return;
  }
  EXPECT_EQ(&htp_vec_select(), impls().front());
#if defined(__x86_64__)
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  EXPECT_EQ(vec_isa_kernels("avx2") != nullptr, avx2);
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  EXPECT_EQ(vec_isa_kernels("avx512") != nullptr, avx512);
  // AMX needs the OS's grant as well as the bits: usable implies the CPU has them.
  const bool amx = avx512 && __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16") &&
                   __builtin_cpu_supports("avx512bf16");
  if (vec_isa_kernels("amx") != nullptr) {
    EXPECT_TRUE(amx);
  }
#endif
  // "exact": the best table whose GEMMs are bit-exact, never the bf16 one.
  ASSERT_NE(vec_isa_kernels(kVecIsaExact), nullptr);
  EXPECT_TRUE(vec_isa_kernels(kVecIsaExact)->gemm_exact());
  EXPECT_TRUE(vec_isa_known(kVecIsaExact));
  EXPECT_EQ(vec_isa_kernels("sse9"), nullptr);
  EXPECT_FALSE(vec_isa_known("sse9"));
}

// Hand-derived bf16 (the top 16 bits of the f32, rounded to nearest even): 1 + 2^-8 lies
// halfway between 0x3F80 and 0x3F81 (to even: 0x3F80), 1 + 3 * 2^-8 between 0x3F81 and 0x3F82
// (0x3F82); denormals flush to a zero of their sign; a NaN stays a quiet NaN; the largest
// float rounds up to infinity.
TEST(VecActQuant, Bf16ByHand) {
  const std::pair<uint32_t, uint16_t> cases[] = {
      {0x3F800000u, 0x3F80}, {0x3F808000u, 0x3F80}, {0x3F818000u, 0x3F82}, {0xC0200000u, 0xC020},
      {0x3F80C000u, 0x3F81}, {0x00000001u, 0x0000}, {0x80700000u, 0x8000}, {0x7F800000u, 0x7F80},
      {0x7F800001u, 0x7FC0}, {0xFFC00000u, 0xFFC0}, {0x7F7FFFFFu, 0x7F80}};
  std::vector<float> x;
  for (const auto& c : cases) {
    float f;
    std::memcpy(&f, &c.first, 4);
    x.push_back(f);
  }
  std::vector<uint16_t> y(x.size());
  vec_generic_kernels().quant[HTP_ACT_BF16](x.data(), (uint8_t*)y.data(), (uint32_t)x.size());
  for (size_t i = 0; i < x.size(); i++) EXPECT_EQ(y[i], cases[i].second) << std::hex << cases[i].first;
}

// Hand-derived: amax = 254 -> d = 2, q = round-half-even(x / 2).
TEST(VecActQuant, Q8_32ByHand) {
  std::vector<float> x(32, 0.0f);
  x[0] = 254.0f;   // 127
  x[1] = -254.0f;  // -127
  x[2] = 3.0f;     // 1.5 -> 2 (half to even)
  x[3] = 5.0f;     // 2.5 -> 2 (half to even)
  x[4] = -7.2f;    // -3.6 -> -4
  x[5] = 0.9f;     // 0.45 -> 0
  x[31] = 100.0f;  // 50
  for (const vec_kernels* kern : impls()) {
    SCOPED_TRACE(kern->name);
    htp_act_q8_32 b;
    kern->quant[HTP_ACT_Q8_32](x.data(), (uint8_t*)&b, 32);
    EXPECT_EQ(b.d, 2.0f);
    const int want[32] = {127, -127, 2, 2, -4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0,   0,    0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50};
    for (int i = 0; i < 32; i++) EXPECT_EQ(b.q[i], want[i]) << i;
    EXPECT_EQ(b.sum, 127 - 127 + 2 + 2 - 4 + 50);
  }
}

// Hand-derived: amax = 127 -> d = 1, id = 1, q = round-half-even(x). Sub-block j starts with
// -127 + j so every sum differs: the pattern below sums to 119 + j.
TEST(VecActQuant, Q8_256ByHand) {
  const float pat[16] = {-127, -3.5f, 2.5f, 0.5f, 1.49f,  -1.51f, 100, 0,
                         5,    -5,    7.5f, 8.5f, 126.4f, -0.4f,  3,   4};
  const int qv[16] = {-127, -4, 2, 0, 1, -2, 100, 0, 5, -5, 8, 8, 126, 0, 3, 4};
  std::vector<float> x(256);
  for (int i = 0; i < 256; i++) x[i] = i % 16 == 0 ? (float)(-127 + i / 16) : pat[i % 16];
  for (const vec_kernels* kern : impls()) {
    SCOPED_TRACE(kern->name);
    htp_act_q8_256 b;
    kern->quant[HTP_ACT_Q8_256](x.data(), (uint8_t*)&b, 256);
    EXPECT_EQ(b.d, 1.0f);
    for (int i = 0; i < 256; i++) ASSERT_EQ(b.q[i], i % 16 == 0 ? -127 + i / 16 : qv[i % 16]) << i;
    for (int j = 0; j < 16; j++) EXPECT_EQ(b.sum16[j], 119 + j);
    for (int j = 0; j < 8; j++) EXPECT_EQ(b.sum32[j], 238 + 4 * j + 1);
  }
}

// Every ISA's quantizers give the generic bytes: blocks of very different magnitudes, an all-zero
// block (d = 0), -0.0, exact ties at half a step (round half to even) and a long row.
TEST(VecActQuant, EveryImplMatchesGenericBytes) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0, 1);
  const uint32_t k = 8192;
  std::vector<float> x(k);
  for (uint32_t i = 0; i < k; i++) x[i] = nd(rng) * std::ldexp(1.0f, (int)(i / 256) % 24 - 12);
  for (uint32_t i = 256; i < 512; i++) x[i] = 0.0f;  // one zero super-block (and 8 zero blocks)
  x[600] = -0.0f;
  for (uint32_t i = 1024; i < 1280; i++) x[i] = (float)((int)(i % 64) - 32) + 0.5f;  // amax 127 -> d 1: ties
  x[1024] = 127.0f;
  for (uint32_t act : {(uint32_t)HTP_ACT_Q8_32, (uint32_t)HTP_ACT_Q8_256}) {
    const size_t bytes = act == HTP_ACT_Q8_32 ? k / 32 * sizeof(htp_act_q8_32) : k / 256 * sizeof(htp_act_q8_256);
    std::vector<uint8_t> want(bytes, 0xAA);
    vec_generic_kernels().quant[act](x.data(), want.data(), k);
    for (const vec_kernels* kern : impls()) {
      SCOPED_TRACE(testing::Message() << kern->name << " act " << act);
      std::vector<uint8_t> got(bytes, 0x55);
      kern->quant[act](x.data(), got.data(), k);
      for (size_t i = 0; i < bytes; i++) ASSERT_EQ(got[i], want[i]) << "byte " << i;
      // Shorter rows: the first blocks only.
      std::vector<uint8_t> part(bytes, 0x55);
      const uint32_t kshort = act == HTP_ACT_Q8_32 ? 96 : 768;
      kern->quant[act](x.data(), part.data(), kshort);
      const size_t nshort = act == HTP_ACT_Q8_32 ? 3 * sizeof(htp_act_q8_32) : 3 * sizeof(htp_act_q8_256);
      for (size_t i = 0; i < nshort; i++) ASSERT_EQ(part[i], want[i]) << "short row byte " << i;
      for (size_t i = nshort; i < bytes; i++) ASSERT_EQ(part[i], 0x55) << "wrote past k at " << i;
    }
  }
}

TEST(VecActQuant, F32PadsWithZeros) {
  std::vector<float> x = {1, 2, 3};
  for (const vec_kernels* kern : impls()) {
    std::vector<float> y(32, -1.0f);
    kern->quant[HTP_ACT_F32](x.data(), (uint8_t*)y.data(), 3);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[2], 3.0f);
    for (int i = 3; i < 32; i++) EXPECT_EQ(y[i], 0.0f);
  }
}

}  // namespace
}  // namespace hexllm::htp
