// Device time per op kind, summed over a session (--htp-profile): where a token's time goes on
// the device, and how much of each call is outside the ops (transport, dispatch, barriers).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>

#include "htp/abi/htp_opcode.h"

namespace hexllm::htp_host {

class OpProfile {
 public:
  // `opcode`: the device op (fused ops count as themselves).
  void add_op(uint32_t opcode, uint64_t ns) {
    Entry& e = ops_[opcode < HTP_OP_COUNT ? opcode : HTP_OP_COUNT];
    e.count++;
    e.ns += ns;
  }
  // One call: its wall time on the host and the sum of its ops' device times.
  void add_call(uint64_t wall_ns, uint64_t ops_ns) {
    calls_++;
    wall_ns_ += wall_ns;
    ops_ns_ += ops_ns;
  }
  bool empty() const { return calls_ == 0; }
  // A table by descending time, then the calls' wall time and what the ops left of it.
  void print(std::FILE* out) const;

 private:
  struct Entry {
    uint64_t count = 0;
    uint64_t ns = 0;
  };
  std::array<Entry, HTP_OP_COUNT + 1> ops_{};  // by opcode; the last counts unknown ones
  uint64_t calls_ = 0;
  uint64_t wall_ns_ = 0;
  uint64_t ops_ns_ = 0;
};

}  // namespace hexllm::htp_host
