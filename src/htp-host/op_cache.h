// Prepared op descriptors by content. An op's descriptor (opcode, adjusted params, kernel
// params) is a pure function of its graph op, its op params and the device views of its
// tensors, for one session (threads, VTCM size). Decode graphs repeat token after token (KV
// length padded, positions as data), so the kernel-param builders run once per distinct op
// instead of twice per node per token (scheduler supports(), then compute()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "graph/tensor.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

// What the descriptor depends on. Build it zeroed (OpKey{}): it is hashed and compared as bytes.
struct OpKey {
  int32_t op;
  uint32_t src_mask;  // bit k: src[k] is present
  int32_t params[graph::kMaxParams];
  htp_tensor src[HTP_MAX_SRC];
  htp_tensor dst[HTP_MAX_DST];  // dst[1..]: a fused op's further outputs (zero when absent)
};
static_assert(graph::kMaxSrc <= static_cast<int>(HTP_MAX_SRC), "a graph node's sources fit a device op");

class OpCache {
 public:
  struct Entry {
    htp_status status;  // HTP_OK, or why the device refuses the op
    htp_op_desc op;     // when OK: opcode, params, kernel params; tensor indices unset
  };

  const Entry* find(const OpKey& key) const;
  void insert(const OpKey& key, const Entry& entry);
  size_t size() const { return map_.size(); }

  // Graphs of ever new shapes (prompts of every length) would grow it without bound: past this
  // many entries it starts over.
  static constexpr size_t kMaxEntries = 8192;

 private:
  struct Hash {
    size_t operator()(const OpKey& k) const;
  };
  struct Equal {
    bool operator()(const OpKey& a, const OpKey& b) const;
  };
  std::unordered_map<OpKey, Entry, Hash, Equal> map_;
};

}  // namespace hexllm::htp_host
