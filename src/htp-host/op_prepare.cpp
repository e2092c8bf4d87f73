#include "htp-host/op_prepare.h"

#include <cstring>

#include "graph/graph.h"
#include "htp-host/op_builders.h"
#include "htp/abi/tiles.h"

namespace hexllm::htp_host {

void PreparedOp::add_to(BatchBuilder* batch) const {
  htp_op_desc& o = batch->add_op();
  o = op;
  for (int k = 0; k < graph::kMaxSrc; ++k)
    if ((src_mask >> k) & 1u) o.src[k] = batch->add_tensor(src[k]);
  o.dst = batch->add_tensor(dst);
}

bool OpPreparer::describe(const graph::Tensor& t, htp_tensor* out) const {
  const graph::Tensor* root = graph::storage_root(&t);
  if (root->has_flag(graph::kFlagWeight)) {
    const htp_tensor* w = weights_.find(root);
    if (w == nullptr) return false;
    if (&t == root) {
      *out = *w;
      return true;
    }
    // A view into a weight is only meaningful in its original (untiled) layout.
    if (htp::htp_tile_valid(w->type) || !device_shape(t, out)) return false;
    const uint64_t extent = htp_tensor_extent(*out);
    if (extent == HTP_BAD_EXTENT || t.view_offs + extent > w->size) return false;
    out->bank = w->bank;
    out->offset = w->offset + static_cast<uint32_t>(t.view_offs);
    out->size = static_cast<uint32_t>(extent);
    out->flags = HTP_TENSOR_WEIGHT;
    return true;
  }
  if (t.data == nullptr || !device_shape(t, out)) return false;
  const uint64_t extent = htp_tensor_extent(*out);
  if (extent == HTP_BAD_EXTENT || extent > UINT32_MAX) return false;
  uint32_t bank = 0, offset = 0;
  if (!pool_.locate(t.data, extent, &bank, &offset)) return false;  // not in this session's pool
  out->bank = static_cast<uint16_t>(bank);
  out->offset = offset;
  out->size = static_cast<uint32_t>(extent);
  out->flags = HTP_TENSOR_COMPUTE | HTP_TENSOR_PINNED;
  return true;
}

htp_status OpPreparer::prepare(const graph::Tensor& node, const htp_hwinfo& hw, PreparedOp* out) {
  const OpRoute route = route_op(node.op);
  if (route.build == nullptr) return HTP_ERR_NO_SUPPORT;
  return prepare_desc(static_cast<int32_t>(node.op), route.opcode, route.build, node, node.src, node, hw, out);
}

htp_status OpPreparer::prepare_fused(uint32_t opcode, std::span<const graph::Tensor* const> group, const htp_hwinfo& hw,
                                     PreparedOp* out) {
  const graph::Tensor* srcs[graph::kMaxSrc] = {};
  if (opcode == HTP_OP_RMS_NORM_MUL && group.size() == 2) {
    // rms_norm(x) * w: the norm's params (eps), x, the MUL's weight row, the MUL's result.
    srcs[0] = group[0]->src[0];
    srcs[1] = group[1]->src[1];
    return prepare_desc(kFusedKeyBase + static_cast<int32_t>(opcode), opcode, build_norm, *group[0], srcs,
                        *group[1], hw, out);
  }
  return HTP_ERR_NO_SUPPORT;
}

htp_status OpPreparer::prepare_desc(int32_t key_op, uint32_t opcode, OpBuilder build, const graph::Tensor& params_node,
                                    const graph::Tensor* const* srcs, const graph::Tensor& dst, const htp_hwinfo& hw,
                                    PreparedOp* out) {
  out->src_mask = 0;
  const htp_tensor* src_ptr[HTP_MAX_SRC] = {};
  for (int k = 0; k < graph::kMaxSrc; ++k) {
    if (srcs[k] == nullptr) continue;
    if (!describe(*srcs[k], &out->src[k])) return HTP_ERR_NO_SUPPORT;
    src_ptr[k] = &out->src[k];
    out->src_mask |= 1u << k;
  }
  if (!describe(dst, &out->dst) || (out->dst.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_NO_SUPPORT;

  OpKey key{};
  key.op = key_op;
  key.src_mask = out->src_mask;
  std::memcpy(key.params, params_node.params, sizeof key.params);
  for (int k = 0; k < graph::kMaxSrc; ++k)
    if (src_ptr[k] != nullptr) key.src[k] = out->src[k];
  key.dst = out->dst;
  if (const OpCache::Entry* hit = cache_.find(key)) {
    out->op = hit->op;
    return hit->status;
  }

  htp_op_desc& op = out->op;
  std::memset(&op, 0, sizeof op);
  for (uint16_t& s : op.src) s = HTP_NO_TENSOR;
  op.dst = HTP_NO_TENSOR;
  op.opcode = opcode;
  static_assert(sizeof(op.params) == sizeof(params_node.params), "op params are passed verbatim");
  std::memcpy(op.params, params_node.params, sizeof op.params);
  const OpBuild b{params_node, {src_ptr[0], src_ptr[1], src_ptr[2], src_ptr[3], src_ptr[4], src_ptr[5]}, &out->dst,
                  hw.n_threads, hw.vtcm_size};
  const htp_status st = build(b, &op);
  cache_.insert(key, {st, op});
  return st;
}

}  // namespace hexllm::htp_host
