// The Hexagon device (hexllm-htp built for Hexagon, run under qemu-hexagon) against the x86
// device process: both get the same pool, window plan and batches, so each logit is compared
// bit for bit, on the generated tiny model and on every golden model (prompt and teacher-forced
// decode steps); the Hexagon run also stays within the golden README's NMSE limits of
// llama.cpp's logits. Skips loudly without the Hexagon build, qemu-hexagon or the golden data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "golden.h"
#include "engine_logits.h"
#include "hexllm/engine.h"
#include "htp-host/transport.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

#define HEXAGON_OR_SKIP()                                                                      \
  do {                                                                                         \
    try {                                                                                      \
      htp_host::device_command("hexagon", "");                                                 \
    } catch (const Error& e) {                                                                 \
      GTEST_SKIP() << "SKIPPED LOUDLY: no Hexagon device: " << e.what();                       \
    }                                                                                          \
  } while (0)


// The x86 device process and the Hexagon one on the same model; returns the Hexagon logits.
std::vector<float> expect_targets_agree(EngineOptions opts, const std::vector<int32_t>& prompt,
                                        const std::vector<int32_t>& steps) {
  opts.device = "htp";
  opts.n_threads = 2;
  opts.htp_transport = "process";
  opts.htp_window = "1G";
  opts.htp_timeout = 120.0;  // one op under emulation may take seconds
  opts.htp_target = "host";
  opts.htp_device = HEXLLM_TEST_HTP_DEVICE;
  const std::vector<float> host = test::prompt_and_step_logits(opts, prompt, steps);
  opts.htp_target = "hexagon";
  opts.htp_device.clear();
  const std::vector<float> hexagon = test::prompt_and_step_logits(opts, prompt, steps);

  EXPECT_EQ(host.size(), hexagon.size());
  size_t differ = 0;
  double max_diff = 0.0;
  for (size_t i = 0; i < std::min(host.size(), hexagon.size()); ++i) {
    differ += std::memcmp(&host[i], &hexagon[i], sizeof(float)) != 0;
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(host[i]) - hexagon[i]));
  }
  EXPECT_EQ(differ, 0u) << "of " << host.size() << " logits differ between the x86 and the Hexagon device (max |diff| "
                        << max_diff << ")";
  return hexagon;
}

// The tiny model in 32-token batches.
EngineOptions tiny_options() {
  EngineOptions opts;
  opts.model_path = test::tiny_model_path();
  opts.n_ctx = 64;
  opts.n_batch = 32;
  return opts;
}

TEST(HexagonDevice, TinyModelLogitsMatchTheHostDeviceBitForBit) {
  HEXAGON_OR_SKIP();
  expect_targets_agree(tiny_options(), {1, 400, 17, 902, 33, 5, 260, 71, 88, 640, 12, 999, 3, 150}, {5, 17, 300, 42});
}

// Two Hexagon devices (each cleaning its outputs' cache lines and publishing fences with
// syncht/barrier) against two x86 devices, and both against one x86 device.
TEST(HexagonDevice, TwoDevicesMatchTheHostDevicesBitForBit) {
  HEXAGON_OR_SKIP();
  EngineOptions opts = tiny_options();
  opts.htp_threads = 1;  // per device; flash attention's KV split depends on the worker count
  const std::vector<int32_t> prompt = {1, 400, 17, 902, 33, 5, 260, 71, 88, 640, 12, 999, 3, 150}, steps = {5, 17, 300};
  const std::vector<float> one = expect_targets_agree(opts, prompt, steps);
  opts.htp_devices = 2;
  const std::vector<float> two = expect_targets_agree(opts, prompt, steps);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << "2 devices differ from 1";
}

struct Case {
  std::string model;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string s = info.param.model;
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// Golden README §6.
double nmse_limit(const std::string& model) {
  if (model.rfind("llama-spm-256-", 0) == 0) return 1e-2;
  if (model.find("q4emb") != std::string::npos) return 1e-3;
  return 1e-4;
}

class GoldenHexagon : public testing::TestWithParam<Case> {};

// The short prompt of each golden model (the long ones add emulation time, not coverage).
TEST_P(GoldenHexagon, LogitsMatchTheHostDeviceAndTheGoldenData) {
  GOLDEN_OR_SKIP(golden);
  HEXAGON_OR_SKIP();
  const Case& c = GetParam();
  const std::string stem = golden + "/cases/" + c.model + "__short";
  const nlohmann::json j = test::read_json(stem + ".json");
  const std::vector<int32_t> prompt = j["tokens"].get<std::vector<int32_t>>();
  std::vector<int32_t> steps;
  for (const auto& s : j["greedy"]["steps"])
    if (steps.size() < 2) steps.push_back(s["token"].get<int32_t>());

  EngineOptions opts;
  opts.model_path = test::decompress(golden, "models/" + c.model + ".gguf.xz");
  opts.n_ctx = static_cast<int64_t>(prompt.size() + steps.size()) + 8;
  const std::vector<float> hexagon = expect_targets_agree(opts, prompt, steps);

  const size_t n_vocab = j["n_vocab"];
  const std::vector<float> golden_rows = test::read_f32(stem + ".f32");
  const auto rows = j["logits_rows"].get<std::vector<size_t>>();
  for (size_t k = 0; k < rows.size(); ++k) {
    if ((rows[k] + 1) * n_vocab > hexagon.size()) continue;
    const std::span<const float> ref(golden_rows.data() + k * n_vocab, n_vocab);
    EXPECT_LE(test::nmse(ref, std::span<const float>(hexagon).subspan(rows[k] * n_vocab, n_vocab)), nmse_limit(c.model))
        << "position " << rows[k];
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenHexagon,
                         testing::Values(Case{"llama-spm-f32"}, Case{"llama-bpe-q4emb"}, Case{"qwen2-q4emb"},
                                         Case{"qwen3-q4emb"}, Case{"gemma3-f32"}, Case{"llama-spm-256-Q4_0"},
                                         Case{"llama-spm-256-Q8_0"}, Case{"llama-spm-256-Q4_K"}),
                         case_name);

}  // namespace
}  // namespace hexllm
