// Device time per op kind, summed over a session (--htp-profile): where a token's time goes on
// the device, how fast the matmuls stream their weights, and how much of each call is outside
// the ops (transport, dispatch, barriers).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_tensor.h"

namespace hexllm::htp_host {

// Weight bytes an op reads at least once: every weight source of a dense matmul (MUL_MAT and
// the fused MUL_MAT_ADD / _QKV / _FFN, biases included); 0 for every other op (GET_ROWS reads a
// few rows of its table, MUL_MAT_ID only the routed experts). In decode that is what the op
// streams from memory, so bytes over device time is the rate to hold against the roofline.
uint64_t op_weight_bytes(const htp_op_desc& op, const std::vector<htp_tensor>& tensors);

class OpProfile {
 public:
  // `opcode`: the device op (fused ops count as themselves); `weight_bytes`: op_weight_bytes.
  void add_op(uint32_t opcode, uint64_t ns, uint64_t weight_bytes = 0) {
    Entry& e = ops_[opcode < HTP_OP_COUNT ? opcode : HTP_OP_COUNT];
    e.count++;
    e.ns += ns;
    e.weight_bytes += weight_bytes;
  }
  // One call: its wall time on the host and the sum of its ops' device times.
  void add_call(uint64_t wall_ns, uint64_t ops_ns) {
    calls_++;
    wall_ns_ += wall_ns;
    ops_ns_ += ops_ns;
  }
  bool empty() const { return calls_ == 0; }
  // A table by descending time (with the weight rate of the kinds that read weights), then the
  // calls' wall time and what the ops left of it.
  void print(std::FILE* out) const;

 private:
  struct Entry {
    uint64_t count = 0;
    uint64_t ns = 0;
    uint64_t weight_bytes = 0;
  };
  std::array<Entry, HTP_OP_COUNT + 1> ops_{};  // by opcode; the last counts unknown ones
  uint64_t calls_ = 0;
  uint64_t wall_ns_ = 0;
  uint64_t ops_ns_ = 0;
};

}  // namespace hexllm::htp_host
