#include "htp-host/batch_builder.h"

#include <cstring>

#include "base/error.h"
#include "base/hash.h"

namespace hexllm::htp_host {

size_t BatchBuilder::KeyHash::operator()(const Key& k) const {
  return static_cast<size_t>(hash_bytes(&k.t, sizeof k.t));
}

void BatchBuilder::clear() {
  tensors_.clear();
  ops_.clear();
  index_.clear();
}

uint16_t BatchBuilder::add_tensor(const htp_tensor& t) {
  const auto [it, inserted] = index_.try_emplace(Key{t}, static_cast<uint16_t>(tensors_.size()));
  if (inserted) {
    if (tensors_.size() >= HTP_MAX_TENSORS) fail("HTP batch: more than %u tensors", HTP_MAX_TENSORS);
    tensors_.push_back(t);
  }
  return it->second;
}

htp_op_desc& BatchBuilder::add_op() {
  htp_op_desc& op = ops_.emplace_back();
  std::memset(&op, 0, sizeof op);
  for (uint16_t& s : op.src) s = HTP_NO_TENSOR;
  op.dst = HTP_NO_TENSOR;
  for (uint16_t& d : op.dst_ext) d = HTP_NO_TENSOR;
  return op;
}

namespace {

struct Span {
  uint32_t bank;
  uint64_t begin, end;
  bool overlaps(const Span& o) const { return bank == o.bank && begin < o.end && o.begin < end; }
};

bool any_overlap(const std::vector<Span>& set, const Span& s) {
  for (const Span& x : set)
    if (x.overlaps(s)) return true;
  return false;
}

}  // namespace

// Several devices write disjoint parts of each op's destination, so an op must wait for all of
// them when it reads bytes an op since the last fence wrote (another device may not be done),
// or writes bytes such an op read or wrote (another device may still be using them).
void mark_fences(std::vector<htp_op_desc>& ops, const std::vector<htp_tensor>& tensors) {
  std::vector<Span> written, read;
  auto span_of = [&](uint16_t i) {
    const htp_tensor& t = tensors[i];
    return Span{t.bank, t.offset, static_cast<uint64_t>(t.offset) + t.size};
  };
  for (htp_op_desc& op : ops) {
    // A fused op writes its further outputs too (MUL_MAT_QKV's K and V).
    Span outs[HTP_MAX_DST];
    uint32_t n_outs = 0;
    outs[n_outs++] = span_of(op.dst);
    for (uint16_t d : op.dst_ext)
      if (d != HTP_NO_TENSOR) outs[n_outs++] = span_of(d);
    bool hazard = false;
    for (uint32_t k = 0; k < n_outs && !hazard; ++k) hazard = any_overlap(written, outs[k]) || any_overlap(read, outs[k]);
    for (uint16_t s : op.src)
      if (s != HTP_NO_TENSOR && !hazard) hazard = any_overlap(written, span_of(s));
    if (hazard) {
      op.flags |= HTP_OPF_FENCE;
      written.clear();
      read.clear();
    }
    for (uint16_t s : op.src)
      if (s != HTP_NO_TENSOR) read.push_back(span_of(s));
    written.insert(written.end(), outs, outs + n_outs);
  }
}

bool BatchBuilder::layout(htp_message_layout* out, const MessageFrame& f) const {
  return htp_message_layout_build(n_tensors(), n_ops(), f.trace_threads, f.trace_capacity, out, f.n_devices);
}

void BatchBuilder::write(void* dst, uint64_t seq, const htp_message_layout& l, const MessageFrame& f) const {
  auto* msg = static_cast<uint8_t*>(dst);
  write_header(dst, seq, l, f);
  // An empty batch has empty vectors whose data() may be null: memcpy must not see it.
  if (!tensors_.empty()) std::memcpy(msg + l.tensors_offset, tensors_.data(), tensors_.size() * sizeof(htp_tensor));
  if (f.n_devices > 1) {
    std::vector<htp_op_desc> ops = ops_;
    mark_fences(ops, tensors_);
    std::memcpy(msg + l.ops_offset, ops.data(), ops.size() * sizeof(htp_op_desc));
  } else if (!ops_.empty()) {
    std::memcpy(msg + l.ops_offset, ops_.data(), ops_.size() * sizeof(htp_op_desc));
  }
}

void BatchBuilder::write_header(void* dst, uint64_t seq, const htp_message_layout& l, const MessageFrame& f) const {
  htp_batch_header h{};
  h.magic = HTP_BATCH_MAGIC;
  h.abi_version = HTP_ABI_VERSION;
  h.seq = seq;
  h.n_tensors = n_tensors();
  h.n_ops = n_ops();
  h.tensors_offset = l.tensors_offset;
  h.ops_offset = l.ops_offset;
  h.response_offset = l.response_offset;
  h.trace_offset = l.trace_offset;
  h.message_size = l.message_size;
  h.n_devices = f.n_devices;
  h.response_stride = l.response_stride;
  h.trace_stride = l.trace_stride;
  if (f.trace_threads != 0) {
    h.flags |= HTP_BATCH_TRACE;
    h.trace_threads = f.trace_threads;
    h.trace_capacity = f.trace_capacity;
  }
  h.fence_seq = f.fence_seq;
  h.fence_bank = f.fence_bank;
  h.fence_offset = f.fence_offset;
  std::memcpy(dst, &h, sizeof h);
}

}  // namespace hexllm::htp_host
