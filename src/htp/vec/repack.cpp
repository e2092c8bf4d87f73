// GGUF blocks <-> logical blocks <-> tiles. One decoder/encoder pair per GGUF format and one
// packer/unpacker per tile layout family, so no per-type near-duplicates.
#include "htp/vec/repack.h"

#include "quant/blocks.h"
#include "quant/types.h"

namespace hexllm::htp {
namespace {

using namespace hexllm::quant;

constexpr uint32_t R = kHtpTileRows;

inline uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
inline void wr16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

// ---- GGUF block <-> logical block ----------------------------------------------------------

// 32-element nibble block: qs[j] = element j (low) | element j+16 (high).
void nib32_decode(const uint8_t* qs, uint8_t* q) {
  for (int j = 0; j < 16; j++) {
    q[j] = qs[j] & 15;
    q[j + 16] = qs[j] >> 4;
  }
}
void nib32_encode(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < 16; j++) qs[j] = (uint8_t)((q[j] & 15) | (q[j + 16] << 4));
}

// Q5_0/Q5_1 fifth bits: bit j of the little-endian uint32 qh is bit 4 of element j.
void hi32_decode(const uint8_t* qh, uint8_t* q) {
  for (int j = 0; j < 32; j++) q[j] |= (uint8_t)(((qh[j / 8] >> (j % 8)) & 1) << 4);
}
void hi32_encode(const uint8_t* q, uint8_t* qh) {
  for (int i = 0; i < 4; i++) qh[i] = 0;
  for (int j = 0; j < 32; j++) qh[j / 8] |= (uint8_t)(((q[j] >> 4) & 1) << (j % 8));
}

// Q4_K/Q5_K packed 6-bit scales and mins: the inverse of get_scale_min_k4.
void kscales_encode(const uint8_t* sc, const uint8_t* mn, uint8_t* p) {
  for (int j = 0; j < 4; j++) {
    p[j] = (uint8_t)((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    p[j + 4] = (uint8_t)((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    p[j + 8] = (uint8_t)((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
  }
}

// Q4_K/Q5_K low nibbles: chunk c of 64 elements uses qs[32c..32c+31], low nibble first.
void nibk_decode(const uint8_t* qs, uint8_t* q) {
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++) {
      q[64 * c + l] = qs[32 * c + l] & 15;
      q[64 * c + 32 + l] = qs[32 * c + l] >> 4;
    }
}
void nibk_encode(const uint8_t* q, uint8_t* qs) {
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++) qs[32 * c + l] = (uint8_t)((q[64 * c + l] & 15) | (q[64 * c + 32 + l] << 4));
}

void decode_gguf(Type t, const uint8_t* s, vec_qblock& b) {
  __builtin_memset(&b, 0, sizeof b);
  switch (t) {
    case Type::Q4_0:
    case Type::IQ4_NL:
      b.d = rd16(s);
      nib32_decode(s + 2, b.q);
      break;
    case Type::Q4_1:
      b.d = rd16(s);
      b.m = rd16(s + 2);
      nib32_decode(s + 4, b.q);
      break;
    case Type::Q5_0:
      b.d = rd16(s);
      nib32_decode(s + 6, b.q);
      hi32_decode(s + 2, b.q);
      break;
    case Type::Q5_1:
      b.d = rd16(s);
      b.m = rd16(s + 2);
      nib32_decode(s + 8, b.q);
      hi32_decode(s + 4, b.q);
      break;
    case Type::Q8_0:
      b.d = rd16(s);
      for (int j = 0; j < 32; j++) b.q[j] = s[2 + j];
      break;
    case Type::MXFP4:
      b.e = s[0];
      nib32_decode(s + 1, b.q);
      break;
    case Type::Q4_K:
    case Type::Q5_K: {
      b.d = rd16(s);
      b.m = rd16(s + 2);
      for (int j = 0; j < 8; j++) get_scale_min_k4(j, s + 4, &b.sc[j], &b.mn[j]);
      const bool q5 = t == Type::Q5_K;
      nibk_decode(s + (q5 ? 48 : 16), b.q);
      if (q5) {
        const uint8_t* qh = s + 16;
        for (int c = 0; c < 4; c++)
          for (int l = 0; l < 32; l++) {
            b.q[64 * c + l] |= (uint8_t)(((qh[l] >> (2 * c)) & 1) << 4);
            b.q[64 * c + 32 + l] |= (uint8_t)(((qh[l] >> (2 * c + 1)) & 1) << 4);
          }
      }
      break;
    }
    case Type::Q6_K: {
      // Half h (128 elements), quarter k: ql nibble (k<2 low, else high) of ql[64h + l + 32(k&1)],
      // 2 high bits (qh[32h + l] >> 2k) & 3, scale scales[8h + 2k + l/16].
      const uint8_t* ql = s;
      const uint8_t* qh = s + 128;
      for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++)
          for (int l = 0; l < 32; l++) {
            const uint8_t lb = ql[64 * h + l + 32 * (k & 1)];
            const int lo = k < 2 ? (lb & 15) : (lb >> 4);
            const int hi = (qh[32 * h + l] >> (2 * k)) & 3;
            b.q[128 * h + 32 * k + l] = (uint8_t)(lo | (hi << 4));
          }
      for (int j = 0; j < 16; j++) b.sc[j] = s[192 + j];
      b.d = rd16(s + 208);
      break;
    }
    default:
      break;
  }
}

void encode_gguf(Type t, const vec_qblock& b, uint8_t* s) {
  switch (t) {
    case Type::Q4_0:
    case Type::IQ4_NL:
      wr16(s, b.d);
      nib32_encode(b.q, s + 2);
      break;
    case Type::Q4_1:
      wr16(s, b.d);
      wr16(s + 2, b.m);
      nib32_encode(b.q, s + 4);
      break;
    case Type::Q5_0:
      wr16(s, b.d);
      hi32_encode(b.q, s + 2);
      nib32_encode(b.q, s + 6);
      break;
    case Type::Q5_1:
      wr16(s, b.d);
      wr16(s + 2, b.m);
      hi32_encode(b.q, s + 4);
      nib32_encode(b.q, s + 8);
      break;
    case Type::Q8_0:
      wr16(s, b.d);
      for (int j = 0; j < 32; j++) s[2 + j] = b.q[j];
      break;
    case Type::MXFP4:
      s[0] = b.e;
      nib32_encode(b.q, s + 1);
      break;
    case Type::Q4_K:
    case Type::Q5_K: {
      wr16(s, b.d);
      wr16(s + 2, b.m);
      kscales_encode(b.sc, b.mn, s + 4);
      const bool q5 = t == Type::Q5_K;
      nibk_encode(b.q, s + (q5 ? 48 : 16));
      if (q5) {
        uint8_t* qh = s + 16;
        for (int l = 0; l < 32; l++) {
          uint8_t v = 0;
          for (int c = 0; c < 4; c++) {
            v |= (uint8_t)(((b.q[64 * c + l] >> 4) & 1) << (2 * c));
            v |= (uint8_t)(((b.q[64 * c + 32 + l] >> 4) & 1) << (2 * c + 1));
          }
          qh[l] = v;
        }
      }
      break;
    }
    case Type::Q6_K: {
      uint8_t* ql = s;
      uint8_t* qh = s + 128;
      for (int i = 0; i < 192; i++) s[i] = 0;
      for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++)
          for (int l = 0; l < 32; l++) {
            const uint8_t q = b.q[128 * h + 32 * k + l];
            ql[64 * h + l + 32 * (k & 1)] |= (uint8_t)(k < 2 ? (q & 15) : ((q & 15) << 4));
            qh[32 * h + l] |= (uint8_t)(((q >> 4) & 3) << (2 * k));
          }
      for (int j = 0; j < 16; j++) s[192 + j] = b.sc[j];
      wr16(s + 208, b.d);
      break;
    }
    default:
      break;
  }
}

// ---- logical blocks <-> block tile ---------------------------------------------------------

// Code vectors are stored in CHUNKS of `vpc` nibble vectors followed by the chunk's high-bit
// vector (if any): nibble vector v at (v / vpc) * chunk + (v % vpc) * 32, the high bits of chunk c
// at c * chunk + vpc * 32. One chunk is one sub-block, so a kernel reads each tile sequentially.
struct Chunks {
  uint32_t vpc, bytes;
  uint32_t nib(uint32_t v) const { return v / vpc * bytes + v % vpc * 32; }
  uint32_t high(uint32_t c) const { return c * bytes + vpc * 32; }
};

// NIB vector v: byte 4r + j = element 8v+j (low nibble) | element 8v+4+j (high nibble).
void nib_pack(const vec_qblock* rows, uint32_t kb, Chunks ch, uint8_t* dst) {
  for (uint32_t v = 0; v < kb / 8; v++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++)
        dst[ch.nib(v) + 4 * r + j] =
            (uint8_t)((rows[r].q[8 * v + j] & 15) | ((rows[r].q[8 * v + 4 + j] & 15) << 4));
}
void nib_unpack(const uint8_t* src, uint32_t kb, Chunks ch, vec_qblock* rows) {
  for (uint32_t v = 0; v < kb / 8; v++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++) {
        const uint8_t x = src[ch.nib(v) + 4 * r + j];
        rows[r].q[8 * v + j] = x & 15;
        rows[r].q[8 * v + 4 + j] = x >> 4;
      }
}

// H5 (chunk = 32 elements): byte 4r+j bit i = bit 4 of element 4i+j.
void h5_pack(const vec_qblock* rows, uint32_t kb, Chunks ch, uint8_t* dst) {
  for (uint32_t s = 0; s < kb / 32; s++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++) {
        uint8_t x = 0;
        for (uint32_t i = 0; i < 8; i++) x |= (uint8_t)(((rows[r].q[32 * s + 4 * i + j] >> 4) & 1) << i);
        dst[ch.high(s) + 4 * r + j] = x;
      }
}
void h5_unpack(const uint8_t* src, uint32_t kb, Chunks ch, vec_qblock* rows) {
  for (uint32_t s = 0; s < kb / 32; s++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++)
        for (uint32_t i = 0; i < 8; i++)
          rows[r].q[32 * s + 4 * i + j] |= (uint8_t)(((src[ch.high(s) + 4 * r + j] >> i) & 1) << 4);
}

// H6 (chunk = 16 elements): byte 4r+j bits 2i,2i+1 = bits 4,5 of element 4i+j.
void h6_pack(const vec_qblock* rows, Chunks ch, uint8_t* dst) {
  for (uint32_t u = 0; u < 16; u++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++) {
        uint8_t x = 0;
        for (uint32_t i = 0; i < 4; i++)
          x |= (uint8_t)(((rows[r].q[16 * u + 4 * i + j] >> 4) & 3) << (2 * i));
        dst[ch.high(u) + 4 * r + j] = x;
      }
}
void h6_unpack(const uint8_t* src, Chunks ch, vec_qblock* rows) {
  for (uint32_t u = 0; u < 16; u++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t j = 0; j < 4; j++)
        for (uint32_t i = 0; i < 4; i++)
          rows[r].q[16 * u + 4 * i + j] |= (uint8_t)(((src[ch.high(u) + 4 * r + j] >> (2 * i)) & 3) << 4);
}

constexpr Chunks kNib4{4, 128};  // Q4_0, Q4_1, IQ4_NL, MXFP4, Q4_K
constexpr Chunks kNib5{4, 160};  // Q5_0, Q5_1, Q5_K
constexpr Chunks kNib6{2, 96};   // Q6_K

// Pairs of sub-block values: 16 bytes per pair p, byte 2r + h = value of sub-block 2p+h.
void pairs_pack(const vec_qblock* rows, uint8_t (vec_qblock::*field)[16], uint32_t n, uint8_t* dst) {
  for (uint32_t p = 0; p < n / 2; p++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t h = 0; h < 2; h++) dst[16 * p + 2 * r + h] = (rows[r].*field)[2 * p + h];
}
void pairs_unpack(const uint8_t* src, uint8_t (vec_qblock::*field)[16], uint32_t n, vec_qblock* rows) {
  for (uint32_t p = 0; p < n / 2; p++)
    for (uint32_t r = 0; r < R; r++)
      for (uint32_t h = 0; h < 2; h++) (rows[r].*field)[2 * p + h] = src[16 * p + 2 * r + h];
}

void d_pack(const vec_qblock* rows, uint16_t vec_qblock::*field, uint8_t* dst) {
  for (uint32_t r = 0; r < R; r++) wr16(dst + 2 * r, rows[r].*field);
}
void d_unpack(const uint8_t* src, uint16_t vec_qblock::*field, vec_qblock* rows) {
  for (uint32_t r = 0; r < R; r++) rows[r].*field = rd16(src + 2 * r);
}

// Where each field of a quantized block tile lives (tiles.h); kNone = absent.
constexpr uint32_t kNone = 0xffff;
enum class High { none, h5, h6 };
struct QLayout {
  uint32_t kb;
  Chunks ch;
  High high;
  bool q8;           // Q8_0: plain int8 group vectors instead of nibbles
  uint32_t sc, mn;   // sub-block scale / min pairs
  uint32_t nsub;     // sub-blocks with a scale
  uint32_t d, m, e;  // per-row f16 d, f16 m (min or dmin), e8m0 exponent bytes
};

constexpr QLayout layout_of(uint32_t t) {
  switch (t) {
    case HTP_TILE_Q4_0_X8:
    case HTP_TILE_IQ4_NL_X8:
      return {32, kNib4, High::none, false, kNone, kNone, 0, 128, kNone, kNone};
    case HTP_TILE_Q4_1_X8:
      return {32, kNib4, High::none, false, kNone, kNone, 0, 128, 144, kNone};
    case HTP_TILE_Q5_0_X8:
      return {32, kNib5, High::h5, false, kNone, kNone, 0, 160, kNone, kNone};
    case HTP_TILE_Q5_1_X8:
      return {32, kNib5, High::h5, false, kNone, kNone, 0, 160, 176, kNone};
    case HTP_TILE_Q8_0_X8:
      return {32, kNib4, High::none, true, kNone, kNone, 0, 256, kNone, kNone};
    case HTP_TILE_MXFP4_X8:
      return {32, kNib4, High::none, false, kNone, kNone, 0, kNone, kNone, 128};
    case HTP_TILE_Q4_K_X8:
      return {256, kNib4, High::none, false, 1024, 1088, 8, 1152, 1168, kNone};
    case HTP_TILE_Q5_K_X8:
      return {256, kNib5, High::h5, false, 1280, 1344, 8, 1408, 1424, kNone};
    default:
      return {256, kNib6, High::h6, false, 1536, kNone, 16, 1664, kNone, kNone};  // Q6_K
  }
}

void tile_encode(uint32_t t, const vec_qblock* rows, uint8_t* dst) {
  const QLayout L = layout_of(t);
  if (L.q8) {
    for (uint32_t g = 0; g < 8; g++)
      for (uint32_t r = 0; r < R; r++)
        for (uint32_t j = 0; j < 4; j++) dst[32 * g + 4 * r + j] = rows[r].q[4 * g + j];
  } else {
    nib_pack(rows, L.kb, L.ch, dst);
  }
  if (L.high == High::h5) h5_pack(rows, L.kb, L.ch, dst);
  if (L.high == High::h6) h6_pack(rows, L.ch, dst);
  if (L.sc != kNone) pairs_pack(rows, &vec_qblock::sc, L.nsub, dst + L.sc);
  if (L.mn != kNone) pairs_pack(rows, &vec_qblock::mn, L.nsub, dst + L.mn);
  if (L.d != kNone) d_pack(rows, &vec_qblock::d, dst + L.d);
  if (L.m != kNone) d_pack(rows, &vec_qblock::m, dst + L.m);
  if (L.e != kNone)
    for (uint32_t r = 0; r < R; r++) dst[L.e + r] = rows[r].e;
}

}  // namespace

void vec_tile_decode(uint32_t t, const uint8_t* src, vec_qblock* rows) {
  __builtin_memset(rows, 0, sizeof(vec_qblock) * R);
  const QLayout L = layout_of(t);
  if (L.q8) {
    for (uint32_t g = 0; g < 8; g++)
      for (uint32_t r = 0; r < R; r++)
        for (uint32_t j = 0; j < 4; j++) rows[r].q[4 * g + j] = src[32 * g + 4 * r + j];
  } else {
    nib_unpack(src, L.kb, L.ch, rows);
  }
  if (L.high == High::h5) h5_unpack(src, L.kb, L.ch, rows);
  if (L.high == High::h6) h6_unpack(src, L.ch, rows);
  if (L.sc != kNone) pairs_unpack(src + L.sc, &vec_qblock::sc, L.nsub, rows);
  if (L.mn != kNone) pairs_unpack(src + L.mn, &vec_qblock::mn, L.nsub, rows);
  if (L.d != kNone) d_unpack(src + L.d, &vec_qblock::d, rows);
  if (L.m != kNone) d_unpack(src + L.m, &vec_qblock::m, rows);
  if (L.e != kNone)
    for (uint32_t r = 0; r < R; r++) rows[r].e = src[L.e + r];
}

namespace {

bool args_ok(uint32_t t, uint32_t nrows, uint32_t k) {
  return htp_tile_valid(t) && nrows > 0 && htp_tile_k_ok(t, k);
}

uint32_t elem_bytes(uint32_t t) { return t == HTP_TILE_F32_X8 ? 4 : 2; }

// Float tiles: [32 k][8 r] elements, bytes copied as they are; padding is zero.
void float_tile_pack(uint32_t t, const uint8_t* src, size_t stride, uint32_t nrows, uint32_t k, uint32_t tile,
                     uint8_t* dst) {
  const uint32_t es = elem_bytes(t);
  const uint32_t kp = htp_tile_padded_k(t, k);
  for (uint32_t kk = 0; kk < kp; kk++)
    for (uint32_t r = 0; r < R; r++) {
      const size_t row = (size_t)tile * R + r;
      uint8_t* tp = dst + ((size_t)kk * R + r) * es;
      const bool real = row < nrows && kk < k;
      for (uint32_t b = 0; b < es; b++) tp[b] = real ? src[row * stride + (size_t)kk * es + b] : 0;
    }
}

}  // namespace

bool vec_repack_tiles(uint32_t t, const void* src, size_t stride, uint32_t nrows, uint32_t k, uint32_t tb,
                      uint32_t te, void* dst) {
  if (!args_ok(t, nrows, k) || tb > te || te > htp_tile_count(nrows)) return false;
  const htp_tile_desc& desc = htp_tile_info(t);
  const uint8_t* s = (const uint8_t*)src;
  uint8_t* d = (uint8_t*)dst;
  const size_t row_bytes = htp_tile_row_bytes(t, k);
  if (htp_tile_is_float(t)) {
    for (uint32_t tile = tb; tile < te; tile++)
      float_tile_pack(t, s, stride, nrows, k, tile, d + (size_t)tile * row_bytes);
    return true;
  }
  const uint32_t nb = k / desc.kblock;
  const uint32_t gguf_block = desc.src_block_bytes;
  vec_qblock rows[R];
  for (uint32_t tile = tb; tile < te; tile++)
    for (uint32_t b = 0; b < nb; b++) {
      for (uint32_t r = 0; r < R; r++) {
        const uint32_t row = tile * R + r;
        if (row < nrows) {
          decode_gguf(static_cast<Type>(desc.src), s + (size_t)row * stride + (size_t)b * gguf_block, rows[r]);
        } else {
          __builtin_memset(&rows[r], 0, sizeof rows[r]);
        }
      }
      tile_encode(t, rows, d + (size_t)tile * row_bytes + (size_t)b * desc.block_bytes);
    }
  return true;
}

bool vec_unpack(uint32_t t, const void* tiles, uint32_t nrows, uint32_t k, void* dst, size_t stride) {
  if (!args_ok(t, nrows, k)) return false;
  const htp_tile_desc& desc = htp_tile_info(t);
  const uint8_t* s = (const uint8_t*)tiles;
  uint8_t* d = (uint8_t*)dst;
  const size_t row_bytes = htp_tile_row_bytes(t, k);
  if (htp_tile_is_float(t)) {
    const uint32_t es = elem_bytes(t);
    for (uint32_t row = 0; row < nrows; row++) {
      const uint8_t* tp = s + (row / R) * row_bytes;
      for (uint32_t kk = 0; kk < k; kk++)
        for (uint32_t b = 0; b < es; b++)
          d[(size_t)row * stride + (size_t)kk * es + b] = tp[((size_t)kk * R + row % R) * es + b];
    }
    return true;
  }
  const uint32_t nb = k / desc.kblock;
  const uint32_t gguf_block = desc.src_block_bytes;
  vec_qblock rows[R];
  for (uint32_t tile = 0; tile < htp_tile_count(nrows); tile++)
    for (uint32_t b = 0; b < nb; b++) {
      vec_tile_decode(t, s + (size_t)tile * row_bytes + (size_t)b * desc.block_bytes, rows);
      for (uint32_t r = 0; r < R && tile * R + r < nrows; r++)
        encode_gguf(static_cast<Type>(desc.src), rows[r], d + ((size_t)tile * R + r) * stride + (size_t)b * gguf_block);
    }
  return true;
}

}  // namespace hexllm::htp
