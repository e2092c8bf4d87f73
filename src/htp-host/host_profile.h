// Where each graph call's host time goes (--htp-profile): per call, the time of every phase on
// the host next to the device's own time, as min / p50 / p95 / max over the last calls; graph
// cache hits and misses; coverage counters (matmuls, fused ops, ops per call); and a long-tail
// probe that logs the op composition of a call much slower than usual.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

enum class HostPhase : uint32_t {
  Build,     // the model graph built and memory-planned for this call (0 when one is reused)
  Between,   // the rest of the host's work since the previous call returned: sampling, inputs, output
  Key,       // graph key and cache lookup
  Prepare,   // op preparation and batching (graph cache miss, or no cache)
  Write,     // batch messages written into the pool
  ToDevice,  // from the doorbell until the device starts the batch (its wake-up, bank updates)
  FromDevice,  // from the device's end of the batch until the host sees it (the host's wake-up)
  Device,    // the device's time for the batches (validation included)
  Response,  // responses read back
  Count
};
inline constexpr size_t kHostPhases = static_cast<size_t>(HostPhase::Count);
const char* host_phase_name(HostPhase p);

class HostProfile {
 public:
  // The current call's phase times accumulate until end_call().
  void add(HostPhase p, uint64_t ns) { current_[static_cast<size_t>(p)] += ns; }
  // Counts the ops of one device batch (coverage counters).
  void count_ops(const uint32_t* opcodes, uint32_t n);
  void graph_hit() { ++hits_; }
  void graph_miss() { ++misses_; }
  // Closes the call; `nodes` (may be empty) describe it for the long-tail probe.
  void end_call(const std::vector<const graph::Tensor*>& nodes);

  bool empty() const { return calls_ == 0; }
  void print(std::FILE* out) const;
  // The same numbers as JSON; throws hexllm::Error naming the file when it cannot be written.
  void write_json(const std::string& path) const;

  // Samples kept per phase for the percentiles.
  static constexpr size_t kWindow = 1024;

 private:
  struct Stats {
    uint64_t min = 0, p50 = 0, p95 = 0, max = 0;
  };
  static Stats stats_of(std::vector<uint64_t> samples);  // a copy: sorted here

  std::array<uint64_t, kHostPhases> current_{};
  std::array<std::vector<uint64_t>, kHostPhases> samples_;  // ring of kWindow per phase
  std::vector<uint64_t> host_samples_;                       // everything but Device, per call
  uint64_t calls_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
  std::array<uint64_t, HTP_OP_COUNT> coverage_{};  // ops run, by opcode
  uint64_t ops_ = 0;
  uint64_t tail_logged_ = 0;
  uint64_t tail_median_ = 0;  // host time median the long-tail probe compares with
};

}  // namespace hexllm::htp_host
