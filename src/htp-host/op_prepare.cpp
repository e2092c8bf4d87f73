#include "htp-host/op_prepare.h"

#include <cstring>

#include "graph/graph.h"
#include "htp-host/op_builders.h"
#include "htp/abi/matmul_fused_params.h"
#include "htp/abi/tiles.h"

namespace hexllm::htp_host {

void PreparedOp::add_to(BatchBuilder* batch) const {
  htp_op_desc& o = batch->add_op();
  o = op;
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k)
    if ((src_mask >> k) & 1u) o.src[k] = batch->add_tensor(src[k]);
  o.dst = batch->add_tensor(dst);
  for (uint32_t k = 0; k < n_dst_ext; ++k) o.dst_ext[k] = batch->add_tensor(dst_ext[k]);
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
  const graph::Tensor* srcs[HTP_MAX_SRC] = {};
  for (int k = 0; k < graph::kMaxSrc; ++k) srcs[k] = node.src[k];
  const graph::Tensor* dsts[HTP_MAX_DST] = {&node};
  return prepare_desc(static_cast<int32_t>(node.op), route.opcode, route.build, node, node.params, srcs, dsts, hw,
                      out);
}

htp_status OpPreparer::prepare_fused(uint32_t opcode, std::span<const graph::Tensor* const> group, const htp_hwinfo& hw,
                                     PreparedOp* out) {
  const graph::Tensor* srcs[HTP_MAX_SRC] = {};
  const graph::Tensor* dsts[HTP_MAX_DST] = {};
  const int32_t key_op = kFusedKeyBase + static_cast<int32_t>(opcode);
  if (opcode == HTP_OP_RMS_NORM_MUL && group.size() == 2) {
    // rms_norm(x) * w: the norm's params (eps), x, the MUL's weight row, the MUL's result.
    srcs[0] = group[0]->src[0];
    srcs[1] = group[1]->src[1];
    dsts[0] = group[1];
    const htp_status st = prepare_desc(key_op, opcode, build_norm, *group[0], group[0]->params, srcs, dsts, hw, out);
    if (st != HTP_OK) return st;
    return fused_io_safe(opcode, *out) ? HTP_OK : HTP_ERR_NO_SUPPORT;
  }
  if (!htp_mmf_is_fused(opcode)) return HTP_ERR_NO_SUPPORT;
  int32_t params[HTP_MAX_PARAMS] = {};
  if (htp_mmf_is_ffn(opcode)) {
    // [matmul a, matmul b, glu(gate, up)]: the glu's roles decide which part is the gate.
    if (group.size() != 3) return HTP_ERR_NO_SUPPORT;
    const graph::Tensor* glu = group[2];
    const bool swapped = glu->params[0] != 0;
    const graph::Tensor* gate = swapped ? glu->src[1] : glu->src[0];
    const graph::Tensor* up = swapped ? glu->src[0] : glu->src[1];
    if (gate == nullptr || up == nullptr || gate->src[1] != up->src[1]) return HTP_ERR_NO_SUPPORT;
    srcs[0] = gate->src[1];
    srcs[1] = gate->src[0];
    srcs[2] = up->src[0];
    if (opcode == HTP_OP_MUL_MAT_ID_FFN) {
      if (gate->src[2] != up->src[2]) return HTP_ERR_NO_SUPPORT;
      srcs[HTP_MMF_IDS_SRC] = gate->src[2];
    }
    params[0] = static_cast<int32_t>(glu->op == graph::Op::SWIGLU ? HTP_OP_SWIGLU : HTP_OP_GEGLU);
    dsts[0] = glu;
  } else {
    // Parts in order, each [matmul] or [matmul, add(matmul, addend)], all on one activation.
    uint32_t n = 0;
    for (size_t i = 0; i < group.size(); ++i) {
      const graph::Tensor* mm = group[i];
      if (mm->op != graph::Op::MUL_MAT || n == HTP_MMF_MAX_PARTS) return HTP_ERR_NO_SUPPORT;
      if (n > 0 && mm->src[1] != srcs[0]) return HTP_ERR_NO_SUPPORT;
      srcs[0] = mm->src[1];
      srcs[1 + n] = mm->src[0];
      dsts[n] = mm;
      if (i + 1 < group.size() && group[i + 1]->op == graph::Op::ADD) {
        const graph::Tensor* add = group[++i];
        srcs[HTP_MMF_ADDEND_SRC + n] = add->src[0] == mm ? add->src[1] : add->src[0];
        dsts[n] = add;
      }
      ++n;
    }
  }
  const htp_status st = prepare_desc(key_op, opcode, build_matmul, *group.back(), params, srcs, dsts, hw, out);
  if (st != HTP_OK) return st;
  return fused_io_safe(opcode, *out) ? HTP_OK : HTP_ERR_NO_SUPPORT;
}

// The fused op writes its outputs while it still reads its inputs (the unfused ops ran one
// after another, and the memory plan may have given a later output an earlier input's bytes):
// an output may overlap nothing it reads, except a fused matmul's activation when one chunk
// holds every act row (it is quantized into VTCM before any output is written) and there is one
// device: with several, one device writes its columns while another still quantizes the rows.
// RMS_NORM_MUL included: after the reorder the plan may give the MUL's result the norm's input bytes.
bool OpPreparer::fused_io_safe(uint32_t opcode, const PreparedOp& p) const {
  auto overlap = [](const htp_tensor& a, const htp_tensor& b) {
    return a.bank == b.bank && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
  };
  const htp_tensor* outs[HTP_MAX_DST] = {&p.dst};
  for (uint32_t k = 0; k < p.n_dst_ext; ++k) outs[1 + k] = &p.dst_ext[k];
  const uint32_t n_out = 1 + p.n_dst_ext;
  bool one_chunk = false;
  if (htp_mmf_is_fused(opcode) && opcode != HTP_OP_MUL_MAT_ID_FFN && n_devices_ == 1) {
    const htp_mmf_params kp = htp_kparams_get<htp_mmf_params>(p.op);
    one_chunk = kp.cfg[0].act_rows == htp_tensor_nrows(p.src[0]);
  }
  for (uint32_t o = 0; o < n_out; ++o) {
    for (uint32_t q = o + 1; q < n_out; ++q)
      if (overlap(*outs[o], *outs[q])) return false;
    for (uint32_t k = 0; k < HTP_MAX_SRC; ++k)
      if (((p.src_mask >> k) & 1u) != 0 && overlap(*outs[o], p.src[k]) && !(k == 0 && one_chunk)) return false;
  }
  return true;
}

htp_status OpPreparer::prepare_desc(int32_t key_op, uint32_t opcode, OpBuilder build, const graph::Tensor& params_node,
                                    const int32_t* params, const graph::Tensor* const* srcs,
                                    const graph::Tensor* const* dsts, const htp_hwinfo& hw, PreparedOp* out) {
  out->src_mask = 0;
  out->n_dst_ext = 0;
  const htp_tensor* src_ptr[HTP_MAX_SRC] = {};
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k) {
    if (srcs[k] == nullptr) continue;
    if (!describe(*srcs[k], &out->src[k])) return HTP_ERR_NO_SUPPORT;
    src_ptr[k] = &out->src[k];
    out->src_mask |= 1u << k;
  }
  if (!describe(*dsts[0], &out->dst) || (out->dst.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_NO_SUPPORT;
  const htp_tensor* dst_ext_ptr[HTP_MAX_DST - 1] = {};
  for (uint32_t k = 1; k < HTP_MAX_DST && dsts[k] != nullptr; ++k) {
    htp_tensor& d = out->dst_ext[out->n_dst_ext++];
    if (!describe(*dsts[k], &d) || (d.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_NO_SUPPORT;
    dst_ext_ptr[k - 1] = &d;
  }

  OpKey key{};
  key.op = key_op;
  key.src_mask = out->src_mask;
  std::memcpy(key.params, params, sizeof key.params);
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k)
    if (src_ptr[k] != nullptr) key.src[k] = out->src[k];
  key.dst[0] = out->dst;
  for (uint32_t k = 0; k < out->n_dst_ext; ++k) key.dst[1 + k] = out->dst_ext[k];
  if (const OpCache::Entry* hit = cache_.find(key)) {
    out->op = hit->op;
    return hit->status;
  }

  htp_op_desc& op = out->op;
  std::memset(&op, 0, sizeof op);
  for (uint16_t& s : op.src) s = HTP_NO_TENSOR;
  op.dst = HTP_NO_TENSOR;
  for (uint16_t& d : op.dst_ext) d = HTP_NO_TENSOR;
  op.opcode = opcode;
  static_assert(sizeof(op.params) == sizeof(params_node.params), "op params are passed verbatim");
  std::memcpy(op.params, params, sizeof op.params);
  OpBuild b{params_node, {}, &out->dst, {dst_ext_ptr[0], dst_ext_ptr[1]}, hw.n_threads, hw.vtcm_size,
             hw.gemm};
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k) b.src[k] = src_ptr[k];
  const htp_status st = build(b, &op);
  cache_.insert(key, {st, op});
  return st;
}

}  // namespace hexllm::htp_host
