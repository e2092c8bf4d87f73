#include "htp-host/host_profile.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/log.h"
#include "graph/graph.h"

namespace hexllm::htp_host {

namespace {

constexpr const char* kPhaseNames[] = {"graph build", "between calls", "key + lookup", "prepare", "write", "to device",
                                       "from device", "device", "response"};
static_assert(sizeof(kPhaseNames) / sizeof(kPhaseNames[0]) == kHostPhases, "a name per phase");

// A call this many times the median host time, after warm-up, is logged with its op mix.
constexpr uint64_t kTailFactor = 4;
constexpr uint64_t kTailWarmup = 16;
constexpr uint64_t kTailMaxLogs = 8;
constexpr uint64_t kTailRefresh = 64;

void push_ring(std::vector<uint64_t>* ring, uint64_t calls, uint64_t v) {
  if (ring->size() < HostProfile::kWindow) ring->push_back(v);
  else (*ring)[calls % HostProfile::kWindow] = v;
}

}  // namespace

const char* host_phase_name(HostPhase p) { return kPhaseNames[static_cast<size_t>(p)]; }

void HostProfile::count_ops(const uint32_t* opcodes, uint32_t n) {
  ops_ += n;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t op = opcodes[i];
    if (op == HTP_OP_MUL_MAT || op == HTP_OP_MUL_MAT_ID || op == HTP_OP_MUL_MAT_ADD || op == HTP_OP_MUL_MAT_QKV ||
        op == HTP_OP_MUL_MAT_FFN || op == HTP_OP_MUL_MAT_ID_FFN || op == HTP_OP_RMS_NORM_MUL)
      coverage_[op]++;
  }
}

HostProfile::Stats HostProfile::stats_of(std::vector<uint64_t> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 95 / 100)], v.back()};
}

void HostProfile::end_call(const std::vector<const graph::Tensor*>& nodes) {
  uint64_t host = 0;
  for (size_t p = 0; p < kHostPhases; ++p) {
    push_ring(&samples_[p], calls_, current_[p]);
    if (p != static_cast<size_t>(HostPhase::Device)) host += current_[p];
  }
  push_ring(&host_samples_, calls_, host);
  current_.fill(0);
  ++calls_;
  if (calls_ <= kTailWarmup || tail_logged_ >= kTailMaxLogs) return;
  // The median moves slowly: refreshed now and then, not sorted on every call.
  if (calls_ % kTailRefresh == 1 || tail_median_ == 0) tail_median_ = stats_of(host_samples_).p50;
  const uint64_t median = tail_median_;
  if (median == 0 || host < kTailFactor * median) return;
  ++tail_logged_;
  std::map<std::string, int> mix;
  for (const graph::Tensor* n : nodes) mix[graph::op_name(n->op)]++;
  std::string text;
  for (const auto& [name, count] : mix) text += " " + name + "x" + std::to_string(count);
  HEXLLM_LOG_WARN("HTP profile: call %llu took %.1f us on the host (median %.1f us); its ops:%s",
                  static_cast<unsigned long long>(calls_), (double)host / 1e3, (double)median / 1e3, text.c_str());
}

void HostProfile::print(std::FILE* out) const {
  std::fprintf(out, "\nHTP host profile: %llu calls (graph cache: %llu hits, %llu misses), per call over the last %zu\n",
               static_cast<unsigned long long>(calls_), static_cast<unsigned long long>(hits_),
               static_cast<unsigned long long>(misses_), samples_[0].size());
  std::fprintf(out, "  %-16s %10s %10s %10s %10s\n", "phase (us)", "min", "p50", "p95", "max");
  auto row = [&](const char* name, const Stats& s) {
    std::fprintf(out, "  %-16s %10.1f %10.1f %10.1f %10.1f\n", name, (double)s.min / 1e3, (double)s.p50 / 1e3,
                 (double)s.p95 / 1e3, (double)s.max / 1e3);
  };
  for (size_t p = 0; p < kHostPhases; ++p) row(kPhaseNames[p], stats_of(samples_[p]));
  row("host total", stats_of(host_samples_));
  std::fprintf(out, "  ops per call: %.1f", calls_ ? (double)ops_ / (double)calls_ : 0.0);
  for (uint32_t op = 0; op < HTP_OP_COUNT; ++op)
    if (coverage_[op] != 0)
      std::fprintf(out, ", %s %llu", htp_opcode_name(op), static_cast<unsigned long long>(coverage_[op]));
  std::fprintf(out, "\n");
}

void HostProfile::write_json(const std::string& path) const {
  nlohmann::json j;
  j["calls"] = calls_;
  j["graph_cache"] = {{"hits", hits_}, {"misses", misses_}};
  auto stats = [](const Stats& s) {
    return nlohmann::json{{"min_us", (double)s.min / 1e3}, {"p50_us", (double)s.p50 / 1e3},
                          {"p95_us", (double)s.p95 / 1e3}, {"max_us", (double)s.max / 1e3}};
  };
  for (size_t p = 0; p < kHostPhases; ++p) j["phases"][kPhaseNames[p]] = stats(stats_of(samples_[p]));
  j["host_total"] = stats(stats_of(host_samples_));
  j["ops"] = ops_;
  j["coverage"] = nlohmann::json::object();
  for (uint32_t op = 0; op < HTP_OP_COUNT; ++op)
    if (coverage_[op] != 0) j["coverage"][htp_opcode_name(op)] = coverage_[op];
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) fail("--htp-profile-json: cannot write '%s'", path.c_str());
}

}  // namespace hexllm::htp_host
