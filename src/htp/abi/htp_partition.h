// Multi-device (mdev) row partitioning, compiled by host and device alike: which flattened rows
// (or other units) of an op's output each device computes. Devices share DDR in 128-byte lines,
// so a device's range must cover whole lines of the destination: no two devices may write the
// same line. When the destination cannot be split that way, or has fewer chunks than there are
// devices, device 0 does everything and the others get an empty range (single-device fallback).
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_tensor.h"

inline constexpr uint32_t HTP_MDEV_LINE = 128;  // bytes of one shared cache line
inline constexpr uint32_t HTP_MDEV_MAX = 8;     // devices in one group

// A device's identity in its group; count == 1 is the single-device case.
struct htp_mdev {
  uint32_t idx;
  uint32_t count;
  htp_divisor count_div;  // fastdiv by count (chunks per device)
};
static_assert(sizeof(htp_mdev) == 24 && sizeof(htp_mdev) % 8 == 0, "htp_mdev layout");

constexpr htp_mdev htp_mdev_make(uint32_t idx, uint32_t count) { return {idx, count, htp_fastdiv_init(count)}; }

struct htp_mdev_range {
  uint32_t start;
  uint32_t count;
};

constexpr uint32_t htp_gcd_u32(uint32_t a, uint32_t b) {
  while (b != 0) {
    const uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Rows of `row_bytes` each that make a whole number of lines: 128 / gcd(row_bytes, 128), a power of two.
constexpr uint32_t htp_mdev_line_rows(uint32_t row_bytes) {
  return row_bytes == 0 ? 0 : HTP_MDEV_LINE / htp_gcd_u32(row_bytes, HTP_MDEV_LINE);
}

// Rows per chunk when the flattened rows (ne1 * ne2 * ne3) of `dst` are split across devices,
// each row `row_bytes` long (the part of a row the op writes, from its start); 0 when they
// cannot be split safely: element 0 off a line boundary, elements not dense (permuted), or
// rows neither packed back to back nor each on its own lines (outer strides not multiples of 128).
// A dimension of size 1 has no stride to honour.
constexpr uint32_t htp_mdev_rows_per_chunk(const htp_tensor& dst, uint32_t row_bytes) {
  const htp_type_info ti = htp_type_geometry(dst.type);
  if (ti.block_size == 0 || row_bytes == 0 || dst.offset % HTP_MDEV_LINE != 0) return 0;
  if (dst.ne[0] > ti.block_size && dst.nb[0] != ti.type_size) return 0;
  bool lined = true;  // every row starts on a line and rows do not overlap
  for (int d = 1; d < 4; ++d)
    if (dst.ne[d] > 1 && (dst.nb[d] % HTP_MDEV_LINE != 0 || dst.nb[d] < row_bytes)) lined = false;
  if (lined) return 1;
  // Packed: row r starts at r * row_bytes, so a chunk of whole lines is line_rows rows.
  uint64_t expect = row_bytes;
  for (int d = 1; d < 4; ++d) {
    if (dst.ne[d] > 1 && dst.nb[d] != expect) return 0;
    expect *= dst.ne[d];
  }
  return htp_mdev_line_rows(row_bytes);
}

// Units (weight rows, heads, ...) per chunk when each unit writes `unit_cols` consecutive
// elements of every destination row (matmul: a weight row is one output column), so a device
// owns columns [c0, c1) of each row. 0 when the rows do not start on lines.
constexpr uint32_t htp_mdev_cols_per_chunk(const htp_tensor& dst, uint32_t unit_cols) {
  const htp_type_info ti = htp_type_geometry(dst.type);
  if (ti.block_size != 1 || unit_cols == 0 || dst.offset % HTP_MDEV_LINE != 0 || dst.nb[0] != ti.type_size)
    return 0;
  for (int d = 1; d < 4; ++d)
    if (dst.ne[d] > 1 && dst.nb[d] % HTP_MDEV_LINE != 0) return 0;
  // The smallest number of units whose columns are whole lines.
  return htp_mdev_line_rows(unit_cols * ti.type_size);
}

// Elements per chunk when a contiguous destination is split as a flat array of elements; 0 when
// it is not contiguous, not plain elements (block types), or element 0 is off a line boundary.
constexpr uint32_t htp_mdev_elems_per_chunk(const htp_tensor& dst) {
  const htp_type_info ti = htp_type_geometry(dst.type);
  if (ti.block_size != 1 || dst.offset % HTP_MDEV_LINE != 0 || !htp_tensor_contiguous(dst)) return 0;
  return htp_mdev_line_rows(ti.type_size);
}

// Device m.idx's share of `total` units split in chunks of `per_chunk` (a power of two, from the
// helpers above): equal whole chunks per device in order, the remainder (chunks and the final
// partial chunk) to the last device. Single-device fallback ({0, total} on device 0, {total, 0}
// elsewhere) when per_chunk is 0 or there are fewer whole chunks than devices. Stateless: the
// range depends on (total, per_chunk, m) only.
constexpr htp_mdev_range htp_mdev_partition(uint32_t total, uint32_t per_chunk, const htp_mdev& m) {
  if (m.count <= 1) return {0, total};
  const uint32_t shift = per_chunk == 0 ? 0 : (uint32_t)__builtin_ctz(per_chunk);
  const uint32_t chunks = per_chunk == 0 ? 0 : total >> shift;
  if (per_chunk == 0 || (per_chunk & (per_chunk - 1)) != 0 || chunks < m.count)
    return m.idx == 0 ? htp_mdev_range{0, total} : htp_mdev_range{total, 0};
  const uint32_t each = htp_fastdiv(chunks, m.count_div) << shift;
  const uint32_t start = m.idx * each;
  return {start, m.idx + 1 == m.count ? total - start : each};
}

// Worker w of n's part of a device range: the same even split the kernels used before mdev,
// offset by the range start (start 0 and count = total give exactly the single-device split).
constexpr htp_mdev_range htp_worker_part(htp_mdev_range r, uint32_t w, uint32_t n) {
  const uint32_t b = (uint32_t)((uint64_t)r.count * w / n), e = (uint32_t)((uint64_t)r.count * (w + 1) / n);
  return {r.start + b, e - b};
}
