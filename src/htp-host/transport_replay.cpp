#include "htp-host/transport_replay.h"

#include <algorithm>
#include <cstring>

#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

void ReplayLog::merge(std::vector<Range>* v) {
  std::sort(v->begin(), v->end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  size_t out = 0;
  for (const Range& r : *v) {
    if (out > 0 && r.begin <= (*v)[out - 1].end) (*v)[out - 1].end = std::max((*v)[out - 1].end, r.end);
    else (*v)[out++] = r;
  }
  v->resize(out);
}

// The parts of [begin, end) that no earlier op wrote whole.
void ReplayLog::add_exposed(uint64_t begin, uint64_t end) {
  auto it = covered_.upper_bound(begin);
  if (it != covered_.begin()) --it;
  for (; it != covered_.end() && it->first < end && begin < end; ++it) {
    if (it->second <= begin) continue;
    if (it->first > begin) exposed_.push_back({begin, it->first});
    begin = std::max(begin, it->second);
  }
  if (begin < end) exposed_.push_back({begin, end});
}

void ReplayLog::capture(const Pool& pool, const void* message, size_t bytes) {
  covered_.clear();
  exposed_.clear();
  written_.clear();
  saved_.clear();
  data_.clear();
  const auto* msg = static_cast<const uint8_t*>(message);
  htp_batch_header h;
  if (bytes < sizeof h) return;
  std::memcpy(&h, msg, sizeof h);
  if (static_cast<uint64_t>(h.tensors_offset) + static_cast<uint64_t>(h.n_tensors) * sizeof(htp_tensor) > bytes ||
      static_cast<uint64_t>(h.ops_offset) + static_cast<uint64_t>(h.n_ops) * sizeof(htp_op_desc) > bytes)
    return;  // the device refuses it before running any op: nothing to save

  const std::vector<Bank>& banks = pool.banks();
  auto range_of = [&](uint16_t index, Range* r) {
    if (index >= h.n_tensors) return false;
    htp_tensor t;
    std::memcpy(&t, msg + h.tensors_offset + static_cast<uint64_t>(index) * sizeof t, sizeof t);
    if (t.bank >= banks.size() || banks[t.bank].base == nullptr || static_cast<uint64_t>(t.offset) + t.size > banks[t.bank].size)
      return false;
    const uint64_t at = static_cast<uint64_t>(t.bank) << 32 | t.offset;
    *r = {at, at + t.size};
    return true;
  };

  for (uint32_t i = 0; i < h.n_ops; ++i) {
    htp_op_desc op;
    std::memcpy(&op, msg + h.ops_offset + static_cast<uint64_t>(i) * sizeof op, sizeof op);
    Range r;
    for (uint16_t s : op.src)
      if (range_of(s, &r)) add_exposed(r.begin, r.end);
    // A fused op's further outputs: written, but not counted as produced here (conservative).
    for (uint16_t d : op.dst_ext)
      if (range_of(d, &r)) written_.push_back(r);
    if (!range_of(op.dst, &r)) continue;
    written_.push_back(r);
    htp_tensor dst;
    std::memcpy(&dst, msg + h.tensors_offset + static_cast<uint64_t>(op.dst) * sizeof dst, sizeof dst);
    // Only an op that writes every byte of a dense destination makes it "produced here";
    // SET_ROWS writes some rows of its destination.
    if (op.opcode == HTP_OP_SET_ROWS || !htp_tensor_contiguous(dst) || htp_tensor_extent(dst) != dst.size) continue;
    auto it = covered_.lower_bound(r.begin);
    if (it != covered_.begin() && std::prev(it)->second >= r.begin) --it;
    while (it != covered_.end() && it->first <= r.end) {
      r.begin = std::min(r.begin, it->first);
      r.end = std::max(r.end, it->second);
      it = covered_.erase(it);
    }
    covered_.emplace(r.begin, r.end);
  }

  merge(&exposed_);
  merge(&written_);
  size_t a = 0, b = 0;
  while (a < exposed_.size() && b < written_.size()) {
    const uint64_t lo = std::max(exposed_[a].begin, written_[b].begin);
    const uint64_t hi = std::min(exposed_[a].end, written_[b].end);
    if (lo < hi) saved_.push_back({lo, hi});
    if (exposed_[a].end < written_[b].end) ++a;
    else ++b;
  }
  uint64_t total = 0;
  for (const Range& r : saved_) total += r.end - r.begin;
  data_.resize(total);
  uint8_t* out = data_.data();
  for (const Range& r : saved_) {
    std::memcpy(out, banks[r.begin >> 32].base + (r.begin & 0xffffffffu), r.end - r.begin);
    out += r.end - r.begin;
  }
}

void ReplayLog::restore(const Pool& pool) const {
  const uint8_t* in = data_.data();
  for (const Range& r : saved_) {
    std::memcpy(pool.banks()[r.begin >> 32].base + (r.begin & 0xffffffffu), in, r.end - r.begin);
    in += r.end - r.begin;
  }
}

}  // namespace hexllm::htp_host
