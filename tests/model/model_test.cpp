// Model-level behaviour against independent truths: a mixture of identical experts equals the
// dense model; an untied head equal to the embedding equals the tied model; a prompt evaluated
// in one batch, in chunks or token by token gives the same logits; bad models are refused by name.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "gguf/gguf.h"
#include "golden.h"
#include "hexllm/engine.h"
#include "synth/synth.h"

namespace hexllm {
namespace {

std::string generate(const std::string& preset, const std::string& type, bool identical_experts = false) {
  const std::string path = test::generated_model_path("model-" + preset + "-" + type + (identical_experts ? "-ie" : ""));
  if (!std::filesystem::exists(path)) {
    synth::GenOptions g;
    g.preset = preset;
    g.type = type;
    g.seed = 7;
    g.identical_experts = identical_experts;
    synth::generate_model(g, path);
  }
  return path;
}

std::vector<float> eval_all(const std::string& path, const std::vector<int32_t>& tokens, const std::string& device,
                            int64_t n_batch = 512) {
  EngineOptions o;
  o.model_path = path;
  o.device = device;
  o.n_threads = 2;
  o.n_ctx = 128;
  o.n_batch = n_batch;
  auto e = open_engine(o);
  e->context->decode(tokens, true);
  const auto l = e->context->logits();
  return {l.begin(), l.end()};
}

const std::vector<int32_t> kTokens = {1, 17, 300, 42, 999, 5, 77, 123, 256, 511, 2, 64};

class ModelTest : public testing::TestWithParam<std::string> {};

TEST_P(ModelTest, MixtureOfIdenticalExpertsEqualsTheDenseModel) {
  const auto moe = eval_all(generate("tiny-qwen3moe", "F16", true), kTokens, GetParam());
  const auto dense = eval_all(generate("tiny-qwen3", "F16"), kTokens, GetParam());
  ASSERT_EQ(moe.size(), dense.size());
  // The router weights sum to 1 after renormalization; only summation order differs.
  EXPECT_LT(test::nmse(dense, moe), 1e-9);
}

TEST_P(ModelTest, UntiedHeadEqualToTheEmbeddingGivesTheTiedLogits) {
  const std::string tied = generate("tiny", "Q8_0");
  const gguf::File f = gguf::File::open(tied);
  gguf::Writer w;
  for (const auto& kv : f.metadata()) w.copy_kv(kv);
  for (const auto& t : f.tensors()) w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), f.tensor_data(t));
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  w.add_tensor("output.weight", embd->type, std::span<const int64_t>(embd->ne, 2), f.tensor_data(*embd));
  const std::string untied = test::temp_dir() + "/model-tiny-untied-" + GetParam() + ".gguf";
  w.write(untied);
  EXPECT_EQ(eval_all(tied, kTokens, GetParam()), eval_all(untied, kTokens, GetParam()));
}

TEST_P(ModelTest, ChunkedAndTokenByTokenEvaluationMatchOneBatch) {
  for (const std::string preset : {"tiny", "tiny-qwen2", "tiny-gemma3", "tiny-qwen3moe"}) {
    const std::string path = generate(preset, preset == "tiny" ? "Q8_0" : "F16");
    const auto whole = eval_all(path, kTokens, GetParam());
    EXPECT_LT(test::nmse(whole, eval_all(path, kTokens, GetParam(), 5)), 1e-10) << preset;

    EngineOptions o;
    o.model_path = path;
    o.device = GetParam();
    o.n_ctx = 128;
    auto e = open_engine(o);
    std::vector<float> stepwise;
    for (int32_t t : kTokens) {
      e->context->decode(std::span<const int32_t>(&t, 1), false);
      const auto l = e->context->last_logits();
      stepwise.insert(stepwise.end(), l.begin(), l.end());
    }
    // One token per graph changes only the order of float sums.
    EXPECT_LT(test::nmse(whole, stepwise), 1e-8) << preset;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ModelTest, testing::Values("ref", "htp"));

// ---- bad models and inputs ----

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string write_with(const std::function<void(gguf::Writer&, const gguf::File&)>& edit, const std::string& name) {
  const gguf::File f = gguf::File::open(generate("tiny", "Q8_0"));
  gguf::Writer w;
  edit(w, f);
  const std::string path = test::temp_dir() + "/model-bad-" + name + ".gguf";
  w.write(path);
  return path;
}

TEST(ModelErrors, MissingTensorIsNamed) {
  const std::string path = write_with([](gguf::Writer& w, const gguf::File& f) {
    for (const auto& kv : f.metadata()) w.copy_kv(kv);
    for (const auto& t : f.tensors())
      if (t.name != "blk.1.ffn_up.weight")
        w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), f.tensor_data(t));
  }, "missing");
  EXPECT_NE(error_of([&] { model::Model::load(path); }).find("tensor 'blk.1.ffn_up.weight' is missing"), std::string::npos);
}

TEST(ModelErrors, WrongShapeIsNamedWithBothShapes) {
  const std::string path = write_with([](gguf::Writer& w, const gguf::File& f) {
    for (const auto& kv : f.metadata()) w.copy_kv(kv);
    for (const auto& t : f.tensors()) {
      if (t.name == "blk.0.attn_norm.weight") {
        std::vector<float> v(128, 1.0f);
        const int64_t ne[1] = {128};
        w.add_tensor(t.name, Type::F32, ne, v.data());
      } else {
        w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), f.tensor_data(t));
      }
    }
  }, "shape");
  const std::string err = error_of([&] { model::Model::load(path); });
  EXPECT_NE(err.find("'blk.0.attn_norm.weight' has shape [128], expected [256]"), std::string::npos) << err;
}

TEST(ModelErrors, MissingHyperparameterIsNamed) {
  const std::string path = write_with([](gguf::Writer& w, const gguf::File& f) {
    for (const auto& kv : f.metadata())
      if (kv.key != "llama.block_count") w.copy_kv(kv);
  }, "hparam");
  EXPECT_NE(error_of([&] { model::Model::load(path); }).find("'llama.block_count'"), std::string::npos);
}

TEST(ModelErrors, ContextOverflowAndBadTokensLeaveTheContextUsable) {
  EngineOptions o;
  o.model_path = generate("tiny", "Q8_0");
  o.device = "ref";
  o.n_ctx = 8;
  auto e = open_engine(o);
  const std::vector<int32_t> nine(9, 5);
  EXPECT_NE(error_of([&] { e->context->decode(nine, false); }).find("context is full"), std::string::npos);
  const std::vector<int32_t> bad = {1, -3};
  EXPECT_NE(error_of([&] { e->context->decode(bad, false); }).find("outside the vocabulary"), std::string::npos);
  EXPECT_EQ(e->context->n_past(), 0);
  const std::vector<int32_t> ok = {1, 2, 3};
  e->context->decode(ok, false);
  EXPECT_EQ(e->context->n_past(), 3);
}

}  // namespace
}  // namespace hexllm
