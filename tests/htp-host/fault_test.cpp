// Device faults during generation, 20 times each: kill -9 of hexllm-htp (and a stopped, hung
// device) makes the current request fail with an error that names the session and what the
// device was doing; with --htp-restart the session restarts and generation finishes with the
// tokens and logits of an undisturbed run. Afterwards no device process, zombie, descriptor
// or memfd is left. Detection latency is printed, not asserted (no timed tests).
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "sampling/sampler.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRepeats = 20;
constexpr int kKillDelays = 10;  // the kills land 0, 1, ... 9 ms into generation

struct FdCount {
  int all = 0, memfds = 0;
};
FdCount count_fds() {
  FdCount n;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++n.all;
    char target[256] = {};
    if (readlink((std::string("/proc/self/fd/") + e->d_name).c_str(), target, sizeof target - 1) > 0 &&
        std::strstr(target, "memfd:hexllm-pool") != nullptr)
      ++n.memfds;
  }
  closedir(d);
  return n;
}

bool process_gone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

bool no_children_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

EngineOptions options(bool restart, double timeout_s = 10.0) {
  EngineOptions o;
  o.model_path = test::tiny_model_path();
  o.device = "htp";
  o.n_threads = 2;
  o.n_ctx = 512;
  o.n_batch = 64;
  o.htp_transport = "process";
  o.htp_device = HEXLLM_TEST_HTP_DEVICE;
  o.htp_restart = restart;
  o.htp_timeout = timeout_s;
  return o;
}

htp_host::HtpBackend& htp_of(Engine& e) { return dynamic_cast<htp_host::HtpBackend&>(*e.backends.front()); }

const std::vector<int32_t> kPrompt = {1, 400, 17, 902, 33, 5, 260, 71};

struct Generation {
  std::vector<int32_t> tokens;
  std::vector<float> last_logits;
};

// Greedy: the prompt, then n tokens each fed back.
Generation generate(Engine& e, int n) {
  Generation g;
  e.context->decode(kPrompt, false);
  for (int i = 0; i < n; ++i) {
    const int32_t t = sampling::argmax(e.context->last_logits());
    g.tokens.push_back(t);
    e.context->decode(std::span<const int32_t>(&t, 1), false);
  }
  g.last_logits.assign(e.context->last_logits().begin(), e.context->last_logits().end());
  return g;
}

// Sends `sig` to the device `delay_ms` after the start, recording when.
struct Saboteur {
  Saboteur(int pid, int sig, int delay_ms)
      : thread([=, this] {
          std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
          at = Clock::now();
          ::kill(pid, sig);
          done = true;
        }) {}
  ~Saboteur() { wait(); }
  void wait() {
    if (thread.joinable()) thread.join();
  }
  Clock::time_point at;
  std::atomic<bool> done{false};
  std::thread thread;
};

class HtpFaults : public ::testing::Test {
 protected:
  void SetUp() override { before_ = count_fds(); }
  void TearDown() override {
    EXPECT_TRUE(no_children_left()) << "a device process or zombie is left";
    const FdCount after = count_fds();
    EXPECT_EQ(after.all, before_.all) << "descriptors leaked";
    EXPECT_EQ(after.memfds, 0) << "memfds leaked";
  }
  FdCount before_;
};

TEST_F(HtpFaults, KillDuringGenerationFailsTheRequestAndCleansUp) {
  double worst_ms = 0;
  for (int rep = 0; rep < kRepeats; ++rep) {
    auto e = open_engine(options(false));
    const int pid = htp_of(*e).transport().device_pid();
    ASSERT_GT(pid, 0);
    std::string error;
    Clock::time_point caught;
    {
      Saboteur s(pid, SIGKILL, rep % kKillDelays);
      try {
        generate(*e, 400);
      } catch (const Error& x) {
        caught = Clock::now();
        error = x.what();
      }
      s.wait();
      ASSERT_FALSE(error.empty()) << "generation finished before the kill (rep " << rep << ")";
      worst_ms = std::max(worst_ms, std::chrono::duration<double, std::milli>(caught - s.at).count());
    }
    EXPECT_NE(error.find("process session"), std::string::npos) << error;
    EXPECT_NE(error.find("pid " + std::to_string(pid)), std::string::npos) << error;
    EXPECT_NE(error.find("died (killed by signal 9"), std::string::npos) << error;
    // Which op was in flight, or that the batch had not started: either way the op is named.
    EXPECT_TRUE(error.find("while running op") != std::string::npos || error.find("before the batch") != std::string::npos)
        << error;
    EXPECT_NE(error.find(" of node '"), std::string::npos) << error;
    // The session stays down: the next request fails at once, it does not hang.
    EXPECT_THROW(e->context->decode(kPrompt, false), Error);
    e.reset();
    EXPECT_TRUE(process_gone(pid));
  }
  std::printf("[ kill -9 ] %d runs, slowest report %.1f ms after the kill\n", kRepeats, worst_ms);
}

// Long enough that the kill (at most 9 ms in) always lands during generation, however fast
// decode steps are; each kill delay once.
constexpr int kRestartTokens = 300;
constexpr int kRestartRepeats = kKillDelays;

TEST_F(HtpFaults, KillWithRestartFinishesWithTheUndisturbedResult) {
  Generation want;
  {
    auto e = open_engine(options(false));
    want = generate(*e, kRestartTokens);
  }
  for (int rep = 0; rep < kRestartRepeats; ++rep) {
    auto e = open_engine(options(true));
    htp_host::HtpBackend& htp = htp_of(*e);
    const int first = htp.transport().device_pid();
    Generation got;
    {
      Saboteur s(first, SIGKILL, rep % kKillDelays);
      got = generate(*e, kRestartTokens);
    }
    EXPECT_EQ(got.tokens, want.tokens) << "rep " << rep;
    ASSERT_EQ(got.last_logits.size(), want.last_logits.size());
    EXPECT_EQ(std::memcmp(got.last_logits.data(), want.last_logits.data(), want.last_logits.size() * sizeof(float)), 0)
        << "rep " << rep;
    EXPECT_GE(htp.restarts(), 1u) << "rep " << rep;
    const int second = htp.transport().device_pid();
    EXPECT_NE(second, first);
    EXPECT_TRUE(process_gone(first));
    e.reset();
    EXPECT_TRUE(process_gone(second));
  }
}

// Several devices: one that fails an op (injected, HEXLLM_HTP_TEST_FAIL) publishes its status in
// its fence slot, every peer leaves its barrier, and the request fails naming that device and op.
TEST_F(HtpFaults, AFailingDeviceReleasesEveryPeer) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const uint32_t n = 2 + rng() % 3, dev = rng() % n, op = rng() % 40;
    SCOPED_TRACE(testing::Message() << "trial " << trial << ": device " << dev << " of " << n << ", op " << op);
    const std::string spec = std::to_string(dev) + ":" + std::to_string(op);
    ::setenv("HEXLLM_HTP_TEST_FAIL", spec.c_str(), 1);
    EngineOptions o = options(false);
    o.htp_transport = "inproc";
    o.htp_devices = static_cast<int>(n);
    o.htp_threads = 1;
    std::string error;
    try {
      auto e = open_engine(o);
      e->context->decode(kPrompt, false);
    } catch (const Error& x) {
      error = x.what();
    }
    ::unsetenv("HEXLLM_HTP_TEST_FAIL");
    EXPECT_NE(error.find(strprintf("HTP device %u of %u", dev, n)), std::string::npos) << error;
    EXPECT_NE(error.find("failed with INTERNAL"), std::string::npos) << error;
    EXPECT_NE(error.find(strprintf("while running op %u of ", op)), std::string::npos) << error;
    EXPECT_NE(error.find(" of node '"), std::string::npos) << error;
  }
}

TEST_F(HtpFaults, KillOfOneOfTwoDevicesIsReported) {
  double worst_ms = 0;
  for (int rep = 0; rep < 5; ++rep) {
    EngineOptions o = options(false);
    o.htp_devices = 2;
    o.htp_threads = 1;
    auto e = open_engine(o);
    const int pid = htp_of(*e).transport().member(1).device_pid();
    ASSERT_GT(pid, 0);
    std::string error;
    Clock::time_point caught;
    {
      Saboteur s(pid, SIGKILL, 2 + rep);
      try {
        generate(*e, 400);
      } catch (const Error& x) {
        caught = Clock::now();
        error = x.what();
      }
      s.wait();
      ASSERT_FALSE(error.empty()) << "generation finished before the kill (rep " << rep << ")";
      worst_ms = std::max(worst_ms, std::chrono::duration<double, std::milli>(caught - s.at).count());
    }
    EXPECT_NE(error.find("device 1 of 2"), std::string::npos) << error;
    EXPECT_NE(error.find("pid " + std::to_string(pid)), std::string::npos) << error;
    EXPECT_NE(error.find("died (killed by signal 9"), std::string::npos) << error;
    EXPECT_NE(error.find(" of node '"), std::string::npos) << error;
    e.reset();
    EXPECT_TRUE(process_gone(pid));
  }
  // The issue asks for a report within a second; the host notices a dead device within ~20 ms.
  EXPECT_LT(worst_ms, 1000.0);
  std::printf("[ kill -9 of device 1 of 2 ] slowest report %.1f ms after the kill\n", worst_ms);
}

// The truth is an undisturbed run, so it must be one: this test once failed in about half the
// runs because the undisturbed 2-device run itself was not deterministic (a fused RMS_NORM_MUL
// whose output the memory plan laid over its input shifted by rows; one device wrote rows
// over input another had not read yet). Two undisturbed runs and one device must agree first.
TEST_F(HtpFaults, KillOfOneOfTwoDevicesWithRestartFinishesTheSame) {
  Generation want;  // undisturbed, same devices and threads (flash attention's split depends on threads)
  for (int devices : {2, 2, 1}) {
    EngineOptions o = options(false);
    o.htp_devices = devices;
    o.htp_threads = 1;
    auto e = open_engine(o);
    const Generation g = generate(*e, kRestartTokens);
    if (want.tokens.empty()) want = g;
    EXPECT_EQ(g.tokens, want.tokens) << devices << " device(s), undisturbed";
    EXPECT_EQ(std::memcmp(g.last_logits.data(), want.last_logits.data(), want.last_logits.size() * sizeof(float)), 0)
        << devices << " device(s), undisturbed";
  }
  for (int rep = 0; rep < 5; ++rep) {
    EngineOptions o = options(true);
    o.htp_devices = 2;
    o.htp_threads = 1;
    auto e = open_engine(o);
    htp_host::HtpBackend& htp = htp_of(*e);
    const int first = htp.transport().member(1).device_pid();
    Generation got;
    {
      Saboteur s(first, SIGKILL, 2 + rep);
      got = generate(*e, kRestartTokens);
    }
    EXPECT_EQ(got.tokens, want.tokens) << "rep " << rep;
    ASSERT_EQ(got.last_logits.size(), want.last_logits.size());
    EXPECT_EQ(std::memcmp(got.last_logits.data(), want.last_logits.data(), want.last_logits.size() * sizeof(float)), 0)
        << "rep " << rep;
    EXPECT_GE(htp.restarts(), 1u) << "rep " << rep;
    EXPECT_NE(htp.transport().member(1).device_pid(), first);
    EXPECT_TRUE(process_gone(first));
  }
}

TEST_F(HtpFaults, AHungDeviceIsKilledAfterTheTimeout) {
  auto e = open_engine(options(false, 0.5));
  const int pid = htp_of(*e).transport().device_pid();
  std::string error;
  {
    Saboteur s(pid, SIGSTOP, 5);
    try {
      generate(*e, 400);
    } catch (const Error& x) {
      error = x.what();
    }
  }
  EXPECT_NE(error.find("hung"), std::string::npos) << error;
  EXPECT_NE(error.find("pid " + std::to_string(pid)), std::string::npos) << error;
  e.reset();
  EXPECT_TRUE(process_gone(pid));
}

TEST_F(HtpFaults, AHungDeviceWithRestartFinishes) {
  Generation want;
  {
    auto e = open_engine(options(false));
    want = generate(*e, 32);
  }
  auto e = open_engine(options(true, 0.5));
  htp_host::HtpBackend& htp = htp_of(*e);
  Generation got;
  {
    Saboteur s(htp.transport().device_pid(), SIGSTOP, 5);
    got = generate(*e, 32);
  }
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_EQ(std::memcmp(got.last_logits.data(), want.last_logits.data(), want.last_logits.size() * sizeof(float)), 0);
  EXPECT_GE(htp.restarts(), 1u);
}

}  // namespace
}  // namespace hexllm
