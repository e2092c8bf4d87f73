// Op preparation: a graph node becomes a device op descriptor (opcode, params, kernel params
// from the family's builder) with the device views of its tensors. Descriptors and refusals are
// cached by content (op_cache.h), so a repeated graph runs no builder.
#pragma once

#include <span>

#include "graph/tensor.h"
#include "htp-host/batch_builder.h"
#include "htp-host/device_weights.h"
#include "htp-host/op_builders.h"
#include "htp-host/op_cache.h"
#include "htp-host/pool.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

// An op ready for a batch: its descriptor (kernel params included, tensor indices not yet) and
// the device views of its tensors.
struct PreparedOp {
  htp_op_desc op;
  htp_tensor src[HTP_MAX_SRC];
  uint32_t src_mask;  // bit k: src[k] is present
  htp_tensor dst;
  htp_tensor dst_ext[HTP_MAX_DST - 1];  // a fused op's further outputs
  uint32_t n_dst_ext;

  uint32_t n_tensors() const { return static_cast<uint32_t>(__builtin_popcount(src_mask)) + 1 + n_dst_ext; }
  // Appends the op and its tensors (deduplicated) to `batch`.
  void add_to(BatchBuilder* batch) const;
};

class OpPreparer {
 public:
  // n_devices: the sessions every op is split across (the group's; fused ops depend on it).
  OpPreparer(const Pool& pool, const DeviceWeights& weights, uint32_t n_devices = 1)
      : pool_(pool), weights_(weights), n_devices_(n_devices) {}

  // The device's view of `t`: its pool bank and offset, or its weight copy; false when the
  // device cannot address it (not in the pool, a view into a tiled weight, beyond 32 bits).
  bool describe(const graph::Tensor& t, htp_tensor* out) const;
  // Prepares the op of `node` for a session of `hw`; the status says why when the device
  // cannot run it.
  htp_status prepare(const graph::Tensor& node, const htp_hwinfo& hw, PreparedOp* out);
  // Prepares the fused op `opcode` for the nodes of `group` (fusion.h), or says why not.
  htp_status prepare_fused(uint32_t opcode, std::span<const graph::Tensor* const> group, const htp_hwinfo& hw,
                           PreparedOp* out);
  // Distinct ops whose descriptors were built: a repeated graph adds none.
  size_t cached_ops() const { return cache_.size(); }

 private:
  // Cache keys of fused ops: past every graph op.
  static constexpr int32_t kFusedKeyBase = 1 << 16;
  // srcs: HTP_MAX_SRC entries (nullptr where absent); dsts: HTP_MAX_DST, dsts[0] required.
  htp_status prepare_desc(int32_t key_op, uint32_t opcode, OpBuilder build, const graph::Tensor& params_node,
                          const int32_t* params, const graph::Tensor* const* srcs, const graph::Tensor* const* dsts,
                          const htp_hwinfo& hw, PreparedOp* out);
  bool fused_io_safe(uint32_t opcode, const PreparedOp& p) const;

  const Pool& pool_;
  const DeviceWeights& weights_;
  uint32_t n_devices_;
  OpCache cache_;
};

}  // namespace hexllm::htp_host
