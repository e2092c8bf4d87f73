#include "htp-host/op_profile.h"

#include <algorithm>
#include <vector>

namespace hexllm::htp_host {

void OpProfile::print(std::FILE* out) const {
  std::vector<std::pair<const char*, Entry>> rows;
  for (uint32_t op = 0; op < ops_.size(); ++op)
    if (ops_[op].count != 0) rows.emplace_back(htp_opcode_name(op), ops_[op]);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::fprintf(out, "\nHTP profile: device time per op kind over %llu calls\n", (unsigned long long)calls_);
  std::fprintf(out, "  %-16s %10s %12s %10s %7s\n", "op", "count", "total ms", "mean us", "share");
  for (const auto& [op, e] : rows) {
    const double share = ops_ns_ ? 100.0 * (double)e.ns / (double)ops_ns_ : 0.0;
    std::fprintf(out, "  %-16s %10llu %12.2f %10.2f %6.1f%%\n", op, (unsigned long long)e.count,
                 (double)e.ns / 1e6, (double)e.ns / 1e3 / (double)e.count, share);
  }
  const uint64_t outside = wall_ns_ > ops_ns_ ? wall_ns_ - ops_ns_ : 0;
  std::fprintf(out, "  calls: %.2f ms wall, %.2f ms in ops, %.2f ms outside ops (%.2f us per call)\n",
               (double)wall_ns_ / 1e6, (double)ops_ns_ / 1e6, (double)outside / 1e6,
               calls_ ? (double)outside / 1e3 / (double)calls_ : 0.0);
}

}  // namespace hexllm::htp_host
