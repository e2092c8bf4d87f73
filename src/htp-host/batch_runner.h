// Batching and execution: prepared ops collect into one batch message in the pool's message
// region, and one synchronous call runs it (retried on a restarted device with --htp-restart).
// Every device status becomes an Error naming the op index, the op and the node.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "graph/tensor.h"
#include "htp-host/batch_builder.h"
#include "htp-host/op_prepare.h"
#include "htp-host/op_profile.h"
#include "htp-host/pool.h"
#include "htp-host/transport.h"
#include "htp-host/transport_replay.h"

namespace hexllm::htp_host {

class BatchRunner {
 public:
  BatchRunner(Pool& pool, Transport& transport, bool restart, bool profile);
  ~BatchRunner();

  bool empty() const { return batch_.n_ops() == 0; }
  // Whether `p` fits beside what the batch holds in the session's tensor table (its tensors
  // counted as new: deduplication can only make room).
  bool has_room_for(const PreparedOp& p) const;
  void add(const PreparedOp& p, const graph::Tensor* node);
  // Sends the batch (nothing when empty) and clears it. Throws naming the node on any failure.
  void run();
  // Drops what the batch holds (after a failed run).
  void clear();

  const std::vector<uint64_t>& last_op_ns() const { return last_op_ns_; }
  uint64_t calls() const { return calls_; }
  uint64_t restarts() const { return restarts_; }

 private:
  [[noreturn]] void fail_call(const std::string& what, uint32_t op_index) const;

  Pool& pool_;
  Transport& transport_;
  bool restart_;
  bool profile_on_;
  std::unique_ptr<backend::Buffer> message_;
  BatchBuilder batch_;
  std::vector<const graph::Tensor*> nodes_;
  std::vector<uint64_t> last_op_ns_;
  ReplayLog replay_;
  OpProfile profile_;
  uint64_t calls_ = 0;
  uint64_t restarts_ = 0;
};

}  // namespace hexllm::htp_host
