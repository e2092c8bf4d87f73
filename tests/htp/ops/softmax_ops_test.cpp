// SOFT_MAX on the device against the reference backend (exponentials and sums in double):
// masks F32/F16 broadcast over dims 2/3, scale, ALiBi, sinks, -inf masks with fully masked
// rows, odd and very long rows (chunked, two passes, at 256 KiB of VTCM).
// Threshold 1e-6 (docs/DESIGN.md §9); vmath exp is within 1 ulp and the float-lane sums within ~1e-6.
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 1e-6;

// An F32 mask with -inf where the uniform input is below about -0.13 (3e38 (x - 1) overflows),
// finite elsewhere: SCALE (a device op as well) turns random data into a sparse -inf mask.
Tensor* f32_inf_mask(OpTester& t, std::initializer_list<int64_t> ne) {
  return graph::scale(t.ctx(), t.input(Type::F32, ne, -1.0f, 1.0f), 3e38f, -3e38f);
}

TEST(HtpSoftmaxOps, NoMaskOddRowLengths) {
  for (int64_t ne0 : {1, 7, 33, 65, 4097})
    expect_op_matches(
        "ne0=" + std::to_string(ne0),
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 5, 3, 2}, -5, 5), nullptr, 0.7f, 0.0f);
        },
        kNmse);
}

TEST(HtpSoftmaxOps, MasksF32AndF16Broadcast) {
  for (Type mt : {Type::F32, Type::F16})
    for (int64_t ne0 : {7, 65, 4097}) {
      const std::string name = std::string(type_name(mt)) + " ne0=" + std::to_string(ne0);
      expect_op_matches(
          name + " mask [ne0, rows]",
          [&](OpTester& t) {
            return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 6, 4, 2}, -4, 4),
                                   t.input(mt, {ne0, 6}, -3, 1), 0.125f, 0.0f);
          },
          kNmse);
      expect_op_matches(
          name + " mask with more rows, per plane",
          [&](OpTester& t) {
            return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 5, 4, 2}, -4, 4),
                                   t.input(mt, {ne0, 9, 2, 1}, -3, 1), 1.0f, 0.0f);
          },
          kNmse);
    }
}

TEST(HtpSoftmaxOps, AlibiAndSinks) {
  for (Type mt : {Type::F32, Type::F16}) {
    // 12 heads: slopes below and above n_head_log2 = 8; mask as ALiBi position offsets.
    expect_op_matches(
        std::string("alibi ") + type_name(mt),
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {67, 5, 12, 1}, -3, 3),
                                 t.input(mt, {67, 5}, -30, 0), 0.5f, 8.0f);
        },
        kNmse);
    expect_op_matches(
        std::string("sinks ") + type_name(mt),
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {33, 7, 4, 1}, -3, 3),
                                 t.input(mt, {33, 7}, -2, 0), 1.0f, 0.0f, t.input(Type::F32, {4}, -1, 3));
        },
        kNmse);
    expect_op_matches(
        std::string("alibi + sinks ") + type_name(mt),
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {100, 3, 6, 2}, -3, 3),
                                 t.input(mt, {100, 3, 1, 2}, -9, 0), 0.3f, 4.0f,
                                 t.input(Type::F32, {6}, -1, 3));
        },
        kNmse);
  }
  expect_op_matches(
      "sinks without mask",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {20, 3, 5, 1}, -3, 3), nullptr, 1.0f, 0.0f,
                               t.input(Type::F32, {5}, 0, 4));
      },
      kNmse);
}

// Causal -inf masks; rows 0..2 of the F16 mask are fully masked (pos0 = -3): they give zeros,
// or with sinks, zeros as well (every exp(-inf) is 0, the sink takes all the mass).
TEST(HtpSoftmaxOps, InfiniteMasksAndFullyMaskedRows) {
  expect_op_matches(
      "causal f16",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {40, 12, 4, 1}, -3, 3), t.causal_mask(40, 12, 20),
                               0.5f, 0.0f);
      },
      kNmse);
  expect_op_matches(
      "fully masked rows",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {40, 12, 4, 1}, -3, 3), t.causal_mask(40, 12, -3),
                               0.5f, 0.0f);
      },
      kNmse);
  expect_op_matches(
      "fully masked rows + sinks",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {40, 12, 4, 1}, -3, 3), t.causal_mask(40, 12, -3),
                               0.5f, 0.0f, t.input(Type::F32, {4}, -1, 1));
      },
      kNmse);
  expect_op_matches(
      "fully masked rows + alibi",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {40, 12, 4, 1}, -3, 3), t.causal_mask(40, 12, -5),
                               0.5f, 8.0f);
      },
      kNmse);
  expect_op_matches(
      "sparse -inf f32 mask",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {9, 40, 2, 1}, -3, 3),
                               f32_inf_mask(t, {9, 40, 2, 1}), 1.0f, 0.0f);
      },
      kNmse);
}

TEST(HtpSoftmaxOps, PermutedAndViewSources) {
  expect_op_matches(
      "permuted",
      [](OpTester& t) {
        Tensor* a =
            graph::permute(t.ctx(), t.input(Type::F32, {48, 6, 5, 1}, -4, 4), 0, 2, 1, 3);  // [48, 5, 6]
        return graph::soft_max(t.ctx(), a, t.input(Type::F16, {48, 5}, -1, 0), 0.25f, 0.0f);
      },
      kNmse);
  expect_op_matches(
      "view",
      [](OpTester& t) {
        Tensor* wide = t.input(Type::F32, {64, 30}, -4, 4);
        return graph::soft_max(t.ctx(), graph::view_2d(t.ctx(), wide, 60, 30, wide->nb[1], 4 * sizeof(float)),
                               nullptr, 1.0f, 0.0f);
      },
      kNmse);
}

// MoE router shape, many rows.
TEST(HtpSoftmaxOps, ManyShortRows) {
  expect_op_matches(
      "router 64 x 512",
      [](OpTester& t) {
        return graph::soft_max(t.ctx(), t.input(Type::F32, {64, 512}, -5, 5), nullptr, 1.0f, 0.0f);
      },
      kNmse);
}

// Long rows: 128 KiB and 512 KiB rows exceed a 256 KiB VTCM and stream in chunks, twice.
TEST(HtpSoftmaxOps, LongRowsStreamInChunks) {
  for (int64_t ne0 : {32768, 131072}) {
    const std::string n = "ne0=" + std::to_string(ne0);
    expect_op_matches(
        n + " no mask",
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 2}, -8, 8), nullptr, 1.0f, 0.0f);
        },
        kNmse);
    expect_op_matches(
        n + " f16 causal mask, alibi, sinks",
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 3, 2, 1}, -8, 8),
                                 t.causal_mask(ne0, 3, ne0 / 2 - 1), 0.5f, 8.0f,
                                 t.input(Type::F32, {2}, -1, 1));
        },
        kNmse);
    expect_op_matches(
        n + " fully masked rows",
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 3}, -8, 8), t.causal_mask(ne0, 3, -2),
                                 1.0f, 0.0f);
        },
        kNmse);
    expect_op_matches(
        n + " sparse -inf f32 mask",
        [&](OpTester& t) {
          return graph::soft_max(t.ctx(), t.input(Type::F32, {ne0, 2}, -8, 8), f32_inf_mask(t, {ne0, 2}),
                                 1.0f, 0.0f);
        },
        kNmse);
  }
}

}  // namespace
}  // namespace hexllm::test
