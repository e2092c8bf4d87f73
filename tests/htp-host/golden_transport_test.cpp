// Every golden case of ../shared/golden through both transports: the device process must give
// the very logits of the in-process session, bit for bit (same kernels, same threads, only the
// process boundary differs), on the prompt and on teacher-forced decode steps; and the process
// run stays within the golden README's NMSE limits of llama.cpp's logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "golden.h"
#include "engine_logits.h"
#include "hexllm/engine.h"
#include "synth/synth.h"

namespace hexllm {
namespace {

struct Case {
  std::string model, prompt;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.model + "__" + info.param.prompt;
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* m : {"llama-spm-f32", "llama-bpe-q4emb", "qwen2-q4emb", "qwen3-q4emb", "gemma3-f32",
                        "llama-spm-256-Q4_0", "llama-spm-256-Q8_0", "llama-spm-256-Q4_K"})
    for (const char* p : {"short", "long"}) cases.push_back({m, p});
  return cases;
}

// Golden README §6.
double nmse_limit(const std::string& model) {
  if (model.rfind("llama-spm-256-", 0) == 0) return 1e-2;
  if (model.find("q4emb") != std::string::npos) return 1e-3;
  return 1e-4;
}


// One golden case: its prompt, up to 4 teacher-forced steps, and engine options for it.
struct GoldenRun {
  std::string stem;
  nlohmann::json j;
  std::vector<int32_t> prompt, steps;
  EngineOptions opts;
};

GoldenRun golden_run(const std::string& golden, const Case& c) {
  GoldenRun r;
  r.stem = golden + "/cases/" + c.model + "__" + c.prompt;
  r.j = test::read_json(r.stem + ".json");
  r.prompt = r.j["tokens"].get<std::vector<int32_t>>();
  for (const auto& s : r.j["greedy"]["steps"])
    if (r.steps.size() < 4) r.steps.push_back(s["token"].get<int32_t>());
  r.opts.model_path = test::decompress(golden, "models/" + c.model + ".gguf.xz");
  r.opts.device = "htp";
  r.opts.n_threads = 2;
  r.opts.n_ctx = static_cast<int64_t>(r.prompt.size() + r.steps.size()) + 8;
  r.opts.htp_device = HEXLLM_TEST_HTP_DEVICE;
  r.opts.htp_transport = "inproc";
  return r;
}

size_t bits_differ(const std::vector<float>& a, const std::vector<float>& b) {
  size_t differ = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return differ;
}

// `logits` within the golden README's NMSE limits of llama.cpp's logits.
void expect_near_golden(const GoldenRun& r, const std::string& model, const std::vector<float>& logits,
                        const char* what) {
  const size_t n_vocab = r.j["n_vocab"];
  const std::vector<float> golden_rows = test::read_f32(r.stem + ".f32");
  const auto rows = r.j["logits_rows"].get<std::vector<size_t>>();
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::span<const float> ref(golden_rows.data() + k * n_vocab, n_vocab);
    EXPECT_LE(test::nmse(ref, std::span<const float>(logits).subspan(rows[k] * n_vocab, n_vocab)), nmse_limit(model))
        << what << ": position " << rows[k];
  }
}

class GoldenTransports : public testing::TestWithParam<Case> {};

TEST_P(GoldenTransports, ProcessMatchesInprocBitForBit) {
  GOLDEN_OR_SKIP(golden);
  GoldenRun r = golden_run(golden, GetParam());
  const std::vector<float> inproc = test::prompt_and_step_logits(r.opts, r.prompt, r.steps);
  r.opts.htp_transport = "process";
  const std::vector<float> process = test::prompt_and_step_logits(r.opts, r.prompt, r.steps);
  ASSERT_EQ(inproc.size(), process.size());
  EXPECT_EQ(bits_differ(inproc, process), 0u) << "of " << inproc.size() << " logits";
  expect_near_golden(r, GetParam().model, process, "process");
}

// The prepare stage changes what runs, never the numbers: with every fusion, the reorder and
// the graph cache off (--htp-fuse none --htp-reorder off --htp-graph-cache off) both
// transports give the default run's logits bit for bit (the fused kernels reuse the quantized
// activation and the dot kernels and apply the ADD / GLU to the same floats), and stay within
// the golden limits.
TEST_P(GoldenTransports, UnfusedMatchesFusedBitForBit) {
  GOLDEN_OR_SKIP(golden);
  GoldenRun r = golden_run(golden, GetParam());
  const std::vector<float> fused = test::prompt_and_step_logits(r.opts, r.prompt, r.steps);
  r.opts.htp_fuse = "none";
  r.opts.htp_reorder = "off";
  r.opts.htp_graph_cache = "off";
  for (const char* transport : {"inproc", "process"}) {
    r.opts.htp_transport = transport;
    const std::vector<float> plain = test::prompt_and_step_logits(r.opts, r.prompt, r.steps);
    ASSERT_EQ(fused.size(), plain.size()) << transport;
    EXPECT_EQ(bits_differ(fused, plain), 0u) << transport << ": of " << fused.size() << " logits";
    expect_near_golden(r, GetParam().model, plain, transport);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTransports, testing::ValuesIn(all_cases()), case_name);

// The same bit-for-bit comparison without the golden data: synthetic models of every
// architecture family (dense llama, qwen3 MoE, gemma3 with sliding window), prompt and decode.
class GeneratedTransports : public testing::TestWithParam<std::string> {};

TEST_P(GeneratedTransports, ProcessMatchesInprocBitForBit) {
  const std::string preset = GetParam();
  const std::string path = test::generated_model_path("transports-" + preset);
  if (!std::filesystem::exists(path)) {
    synth::GenOptions g;
    g.preset = preset;
    g.n_threads = 1;
    synth::generate_model(g, path);
  }
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 7, 250, 3, 64, 11, 5, 128, 33};
  const std::vector<int32_t> steps = {9, 77, 140};
  EngineOptions opts;
  opts.model_path = path;
  opts.device = "htp";
  opts.n_threads = 2;
  opts.n_ctx = 64;
  opts.htp_device = HEXLLM_TEST_HTP_DEVICE;
  opts.htp_transport = "inproc";
  const std::vector<float> inproc = test::prompt_and_step_logits(opts, prompt, steps);
  opts.htp_transport = "process";
  const std::vector<float> process = test::prompt_and_step_logits(opts, prompt, steps);
  ASSERT_EQ(inproc.size(), process.size());
  ASSERT_FALSE(inproc.empty());
  EXPECT_EQ(bits_differ(inproc, process), 0u) << "of " << inproc.size() << " logits";
  // And with the prepare stage off (no fusion, reorder or graph cache; the MoE preset has fused
  // expert FFNs when it is on): the same bits.
  opts.htp_fuse = "none";
  opts.htp_reorder = "off";
  opts.htp_graph_cache = "off";
  const std::vector<float> plain = test::prompt_and_step_logits(opts, prompt, steps);
  ASSERT_EQ(inproc.size(), plain.size());
  EXPECT_EQ(bits_differ(inproc, plain), 0u) << "unfused: of " << inproc.size() << " logits";
}

INSTANTIATE_TEST_SUITE_P(Presets, GeneratedTransports, testing::Values("tiny", "tiny-qwen3moe", "tiny-gemma3"),
                         [](const testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace hexllm
