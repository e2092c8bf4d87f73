// Batching and execution: prepared ops collect into batch messages, and one synchronous call
// runs each (retried on a restarted device with --htp-restart). Every device status becomes an
// Error naming the op index, the op and the node.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "base/clock.h"
#include "graph/tensor.h"
#include "htp-host/batch_builder.h"
#include "htp-host/host_profile.h"
#include "htp-host/op_prepare.h"
#include "htp-host/op_profile.h"
#include "htp-host/pool.h"
#include "htp-host/timeline.h"
#include "htp-host/transport.h"
#include "htp-host/transport_replay.h"

namespace hexllm::htp_host {

// One call's worth of ops: the message content, and per op the index (in the run of compute
// nodes it was prepared from) of the node that names it: a fused op is named by its last node.
struct PreparedBatch {
  BatchBuilder message;
  std::vector<uint32_t> op_node;
  // Names this batch's content, unique per preparation (a prepared batch never changes after).
  // A message that holds serial s already gets only a new header; 0: always written in full.
  uint64_t serial = 0;
};

class BatchRunner {
 public:
  // `host` (nullptr: no profile) hears the phases of every call; `timeline` (nullptr: none)
  // gets them and the device's trace records.
  BatchRunner(Pool& pool, Transport& transport, bool restart, HostProfile* host, Timeline* timeline = nullptr);

  // Whether `p` fits beside what `batch` holds in the session's tensor table (its tensors
  // counted as new: deduplication can only make room).
  bool has_room_for(const BatchBuilder& batch, const PreparedOp& p) const;
  // Runs `batch`; nodes[i] names op i in errors and profile lines. Throws naming the node on
  // any failure.
  void run(const BatchBuilder& batch, std::span<const graph::Tensor* const> nodes, uint64_t serial = 0);

  const std::vector<uint64_t>& last_op_ns() const { return last_op_ns_; }
  // The opcodes of the last call's ops, in order (tests check which ops formed).
  const std::vector<uint32_t>& last_opcodes() const { return opcodes_; }
  uint64_t calls() const { return calls_; }
  uint64_t restarts() const { return restarts_; }
  // Nanoseconds the devices' thread 0 spent in multi-device fences, summed over devices and calls.
  uint64_t fence_ns() const { return fence_ns_; }
  // Device time per op kind (with a host profile only).
  const OpProfile& op_profile() const { return ops_; }

 private:
  [[noreturn]] void fail_call(const BatchBuilder& batch, std::span<const graph::Tensor* const> nodes,
                              const std::string& what, uint32_t op_index) const;

  Pool& pool_;
  Transport& transport_;
  bool restart_;
  HostProfile* host_;
  Timeline* timeline_;
  std::unique_ptr<backend::Buffer> message_;
  uint64_t written_serial_ = 0;         // the kept batch whose ops and tensors message_ holds
  uint64_t last_serial_ = 0;            // the last call's kept batch (0: none, or it failed)
  uint64_t last_device_ns_ = 0;         // and its device time: the next call's hint
  const void* written_at_ = nullptr;    // ... written into this buffer
  uint32_t written_devices_ = 0;        // ... for this many devices (fences marked when > 1)
  std::vector<uint32_t> opcodes_;       // of the batch message_ holds
  std::vector<uint64_t> weight_bytes_;  // op_weight_bytes of each of its ops
  std::vector<uint64_t> last_op_ns_;
  ReplayLog replay_;
  OpProfile ops_;
  uint64_t calls_ = 0;
  uint64_t restarts_ = 0;
  uint64_t fence_ns_ = 0;
};

}  // namespace hexllm::htp_host
