// Multi-device partitioning (htp/abi/htp_partition.h) against brute force, the truth: over random
// shapes, types, strides and offsets, the devices' ranges cover every row exactly once, no two
// devices write the same 128-byte line of the destination, and the single-device fallback
// triggers exactly when the guide says (unsplittable destination, or fewer chunks than devices).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "htp/abi/htp_partition.h"

namespace {

struct TypeCase {
  uint32_t type, block, size;
};
const TypeCase kTypes[] = {{HTP_TYPE_F32, 1, 4},   {HTP_TYPE_F16, 1, 2},   {HTP_TYPE_I32, 1, 4},
                           {HTP_TYPE_I8, 1, 1},    {HTP_TYPE_Q8_0, 32, 34}, {HTP_TYPE_Q4_0, 32, 18},
                           {HTP_TYPE_BF16, 1, 2}, {HTP_TYPE_F64, 1, 8}};

enum class Layout { Packed, Lined, Padded, Permuted };

struct Case {
  htp_tensor t{};
  uint32_t row_bytes = 0;
  Layout layout{};
};

Case random_case(std::mt19937& rng) {
  Case c;
  const TypeCase tc = kTypes[rng() % std::size(kTypes)];
  htp_tensor& t = c.t;
  t.type = tc.type;
  t.ne[0] = tc.block * (1 + rng() % 70);
  for (int d = 1; d < 4; ++d) t.ne[d] = d == 1 ? 1 + rng() % 40 : (rng() % 3 == 0 ? 1 + rng() % 4 : 1);
  c.row_bytes = t.ne[0] / tc.block * tc.size;
  t.nb[0] = tc.size;
  c.layout = (Layout)(rng() % 4);
  uint32_t row_stride = c.row_bytes;
  if (c.layout == Layout::Lined) row_stride = (c.row_bytes + 127) / 128 * 128 + 128 * (rng() % 2);
  if (c.layout == Layout::Padded) row_stride = c.row_bytes + tc.size * (1 + rng() % 3);  // off-line strides
  t.nb[1] = row_stride;
  t.nb[2] = t.nb[1] * t.ne[1];
  t.nb[3] = t.nb[2] * t.ne[2];
  if (c.layout == Layout::Permuted && t.ne[0] > tc.block && t.ne[1] > 1) {
    t.nb[0] = tc.size * t.ne[1];
    t.nb[1] = tc.size;
  }
  t.offset = rng() % 4 == 0 ? tc.size * (1 + rng() % 8) : 128 * (rng() % 16);
  return c;
}

// Byte offset (within the bank) of flattened row r.
uint64_t row_addr(const htp_tensor& t, uint32_t r) {
  const uint32_t i1 = r % t.ne[1], i23 = r / t.ne[1];
  return t.offset + (uint64_t)i1 * t.nb[1] + (uint64_t)(i23 % t.ne[2]) * t.nb[2] + (uint64_t)(i23 / t.ne[2]) * t.nb[3];
}

// The guide's list, restated per generated layout: a destination can be split unless element 0 is
// off a line, its elements are permuted, or its rows are neither packed nor each on their own lines.
bool splittable(const Case& c) {
  const htp_tensor& t = c.t;
  if (t.offset % 128 != 0) return false;
  if (t.nb[0] != htp_type_geometry(t.type).type_size) return false;  // Permuted took effect
  if (c.layout == Layout::Padded)
    for (int d = 1; d < 4; ++d)
      if (t.ne[d] > 1 && t.nb[d] % 128 != 0) return false;
  return true;
}

TEST(HtpPartition, RowsCoveredOnceAndLinesOwnedOnce) {
  std::mt19937 rng(20261201);
  int fallbacks = 0, splits = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const Case c = random_case(rng);
    const htp_tensor& t = c.t;
    const uint32_t total = (uint32_t)htp_tensor_nrows(t);
    const uint32_t rpc = htp_mdev_rows_per_chunk(t, c.row_bytes);
    const bool permuted = t.nb[0] != htp_type_geometry(t.type).type_size;
    SCOPED_TRACE(testing::Message() << "trial " << trial << " type " << t.type << " ne " << t.ne[0] << "x"
                                    << t.ne[1] << "x" << t.ne[2] << "x" << t.ne[3] << " nb1 " << t.nb[1]
                                    << " offset " << t.offset << " rpc " << rpc);
    // Unsafe destinations are refused exactly as the guide lists them.
    ASSERT_EQ(rpc != 0, splittable(c));
    if (t.offset % 128 != 0 || permuted) {
      ASSERT_EQ(rpc, 0u);
    }
    if (rpc != 0) {
      ASSERT_EQ(rpc & (rpc - 1), 0u);
      // Minimal: a chunk is whole lines, and half a chunk is not (packed rows only).
      if (rpc > 1 && c.layout != Layout::Lined) {
        ASSERT_EQ((uint64_t)rpc * c.row_bytes % 128, 0u);
        ASSERT_NE((uint64_t)rpc / 2 * c.row_bytes % 128, 0u);
      }
    }
    for (uint32_t n = 1; n <= 5; ++n) {
      std::vector<int> owner(total, -1);
      std::map<uint64_t, int> line_owner;
      bool fell_back = false;
      for (uint32_t d = 0; d < n; ++d) {
        const htp_mdev m = htp_mdev_make(d, n);
        const htp_mdev_range r = htp_mdev_partition(total, rpc, m);
        ASSERT_LE((uint64_t)r.start + r.count, total);
        if (n > 1 && d == 0 && r.count == total) fell_back = true;
        for (uint32_t row = r.start; row < r.start + r.count; ++row) {
          ASSERT_EQ(owner[row], -1) << "row " << row << " computed twice";
          owner[row] = (int)d;
          const uint64_t a = row_addr(t, row);
          for (uint64_t line = a / 128; line <= (a + c.row_bytes - 1) / 128; ++line) {
            auto [it, fresh] = line_owner.emplace(line, (int)d);
            ASSERT_TRUE(fresh || it->second == (int)d)
                << "line " << line << " written by devices " << it->second << " and " << d;
          }
        }
      }
      for (uint32_t row = 0; row < total; ++row) ASSERT_NE(owner[row], -1) << "row " << row << " never computed";
      if (n > 1) {
        const bool want_fallback = rpc == 0 || total / rpc < n;
        ASSERT_EQ(fell_back, want_fallback) << n << " devices";
        (want_fallback ? fallbacks : splits)++;
      }
    }
  }
  // Both branches were exercised plenty.
  EXPECT_GT(fallbacks, 1000);
  EXPECT_GT(splits, 1000);
}

TEST(HtpPartition, RemainderGoesToTheLastDevice) {
  // 100 packed F32 rows of 8 floats (32 B): 4 rows per chunk, 25 chunks over 3 devices: 8, 8, 9 chunks.
  htp_tensor t{};
  t.type = HTP_TYPE_F32;
  t.ne[0] = 8;
  t.ne[1] = 10;
  t.ne[2] = 10;
  t.ne[3] = 1;
  t.nb[0] = 4;
  t.nb[1] = 32;
  t.nb[2] = 320;
  t.nb[3] = 3200;
  ASSERT_EQ(htp_mdev_rows_per_chunk(t, 32), 4u);
  const htp_mdev_range r0 = htp_mdev_partition(100, 4, htp_mdev_make(0, 3));
  const htp_mdev_range r1 = htp_mdev_partition(100, 4, htp_mdev_make(1, 3));
  const htp_mdev_range r2 = htp_mdev_partition(100, 4, htp_mdev_make(2, 3));
  EXPECT_EQ(r0.start, 0u);
  EXPECT_EQ(r0.count, 32u);
  EXPECT_EQ(r1.start, 32u);
  EXPECT_EQ(r1.count, 32u);
  EXPECT_EQ(r2.start, 64u);
  EXPECT_EQ(r2.count, 36u);
  // Outer dimensions are flattened: a 10-row plane (not whole chunks) does not force a fallback.
  EXPECT_EQ(htp_mdev_partition(100, 4, htp_mdev_make(0, 8)).count, 12u);
}

TEST(HtpPartition, FallbackCases) {
  htp_tensor t{};
  t.type = HTP_TYPE_F32;
  t.ne[0] = 33;  // 132-byte rows: 32 rows per chunk
  t.ne[1] = 63;
  t.ne[2] = t.ne[3] = 1;
  t.nb[0] = 4;
  t.nb[1] = 132;
  t.nb[2] = t.nb[3] = 132 * 63;
  ASSERT_EQ(htp_mdev_rows_per_chunk(t, 132), 32u);
  // 63 rows = one whole chunk: fewer chunks than 2 devices.
  EXPECT_EQ(htp_mdev_partition(63, 32, htp_mdev_make(0, 2)).count, 63u);
  EXPECT_EQ(htp_mdev_partition(63, 32, htp_mdev_make(1, 2)).count, 0u);
  t.offset = 64;  // element 0 in the middle of a line
  EXPECT_EQ(htp_mdev_rows_per_chunk(t, 132), 0u);
  t.offset = 0;
  t.nb[1] = 136;  // padded rows off the lines
  t.nb[2] = t.nb[3] = 136 * 63;
  EXPECT_EQ(htp_mdev_rows_per_chunk(t, 132), 0u);
  t.nb[1] = 256;  // each row on its own lines
  t.nb[2] = t.nb[3] = 256 * 63;
  EXPECT_EQ(htp_mdev_rows_per_chunk(t, 132), 1u);
  // A single device never falls back: it just does everything.
  EXPECT_EQ(htp_mdev_partition(5, 0, htp_mdev_make(0, 1)).count, 5u);
  // Output columns: F32 weight rows in 128-byte groups (32 columns), rows on lines.
  htp_tensor mm{};
  mm.type = HTP_TYPE_F32;
  mm.ne[0] = 2048;
  mm.ne[1] = 7;
  mm.ne[2] = mm.ne[3] = 1;
  mm.nb[0] = 4;
  mm.nb[1] = 8192;
  mm.nb[2] = mm.nb[3] = 8192 * 7;
  EXPECT_EQ(htp_mdev_cols_per_chunk(mm, 1), 32u);
  EXPECT_EQ(htp_mdev_cols_per_chunk(mm, 8), 4u);
  mm.nb[1] = 8196;
  EXPECT_EQ(htp_mdev_cols_per_chunk(mm, 1), 0u);
}

TEST(HtpPartition, WorkerPartsSplitTheDeviceRange) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const htp_mdev_range r{(uint32_t)(rng() % 1000), (uint32_t)(rng() % 1000)};
    const uint32_t n = 1 + rng() % 8;
    uint32_t at = r.start;
    for (uint32_t w = 0; w < n; ++w) {
      const htp_mdev_range p = htp_worker_part(r, w, n);
      ASSERT_EQ(p.start, at);
      at += p.count;
    }
    ASSERT_EQ(at, r.start + r.count);
    // With the whole range it is exactly the pre-mdev split.
    const htp_mdev_range whole{0, r.count};
    for (uint32_t w = 0; w < n; ++w) ASSERT_EQ(htp_worker_part(whole, w, n).start, (uint32_t)((uint64_t)r.count * w / n));
  }
}

}  // namespace
