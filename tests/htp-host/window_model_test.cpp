// A model larger than the device window slides through it: with the tiny preset and a 2 MiB
// window (its weights alone are larger), both transports give the logits of an unlimited
// window bit for bit, the window never holds more than its size, and banks really are mapped
// again and again. A tensor larger than the window is refused at load, by name and size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "model/model.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

const std::vector<int32_t> kPrompt = {1, 400, 17, 902, 33, 5, 260, 71, 88, 640, 12, 999, 3, 150};
const std::vector<int32_t> kSteps = {5, 17, 300, 42, 7, 900};

EngineOptions options(const std::string& transport, const std::string& window) {
  EngineOptions o;
  o.model_path = test::tiny_model_path();
  o.device = "htp";
  o.n_threads = 2;
  o.n_ctx = 64;
  o.n_batch = 32;
  o.htp_transport = transport;
  o.htp_window = window;
  o.htp_device = HEXLLM_TEST_HTP_DEVICE;
  return o;
}

htp_host::HtpBackend& htp_of(Engine& e) {
  auto* b = dynamic_cast<htp_host::HtpBackend*>(e.backends.front().get());
  EXPECT_NE(b, nullptr);
  return *b;
}

std::vector<float> run(Engine& e) {
  e.context->decode(kPrompt, true);
  std::vector<float> out(e.context->logits().begin(), e.context->logits().end());
  for (int32_t t : kSteps) {
    e.context->decode(std::span<const int32_t>(&t, 1), false);
    out.insert(out.end(), e.context->last_logits().begin(), e.context->last_logits().end());
  }
  return out;
}

// Bytes of pool memfds mapped in process `pid`, from /proc/PID/maps.
uint64_t device_pool_mappings(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  uint64_t total = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:hexllm-pool") == std::string::npos) continue;
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2) total += hi - lo;
  }
  return total;
}

class WindowModel : public testing::TestWithParam<std::string> {};

TEST_P(WindowModel, ASlidingWindowGivesTheLogitsOfAnUnlimitedOne) {
  const std::vector<float> full = run(*open_engine(options(GetParam(), "64G")));

  auto e = open_engine(options(GetParam(), "2M"));
  const std::vector<float> slid = run(*e);
  ASSERT_EQ(full.size(), slid.size());
  size_t differ = 0;
  for (size_t i = 0; i < full.size(); ++i) differ += std::memcmp(&full[i], &slid[i], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << "of " << full.size() << " logits";

  const htp_host::HtpBackend& htp = htp_of(*e);
  const htp_host::Pool& pool = htp.pool();
  const uint64_t window = 2u << 20;
  const uint64_t pinned = pool.bytes_of(pool.pinned_mask());
  const uint64_t weights = pool.bytes(htp_host::Region::Weights);
  ASSERT_GT(pinned + weights, window) << "the model must not fit the window for this test to mean anything";
  uint32_t live = 0;
  for (const htp_host::Bank& b : pool.banks()) live += b.base != nullptr;
  const htp_host::WindowStats& st = htp.transport().window().stats();
  EXPECT_LE(st.peak_bytes, window);
  EXPECT_GT(st.maps, live) << "some bank must have been mapped more than once";
  EXPECT_GT(st.unmaps, 0u);
  if (const int pid = htp.transport().device_pid(); pid != 0) {
    // The window is real: the device process has no more of the pool mapped than its size.
    const uint64_t mapped = device_pool_mappings(pid);
    EXPECT_GT(mapped, 0u);
    EXPECT_LE(mapped, window);
  }
  std::printf("[ %s ] window %llu: pinned %llu + weights %llu bytes in %u banks; %llu maps, %llu unmaps, peak %llu\n",
              GetParam().c_str(), (unsigned long long)window, (unsigned long long)pinned, (unsigned long long)weights,
              live, (unsigned long long)st.maps, (unsigned long long)st.unmaps, (unsigned long long)st.peak_bytes);
}

TEST_P(WindowModel, ATensorLargerThanTheWindowIsRefusedAtLoad) {
  std::string message;
  try {
    open_engine(options(GetParam(), "128K"));
  } catch (const Error& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "the model loaded into a 128 KiB window";
  // "weight 'NAME' (...) needs N bytes on the device, more than the device window of 131072 bytes"
  const size_t q0 = message.find("weight '"), q1 = message.find('\'', q0 + 8);
  ASSERT_NE(q0, std::string::npos) << message;
  const std::string name = message.substr(q0 + 8, q1 - q0 - 8);
  const size_t n0 = message.find("needs ");
  ASSERT_NE(n0, std::string::npos) << message;
  const unsigned long long needs = std::strtoull(message.c_str() + n0 + 6, nullptr, 10);
  EXPECT_NE(message.find("window of 131072 bytes"), std::string::npos) << message;
  EXPECT_GT(needs, 131072u) << message;
  // The named tensor is a real weight of the model, and larger than the window in the file too.
  auto model = model::Model::load(test::tiny_model_path());
  const graph::Tensor* found = nullptr;
  for (const graph::Tensor* t : model->weights().all)
    if (name == t->name) found = t;
  ASSERT_NE(found, nullptr) << name;
  EXPECT_GT(found->n_bytes(), 131072u);
}

INSTANTIATE_TEST_SUITE_P(Transports, WindowModel, testing::Values("inproc", "process"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace hexllm
