// The Perfetto timeline (--htp-trace FILE): every call's host phases and every device worker's
// trace records as Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open.
// Tracks: process "host" (thread "phases"), and per device a process "HTP device d" with one
// thread per worker. Device records count from the batch start on the device's clock; they are
// moved to the host's clock per call (the same monotonic clock when the device's interval lies
// within the host's call, else aligned on the call's midpoint).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "graph/tensor.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

// A node as errors and timelines name it: its name, else its named sources ('w x act').
std::string node_label(const graph::Tensor* n);

class Timeline {
 public:
  // Opens `path` for writing; throws hexllm::Error naming it when it cannot.
  explicit Timeline(const std::string& path);
  ~Timeline();  // closes the JSON (finish)
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Records kept per worker thread per call.
  static constexpr uint32_t kCapacity = 1u << 16;

  // A host phase of call `call`, [begin, end) in host ns.
  void host_phase(const char* name, uint64_t call, uint64_t begin_ns, uint64_t end_ns);
  // One device's records of one call: `records` holds n_threads areas of kCapacity records
  // (counts in rsp.trace_count); the host's call ran over [call_begin, call_end). ops[i] and
  // nodes[i] name op i.
  void device_call(uint32_t device, uint32_t n_threads, uint64_t call, const htp_response& rsp,
                   const htp_trace_record* records, uint64_t call_begin_ns, uint64_t call_end_ns,
                   std::span<const htp_op_desc> ops, std::span<const graph::Tensor* const> nodes);
  // Writes the closing brackets; later events are ignored. Throws when the file could not be written.
  void finish();

  uint64_t dropped() const { return dropped_; }

 private:
  void event(const char* name, uint32_t pid, uint32_t tid, uint64_t begin_ns, uint64_t end_ns,
             const std::string& args);
  void name_track(uint32_t pid, uint32_t tid, const std::string& process, const std::string& thread);

  std::string path_;
  std::FILE* f_ = nullptr;
  bool first_ = true;
  uint64_t origin_ns_ = 0;  // host time of the first event: timestamps start near 0
  uint64_t dropped_ = 0;
  uint32_t named_[9] = {};  // per pid, threads named so far
};

}  // namespace hexllm::htp_host
