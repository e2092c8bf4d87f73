// Repack/unpack: bit-exact round trips for every tile type, and the tile byte layouts of
// tiles.h checked against hand-built rows.
#include "htp/vec/repack.h"

#include <gtest/gtest.h>

#include "vec_test_util.h"


namespace hexllm::htp {
namespace {

using test::kAllTiles;

TEST(VecRepack, RoundTripEveryTypeAndOddRowCounts) {
  std::mt19937 rng(1234);
  for (uint32_t tt : kAllTiles) {
    const htp_tile_desc& d = htp_tile_info(tt);
    // K: one block, several blocks; float types also a K that is not a multiple of 32.
    std::vector<uint32_t> ks = {d.kblock, 3 * d.kblock};
    if (htp_tile_is_float(tt)) ks.push_back(45);
    for (uint32_t k : ks)
      for (uint32_t nrows : {1u, 7u, 8u, 13u, 17u}) {
        SCOPED_TRACE(testing::Message() << type_name(static_cast<Type>(d.src)) << " k=" << k << " rows=" << nrows);
        // Every byte random (scales included): the round trip must keep any bit pattern.
        std::vector<uint8_t> src(test::gguf_row_bytes(static_cast<Type>(d.src), k) * nrows);
        for (auto& b : src) b = (uint8_t)rng();
        const size_t row = test::gguf_row_bytes(static_cast<Type>(d.src), k);
        std::vector<uint8_t> tiles(htp_tiled_size(tt, nrows, k), 0xAB);
        ASSERT_TRUE(vec_repack(tt, src.data(), row, nrows, k, tiles.data()));
        std::vector<uint8_t> back(src.size(), 0xCD);
        ASSERT_TRUE(vec_unpack(tt, tiles.data(), nrows, k, back.data(), row));
        ASSERT_EQ(src, back);
        // Padding rows are zero bytes: their (unpacked) blocks are all zero.
        if (nrows % kHtpTileRows) {
          const uint32_t padded = htp_tile_count(nrows) * kHtpTileRows;
          std::vector<uint8_t> all(row * padded, 0xEE);
          ASSERT_TRUE(vec_unpack(tt, tiles.data(), padded, k, all.data(), row));
          for (size_t i = row * nrows; i < all.size(); i++) ASSERT_EQ(all[i], 0) << "byte " << i;
        }
      }
  }
}

TEST(VecRepack, TileRangesCompose) {
  std::mt19937 rng(7);
  const uint32_t tt = HTP_TILE_Q6_K_X8, k = 512, nrows = 29;
  auto src = test::random_matrix(Type::Q6_K, nrows, k, rng);
  const size_t row = test::gguf_row_bytes(Type::Q6_K, k);
  std::vector<uint8_t> whole(htp_tiled_size(tt, nrows, k)), parts(whole.size());
  ASSERT_TRUE(vec_repack(tt, src.data(), row, nrows, k, whole.data()));
  ASSERT_TRUE(vec_repack_tiles(tt, src.data(), row, nrows, k, 2, 4, parts.data()));
  ASSERT_TRUE(vec_repack_tiles(tt, src.data(), row, nrows, k, 0, 2, parts.data()));
  EXPECT_EQ(whole, parts);
}

TEST(VecRepack, RejectsBadArguments) {
  std::vector<uint8_t> buf(1 << 16);
  EXPECT_FALSE(vec_repack(199, buf.data(), 18, 8, 32, buf.data()));
  EXPECT_FALSE(vec_repack(HTP_TILE_Q4_0_X8, buf.data(), 18, 8, 48, buf.data()));    // K % 32
  EXPECT_FALSE(vec_repack(HTP_TILE_Q6_K_X8, buf.data(), 210, 8, 288, buf.data()));  // K % 256
  EXPECT_FALSE(vec_repack(HTP_TILE_Q4_0_X8, buf.data(), 18, 0, 32, buf.data()));
  EXPECT_FALSE(vec_repack_tiles(HTP_TILE_Q4_0_X8, buf.data(), 18, 8, 32, 0, 2, buf.data()));
  EXPECT_EQ(htp_tile_for(static_cast<uint32_t>(Type::Q2_K)), HTP_TILE_INVALID);
}

TEST(VecRepack, SizesMatchTheDocumentedLayouts) {
  // 8 rows of one block: tile bytes == 8 GGUF blocks except where scales are pre-expanded.
  EXPECT_EQ(htp_tiled_size(HTP_TILE_Q4_0_X8, 8, 32), 8u * 18);
  EXPECT_EQ(htp_tiled_size(HTP_TILE_Q8_0_X8, 8, 32), 8u * 34);
  EXPECT_EQ(htp_tiled_size(HTP_TILE_MXFP4_X8, 8, 32), 8u * 17);
  EXPECT_EQ(htp_tiled_size(HTP_TILE_Q6_K_X8, 8, 256), 8u * 210);
  EXPECT_EQ(htp_tiled_size(HTP_TILE_Q4_K_X8, 8, 256), 8u * 144 + 32);  // 6-bit scales as bytes
  EXPECT_EQ(htp_tiled_size(HTP_TILE_F16_X8, 9, 40), 2u * 64 * 8 * 2);  // rows -> 16, K -> 64
  EXPECT_EQ(htp_act_row_bytes(HTP_TILE_Q4_0_X8, 64), 80u);
  EXPECT_EQ(htp_act_row_bytes(HTP_TILE_Q4_K_X8, 512), 640u);
  EXPECT_EQ(htp_act_row_bytes(HTP_TILE_F32_X8, 33), 256u);
}

// Q4_0: row r, element e has code (r + e) % 16. Tile byte 32v + 4r + j must hold element 8v+j
// (low nibble) and 8v+4+j (high nibble); d of row r sits at 128 + 2r.
TEST(VecRepack, Q4_0LayoutByHand) {
  std::vector<quant::block_q4_0> rows(8);
  for (int r = 0; r < 8; r++) {
    rows[r].d = (uint16_t)(0x3c00 + r);
    for (int j = 0; j < 16; j++) rows[r].qs[j] = (uint8_t)(((r + j) % 16) | (((r + j + 16) % 16) << 4));
  }
  std::vector<uint8_t> t(144);
  ASSERT_TRUE(vec_repack(HTP_TILE_Q4_0_X8, rows.data(), 18, 8, 32, t.data()));
  for (int v = 0; v < 4; v++)
    for (int r = 0; r < 8; r++)
      for (int j = 0; j < 4; j++) {
        const int lo = (r + 8 * v + j) % 16, hi = (r + 8 * v + 4 + j) % 16;
        EXPECT_EQ(t[32 * v + 4 * r + j], lo | (hi << 4)) << "v" << v << " r" << r << " j" << j;
      }
  for (int r = 0; r < 8; r++) EXPECT_EQ(t[128 + 2 * r] | (t[129 + 2 * r] << 8), 0x3c00 + r);
}

// Q6_K: element e of row r gets 6-bit code (e + r) % 64 and scale (sub-block u) = u - 8 + r.
// Chunk u (96 B at 96u): NIB vectors 2u, 2u+1 (low nibble = code of element 8v+j, high = 8v+4+j),
// then the H6 vector (bits 2i,2i+1 = bits 4,5 of element 16u+4i+j); scales in pairs at
// 1536 + 16p + 2r + h.
TEST(VecRepack, Q6_KLayoutByHand) {
  std::vector<quant::block_q6_K> rows(8);
  auto code = [](int r, int e) { return (e + r) % 64; };
  for (int r = 0; r < 8; r++) {
    auto& b = rows[r];
    std::memset(&b, 0, sizeof b);
    // Write the codes with the GGUF Q6_K map (ggml's: quarter k of half h, lane l).
    for (int h = 0; h < 2; h++)
      for (int k = 0; k < 4; k++)
        for (int l = 0; l < 32; l++) {
          const int q = code(r, 128 * h + 32 * k + l);
          b.ql[64 * h + l + 32 * (k & 1)] |= (uint8_t)(k < 2 ? (q & 15) : (q & 15) << 4);
          b.qh[32 * h + l] |= (uint8_t)((q >> 4) << (2 * k));
        }
    for (int u = 0; u < 16; u++) b.scales[u] = (int8_t)(u - 8 + r);
    b.d = 0x1234;
  }
  std::vector<uint8_t> t(1680);
  ASSERT_TRUE(vec_repack(HTP_TILE_Q6_K_X8, rows.data(), 210, 8, 256, t.data()));
  for (int v = 0; v < 32; v++)
    for (int r = 0; r < 8; r++)
      for (int j = 0; j < 4; j++)
        ASSERT_EQ(t[96 * (v / 2) + 32 * (v % 2) + 4 * r + j],
                  (code(r, 8 * v + j) & 15) | ((code(r, 8 * v + 4 + j) & 15) << 4));
  for (int u = 0; u < 16; u++)
    for (int r = 0; r < 8; r++)
      for (int j = 0; j < 4; j++) {
        int x = 0;
        for (int i = 0; i < 4; i++) x |= (code(r, 16 * u + 4 * i + j) >> 4) << (2 * i);
        ASSERT_EQ(t[96 * u + 64 + 4 * r + j], x);
      }
  for (int p = 0; p < 8; p++)
    for (int r = 0; r < 8; r++)
      for (int h = 0; h < 2; h++) ASSERT_EQ((int8_t)t[1536 + 16 * p + 2 * r + h], 2 * p + h - 8 + r);
  EXPECT_EQ(t[1664], 0x34);
  EXPECT_EQ(t[1665], 0x12);
}

}  // namespace
}  // namespace hexllm::htp
