// Generated files: every small preset re-opens with gguf::File with the shapes typed in below,
// output is identical for any thread count, weight statistics match the requested
// distributions, and identical experts equal the dense model's FFN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/dequant.h"
#include "synth/synth.h"

namespace hexllm::synth {
namespace {

struct Model {
  std::vector<uint8_t> bytes;
  gguf::File file;
  explicit Model(std::vector<uint8_t> b) : bytes(std::move(b)), file(gguf::File::parse(bytes, "synthetic")) {}
  explicit Model(const GenOptions& o) : Model(generate_model_bytes(o)) {}

  const gguf::TensorInfo& tensor(const std::string& name) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    if (t == nullptr) throw std::runtime_error("missing tensor " + name);
    return *t;
  }
  std::vector<int64_t> shape(const std::string& name) const {
    const gguf::TensorInfo& t = tensor(name);
    return std::vector<int64_t>(t.ne, t.ne + t.n_dims);
  }
  std::vector<float> values(const std::string& name) const {
    const gguf::TensorInfo& t = tensor(name);
    std::vector<float> out(static_cast<size_t>(t.n_elements()));
    quant::dequantize_row(t.type, file.tensor_data(t), out.data(), t.n_elements());
    return out;
  }
  std::vector<uint8_t> raw(const std::string& name, size_t offset = 0, size_t n = SIZE_MAX) const {
    const gguf::TensorInfo& t = tensor(name);
    n = std::min<size_t>(n, t.nbytes - offset);
    const uint8_t* p = file.tensor_data(t) + offset;
    return std::vector<uint8_t>(p, p + n);
  }
};

GenOptions opts(const std::string& preset, const std::string& type = "", uint64_t seed = 0, int threads = 2) {
  GenOptions o;
  o.preset = preset;
  o.type = type;
  o.seed = seed;
  o.n_threads = threads;
  return o;
}

using Shape = std::vector<int64_t>;

// The planned table is what the file holds, in order.
void expect_matches_plan(const Model& m, const GenOptions& o) {
  const ModelPlan plan = plan_model(o);
  ASSERT_EQ(m.file.tensors().size(), plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const gguf::TensorInfo& t = m.file.tensors()[i];
    EXPECT_EQ(t.name, plan.tensors[i].name);
    EXPECT_EQ(t.type, plan.tensors[i].type) << t.name;
    EXPECT_EQ(Shape(t.ne, t.ne + t.n_dims), plan.tensors[i].ne) << t.name;
  }
}

TEST(SynthGenerate, Tiny) {
  const GenOptions o = opts("tiny");
  const Model m(o);
  expect_matches_plan(m, o);
  const gguf::File& f = m.file;
  EXPECT_EQ(f.tensors().size(), 39u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 4u);
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 256u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length"), 768u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count"), 4u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(f.get_uint("llama.attention.key_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.vocab_size"), 1016u);
  EXPECT_EQ(f.get_uint("general.file_type"), 7u);  // MOSTLY_Q8_0
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), 1016u);
  EXPECT_EQ(m.shape("token_embd.weight"), (Shape{256, 1016}));
  EXPECT_EQ(m.tensor("token_embd.weight").type, Type::Q8_0);
  EXPECT_EQ(m.shape("rope_freqs.weight"), (Shape{32}));
  EXPECT_EQ(m.shape("blk.3.attn_q.weight"), (Shape{256, 256}));
  EXPECT_EQ(m.shape("blk.3.attn_k.weight"), (Shape{256, 128}));
  EXPECT_EQ(m.shape("blk.3.attn_v.weight"), (Shape{256, 128}));
  EXPECT_EQ(m.shape("blk.3.attn_output.weight"), (Shape{256, 256}));
  EXPECT_EQ(m.shape("blk.3.ffn_gate.weight"), (Shape{256, 768}));
  EXPECT_EQ(m.shape("blk.3.ffn_down.weight"), (Shape{768, 256}));
  EXPECT_EQ(m.tensor("blk.3.ffn_down.weight").type, Type::Q8_0);
  EXPECT_EQ(m.tensor("blk.3.ffn_norm.weight").type, Type::F32);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
}

TEST(SynthGenerate, TinyQwen2) {
  const GenOptions o = opts("tiny-qwen2");
  const Model m(o);
  expect_matches_plan(m, o);
  EXPECT_EQ(m.file.tensors().size(), 50u);
  EXPECT_EQ(m.file.get_string("general.architecture"), "qwen2");
  EXPECT_EQ(m.file.get_uint("general.file_type"), 1u);  // MOSTLY_F16
  EXPECT_EQ(m.shape("token_embd.weight"), (Shape{256, 1024}));
  EXPECT_EQ(m.tensor("token_embd.weight").type, Type::F16);
  EXPECT_EQ(m.shape("blk.0.attn_q.bias"), (Shape{256}));
  EXPECT_EQ(m.shape("blk.0.attn_k.bias"), (Shape{128}));
  EXPECT_EQ(m.shape("blk.0.attn_v.bias"), (Shape{128}));
  EXPECT_EQ(m.shape("blk.0.ffn_up.weight"), (Shape{256, 512}));
  EXPECT_EQ(m.file.get_bool("tokenizer.ggml.add_bos_token"), false);
}

TEST(SynthGenerate, TinyQwen3) {
  const GenOptions o = opts("tiny-qwen3");
  const Model m(o);
  expect_matches_plan(m, o);
  EXPECT_EQ(m.file.tensors().size(), 35u);
  EXPECT_EQ(m.file.get_string("general.architecture"), "qwen3");
  EXPECT_EQ(m.file.get_uint("qwen3.attention.key_length"), 128u);
  EXPECT_EQ(m.file.get_uint("qwen3.block_count"), 3u);
  EXPECT_EQ(m.shape("blk.2.attn_q.weight"), (Shape{256, 512}));
  EXPECT_EQ(m.shape("blk.2.attn_k.weight"), (Shape{256, 256}));
  EXPECT_EQ(m.shape("blk.2.attn_output.weight"), (Shape{512, 256}));
  EXPECT_EQ(m.shape("blk.2.attn_q_norm.weight"), (Shape{128}));
  EXPECT_EQ(m.shape("blk.2.attn_k_norm.weight"), (Shape{128}));
  EXPECT_EQ(m.shape("blk.2.ffn_gate.weight"), (Shape{256, 256}));
}

TEST(SynthGenerate, TinyQwen3Moe) {
  const GenOptions o = opts("tiny-qwen3moe");
  const Model m(o);
  expect_matches_plan(m, o);
  EXPECT_EQ(m.file.tensors().size(), 38u);
  EXPECT_EQ(m.file.get_string("general.architecture"), "qwen3moe");
  EXPECT_EQ(m.file.get_uint("qwen3moe.expert_count"), 4u);
  EXPECT_EQ(m.file.get_uint("qwen3moe.expert_used_count"), 2u);
  EXPECT_EQ(m.file.get_uint("qwen3moe.expert_feed_forward_length"), 256u);
  EXPECT_EQ(m.shape("blk.1.ffn_gate_inp.weight"), (Shape{256, 4}));
  EXPECT_EQ(m.tensor("blk.1.ffn_gate_inp.weight").type, Type::F32);
  EXPECT_EQ(m.shape("blk.1.ffn_gate_exps.weight"), (Shape{256, 256, 4}));
  EXPECT_EQ(m.shape("blk.1.ffn_up_exps.weight"), (Shape{256, 256, 4}));
  EXPECT_EQ(m.shape("blk.1.ffn_down_exps.weight"), (Shape{256, 256, 4}));
  EXPECT_EQ(m.file.find_tensor("blk.1.ffn_gate.weight"), nullptr);
  // Distinct experts by default.
  const size_t slab = m.tensor("blk.1.ffn_up_exps.weight").nbytes / 4;
  EXPECT_NE(m.raw("blk.1.ffn_up_exps.weight", 0, slab), m.raw("blk.1.ffn_up_exps.weight", slab, slab));
}

TEST(SynthGenerate, TinyGemma3) {
  const GenOptions o = opts("tiny-gemma3");
  const Model m(o);
  expect_matches_plan(m, o);
  EXPECT_EQ(m.file.tensors().size(), 80u);
  const gguf::File& f = m.file;
  EXPECT_EQ(f.get_string("general.architecture"), "gemma3");
  EXPECT_EQ(f.get_uint("gemma3.block_count"), 6u);
  EXPECT_EQ(f.get_uint("gemma3.attention.sliding_window"), 8u);
  EXPECT_EQ(f.get_string("gemma3.rope.scaling.type"), "linear");
  EXPECT_FLOAT_EQ(static_cast<float>(*f.get_float("gemma3.rope.scaling.factor")), 8.0f);
  EXPECT_EQ(f.get_uint("gemma3.attention.key_length"), 64u);
  EXPECT_EQ(m.shape("blk.5.post_attention_norm.weight"), (Shape{256}));
  EXPECT_EQ(m.shape("blk.5.post_ffw_norm.weight"), (Shape{256}));
  EXPECT_EQ(m.shape("blk.5.attn_q_norm.weight"), (Shape{64}));
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "gpt-2");
}

TEST(SynthGenerate, EveryTypeOfASmallPresetGenerates) {
  for (const std::string& type : preset_types("tiny-qwen3")) {
    SCOPED_TRACE(type);
    const GenOptions o = opts("tiny-qwen3", type);
    const Model m(o);
    expect_matches_plan(m, o);
  }
}

TEST(SynthGenerate, SameBytesForAnyThreadCount) {
  for (const char* preset : {"tiny", "tiny-qwen3moe"}) {
    SCOPED_TRACE(preset);
    const std::vector<uint8_t> one = generate_model_bytes(opts(preset, "", 11, 1));
    EXPECT_EQ(generate_model_bytes(opts(preset, "", 11, 3)), one);
    EXPECT_EQ(generate_model_bytes(opts(preset, "", 11, 2)), one);
  }
}

TEST(SynthGenerate, SeedChangesWeightsNotStructure) {
  const Model a(opts("tiny", "", 1)), b(opts("tiny", "", 2));
  ASSERT_EQ(a.bytes.size(), b.bytes.size());
  EXPECT_EQ(a.file.data_offset(), b.file.data_offset());
  for (const char* name :
       {"token_embd.weight", "blk.0.attn_q.weight", "blk.3.ffn_down.weight", "output_norm.weight"})
    EXPECT_NE(a.raw(name), b.raw(name)) << name;
  EXPECT_EQ(a.raw("rope_freqs.weight"), b.raw("rope_freqs.weight"));  // not random
}

TEST(SynthGenerate, FileEqualsInMemoryImage) {
  const char* tmp = std::getenv("HEXLLM_TEST_TMP");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/synth_test_tiny_qwen2.gguf";
  GenOptions o = opts("tiny-qwen2", "Q4_0", 3);
  generate_model(o, path);
  const gguf::File f = gguf::File::open(path);
  const std::vector<uint8_t> mem = generate_model_bytes(o);
  ASSERT_EQ(f.bytes().size(), mem.size());
  EXPECT_EQ(std::memcmp(f.bytes().data(), mem.data(), mem.size()), 0);
  std::remove(path.c_str());
}

TEST(SynthGenerate, ProgressReportsEveryTensor) {
  GenOptions o = opts("tiny");
  std::vector<size_t> seen;
  uint64_t last_done = 0, total = 0;
  o.progress = [&](const Progress& p) {
    seen.push_back(p.tensor_index);
    EXPECT_EQ(p.n_tensors, 39u);
    EXPECT_GT(p.bytes_done, last_done);
    last_done = p.bytes_done;
    total = p.bytes_total;
  };
  generate_model_bytes(o);
  ASSERT_EQ(seen.size(), 39u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i + 1);
  EXPECT_EQ(last_done, total);
  EXPECT_EQ(total, plan_model(o).tensor_bytes());
}

struct Stats {
  double mean, std;
};
Stats stats(const std::vector<float>& v) {
  double s = 0, ss = 0;
  for (const float x : v) s += x;
  const double mean = s / static_cast<double>(v.size());
  for (const float x : v) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / static_cast<double>(v.size()))};
}

// Requested distributions (golden README §3.3 recipe): token_embd std 0.15; attn_q/attn_k
// gain 1.5, other matrices 1.3, over sqrt(fan_in = row length); norms mean * (1 + 0.1 N);
// biases std 0.5; output_norm mean 20 / (0.15 * sqrt(n_embd)).
void expect_stats(const Model& m, const std::string& name, double mean, double std, double rel_tol) {
  const std::vector<float> v = m.values(name);
  const Stats s = stats(v);
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(s.mean, mean, 5.0 * std / std::sqrt(n) + 1e-9) << name;
  EXPECT_NEAR(s.std, std, rel_tol * std) << name;
}

TEST(SynthGenerate, WeightStatisticsF32) {
  const Model m(opts("tiny-qwen2", "F32", 9));
  expect_stats(m, "token_embd.weight", 0.0, 0.15, 0.01);
  expect_stats(m, "blk.1.attn_q.weight", 0.0, 1.5 / 16.0, 0.02);
  expect_stats(m, "blk.1.attn_k.weight", 0.0, 1.5 / 16.0, 0.02);
  expect_stats(m, "blk.1.attn_v.weight", 0.0, 1.3 / 16.0, 0.02);
  expect_stats(m, "blk.1.ffn_up.weight", 0.0, 1.3 / 16.0, 0.02);
  expect_stats(m, "blk.1.ffn_down.weight", 0.0, 1.3 / std::sqrt(512.0), 0.02);
  expect_stats(m, "blk.1.attn_norm.weight", 1.0, 0.1, 0.15);
  expect_stats(m, "blk.1.attn_q.bias", 0.0, 0.5, 0.15);
  expect_stats(m, "output_norm.weight", 20.0 / (0.15 * 16.0), 2.0 / (0.15 * 16.0), 0.15);
}

TEST(SynthGenerate, WeightStatisticsQuantizedAndNormVariants) {
  const Model q(opts("tiny", "Q4_0", 9));
  expect_stats(q, "blk.2.attn_q.weight", 0.0, 1.5 / 16.0, 0.03);
  expect_stats(q, "blk.2.ffn_down.weight", 0.0, 1.3 / std::sqrt(768.0), 0.03);
  expect_stats(q, "token_embd.weight", 0.0, 0.15, 0.02);
  const Model g(opts("tiny-gemma3", "F32", 9));
  expect_stats(g, "blk.0.attn_q_norm.weight", 1.5, 0.15, 0.3);
  expect_stats(g, "blk.0.post_ffw_norm.weight", 3.0, 0.3, 0.15);
  const Model moe(opts("tiny-qwen3moe", "F32", 9));
  expect_stats(moe, "blk.0.ffn_gate_inp.weight", 0.0, 2.0 / 16.0, 0.1);  // router gain 2
  expect_stats(moe, "blk.0.ffn_gate_exps.weight", 0.0, 1.3 / 16.0, 0.02);
}

TEST(SynthGenerate, DrawTensorIsTheF32Content) {
  const GenOptions o = opts("tiny", "F32", 4);
  const Model m(o);
  const ModelPlan plan = plan_model(o);
  for (const TensorPlan& t : plan.tensors) {
    if (t.name != "blk.1.ffn_gate.weight" && t.name != "rope_freqs.weight") continue;
    EXPECT_EQ(draw_tensor(t, 4, 1), m.values(t.name)) << t.name;
    EXPECT_EQ(draw_tensor(t, 4, 3), m.values(t.name)) << t.name;
  }
}

TEST(SynthGenerate, IdenticalExpertsEqualTheDenseQwen3) {
  for (const char* type : {"F16", "Q4_K_M"}) {
    SCOPED_TRACE(type);
    GenOptions mo = opts("tiny-qwen3moe", type, 21);
    mo.identical_experts = true;
    const Model moe(mo), dense(opts("tiny-qwen3", type, 21));
    for (int il = 0; il < 3; ++il) {
      const std::string b = "blk." + std::to_string(il) + ".";
      for (const char* part : {"gate", "up", "down"}) {
        const std::string exps = b + "ffn_" + part + "_exps.weight", ffn = b + "ffn_" + part + ".weight";
        const std::vector<uint8_t> want = dense.raw(ffn);
        ASSERT_EQ(moe.tensor(exps).nbytes, 4 * want.size()) << exps;
        EXPECT_EQ(moe.tensor(exps).type, dense.tensor(ffn).type) << exps;
        for (size_t e = 0; e < 4; ++e)
          EXPECT_EQ(moe.raw(exps, e * want.size(), want.size()), want) << exps << " " << e;
      }
    }
    // Everything else is the same tensor with the same bytes.
    size_t shared = 0;
    for (const gguf::TensorInfo& t : dense.file.tensors()) {
      if (t.name.find("ffn_gate.") != std::string::npos || t.name.find("ffn_up.") != std::string::npos ||
          t.name.find("ffn_down.") != std::string::npos)
        continue;
      EXPECT_EQ(moe.raw(t.name), dense.raw(t.name)) << t.name;
      EXPECT_EQ(moe.tensor(t.name).type, t.type) << t.name;
      ++shared;
    }
    EXPECT_EQ(shared, 2u + 3u * 8u);
  }
}

TEST(SynthGenerate, UntiedOutputHasItsOwnWeights) {
  GenOptions o = opts("tiny", "F32", 5);
  o.untied_output = true;
  const Model m(o);
  ASSERT_NE(m.file.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(m.shape("output.weight"), (Shape{256, 1016}));
  EXPECT_NE(m.values("output.weight"), m.values("token_embd.weight"));
  expect_stats(m, "output.weight", 0.0, 0.15, 0.01);
  // The tied model's tensors are unchanged by untying.
  const Model tied(opts("tiny", "F32", 5));
  EXPECT_EQ(m.raw("token_embd.weight"), tied.raw("token_embd.weight"));
  EXPECT_EQ(m.raw("blk.0.attn_q.weight"), tied.raw("blk.0.attn_q.weight"));
}

}  // namespace
}  // namespace hexllm::synth
