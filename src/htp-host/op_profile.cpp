#include "htp-host/op_profile.h"

#include "htp/abi/matmul_fused_params.h"

#include <algorithm>
#include <vector>

namespace hexllm::htp_host {

uint64_t op_weight_bytes(const htp_op_desc& op, const std::vector<htp_tensor>& tensors) {
  // The fused matmuls of matmul_fused_params.h, less the one whose experts are routed.
  const bool dense = op.opcode == HTP_OP_MUL_MAT || (htp_mmf_is_fused(op.opcode) && op.opcode != HTP_OP_MUL_MAT_ID_FFN);
  if (!dense) return 0;
  uint64_t bytes = 0;
  for (uint16_t i : op.src) {
    if (i == HTP_NO_TENSOR || i >= tensors.size()) continue;
    const htp_tensor& t = tensors[i];
    const uint64_t extent = htp_tensor_extent(t);
    if ((t.flags & HTP_TENSOR_WEIGHT) != 0 && extent != HTP_BAD_EXTENT) bytes += extent;
  }
  return bytes;
}

void OpProfile::print(std::FILE* out) const {
  std::vector<std::pair<const char*, Entry>> rows;
  for (uint32_t op = 0; op < ops_.size(); ++op)
    if (ops_[op].count != 0) rows.emplace_back(htp_opcode_name(op), ops_[op]);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::fprintf(out, "\nHTP profile: device time per op kind over %llu calls\n", (unsigned long long)calls_);
  std::fprintf(out, "  %-16s %10s %12s %10s %7s %14s\n", "op", "count", "total ms", "mean us", "share",
               "weights GB/s");
  for (const auto& [op, e] : rows) {
    const double share = ops_ns_ ? 100.0 * (double)e.ns / (double)ops_ns_ : 0.0;
    std::fprintf(out, "  %-16s %10llu %12.2f %10.2f %6.1f%%", op, (unsigned long long)e.count, (double)e.ns / 1e6,
                 (double)e.ns / 1e3 / (double)e.count, share);
    if (e.weight_bytes != 0 && e.ns != 0)
      std::fprintf(out, " %14.1f\n", (double)e.weight_bytes / (double)e.ns);  // bytes per ns = GB/s
    else
      std::fprintf(out, " %14s\n", "-");
  }
  const uint64_t outside = wall_ns_ > ops_ns_ ? wall_ns_ - ops_ns_ : 0;
  std::fprintf(out, "  calls: %.2f ms wall, %.2f ms in ops, %.2f ms outside ops (%.2f us per call)\n",
               (double)wall_ns_ / 1e6, (double)ops_ns_ / 1e6, (double)outside / 1e6,
               calls_ ? (double)outside / 1e3 / (double)calls_ : 0.0);
}

}  // namespace hexllm::htp_host
