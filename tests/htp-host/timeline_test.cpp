// The Perfetto timeline (--htp-trace) of a short generation on the tiny model, read back with a
// real JSON parser (nlohmann::json), against what the run must contain: a host track and one
// track per worker thread of every device, every op of every call on every worker, kernel
// events inside their op, times increasing along each track, and fences on every device when
// there are several. Both transports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "hexllm/engine.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

struct Slice {
  double ts, dur;
  std::string name;
  uint64_t call;
  uint32_t op;
};

struct Param {
  std::string transport;
  int devices;
  int threads;
};

class TimelineTest : public ::testing::TestWithParam<Param> {};

TEST_P(TimelineTest, TracksOpsAndTimes) {
  const Param p = GetParam();
  const std::string path = test::generated_model_path("timeline_" + p.transport + std::to_string(p.devices) + "x" + std::to_string(p.threads)) + ".json";
  {
    EngineOptions o;
    o.model_path = test::tiny_model_path();
    o.device = "htp";
    o.n_threads = p.threads;
    o.htp_threads = p.threads;
    o.n_ctx = 256;
    o.n_batch = 32;
    o.htp_transport = p.transport;
    o.htp_device = HEXLLM_TEST_HTP_DEVICE;
    o.htp_devices = p.devices;
    o.htp_trace = path;
    auto e = open_engine(o);
    const std::vector<int32_t> prompt = {1, 400, 17, 902, 33};
    e->context->decode(prompt, false);
    for (int32_t t : {5, 260, 71}) e->context->decode(std::span<const int32_t>(&t, 1), false);
  }  // the backend closes the JSON

  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const nlohmann::json doc = nlohmann::json::parse(in);  // throws on malformed JSON
  const auto& events = doc.at("traceEvents");
  std::map<uint32_t, std::string> processes;
  std::map<uint32_t, std::set<uint32_t>> threads;      // pid -> named tids
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Slice>> ops, kernel;  // (pid, tid)
  std::map<uint32_t, int> fences;                      // pid -> fence events
  std::map<uint32_t, int> validations;                 // pid -> batch validations (before any op)
  std::vector<double> host_calls;
  for (const auto& ev : events) {
    const std::string ph = ev.at("ph");
    const uint32_t pid = ev.at("pid"), tid = ev.at("tid");
    if (ph == "M") {
      if (ev.at("name") == "process_name") processes[pid] = ev.at("args").at("name");
      if (ev.at("name") == "thread_name") threads[pid].insert(tid);
      continue;
    }
    ASSERT_EQ(ph, "X");
    Slice s{ev.at("ts"), ev.at("dur"), ev.at("name"), ev.at("args").at("call"), 0};
    if (pid == 0) {
      if (s.name == "call") host_calls.push_back(s.ts);
      continue;
    }
    ASSERT_TRUE(ev.at("args").contains("info")) << ev.dump();
    if (s.name == "FENCE") fences[pid]++;
    if (s.name == "FENCE" && !ev.at("args").contains("op")) continue;  // the batch-end fence follows the last op
    if (s.name == "VALIDATE") {  // thread 0 checks the batch before its first op
      EXPECT_EQ(tid, 0u);
      EXPECT_FALSE(ev.at("args").contains("op")) << ev.dump();
      validations[pid]++;
      continue;
    }
    ASSERT_TRUE(ev.at("args").contains("op")) << ev.dump();
    s.op = ev.at("args").at("op_index");
    // An op slice carries the opcode's name; its kernel events carry the event's.
    if (s.name == ev.at("args").at("op")) {
      ASSERT_TRUE(ev.at("args").contains("node")) << ev.dump();
      ops[{pid, tid}].push_back(s);
    } else {
      kernel[{pid, tid}].push_back(s);
    }
  }
  // Tracks: the host, and every worker of every device.
  ASSERT_EQ(processes.size(), (size_t)p.devices + 1);
  EXPECT_EQ(processes[0], "host");
  ASSERT_FALSE(host_calls.empty());
  for (size_t i = 1; i < host_calls.size(); ++i) EXPECT_LT(host_calls[i - 1], host_calls[i]);
  for (int d = 0; d < p.devices; ++d) {
    const uint32_t pid = (uint32_t)d + 1;
    EXPECT_EQ(processes[pid], "HTP device " + std::to_string(d));
    ASSERT_EQ(threads[pid].size(), (size_t)p.threads) << "device " << d;
    EXPECT_EQ(validations[pid], (int)host_calls.size()) << "device " << d;
    // Every op of every call on every worker, in order, without overlap.
    std::map<uint64_t, std::set<uint32_t>> want;  // call -> op indices, from worker 0 of device 0
    for (const Slice& s : ops[{1, 0}]) want[s.call].insert(s.op);
    ASSERT_EQ(want.size(), host_calls.size());
    for (uint32_t t = 0; t < (uint32_t)p.threads; ++t) {
      const auto& v = ops[{pid, t}];
      std::map<uint64_t, std::set<uint32_t>> got;
      for (size_t i = 0; i < v.size(); ++i) {
        got[v[i].call].insert(v[i].op);
        if (i > 0) {
          EXPECT_LE(v[i - 1].ts + v[i - 1].dur, v[i].ts + 1e-3) << "device " << d << " worker " << t;
        }
      }
      EXPECT_EQ(got, want) << "device " << d << " worker " << t;
      for (const auto& [c, s] : want) EXPECT_EQ(*s.rbegin() + 1, s.size()) << "call " << c << ": op indices 0..n-1";
      // Kernel events lie within the op they name (timestamps are printed to the ns).
      std::map<std::pair<uint64_t, uint32_t>, const Slice*> by_op;
      for (const Slice& s : v) by_op[{s.call, s.op}] = &s;
      for (const Slice& k : kernel[{pid, t}]) {
        const Slice* o = by_op.at({k.call, k.op});
        EXPECT_GE(k.ts + 2e-3, o->ts) << k.name;
        EXPECT_LE(k.ts + k.dur, o->ts + o->dur + 2e-3) << k.name;
      }
    }
    if (p.devices > 1) {
      EXPECT_GT(fences[pid], 0) << "device " << d << " recorded no fence wait";
    }
  }
  // The device ran kernels that record events (matmul, norms, ...), not only op boundaries.
  EXPECT_FALSE(kernel[std::make_pair(1u, 0u)].empty());
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Transports, TimelineTest,
                         ::testing::Values(Param{"inproc", 1, 2}, Param{"process", 1, 2}, Param{"inproc", 2, 1},
                                           Param{"process", 2, 1}, Param{"process", 2, 2}),
                         [](const auto& tp) {
                           return tp.param.transport + "_" + std::to_string(tp.param.devices) + "dev_" + std::to_string(tp.param.threads) + "thr";
                         });

}  // namespace
}  // namespace hexllm
