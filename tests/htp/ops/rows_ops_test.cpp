// GET_ROWS and SET_ROWS on the device against the reference backend (the oracle), bit-exact
// dequantization of every block type against the reference dequantizer, and the error path:
// an index out of range fails the batch with a status that names the op.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "base/error.h"
#include "base/fp16.h"
#include "op_harness.h"
#include "htp/abi/rows_params.h"
#include "quant/dequant.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// Dequantization and conversions are exact per element on both sides (the device applies the
// reference's formulas in the same order); 1e-7 is the default bound of docs/DESIGN.md §9.
constexpr double kNmse = 1e-7;

// A deterministic permutation of 0..n-1 (xorshift): distinct row indices.
std::vector<int32_t> permutation(int32_t n, uint64_t seed) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = v.size(); i > 1; --i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    std::swap(v[i - 1], v[s % i]);
  }
  return v;
}

struct TypeCase {
  Type type;
  std::vector<int64_t> row_lengths;
};

// Source types the harness can quantize, with row lengths that are not multiples of 32 where
// the type allows, and K-quant rows from 256 to 4096. Q2_K, Q3_K and Q5_K have no quantizer:
// HtpRowsRawBlocks covers them with random blocks.
const std::vector<TypeCase> kPlainTypes = {
    {Type::F32, {1, 67, 4096}}, {Type::F16, {33, 67, 4096}}, {Type::BF16, {67, 300}},
    {Type::Q4_0, {32, 96}},     {Type::Q4_1, {96}},          {Type::Q5_0, {96}},
    {Type::Q5_1, {160}},        {Type::Q8_0, {96, 4096}},    {Type::Q4_K, {256, 4096}},
    {Type::Q6_K, {256, 4096}},  {Type::IQ4_NL, {64}},        {Type::MXFP4, {128}},
};

TEST(HtpRowsOps, GetRowsEveryType) {
  for (const TypeCase& tc : kPlainTypes)
    for (int64_t ne0 : tc.row_lengths) {
      const std::string name = std::string("get_rows ") + type_name(tc.type) + " ne0=" + std::to_string(ne0);
      expect_op_matches(name, [&](OpTester& t) {
        Tensor* a = t.input(tc.type, {ne0, 37});
        return graph::get_rows(t.ctx(), a, t.ids({13}, 37));
      }, kNmse);
    }
}

TEST(HtpRowsOps, GetRowsBatchedAndRepeatedIndices) {
  // Planes (dims 2/3) with their own indices; repeated indices gather the same row twice.
  for (Type type : {Type::F32, Type::F16, Type::Q8_0, Type::Q4_K}) {
    const int64_t ne0 = type == Type::Q4_K ? 256 : 64;
    expect_op_matches(std::string("get_rows batched ") + type_name(type), [&](OpTester& t) {
      Tensor* a = t.input(type, {ne0, 9, 3, 2});
      return graph::get_rows(t.ctx(), a, t.ids({70, 3, 2}, 9));
    }, kNmse);
  }
  expect_op_matches("get_rows repeated", [&](OpTester& t) {
    Tensor* a = t.input(Type::Q6_K, {256, 5});
    return graph::get_rows(t.ctx(), a, t.ids_from({6}, {4, 4, 0, 4, 1, 0}));
  }, kNmse);
}

TEST(HtpRowsOps, GetRowsViews) {
  // Rows of a wider tensor (row stride > row bytes) and a transposed (strided) index tensor.
  expect_op_matches("get_rows strided src and idx", [&](OpTester& t) {
    Tensor* wide = t.input(Type::F32, {96, 20, 2});
    Tensor* a = graph::view_3d(t.ctx(), wide, 40, 20, 2, wide->nb[1], wide->nb[2], 16 * sizeof(float));
    Tensor* ids = graph::transpose(t.ctx(), t.ids({2, 11}, 20));  // [11, 2], element stride 8 bytes
    return graph::get_rows(t.ctx(), a, ids);
  }, kNmse);
}

// Tiled weights: load_weights repacks 2-D weights into 8-row tiles; GET_ROWS (the token
// embedding) must read them and give the plain row's floats. 37 rows: the last tile is partial.
const std::vector<TypeCase> kTiledTypes = {
    {Type::Q4_0, {64}},   {Type::Q4_1, {96}}, {Type::Q8_0, {64, 4096}}, {Type::MXFP4, {64}},
    {Type::IQ4_NL, {96}}, {Type::F32, {67}},  {Type::F16, {67, 4096}},  {Type::BF16, {40}},
    {Type::Q5_0, {64}},   {Type::Q5_1, {96}}, {Type::Q4_K, {256, 4096}}, {Type::Q6_K, {256, 2048}},
};

// The device must know a tile type's geometry (htp/abi/htp_types.h) to accept such a weight.
bool tile_type_known(Type type) {
  const uint32_t tile = htp::htp_tile_for(static_cast<uint32_t>(type));
  EXPECT_TRUE(tile == htp::HTP_TILE_INVALID || htp_type_known(tile))
      << "htp/abi/htp_types.h has no geometry for tile type " << tile << " (" << type_name(type)
      << " weights repacked by load_weights): the device refuses such weights (BAD_TENSOR)";
  return tile == htp::HTP_TILE_INVALID || htp_type_known(tile);
}

TEST(HtpRowsOps, GetRowsFromTiledWeights) {
  for (const TypeCase& tc : kTiledTypes)
    for (int64_t ne0 : tc.row_lengths) {
      if (!tile_type_known(tc.type)) continue;
      const std::string name = std::string("get_rows weight ") + type_name(tc.type) + " ne0=" + std::to_string(ne0);
      expect_op_matches(name, [&](OpTester& t) {
        Tensor* w = t.weight(tc.type, {ne0, 37});
        // First, last, and rows of the partial last tile.
        return graph::get_rows(t.ctx(), w, t.ids_from({7}, {0, 36, 35, 32, 7, 8, 19}));
      }, kNmse);
    }
}

TEST(HtpRowsOps, SetRowsKvCacheWrite) {
  // dst [n_embd_gqa, n_ctx] cache, indices = positions; F16 is the KV cache, F32/BF16 also.
  for (Type dtype : {Type::F16, Type::F32, Type::BF16})
    for (int64_t ne0 : {67, 128, 4096}) {
      const std::string name = std::string("set_rows ") + type_name(dtype) + " ne0=" + std::to_string(ne0);
      expect_op_matches(name, [&](OpTester& t) {
        Tensor* cache = t.input(dtype, {ne0, 40});
        Tensor* src = t.input(Type::F32, {ne0, 23});
        std::vector<int32_t> pos = permutation(40, static_cast<uint64_t>(ne0));
        pos.resize(23);
        return graph::set_rows(t.ctx(), cache, src, t.ids_from({23}, pos));
      }, kNmse);
    }
}

TEST(HtpRowsOps, SetRowsBroadcastIndices) {
  // idx [n, m2, m3] broadcast over src [., n, 4, 2]: plane (j, k) uses idx[:, j % m2, k % m3].
  for (const std::vector<int64_t>& idx_dims : std::vector<std::vector<int64_t>>{{2, 1}, {1, 2}, {4, 2}, {1, 1}}) {
    expect_op_matches("set_rows broadcast idx", [&](OpTester& t) {
      Tensor* cache = t.input(Type::F16, {48, 10, 4, 2});
      Tensor* src = t.input(Type::F32, {48, 6, 4, 2});
      std::vector<int32_t> v;
      for (int64_t p = 0; p < idx_dims[0] * idx_dims[1]; ++p) {
        std::vector<int32_t> perm = permutation(10, static_cast<uint64_t>(p + 3));
        v.insert(v.end(), perm.begin(), perm.begin() + 6);
      }
      return graph::set_rows(t.ctx(), cache, src, t.ids_from({6, idx_dims[0], idx_dims[1]}, v));
    }, kNmse);
  }
}

TEST(HtpRowsOps, SetRowsThenPermutedCacheRead) {
  // The cache is written by SET_ROWS and read as attention does: [head_dim, n_ctx, n_head].
  auto build = [](OpTester& t, bool cont) {
    Tensor* cache = t.input(Type::F16, {16 * 4, 32});
    Tensor* src = t.input(Type::F32, {16 * 4, 5});
    Tensor* w = graph::set_rows(t.ctx(), cache, src, t.ids_from({5}, {3, 31, 0, 17, 8}));
    Tensor* k = graph::permute(t.ctx(), graph::reshape_3d(t.ctx(), w, 16, 4, 32), 0, 2, 1, 3);
    return cont ? graph::cont(t.ctx(), k) : k;
  };
  expect_op_matches("set_rows read through a permuted view", [&](OpTester& t) { return build(t, false); }, kNmse);
  expect_op_matches("set_rows then cont of the permuted view", [&](OpTester& t) { return build(t, true); }, kNmse);
}

// Types without a quantizer (Q2_K, Q3_K, Q5_K), and every other block type too: random block
// bytes with sane f16 scales, as a plain input and as a weight (tiled when a tile layout exists),
// straight on the HTP backend. Truth: the reference dequantizer on the same bytes, bit for bit.
class HtpRowsRawBlocks : public ::testing::Test {
 protected:
  static std::vector<uint8_t> random_blocks(Type type, int64_t ne0, int64_t rows, uint64_t seed) {
    std::vector<uint8_t> bytes(row_size(type, ne0) * static_cast<size_t>(rows));
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    auto next = [&] { return s ^= s << 13, s ^= s >> 7, s ^= s << 17; };
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(next());
    // Offsets of the f16 scale fields in one block; random bits there could be inf or nan.
    std::vector<size_t> scales;
    switch (type) {
      case Type::Q2_K: scales = {80, 82}; break;
      case Type::Q3_K: scales = {108}; break;
      case Type::Q4_K: case Type::Q5_K: case Type::Q4_1: case Type::Q5_1: scales = {0, 2}; break;
      case Type::Q6_K: scales = {208}; break;
      case Type::Q4_0: case Type::Q5_0: case Type::Q8_0: case Type::IQ4_NL: scales = {0}; break;
      default: break;
    }
    const size_t block = type_size(type);
    for (size_t b = 0; b < bytes.size() / block; ++b)
      for (size_t off : scales) {
        const uint16_t h = fp32_to_fp16(static_cast<float>(next() % 2001) * 1e-5f - 0.01f);
        std::memcpy(&bytes[b * block + off], &h, 2);
      }
    return bytes;
  }

  // GET_ROWS of `idx` from a [ne0, rows] tensor of `type` holding random blocks.
  static void check(Type type, int64_t ne0, int64_t rows, bool as_weight, const std::vector<int32_t>& idx) {
    SCOPED_TRACE(std::string(type_name(type)) + " ne0=" + std::to_string(ne0) + (as_weight ? " weight" : " input"));
    htp_host::HtpOptions o;
    o.n_threads = 2;
    o.vtcm_bytes = 256u << 10;
    htp_host::HtpBackend htp(o);
    graph::Context ctx;
    std::vector<std::unique_ptr<backend::Buffer>> buffers;
    auto bind = [&](Tensor* t) {
      buffers.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
      t->data = buffers.back()->data();
      return t;
    };
    std::vector<uint8_t> bytes = random_blocks(type, ne0, rows, static_cast<uint64_t>(ne0 + rows));
    Tensor* a = ctx.new_tensor(type, {ne0, rows});
    if (as_weight && !tile_type_known(type)) return;
    if (as_weight) {
      a->flags |= graph::kFlagWeight;
      a->data = bytes.data();
      std::vector<Tensor*> weights = {a};
      htp.load_weights(weights, nullptr, nullptr);
    } else {
      bind(a);
      std::memcpy(a->data, bytes.data(), bytes.size());
    }
    Tensor* ids = bind(ctx.new_tensor(Type::I32, {static_cast<int64_t>(idx.size())}));
    std::memcpy(ids->data, idx.data(), idx.size() * 4);
    Tensor* out = bind(graph::get_rows(ctx, a, ids));
    ASSERT_TRUE(htp.supports(*out));
    std::vector<Tensor*> nodes = {out};
    try {
      htp.compute(nodes);
    } catch (const Error& e) {
      FAIL() << e.what();
    }
    std::vector<float> want(static_cast<size_t>(ne0));
    for (size_t i = 0; i < idx.size(); ++i) {
      quant::dequantize_row(type, bytes.data() + static_cast<size_t>(idx[i]) * row_size(type, ne0), want.data(), ne0);
      const float* got = static_cast<const float*>(out->data) + i * static_cast<size_t>(ne0);
      for (int64_t c = 0; c < ne0; ++c)
        ASSERT_EQ(fp32_bits(got[c]), fp32_bits(want[static_cast<size_t>(c)])) << "row " << idx[i] << " col " << c;
    }
  }
};

TEST_F(HtpRowsRawBlocks, KQuantsWithoutQuantizer) {
  const std::vector<int32_t> idx = {0, 20, 19, 16, 7, 3};
  for (Type type : {Type::Q2_K, Type::Q3_K, Type::Q5_K})
    for (int64_t ne0 : {256, 1024, 4096})
      for (bool weight : {false, true}) check(type, ne0, 21, weight, idx);
}

TEST_F(HtpRowsRawBlocks, EveryBlockTypeBitExact) {
  const std::vector<int32_t> idx = {0, 20, 19, 16, 7, 8, 9};
  for (Type type : {Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q4_K, Type::Q6_K, Type::IQ4_NL,
                    Type::MXFP4})
    for (bool weight : {false, true}) check(type, block_size(type) == 256 ? 512 : 128, 21, weight, idx);
}

// Out-of-range indices, straight on the HTP backend: the device refuses the batch with a status,
// the backend throws an error naming the op, and the next batch runs normally.
class HtpRowsErrors : public ::testing::Test {
 protected:
  HtpRowsErrors() : htp_(options()) {}

  static htp_host::HtpOptions options() {
    htp_host::HtpOptions o;
    o.n_threads = 2;
    return o;
  }

  Tensor* bind(Tensor* t) {
    buffers_.push_back(htp_.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = buffers_.back()->data();
    return t;
  }

  void expect_failure_names(Tensor* node, const char* op) {
    std::vector<Tensor*> nodes = {node};
    try {
      htp_.compute(nodes);
      ADD_FAILURE() << "an out-of-range index must fail the batch";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("INVALID_PARAMS"), std::string::npos) << e.what();
    }
  }

  graph::Context ctx_;
  htp_host::HtpBackend htp_;
  std::vector<std::unique_ptr<backend::Buffer>> buffers_;
};

TEST_F(HtpRowsErrors, GetRowsIndexOutOfRange) {
  Tensor* a = bind(ctx_.new_tensor(Type::F32, {8, 4}));
  Tensor* idx = bind(ctx_.new_tensor(Type::I32, {3}));
  Tensor* out = bind(graph::get_rows(ctx_, a, idx));
  auto* x = static_cast<float*>(a->data);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i);
  auto* ids = static_cast<int32_t*>(idx->data);
  ASSERT_TRUE(htp_.supports(*out));
  for (int32_t bad : {4, -1, 1 << 30}) {
    ids[0] = 1, ids[1] = bad, ids[2] = 0;
    expect_failure_names(out, "GET_ROWS");
  }
  // The next batch works: rows 3, 0, 2 of a (row r holds 8r .. 8r + 7).
  ids[0] = 3, ids[1] = 0, ids[2] = 2;
  std::vector<Tensor*> nodes = {out};
  htp_.compute(nodes);
  const auto* y = static_cast<const float*>(out->data);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(y[i], 24.0f + i);
    EXPECT_EQ(y[8 + i], static_cast<float>(i));
    EXPECT_EQ(y[16 + i], 16.0f + i);
  }
}

TEST_F(HtpRowsErrors, SetRowsIndexOutOfRange) {
  Tensor* cache = bind(ctx_.new_tensor(Type::F16, {4, 6}));
  Tensor* src = bind(ctx_.new_tensor(Type::F32, {4, 2}));
  Tensor* idx = bind(ctx_.new_tensor(Type::I32, {2}));
  Tensor* out = graph::set_rows(ctx_, cache, src, idx);
  out->data = cache->data;
  std::memset(cache->data, 0, cache->n_bytes());
  auto* x = static_cast<float*>(src->data);
  for (int i = 0; i < 8; ++i) x[i] = 0.5f * static_cast<float>(i + 1);
  auto* ids = static_cast<int32_t*>(idx->data);
  ASSERT_TRUE(htp_.supports(*out));
  ids[0] = 6, ids[1] = 1;  // 6 rows: 6 is one past the end
  expect_failure_names(out, "SET_ROWS");
  ids[0] = 5, ids[1] = 1;
  std::vector<Tensor*> nodes = {out};
  htp_.compute(nodes);
  const auto* h = static_cast<const uint16_t*>(cache->data);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(fp16_to_fp32(h[5 * 4 + i]), 0.5f * static_cast<float>(i + 1));  // src row 0 -> row 5
    EXPECT_EQ(fp16_to_fp32(h[1 * 4 + i]), 0.5f * static_cast<float>(i + 5));  // src row 1 -> row 1
    EXPECT_EQ(h[0 * 4 + i], 0u);                                               // untouched
  }
}

// ---- kernel params: the host builder's choices, and the device's check of untrusted params ----

// A contiguous device tensor descriptor of `type` and shape `ne` (bank/offset irrelevant here).
htp_tensor desc(uint32_t type, std::initializer_list<uint32_t> ne) {
  htp_tensor t{};
  t.type = type;
  int d = 0;
  for (uint32_t n : ne) t.ne[d++] = n;
  for (; d < 4; ++d) t.ne[d] = 1;
  const htp_type_info ti = htp_type_geometry(type);
  t.nb[0] = ti.type_size;
  t.nb[1] = t.ne[0] / ti.block_size * ti.type_size;
  t.nb[2] = t.nb[1] * t.ne[1];
  t.nb[3] = t.nb[2] * t.ne[2];
  t.size = static_cast<uint32_t>(htp_tensor_extent(t));
  return t;
}

TEST(HtpRowsParams, BuilderFitsTheVtcm) {
  // Q8_0 rows of 4096: 4352 bytes fetched, 16384 written per row; a block aims at 64 KiB of
  // VTCM, so 65536 / (4352 + 16384) = 3 rows.
  const htp_tensor src = desc(HTP_TYPE_Q8_0, {4096, 1000});
  const htp_tensor idx = desc(HTP_TYPE_I32, {64});
  const htp_tensor dst = desc(HTP_TYPE_F32, {4096, 64});
  htp_rows_params p{};
  ASSERT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, dst, src, idx, 4, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.n_threads, 4u);
  EXPECT_EQ(p.block_rows, 3u);
  EXPECT_EQ(p.src_row_bytes, 4352u);
  EXPECT_EQ(p.layout.thread_bytes, 2u * 3u * (4352u + 16384u));
  // 64 KiB holds one worker with one row per slot (2 * 20736 bytes); 32 KiB holds nothing.
  ASSERT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, dst, src, idx, 4, 64u << 10, &p), HTP_OK);
  EXPECT_EQ(p.n_threads, 1u);
  EXPECT_EQ(p.block_rows, 1u);
  EXPECT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, dst, src, idx, 4, 32u << 10, &p), HTP_ERR_VTCM_TOO_SMALL);
  // What the device does not take.
  EXPECT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, desc(HTP_TYPE_F16, {4096, 64}), src, idx, 4, 8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, dst, src, desc(HTP_TYPE_F32, {64}), 4, 8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, dst, src, desc(HTP_TYPE_I32, {63}), 4, 8u << 20, &p),
            HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(htp_rows_params_build(HTP_OP_SET_ROWS, desc(HTP_TYPE_Q8_0, {4096, 64}), dst, idx, 4, 8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
}

TEST(HtpRowsParams, KernelRejectsTamperedParams) {
  const htp_tensor cache = desc(HTP_TYPE_F16, {256, 512});
  const htp_tensor src = desc(HTP_TYPE_F32, {256, 40});
  const htp_tensor idx = desc(HTP_TYPE_I32, {40});
  htp_rows_params p{};
  ASSERT_EQ(htp_rows_params_build(HTP_OP_SET_ROWS, cache, src, idx, 2, 1u << 20, &p), HTP_OK);
  EXPECT_EQ(htp_rows_params_check(p, HTP_OP_SET_ROWS, cache, src, idx, 2, 1u << 20), HTP_OK);
  auto expect_refused = [&](htp_rows_params bad, htp_status want, const char* what) {
    EXPECT_EQ(htp_rows_params_check(bad, HTP_OP_SET_ROWS, cache, src, idx, 2, 1u << 20), want) << what;
  };
  htp_rows_params bad = p;
  bad.layout.dst_offset += 128;
  expect_refused(bad, HTP_ERR_INVALID_PARAMS, "moved output area");
  bad = p;
  bad.block_rows = HTP_ROWS_MAX_BLOCK + 1;
  expect_refused(bad, HTP_ERR_INVALID_PARAMS, "block beyond the DMA budget");
  bad = p;
  bad.n_threads = 3;
  expect_refused(bad, HTP_ERR_INVALID_PARAMS, "more workers than the session has");
  bad = p;
  bad.ne1.mul ^= 1;
  expect_refused(bad, HTP_ERR_INVALID_PARAMS, "wrong fastdiv constant");
  bad = p;
  bad.dst_row_bytes *= 2;
  expect_refused(bad, HTP_ERR_INVALID_PARAMS, "row size");
  // Params planned for a larger arena than the session has are refused.
  EXPECT_NE(htp_rows_params_check(p, HTP_OP_SET_ROWS, cache, src, idx, 2, p.layout.thread_bytes), HTP_OK);
}

}  // namespace
}  // namespace hexllm::test
