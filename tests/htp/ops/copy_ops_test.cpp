// CPY, CONT, DUP, CONCAT, REPEAT, PAD and FILL on the device against the reference backend.
#include "htp/abi/copy_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// Same-type copies move bytes: exact. Float conversions round once on both sides (round to
// nearest even); docs/DESIGN.md §9 / ggml's test_cpy allow 1e-6 for float <-> float conversions.
constexpr double kExact = 0.0;
constexpr double kConvert = 1e-6;

double nmse_for(Type a, Type b) { return a == b ? kExact : kConvert; }

const Type kFloats[] = {Type::F32, Type::F16, Type::BF16};

TEST(HtpCopyOps, CpyEveryFloatPair) {
  const std::vector<std::vector<int64_t>> shapes = {{67, 5, 3, 2}, {4096, 3, 1, 1}, {1, 9, 1, 1}};
  for (Type a : kFloats)
    for (Type b : kFloats)
      for (const std::vector<int64_t>& s : shapes)
        expect_op_matches(std::string("cpy ") + type_name(a) + "->" + type_name(b), [&](OpTester& t) {
          return graph::cpy(t.ctx(), t.input(a, {s[0], s[1], s[2], s[3]}), t.input(b, {s[0], s[1], s[2], s[3]}));
        }, nmse_for(a, b));
}

TEST(HtpCopyOps, CpyPermutedAndTransposed) {
  for (Type b : {Type::F32, Type::F16}) {
    // Rows strided (dims 1/2 swapped): one descriptor per block of rows.
    expect_op_matches("cpy permuted src", [&](OpTester& t) {
      Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {33, 6, 5, 2}), 0, 2, 1, 3);
      return graph::cpy(t.ctx(), a, t.input(b, {33, 5, 6, 2}));
    }, nmse_for(Type::F32, b));
    // Elements strided (dims 0/1 swapped): gathered per row.
    expect_op_matches("cpy transposed src", [&](OpTester& t) {
      Tensor* a = graph::transpose(t.ctx(), t.input(Type::F32, {45, 70}));
      return graph::cpy(t.ctx(), a, t.input(b, {70, 45}));
    }, nmse_for(Type::F32, b));
    // Strided dst: a transposed view of the destination, scattered per row.
    expect_op_matches("cpy into a transposed dst", [&](OpTester& t) {
      Tensor* dst = graph::transpose(t.ctx(), t.input(b, {37, 20}));
      return graph::cpy(t.ctx(), t.input(Type::F32, {20, 37}), dst);
    }, nmse_for(Type::F32, b));
    // Rows of a wider dst (row stride > row bytes).
    expect_op_matches("cpy into a row view", [&](OpTester& t) {
      Tensor* wide = t.input(b, {100, 8});
      Tensor* dst = graph::view_2d(t.ctx(), wide, 40, 8, wide->nb[1], 10 * wide->nb[0]);
      return graph::cpy(t.ctx(), t.input(Type::F32, {40, 8}), dst);
    }, nmse_for(Type::F32, b));
  }
}

TEST(HtpCopyOps, CpyReshapes) {
  // Contiguous src takes the dst's shape.
  expect_op_matches("cpy reshape (contiguous src)", [&](OpTester& t) {
    return graph::cpy(t.ctx(), t.input(Type::F32, {64, 6}), t.input(Type::F16, {96, 4}));
  }, kConvert);
  // Permuted src, contiguous dst of another shape: the dst takes the src's shape.
  expect_op_matches("cpy reshape (contiguous dst)", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {4, 6, 5}), 0, 2, 1, 3);
    return graph::cpy(t.ctx(), a, t.input(Type::F32, {120}));
  }, kExact);
  // Neither side contiguous and different row lengths: the FLAT path.
  expect_op_matches("cpy flat", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {8, 6, 5}), 0, 2, 1, 3);  // [8, 5, 6]
    Tensor* b = graph::transpose(t.ctx(), t.input(Type::F16, {20, 12}));              // [12, 20]
    return graph::cpy(t.ctx(), a, b);
  }, kConvert);
}

TEST(HtpCopyOps, CpyRowsLongerThanVtcm) {
  // 160 KB rows: ROWS with 8 MiB of VTCM, FLAT with 256 KiB.
  expect_op_matches("cpy long rows", [&](OpTester& t) {
    return graph::cpy(t.ctx(), t.input(Type::F32, {40000, 2}), t.input(Type::F16, {40000, 2}));
  }, kConvert);
}

TEST(HtpCopyOps, ContAndDup) {
  for (Type type : {Type::F32, Type::F16, Type::BF16, Type::I32}) {
    auto leaf = [&](OpTester& t, std::initializer_list<int64_t> ne) {
      return type == Type::I32 ? t.ids(ne, 1000) : t.input(type, ne);
    };
    expect_op_matches(std::string("cont permuted ") + type_name(type), [&](OpTester& t) {
      return graph::cont(t.ctx(), graph::permute(t.ctx(), leaf(t, {16, 6, 5, 3}), 0, 2, 3, 1));
    }, kExact);
    expect_op_matches(std::string("cont transposed ") + type_name(type), [&](OpTester& t) {
      return graph::cont(t.ctx(), graph::transpose(t.ctx(), leaf(t, {67, 33})));
    }, kExact);
    expect_op_matches(std::string("dup ") + type_name(type), [&](OpTester& t) {
      return graph::dup(t.ctx(), leaf(t, {67, 5, 2}));
    }, kExact);
  }
  // Block types: whole rows of a row view.
  for (Type type : {Type::Q8_0, Type::Q4_K})
    expect_op_matches(std::string("cont rows of ") + type_name(type), [&](OpTester& t) {
      Tensor* a = t.input(type, {512, 9});
      return graph::cont(t.ctx(), graph::view_2d(t.ctx(), a, 256, 9, a->nb[1], 0));
    }, kExact);
}

TEST(HtpCopyOps, Concat) {
  for (Type type : {Type::F32, Type::F16, Type::I32})
    for (int dim = 0; dim < 4; ++dim) {
      auto leaf = [&](OpTester& t, std::initializer_list<int64_t> ne) {
        return type == Type::I32 ? t.ids(ne, 1 << 20) : t.input(type, ne);
      };
      expect_op_matches(std::string("concat ") + type_name(type) + " dim " + std::to_string(dim), [&](OpTester& t) {
        int64_t a_ne[4] = {33, 5, 3, 2}, b_ne[4] = {33, 5, 3, 2};
        b_ne[dim] = dim == 0 ? 47 : 2;
        Tensor* a = leaf(t, {a_ne[0], a_ne[1], a_ne[2], a_ne[3]});
        Tensor* b = leaf(t, {b_ne[0], b_ne[1], b_ne[2], b_ne[3]});
        return graph::concat(t.ctx(), a, b, dim);
      }, kExact);
    }
  // A permuted operand (rows strided) and a transposed one (elements strided).
  expect_op_matches("concat views", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {16, 4, 3}), 0, 2, 1, 3);  // [16, 3, 4]
    Tensor* b = graph::transpose(t.ctx(), t.input(Type::F32, {3, 16}));               // [16, 3]
    Tensor* b3 = graph::reshape_3d(t.ctx(), graph::cont(t.ctx(), b), 16, 3, 1);
    return graph::concat(t.ctx(), a, b3, 2);
  }, kExact);
  expect_op_matches("concat dim 0 of transposed rows", [&](OpTester& t) {
    Tensor* a = graph::transpose(t.ctx(), t.input(Type::F16, {7, 20}));  // [20, 7]
    return graph::concat(t.ctx(), a, t.input(Type::F16, {5, 7}), 0);
  }, kExact);
}

TEST(HtpCopyOps, Repeat) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4, 1, 3, 1}, {8, 5, 3, 2}},   {{1, 1, 1, 1}, {4096, 2, 1, 1}}, {{67, 2, 1, 1}, {134, 4, 2, 1}},
      {{33, 5, 1, 1}, {33, 5, 3, 2}}, {{5, 7, 2, 1}, {5, 21, 4, 3}}};
  for (Type type : {Type::F32, Type::F16})
    for (const auto& [a, like] : cases)
      expect_op_matches(std::string("repeat ") + type_name(type), [&](OpTester& t) {
        Tensor* shape = t.ctx().new_tensor(type, {like[0], like[1], like[2], like[3]});
        return graph::repeat(t.ctx(), t.input(type, {a[0], a[1], a[2], a[3]}), shape);
      }, kExact);
  expect_op_matches("repeat permuted", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {6, 4, 3}), 1, 0, 2, 3);  // [4, 6, 3], elements strided
    return graph::repeat(t.ctx(), a, t.ctx().new_tensor(Type::F32, {8, 12, 3, 2}));
  }, kExact);
}

TEST(HtpCopyOps, Pad) {
  const std::vector<std::vector<int>> pads = {{5, 2, 1, 1}, {0, 0, 0, 0}, {0, 3, 0, 0}, {31, 0, 2, 0}, {1, 0, 0, 2}};
  for (const auto& p : pads)
    expect_op_matches("pad", [&](OpTester& t) {
      return graph::pad(t.ctx(), t.input(Type::F32, {67, 5, 3, 1}), p[0], p[1], p[2], p[3]);
    }, kExact);
  expect_op_matches("pad permuted", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {20, 6, 5}), 0, 2, 1, 3);
    return graph::pad(t.ctx(), a, 12, 1, 2, 0);
  }, kExact);
}

TEST(HtpCopyOps, Fill) {
  for (Type type : kFloats)
    for (float v : {1.25f, -3.5f, 0.0f}) {
      const std::vector<int64_t> ne = {67, 5, 3};
      expect_op_matches(std::string("fill ") + type_name(type), [&](OpTester& t) {
        return graph::fill(t.ctx(), type, ne, v);
      }, kExact);
    }
  expect_op_matches("fill large rows", [&](OpTester& t) {
    const std::vector<int64_t> ne = {4096, 7};
    return graph::fill(t.ctx(), Type::F16, ne, 0.1f);
  }, kExact);
}

// ---- kernel params: the host builder's choices, and the device's check of untrusted params ----

// A device tensor descriptor of `type` and shape `ne`, contiguous unless `nb` is given.
htp_tensor desc(uint32_t type, std::initializer_list<uint32_t> ne, std::initializer_list<uint32_t> nb = {}) {
  htp_tensor t{};
  t.type = type;
  int d = 0;
  for (uint32_t n : ne) t.ne[d++] = n;
  for (; d < 4; ++d) t.ne[d] = 1;
  const uint32_t es = htp_type_geometry(type).type_size;
  t.nb[0] = es;
  for (d = 1; d < 4; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
  d = 0;
  for (uint32_t b : nb) t.nb[d++] = b;
  t.size = static_cast<uint32_t>(htp_tensor_extent(t));
  return t;
}

TEST(HtpCopyParams, KindFollowsTheShapesAndTheVtcm) {
  const int32_t no_params[HTP_MAX_PARAMS] = {};
  htp_copy_params p{};
  // Contiguous rows that fit: ROWS; 16 KiB in + 8 KiB out per 4096-element row, so two rows per
  // block at the 64 KiB block aim.
  const htp_tensor a = desc(HTP_TYPE_F32, {4096, 8}), b = desc(HTP_TYPE_F16, {4096, 8});
  ASSERT_EQ(htp_copy_params_build(HTP_OP_CPY, no_params, b, &a, nullptr, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.kind, HTP_COPY_ROWS);
  EXPECT_EQ(p.n_threads, 2u);
  EXPECT_EQ(p.block_rows, 2u);
  EXPECT_EQ(p.layout.in0_stride, 16384u);
  EXPECT_EQ(p.layout.dst_stride, 8192u);
  // Rows of 160 KB do not fit 256 KiB twice: FLAT.
  const htp_tensor la = desc(HTP_TYPE_F32, {40000, 2}), lb = desc(HTP_TYPE_F16, {40000, 2});
  ASSERT_EQ(htp_copy_params_build(HTP_OP_CPY, no_params, lb, &la, nullptr, 2, 256u << 10, &p), HTP_OK);
  EXPECT_EQ(p.kind, HTP_COPY_FLAT);
  // A permuted src ([8, 5, 6] of an [8, 6, 5] tensor) into a transposed dst ([12, 20] of a
  // [20, 12] tensor): no row of one is a row of the other, FLAT.
  const htp_tensor pa = desc(HTP_TYPE_F32, {8, 5, 6}, {4, 192, 32, 960});
  const htp_tensor pb = desc(HTP_TYPE_F16, {12, 20}, {40, 2, 480, 480});
  ASSERT_EQ(htp_copy_params_build(HTP_OP_CPY, no_params, pb, &pa, nullptr, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.kind, HTP_COPY_FLAT);
  // Ops without a FLAT form refuse rows that do not fit.
  int32_t dim0[HTP_MAX_PARAMS] = {};
  const htp_tensor cat = desc(HTP_TYPE_F32, {80000, 2});
  EXPECT_EQ(htp_copy_params_build(HTP_OP_CONCAT, dim0, cat, &la, &la, 2, 256u << 10, &p), HTP_ERR_VTCM_TOO_SMALL);
  // Unsupported or inconsistent.
  EXPECT_EQ(htp_copy_params_build(HTP_OP_CPY, no_params, desc(HTP_TYPE_Q8_0, {4096, 8}), &a, nullptr, 2, 8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(htp_copy_params_build(HTP_OP_CPY, no_params, desc(HTP_TYPE_F16, {4096, 7}), &a, nullptr, 2, 8u << 20, &p),
            HTP_ERR_INVALID_PARAMS);
  int32_t bad_dim[HTP_MAX_PARAMS] = {4};
  EXPECT_EQ(htp_copy_params_build(HTP_OP_CONCAT, bad_dim, cat, &la, &la, 2, 8u << 20, &p), HTP_ERR_INVALID_PARAMS);
}

TEST(HtpCopyParams, KernelRejectsTamperedParams) {
  const int32_t pads[HTP_MAX_PARAMS] = {3, 1, 0, 0};
  const htp_tensor a = desc(HTP_TYPE_F32, {61, 9}), dst = desc(HTP_TYPE_F32, {64, 10});
  htp_copy_params p{};
  ASSERT_EQ(htp_copy_params_build(HTP_OP_PAD, pads, dst, &a, nullptr, 2, 1u << 20, &p), HTP_OK);
  EXPECT_EQ(htp_copy_params_check(p, HTP_OP_PAD, pads, dst, &a, nullptr, 2, 1u << 20), HTP_OK);
  auto expect_refused = [&](const htp_copy_params& bad, const char* what) {
    EXPECT_EQ(htp_copy_params_check(bad, HTP_OP_PAD, pads, dst, &a, nullptr, 2, 1u << 20), HTP_ERR_INVALID_PARAMS)
        << what;
  };
  htp_copy_params bad = p;
  bad.kind = HTP_COPY_FLAT;
  expect_refused(bad, "FLAT for an op without a FLAT form");
  bad = p;
  bad.layout.in0_stride = 128;
  expect_refused(bad, "row stride");
  bad = p;
  bad.d2.shift += 1;
  expect_refused(bad, "fastdiv constant");
  bad = p;
  bad.block_rows = 0;
  expect_refused(bad, "empty block");
  // The same params under other op params no longer match the tensors.
  const int32_t other_pads[HTP_MAX_PARAMS] = {2, 1, 0, 0};
  EXPECT_EQ(htp_copy_params_check(p, HTP_OP_PAD, other_pads, dst, &a, nullptr, 2, 1u << 20), HTP_ERR_INVALID_PARAMS);
}

}  // namespace
}  // namespace hexllm::test
