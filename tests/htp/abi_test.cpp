// The wire contract: type geometry agrees with the quant module's GGUF table, names are
// complete, message layouts and tensor extents match hand-computed values.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "htp/abi/htp_abi.h"
#include "quant/types.h"

namespace {

TEST(HtpAbi, TypeGeometryMatchesQuantTable) {
  // Truth: src/quant's GGUF type table (block size, bytes per block) for every id it knows.
  int checked = 0;
  for (uint32_t id = 0; id < hexllm::kTypeIdLimit; ++id) {
    const hexllm::TypeTraits* tr = hexllm::type_traits_or_null(id);
    const htp_type_info ti = htp_type_geometry(id);
    if (tr == nullptr) {
      EXPECT_FALSE(htp_type_known(id)) << "id " << id;
      continue;
    }
    ASSERT_TRUE(htp_type_known(id)) << tr->name;
    EXPECT_EQ(ti.block_size, tr->block_size) << tr->name;
    EXPECT_EQ(ti.type_size, tr->type_size) << tr->name;
    EXPECT_STREQ(ti.name, tr->name);
    EXPECT_EQ(ti.type_size % ti.align, 0u) << tr->name;
    ++checked;
  }
  EXPECT_EQ(checked, 22);
}

TEST(HtpAbi, TiledTypesKeepBaseGeometry) {
  using namespace hexllm::htp;
  const uint32_t pairs[][2] = {{HTP_TILE_Q4_0_X8, HTP_TYPE_Q4_0}, {HTP_TILE_Q4_1_X8, HTP_TYPE_Q4_1},
                               {HTP_TILE_Q8_0_X8, HTP_TYPE_Q8_0}, {HTP_TILE_MXFP4_X8, HTP_TYPE_MXFP4},
                               {HTP_TILE_IQ4_NL_X8, HTP_TYPE_IQ4_NL}, {HTP_TILE_F32_X8, HTP_TYPE_F32},
                               {HTP_TILE_F16_X8, HTP_TYPE_F16}, {HTP_TILE_Q6_K_X8, HTP_TYPE_Q6_K}};
  for (const auto& p : pairs) {
    EXPECT_GE(p[0], 200u);
    EXPECT_EQ(htp_type_geometry(p[0]).block_size, htp_type_geometry(p[1]).block_size);
    EXPECT_EQ(htp_type_geometry(p[0]).type_size, htp_type_geometry(p[1]).type_size);
  }
  // Every tile type of tiles.h is known, nothing around them is.
  for (uint32_t t = hexllm::htp::HTP_TILE_FIRST; t < hexllm::htp::HTP_TILE_END; ++t) EXPECT_TRUE(htp_type_known(t)) << t;
  EXPECT_FALSE(htp_type_known(199));
  EXPECT_FALSE(htp_type_known(hexllm::htp::HTP_TILE_END));
}

TEST(HtpAbi, StatusAndOpcodeNamesAreComplete) {
  std::set<std::string> names;
  for (uint32_t s = 0; s < HTP_STATUS_COUNT; ++s) {
    EXPECT_STRNE(htp_status_name(s), "UNKNOWN_STATUS") << s;
    names.insert(htp_status_name(s));
  }
  EXPECT_EQ(names.size(), (size_t)HTP_STATUS_COUNT);
  EXPECT_EQ(HTP_OK, 0u);
  EXPECT_STREQ(htp_status_name(HTP_STATUS_COUNT), "UNKNOWN_STATUS");

  names.clear();
  for (uint32_t op = 0; op < HTP_OP_COUNT; ++op) {
    EXPECT_STRNE(htp_opcode_name(op), "UNKNOWN_OP") << op;
    names.insert(htp_opcode_name(op));
  }
  EXPECT_EQ(names.size(), (size_t)HTP_OP_COUNT);
  EXPECT_EQ(HTP_OP_COUNT, 45u);  // 40 ops + 5 fused (MUL_MAT_ID_FFN appended)
  EXPECT_STREQ(htp_opcode_name(HTP_OP_FLASH_ATTN_EXT), "FLASH_ATTN_EXT");
  EXPECT_STREQ(htp_opcode_name(HTP_OP_COUNT), "UNKNOWN_OP");
}

TEST(HtpAbi, MessageLayoutHandComputed) {
  // header 80 | 2 tensors x 48 | 1 op x 224 | response 120 + 1 x 8 | 2 threads x 4 records x 8
  htp_message_layout l{};
  ASSERT_TRUE(htp_message_layout_build(2, 1, 2, 4, &l));
  EXPECT_EQ(l.tensors_offset, 80u);
  EXPECT_EQ(l.ops_offset, 176u);
  EXPECT_EQ(l.response_offset, 400u);
  EXPECT_EQ(l.response_stride, 128u);
  EXPECT_EQ(l.trace_offset, 528u);
  EXPECT_EQ(l.trace_stride, 64u);
  EXPECT_EQ(l.message_size, 592u);
  // Two devices: a response and trace areas each.
  ASSERT_TRUE(htp_message_layout_build(2, 1, 2, 4, &l, 2));
  EXPECT_EQ(l.trace_offset, 400u + 2 * 128u);
  EXPECT_EQ(l.message_size, 400u + 2 * 128u + 2 * 64u);
  EXPECT_FALSE(htp_message_layout_build(0xffff, 0x2000000, 0, 0, &l));  // 7 GB of ops
}

htp_tensor tensor(uint32_t type, uint32_t ne0, uint32_t ne1, uint32_t nb0, uint32_t nb1) {
  htp_tensor t{};
  t.type = type;
  t.ne[0] = ne0;
  t.ne[1] = ne1;
  t.ne[2] = t.ne[3] = 1;
  t.nb[0] = nb0;
  t.nb[1] = nb1;
  t.nb[2] = t.nb[3] = nb1 * ne1;
  return t;
}

TEST(HtpAbi, TensorExtentHandComputed) {
  // F32 3x2 contiguous: 6 floats.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_F32, 3, 2, 4, 12)), 24u);
  // F32 3x2 with rows 32 bytes apart: last element at 32 + 8, ends at 44.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_F32, 3, 2, 4, 32)), 44u);
  // Transposed view of a 2x3 matrix: ne = {3, 2}, nb = {8, 4}: last element at 2*8 + 4.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_F32, 3, 2, 8, 4)), 24u);
  // Q4_0 rows of 64 = 2 blocks of 18 bytes; two rows.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_Q4_0, 64, 2, 18, 36)), 72u);
  // Not whole blocks / unknown type.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_Q4_0, 48, 1, 18, 36)), HTP_BAD_EXTENT);
  EXPECT_EQ(htp_tensor_extent(tensor(5, 4, 1, 4, 16)), HTP_BAD_EXTENT);
  // Empty.
  EXPECT_EQ(htp_tensor_extent(tensor(HTP_TYPE_F32, 0, 2, 4, 0)), 0u);
  EXPECT_TRUE(htp_tensor_contiguous(tensor(HTP_TYPE_F32, 3, 2, 4, 12)));
  EXPECT_FALSE(htp_tensor_contiguous(tensor(HTP_TYPE_F32, 3, 2, 4, 32)));
}

TEST(HtpAbi, KernelParamsRoundTrip) {
  struct params {
    uint32_t a;
    float b;
    uint64_t c;
  };
  htp_op_desc op{};
  htp_kparams_set(&op, params{7, 1.5f, 1ull << 40});
  const params p = htp_kparams_get<params>(op);
  EXPECT_EQ(p.a, 7u);
  EXPECT_EQ(p.b, 1.5f);
  EXPECT_EQ(p.c, 1ull << 40);
}

TEST(HtpLayout, BumpLayoutHandComputed) {
  htp_layout l{};
  EXPECT_EQ(htp_layout_add(&l, 10), 0u);
  EXPECT_EQ(htp_layout_add(&l, 5), 128u);
  EXPECT_EQ(htp_layout_add(&l, 1, 8), 136u);
  EXPECT_EQ(l.size, 137u);
  EXPECT_EQ(htp_layout_total(l), 256u);
  // Sizes beyond 32 bits do not wrap.
  EXPECT_EQ(htp_layout_add(&l, 1ull << 33), 256u);
  EXPECT_EQ(htp_layout_total(l), (1ull << 33) + 256);
}

}  // namespace
