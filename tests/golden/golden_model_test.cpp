// Every golden case of ../shared/golden (llama.cpp's logits for tiny models) against our
// engine, by the comparison the golden README recommends (§6): per-position NMSE over full
// logits rows, top-1 agreement where the golden margin is clear, and teacher-forced greedy
// steps. Parameterized by device so every backend is held to the same truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "golden.h"
#include "hexllm/engine.h"
#include "sampling/sampler.h"

namespace hexllm {
namespace {

struct ClassLimits {
  double nmse;    // max per-position NMSE
  double margin;  // top-1 must agree where the golden margin is at least this
};

// Golden README §6.
ClassLimits limits_for(const std::string& model) {
  if (model.rfind("llama-spm-256-", 0) == 0) return {1e-2, 2.5};
  if (model.find("q4emb") != std::string::npos) return {1e-3, 0.5};
  return {1e-4, 0.5};
}

struct Case {
  std::string model;
  std::string prompt;
  std::string device;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.model + "__" + info.param.prompt + "__" + info.param.device;
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::vector<Case> all_cases() {
  const char* models[] = {"llama-spm-f32",      "llama-bpe-q4emb",    "qwen2-q4emb",       "qwen3-q4emb",
                          "gemma3-f32",         "llama-spm-256-Q4_0", "llama-spm-256-Q8_0", "llama-spm-256-Q4_K"};
  std::vector<Case> cases;
  for (const std::string& device : device_names())
    for (const char* m : models)
      for (const char* p : {"short", "long"}) cases.push_back({m, p, device});
  return cases;
}

class GoldenModel : public testing::TestWithParam<Case> {};

TEST_P(GoldenModel, MatchesLlamaCpp) {
  GOLDEN_OR_SKIP(golden);
  const Case& c = GetParam();
  const ClassLimits lim = limits_for(c.model);
  const std::string stem = golden + "/cases/" + c.model + "__" + c.prompt;
  const nlohmann::json j = test::read_json(stem + ".json");

  EngineOptions opts;
  opts.model_path = test::decompress(golden, "models/" + c.model + ".gguf.xz");
  opts.device = c.device;
  opts.n_threads = 1;
  const int64_t n_tokens = j["n_tokens"];
  opts.n_ctx = n_tokens + 16 + 8;  // as the goldens were made
  auto e = open_engine(opts);

  // Tokenization must match exactly.
  const std::vector<int32_t> tokens = j["tokens"].get<std::vector<int32_t>>();
  EXPECT_EQ(e->model->tokenizer().encode(j["prompt"].get<std::string>(), true, true), tokens);

  // On a device backend every node must run on the device: the reference backend behind it in
  // the scheduler is a fallback, and using it would hide a missing kernel.
  const auto expect_all_on_device = [&](const char* what) {
    if (c.device == "ref") return;
    const auto& counts = e->scheduler->last_counts();
    ASSERT_EQ(counts.size(), 2u);
    EXPECT_EQ(counts[1], 0u) << what << ": " << counts[1] << " nodes fell back to the reference backend";
  };
  e->context->decode(tokens, true);
  expect_all_on_device("prompt");
  const size_t n_vocab = j["n_vocab"];
  const std::span<const float> logits = e->context->logits();
  ASSERT_EQ(logits.size(), tokens.size() * n_vocab);

  // Full rows: NMSE.
  const std::vector<float> golden_rows = test::read_f32(stem + ".f32");
  const auto rows = j["logits_rows"].get<std::vector<size_t>>();
  double worst = 0.0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::span<const float> ref(golden_rows.data() + k * n_vocab, n_vocab);
    const double e_nmse = test::nmse(ref, logits.subspan(rows[k] * n_vocab, n_vocab));
    worst = std::max(worst, e_nmse);
    EXPECT_LE(e_nmse, lim.nmse) << "position " << rows[k];
  }

  // Every position: top-1 where the margin is clear.
  int checked = 0, agreed = 0;
  for (const auto& p : j["positions"]) {
    const size_t pos = p["pos"];
    const int32_t got = sampling::argmax(logits.subspan(pos * n_vocab, n_vocab));
    if (p["margin"].get<double>() >= lim.margin) {
      ++checked;
      agreed += got == p["argmax"].get<int32_t>();
      EXPECT_EQ(got, p["argmax"].get<int32_t>()) << "position " << pos << " margin " << p["margin"];
    }
  }

  // Greedy continuation, teacher-forced with the golden tokens. The graph also finds the best 8
  // ids (TOP_K, on the device where there is one): they must be the row's 8 largest, ties by
  // lower id, as a full sort of the logits on the host gives them.
  const auto& steps = j["greedy"]["steps"];
  int g_checked = 0;
  constexpr size_t kBest = 8;
  e->context->want_best_ids(kBest);
  for (size_t s = 0; s + 1 < steps.size(); ++s) {
    const int32_t token = steps[s]["token"];
    ASSERT_EQ(e->context->n_past(), steps[s]["pos"].get<int64_t>());
    e->context->decode(std::span<const int32_t>(&token, 1), false);
    if (s == 0) expect_all_on_device("first generated token");
    const std::span<const float> row = e->context->last_logits();
    std::vector<int32_t> order(row.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    order.resize(kBest);
    const std::span<const int32_t> best = e->context->last_best_ids();
    EXPECT_EQ(std::vector<int32_t>(best.begin(), best.end()), order) << "best ids, step " << s + 1;
    const auto& next = steps[s + 1];
    if (next["margin"].get<double>() >= lim.margin) {
      ++g_checked;
      EXPECT_EQ(sampling::argmax(e->context->last_logits()), next["token"].get<int32_t>()) << "greedy step " << s + 1;
    }
  }
  std::printf("[ %s ] max NMSE %.3g (limit %.0e), top-1 %d/%d, greedy steps checked %d\n", case_name({c, 0}).c_str(),
              worst, lim.nmse, agreed, checked, g_checked);
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenModel, testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace hexllm
