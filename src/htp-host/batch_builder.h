// Assembles one batch message: tensors deduplicated by their device descriptor (views that
// alias the same bytes with the same shape share an index), ops in order, and the canonical
// message layout of src/htp/abi/htp_batch.h.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

// How a message is framed around the batch: devices it goes to (a response and trace areas
// each), tracing, and the multi-device fence region.
struct MessageFrame {
  uint32_t n_devices = 1;
  uint32_t trace_threads = 0;   // 0: no tracing
  uint32_t trace_capacity = 0;  // records per thread
  uint32_t fence_seq = 0;       // first fence sequence of the batch (n_devices > 1)
  uint32_t fence_bank = 0;
  uint32_t fence_offset = 0;
};

// Sets HTP_OPF_FENCE on every op that must wait for all devices to finish the ops before it.
void mark_fences(std::vector<htp_op_desc>& ops, const std::vector<htp_tensor>& tensors);

class BatchBuilder {
 public:
  void clear();
  // Index of the tensor, adding it when new.
  uint16_t add_tensor(const htp_tensor& t);
  htp_op_desc& add_op();
  uint32_t n_ops() const { return static_cast<uint32_t>(ops_.size()); }
  uint32_t n_tensors() const { return static_cast<uint32_t>(tensors_.size()); }
  const std::vector<htp_op_desc>& ops() const { return ops_; }
  const std::vector<htp_tensor>& tensors() const { return tensors_; }

  // Bytes the message needs; false when it exceeds 32-bit offsets.
  bool layout(htp_message_layout* out, const MessageFrame& frame = {}) const;
  // Writes header, tensors and ops into `dst` (layout().message_size bytes, 8-byte aligned).
  void write(void* dst, uint64_t seq, const htp_message_layout& layout, const MessageFrame& frame = {}) const;
  // Only the header, into a message that holds this batch's tensors and ops (written for the
  // same number of devices) already.
  void write_header(void* dst, uint64_t seq, const htp_message_layout& layout, const MessageFrame& frame = {}) const;

 private:
  struct Key {
    htp_tensor t;
    bool operator==(const Key& o) const { return __builtin_memcmp(&t, &o.t, sizeof t) == 0; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  std::vector<htp_tensor> tensors_;
  std::vector<htp_op_desc> ops_;
  std::unordered_map<Key, uint16_t, KeyHash> index_;
};

}  // namespace hexllm::htp_host
