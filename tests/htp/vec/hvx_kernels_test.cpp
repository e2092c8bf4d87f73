// Freestanding Hexagon test (no libc, no gtest): every kernel of the HVX table against the generic
// table, bit for bit, for every tile type, GEMV and GEMM, odd row counts, several K and numbers
// of activation rows, misaligned weights and activations. Exit status 0 when all match.
//
// Weights are random tile bytes (every code bit pattern the layout allows) with scales that are
// mostly normal f16 values, some subnormal, zero, inf or nan; activations are random floats
// quantized by the generic quantizer, and the HVX table's quantizers are checked against it too.
// The HVX f16 decoding of the scales is also checked on every half.
#include <stddef.h>
#include <stdint.h>

#include "base/fp16.h"
#include "htp/platform/platform_process.h"
#include "htp/vec/hexagon_hvx.h"
#include "htp/vec/vec.h"

namespace {

using namespace hexllm;
using namespace hexllm::htp;

void say(const char* s) {
  size_t n = 0;
  while (s[n]) n++;
  proc_write_stderr(s, n);
}

void say_u(uint64_t v) {
  char b[24];
  int i = 23;
  b[i] = 0;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  say(b + i);
}

uint32_t g_rng = 12345;
uint32_t rnd() {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng ^ (g_rng >> 15);
}
// Uniform in [-2, 2).
float rnd_float() { return (float)(int32_t)(rnd() >> 8) * (1.0f / 2097152.0f) - 2.0f; }
float rnd_scale(float base) { return base * (0.5f + (float)(rnd() >> 8) * (1.0f / 16777216.0f)); }

void put16(uint8_t* p, uint16_t v) { __builtin_memcpy(p, &v, 2); }

constexpr size_t kWBytes = 1 << 18, kActBytes = 1 << 16, kDst = 4096;
alignas(128) uint8_t g_w[kWBytes + 256];
alignas(128) uint8_t g_act[kActBytes + 256];
alignas(128) uint8_t g_act2[kActBytes + 256];
alignas(128) float g_x[16384];
alignas(128) float g_dst_ref[kDst];
alignas(128) float g_dst_hvx[kDst];

// Random block tile of tile type t at p, valid in its format (tiles.h).
void random_block(uint32_t t, uint8_t* p) {
  const uint32_t bb = htp_tile_info(t).block_bytes;
  for (uint32_t i = 0; i < bb; i++) p[i] = (uint8_t)rnd();
  // One scale in 8 is an f16 edge case: a subnormal, +-0, or (rarely) inf or nan, so the
  // scale decoding of every path is compared on them too.
  auto f16s = [&](uint32_t off, float base) {
    for (uint32_t r = 0; r < 8; r++) {
      uint16_t h = fp32_to_fp16(rnd_scale(base));
      const uint32_t u = rnd();
      if (u % 8 == 0) {
        const uint32_t kind = (u >> 3) % 16;
        const uint16_t sign = (uint16_t)((u >> 8) & 0x8000);
        h = kind < 12 ? (uint16_t)(sign | (1 + (u >> 12) % 1023))  // subnormal
            : kind < 15 ? sign                                      // zero
                        : (uint16_t)(sign | 0x7c00 | ((u >> 12) % 2 ? 0x200 : 0));  // inf / nan
      }
      put16(p + off + 2 * r, h);
    }
  };
  switch (t) {
    case HTP_TILE_Q4_0_X8:
    case HTP_TILE_IQ4_NL_X8:
      f16s(128, 0.05f);
      break;
    case HTP_TILE_Q4_1_X8:
      f16s(128, 0.05f);
      f16s(144, -0.5f);
      break;
    case HTP_TILE_Q5_0_X8:
      f16s(160, 0.03f);
      break;
    case HTP_TILE_Q5_1_X8:
      f16s(160, 0.03f);
      f16s(176, -0.5f);
      break;
    case HTP_TILE_Q8_0_X8:
      f16s(256, 0.01f);
      break;
    case HTP_TILE_MXFP4_X8:
      for (uint32_t r = 0; r < 8; r++) p[128 + r] = (uint8_t)(122 + rnd() % 6);
      break;
    case HTP_TILE_Q4_K_X8:
    case HTP_TILE_Q5_K_X8: {
      const uint32_t sc = t == HTP_TILE_Q4_K_X8 ? 1024 : 1280;
      for (uint32_t i = 0; i < 128; i++) p[sc + i] &= 63;  // 6-bit scales and mins
      f16s(sc + 128, 0.003f);
      f16s(sc + 144, 0.01f);
      break;
    }
    case HTP_TILE_Q6_K_X8:
      f16s(1664, 0.0005f);
      break;
    case HTP_TILE_F32_X8:
      for (uint32_t i = 0; i < 256; i++) {
        const float f = rnd_float();
        __builtin_memcpy(p + 4 * i, &f, 4);
      }
      break;
    case HTP_TILE_F16_X8:
    case HTP_TILE_BF16_X8:
      for (uint32_t i = 0; i < 256; i++)
        put16(p + 2 * i, t == HTP_TILE_F16_X8 ? fp32_to_fp16(rnd_float()) : fp32_to_bf16(rnd_float()));
      break;
    default:
      break;
  }
}

bool same_bits(const float* a, const float* b, size_t n) { return __builtin_memcmp(a, b, n * 4) == 0; }

const char* kNames[kHtpTileTypes] = {"Q4_0", "Q4_1", "Q8_0", "MXFP4", "IQ4_NL", "F32", "F16",
                                     "BF16", "Q5_0", "Q5_1", "Q4_K",  "Q5_K",  "Q6_K"};

uint32_t g_failures = 0, g_cases = 0;

void fail(const char* what, uint32_t t, uint32_t k, uint32_t nrows, uint32_t nact) {
  g_failures++;
  say("MISMATCH ");
  say(what);
  say(" ");
  say(kNames[t - HTP_TILE_FIRST]);
  say(" k=");
  say_u(k);
  say(" nrows=");
  say_u(nrows);
  say(" nact=");
  say_u(nact);
  say("\n");
}

// One problem: weights at offset woff (misaligned on purpose), activations at aoff.
void run_case(const vec_kernels& hvx, uint32_t t, uint32_t k, uint32_t nrows, uint32_t nact, uint32_t woff,
              uint32_t aoff) {
  const vec_kernels& gen = vec_generic_kernels();
  const htp_tile_desc& d = htp_tile_info(t);
  const size_t wbytes = htp_tiled_size(t, nrows, k);
  const size_t arow = htp_act_row_bytes(t, k);
  const uint32_t kp = htp_tile_padded_k(t, k);
  const size_t stride = nrows + 3;
  if (wbytes > kWBytes || arow * nact > kActBytes || (size_t)nact * kp > 16384 || stride * nact > kDst) {
    say("case too large\n");
    g_failures++;
    return;
  }
  uint8_t* w = g_w + woff;
  for (size_t b = 0; b < wbytes / d.block_bytes; b++) random_block(t, w + b * d.block_bytes);
  uint8_t* act = g_act + aoff;
  for (uint32_t c = 0; c < nact; c++) {
    float* x = g_x + (size_t)c * kp;
    for (uint32_t i = 0; i < k; i++) x[i] = rnd_float() * ((i / 32) % 3 == 0 ? 0.01f : 1.0f);
    // Row 1 holds edge cases for the quantizers' amax: a NaN (never the maximum), -0, a block
    // of zeros, and with K > 32 an infinity.
    if (c == 1) {
      x[5] = __builtin_nanf("");
      x[6] = -0.0f;
      if (k >= 64)
        for (uint32_t i = 32; i < 64; i++) x[i] = i == 40 ? -0.0f : 0.0f;
      if (k >= 128) x[100] = -__builtin_inff();
    }
    gen.quant_for_tile(t)(x, act + c * arow, k);
    hvx.quant_for_tile(t)(x, g_act2 + c * arow, k);
  }
  g_cases++;
  if (__builtin_memcmp(act, g_act2, arow * nact) != 0) fail("quant", t, k, nrows, nact);

  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < stride * nact; i++) g_dst_ref[i] = g_dst_hvx[i] = -777.0f;
    if (pass == 0) {
      for (uint32_t c = 0; c < nact; c++) {
        gen.for_tile(t).gemv(w, act + c * arow, g_dst_ref + c * stride, k, nrows);
        hvx.for_tile(t).gemv(w, act + c * arow, g_dst_hvx + c * stride, k, nrows);
      }
    } else {
      gen.for_tile(t).gemm(w, act, arow, nact, g_dst_ref, stride, k, nrows);
      hvx.for_tile(t).gemm(w, act, arow, nact, g_dst_hvx, stride, k, nrows);
    }
    g_cases++;
    if (!same_bits(g_dst_ref, g_dst_hvx, stride * nact)) fail(pass == 0 ? "gemv" : "gemm", t, k, nrows, nact);
  }
}

// The HVX f16 -> f32 scale decoding against fp16_to_fp32 on all 65536 halves.
void check_f16_decode() {
  alignas(128) uint32_t in[32], out[32];
  uint32_t bad = 0;
  for (uint32_t h0 = 0; h0 < 65536; h0 += 32) {
    for (uint32_t i = 0; i < 32; i++) in[i] = h0 + i;
    *(HVX_Vector*)out = hvx::f16_to_f32_words(*(const HVX_Vector*)in);
    for (uint32_t i = 0; i < 32; i++) bad += out[i] != fp32_bits(fp16_to_fp32((uint16_t)(h0 + i)));
  }
  g_cases++;
  if (bad) {
    g_failures++;
    say("MISMATCH f16 decode: ");
    say_u(bad);
    say(" halves\n");
  }
}

}  // namespace

// extern "C": -ffreestanding makes main an ordinary (mangled) function.
extern "C" int main() {
  const vec_kernels* hvx = vec_hvx_kernels();
  if (!hvx || &htp_vec_select() != hvx) {
    say("hvx_kernels_test: the HVX table is not selected\n");
    return 2;
  }
  check_f16_decode();
  const uint32_t k32[] = {32, 96, 160, 2048};
  const uint32_t k256[] = {256, 768};
  const uint32_t kfl[] = {32, 45, 160};
  const uint32_t rows[] = {3, 8, 19};
  const uint32_t nacts[] = {1, 2, 5, 7};
  for (uint32_t t = HTP_TILE_FIRST; t < HTP_TILE_END; t++) {
    const uint32_t* ks = htp_tile_is_float(t) ? kfl : htp_tile_info(t).kblock == 256 ? k256 : k32;
    const uint32_t nk = htp_tile_is_float(t) ? 3 : htp_tile_info(t).kblock == 256 ? 2 : 4;
    const uint32_t before = g_failures;
    for (uint32_t ki = 0; ki < nk; ki++)
      for (uint32_t nr : rows)
        for (uint32_t na : nacts) {
          if (ks[ki] >= 2048 && na > 2) continue;  // keeps emulation time short
          run_case(*hvx, t, ks[ki], nr, na, (ki + nr) % 3 == 0 ? 0 : 1 + 4 * ki, 4 * ((ki + na) % 32));
        }
    say(kNames[t - HTP_TILE_FIRST]);
    say(g_failures == before ? ": ok\n" : ": FAILED\n");
  }
  say("hvx_kernels_test: ");
  say_u(g_cases);
  say(" comparisons, ");
  say_u(g_failures);
  say(" mismatches\n");
  return g_failures == 0 ? 0 : 1;
}
