// Several devices (--htp-devices 2, 3, 4) against one (the truth), bit for bit: every golden
// case of ../shared/golden and the synthetic presets, prompt and teacher-forced decode steps, on
// both transports. Rows are split among the devices, and a row's value must not depend on who
// computes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "engine_logits.h"
#include "golden.h"
#include "hexllm/engine.h"
#include "synth/synth.h"

namespace hexllm {
namespace {

size_t count_differing(const std::vector<float>& a, const std::vector<float>& b, std::string* first) {
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      if (differ++ == 0) *first = "logit " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
    }
  return differ;
}

void expect_devices_match(EngineOptions opts, const std::vector<int32_t>& prompt, const std::vector<int32_t>& steps) {
  opts.device = "htp";
  opts.n_threads = 1;
  opts.htp_threads = 1;
  opts.htp_device = HEXLLM_TEST_HTP_DEVICE;
  opts.htp_transport = "inproc";
  opts.htp_devices = 1;
  const std::vector<float> one = test::prompt_and_step_logits(opts, prompt, steps);
  ASSERT_FALSE(one.empty());
  for (const char* transport : {"inproc", "process"})
    for (int n = 2; n <= 4; ++n) {
      opts.htp_transport = transport;
      opts.htp_devices = n;
      const std::vector<float> many = test::prompt_and_step_logits(opts, prompt, steps);
      ASSERT_EQ(one.size(), many.size());
      std::string first;
      EXPECT_EQ(count_differing(one, many, &first), 0u)
          << n << " devices, " << transport << ", of " << one.size() << " logits; first " << first;
    }
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  for (const char* m : {"llama-spm-f32", "llama-bpe-q4emb", "qwen2-q4emb", "qwen3-q4emb", "gemma3-f32",
                        "llama-spm-256-Q4_0", "llama-spm-256-Q8_0", "llama-spm-256-Q4_K"})
    for (const char* p : {"short", "long"}) cases.push_back(std::string(m) + "__" + p);
  return cases;
}

std::string safe_name(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

class GoldenDevices : public testing::TestWithParam<std::string> {};

TEST_P(GoldenDevices, ManyDevicesMatchOneBitForBit) {
  GOLDEN_OR_SKIP(golden);
  const std::string c = GetParam();
  const std::string stem = golden + "/cases/" + c;
  const nlohmann::json j = test::read_json(stem + ".json");
  const std::vector<int32_t> prompt = j["tokens"].get<std::vector<int32_t>>();
  std::vector<int32_t> steps;
  for (const auto& s : j["greedy"]["steps"])
    if (steps.size() < 3) steps.push_back(s["token"].get<int32_t>());
  EngineOptions opts;
  opts.model_path = test::decompress(golden, "models/" + c.substr(0, c.find("__")) + ".gguf.xz");
  opts.n_ctx = static_cast<int64_t>(prompt.size() + steps.size()) + 8;
  expect_devices_match(opts, prompt, steps);
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenDevices, testing::ValuesIn(golden_cases()),
                         [](const testing::TestParamInfo<std::string>& i) { return safe_name(i.param); });

class GeneratedDevices : public testing::TestWithParam<std::string> {};

TEST_P(GeneratedDevices, ManyDevicesMatchOneBitForBit) {
  const std::string preset = GetParam();
  const std::string path = test::generated_model_path("mdev-" + preset);
  if (!std::filesystem::exists(path)) {
    synth::GenOptions g;
    g.preset = preset;
    g.n_threads = 1;
    synth::generate_model(g, path);
  }
  EngineOptions opts;
  opts.model_path = path;
  opts.n_ctx = 64;
  expect_devices_match(opts, {1, 17, 42, 99, 7, 250, 3, 64, 11, 5, 128, 33}, {9, 77, 140});
}

INSTANTIATE_TEST_SUITE_P(Presets, GeneratedDevices, testing::Values("tiny", "tiny-qwen3moe", "tiny-gemma3"),
                         [](const testing::TestParamInfo<std::string>& i) { return safe_name(i.param); });

}  // namespace
}  // namespace hexllm
