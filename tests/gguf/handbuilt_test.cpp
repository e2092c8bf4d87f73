// Tiny v2 and v3 files assembled byte by byte from the spec (not by gguf::Writer), parsed
// and compared with the values that were put in; and the writer must emit the same bytes.
#include <gtest/gtest.h>

#include <cstring>

#include "gguf/gguf.h"
#include "image.h"

namespace hexllm::gguf {
namespace {

using test::Image;

struct TinyV3 {
  Image im;
  size_t kv_at[4] = {};
  size_t tensor_at[2] = {};
  size_t data_at = 0;
  float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t q[34] = {};
};

// Two tensors (F32 4x2, one Q8_0 block of 32) and four keys of different types.
TinyV3 make_tiny_v3() {
  TinyV3 t;
  Image& im = t.im;
  im.header(3, 2, 4);
  t.kv_at[0] = im.pos();
  im.kv_str("general.architecture", "llama");
  t.kv_at[1] = im.pos();
  im.kv_u32("test.u32", 42);
  t.kv_at[2] = im.pos();
  im.str("test.f32").u32(test::kF32).put(0.5f);
  t.kv_at[3] = im.pos();
  im.str("tokenizer.ggml.tokens").u32(test::kArr).u32(test::kStr).u64(3).str("a").str("bc").str("");
  t.tensor_at[0] = im.pos();
  im.tensor("w", {4, 2}, 0, 0);
  t.tensor_at[1] = im.pos();
  im.tensor("q", {32}, 8, 32);
  im.pad_to(32);
  t.data_at = im.pos();
  im.raw(t.w, sizeof t.w);
  t.q[0] = 0x00;  // f16 1.0 = 0x3C00, little-endian
  t.q[1] = 0x3c;
  for (int i = 0; i < 32; ++i) t.q[2 + i] = static_cast<uint8_t>(i - 16);
  im.raw(t.q, sizeof t.q);
  return t;
}

TEST(GgufHandBuilt, TinyV3) {
  const TinyV3 t = make_tiny_v3();
  const File f = File::parse(t.im.bytes(), "tiny-v3.gguf");
  EXPECT_EQ(f.name(), "tiny-v3.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset(), t.data_at);
  EXPECT_EQ(t.data_at % 32, 0u);

  ASSERT_EQ(f.metadata().size(), 4u);
  const char* keys[] = {"general.architecture", "test.u32", "test.f32", "tokenizer.ggml.tokens"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f.metadata()[i].key, keys[i]);
    EXPECT_EQ(f.metadata()[i].offset, t.kv_at[i]);
  }
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("test.u32"), 42u);
  EXPECT_EQ(f.get_int("test.u32"), 42);
  EXPECT_EQ(f.find("test.u32")->value.type, ValueType::UINT32);
  EXPECT_EQ(f.get_float("test.f32"), 0.5);
  const std::vector<std::string>* tokens = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(*tokens, (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->value.array_len, 3u);
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_EQ(f.get_int("missing"), std::nullopt);

  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorInfo* w = f.find_tensor("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w, &f.tensors()[0]);
  EXPECT_EQ(w->n_dims, 2u);
  EXPECT_EQ(w->ne[0], 4);
  EXPECT_EQ(w->ne[1], 2);
  EXPECT_EQ(w->ne[2], 1);
  EXPECT_EQ(w->ne[3], 1);
  EXPECT_EQ(w->type, Type::F32);
  EXPECT_EQ(w->offset, 0u);
  EXPECT_EQ(w->nbytes, 32u);
  EXPECT_EQ(w->n_elements(), 8);
  EXPECT_EQ(w->info_offset, t.tensor_at[0]);
  float got[8];
  std::memcpy(got, f.tensor_data(*w), sizeof got);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], t.w[i]);
  // Zero-copy: tensor data points into the caller's bytes.
  EXPECT_EQ(f.tensor_data(*w), t.im.bytes().data() + t.data_at);

  const TensorInfo* q = f.find_tensor("q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, Type::Q8_0);
  EXPECT_EQ(q->n_dims, 1u);
  EXPECT_EQ(q->ne[0], 32);
  EXPECT_EQ(q->offset, 32u);
  EXPECT_EQ(q->nbytes, 34u);  // one Q8_0 block: f16 scale + 32 int8
  EXPECT_EQ(q->info_offset, t.tensor_at[1]);
  EXPECT_EQ(std::memcmp(f.tensor_data(*q), t.q, 34), 0);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
}

TEST(GgufHandBuilt, TinyV2WithAlignment64) {
  Image im;
  im.header(2, 1, 3);
  im.kv_u32("general.alignment", 64);
  im.str("test.i64").u32(test::kI64).put<int64_t>(-5);
  im.str("test.bool").u32(test::kBool).u8(1);
  im.tensor("e", {8, 3}, 1, 0);  // F16
  im.pad_to(64);
  const size_t data_at = im.pos();
  uint16_t e[24];
  for (int i = 0; i < 24; ++i) e[i] = static_cast<uint16_t>(0x3c00 + i);
  im.raw(e, sizeof e);

  const File f = File::parse(im.bytes(), "tiny-v2.gguf");
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset(), data_at);
  EXPECT_EQ(data_at % 64, 0u);
  EXPECT_EQ(f.get_int("test.i64"), -5);
  EXPECT_EQ(f.get_bool("test.bool"), true);
  EXPECT_EQ(f.get_uint("general.alignment"), 64u);
  ASSERT_EQ(f.tensors().size(), 1u);
  const TensorInfo& t = f.tensors()[0];
  EXPECT_EQ(t.name, "e");
  EXPECT_EQ(t.type, Type::F16);
  EXPECT_EQ(t.ne[0], 8);
  EXPECT_EQ(t.ne[1], 3);
  EXPECT_EQ(t.nbytes, 48u);
  EXPECT_EQ(std::memcmp(f.tensor_data(t), e, sizeof e), 0);
}

TEST(GgufHandBuilt, MetadataOnlyFileNeedsNoDataSection) {
  Image im;
  im.header(3, 0, 1);
  im.kv_str("general.name", "x");  // ends right after the metadata: no padding, no data
  const File f = File::parse(im.bytes(), "meta.gguf");
  EXPECT_EQ(f.get_string("general.name"), "x");
  EXPECT_TRUE(f.tensors().empty());
}

// The writer must produce exactly the spec layout assembled by hand above.
TEST(GgufHandBuilt, WriterEmitsTheSameBytes) {
  const TinyV3 t = make_tiny_v3();
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("test.u32", 42);
  w.set_f32("test.f32", 0.5f);
  w.set_string_array("tokenizer.ggml.tokens", {"a", "bc", ""});
  const int64_t ne_w[] = {4, 2};
  const int64_t ne_q[] = {32};
  w.add_tensor("w", Type::F32, ne_w, t.w);
  w.add_tensor("q", Type::Q8_0, ne_q, t.q);
  EXPECT_EQ(w.to_bytes(), t.im.bytes());
}

}  // namespace
}  // namespace hexllm::gguf
