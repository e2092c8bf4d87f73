#include "htp-host/batch_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "graph/graph.h"
#include "htp-host/window.h"

namespace hexllm::htp_host {

BatchRunner::BatchRunner(Pool& pool, Transport& transport, bool restart, HostProfile* host, Timeline* timeline)
    : pool_(pool), transport_(transport), restart_(restart), host_(host), timeline_(timeline) {
  // Up front, so that the window's pinned bytes stay put while batches are cut.
  message_ = pool_.allocate(Region::Messages, window_bank_sizes(transport.window().bytes()).messages / 2);
}

bool BatchRunner::has_room_for(const BatchBuilder& batch, const PreparedOp& p) const {
  return batch.n_tensors() + p.n_tensors() <= transport_.hwinfo().max_tensors;
}

void BatchRunner::fail_call(const BatchBuilder& batch, std::span<const graph::Tensor* const> nodes,
                            const std::string& what, uint32_t op_index) const {
  if (op_index < nodes.size()) {
    const graph::Tensor* n = nodes[op_index];
    const std::string label = node_label(n);
    fail("%s, while running op %u of %u: %s of node '%s'", what.c_str(), op_index, batch.n_ops(),
         graph::op_name(n->op), label.c_str());
  }
  fail("%s, before the batch of %u ops (first: %s of node '%s') started", what.c_str(), batch.n_ops(),
       graph::op_name(nodes.front()->op), nodes.front()->name);
}

void BatchRunner::run(const BatchBuilder& batch, std::span<const graph::Tensor* const> nodes, uint64_t serial) {
  if (batch.n_ops() == 0) return;
  htp_message_layout layout{};
  MessageFrame frame;
  const uint32_t n_dev = transport_.n_devices();
  frame.n_devices = n_dev;
  if (timeline_ != nullptr) {
    frame.trace_threads = transport_.hwinfo().n_threads;
    frame.trace_capacity = Timeline::kCapacity;
  }
  if (!batch.layout(&layout, frame)) fail("HTP: a batch of %u ops does not fit one message", batch.n_ops());
  const uint64_t t_write = now_ns();
  if (message_->size() < layout.message_size)
    message_ = pool_.allocate(Region::Messages, std::max<size_t>(layout.message_size, 2 * message_->size()));
  // The device only reads the ops and tensors of a message, so a kept batch that the message
  // holds already (for as many devices) needs only a new header.
  if (serial != 0 && serial == written_serial_ && message_->data() == written_at_ && n_dev == written_devices_) {
    batch.write_header(message_->data(), ++calls_, layout, frame);
  } else {
    batch.write(message_->data(), ++calls_, layout, frame);
    written_serial_ = serial;
    written_at_ = message_->data();
    written_devices_ = n_dev;
    // Profiles and tests read opcodes every call: a compact copy, not the descriptors.
    opcodes_.clear();
    weight_bytes_.clear();
    for (const htp_op_desc& op : batch.ops()) {
      opcodes_.push_back(op.opcode);
      weight_bytes_.push_back(op_weight_bytes(op, batch.tensors()));
    }
  }

  // Only a device process can die and restart; the undo log makes its retry exact.
  const bool can_retry = restart_ && transport_.device_pid() != 0;
  if (can_retry) replay_.capture(pool_, message_->data(), layout.message_size);
  htp_status st = HTP_OK;
  // The same batch as the last call (a graph-cache hit in decode) takes about as long again.
  if (serial != 0 && serial == last_serial_) transport_.expect_device_ns(last_device_ns_, last_op_ns_);
  else transport_.expect_device_ns(0);
  const uint64_t t_call = now_ns();
  for (int attempt = 0;; ++attempt) {
    try {
      st = transport_.call(message_->data(), layout.message_size);
      break;
    } catch (const DeviceFault& f) {
      written_serial_ = 0;  // whatever the device did last, the next call writes in full
      constexpr int kMaxRestarts = 3;
      if (!can_retry || attempt == kMaxRestarts) fail_call(batch, nodes, f.what(), f.op_in_flight);
      HEXLLM_LOG_WARN("%s; restarting the device and retrying the batch (call %llu, %u ops, %zu bytes saved)", f.what(), (unsigned long long)calls_, batch.n_ops(), (size_t)replay_.saved_bytes());
      transport_.restart();
      ++restarts_;
      replay_.restore(pool_);
    }
  }

  const uint64_t t_response = now_ns();
  const auto* msg = static_cast<const uint8_t*>(message_->data());
  // Merged over the devices: an op takes as long as its slowest device, and the failing device
  // is the first whose status is its own (not HTP_ERR_PEER, which only follows another's).
  htp_response rsp{};
  uint32_t failed_dev = 0;
  uint64_t first_start = UINT64_MAX;  // the earliest device's start (all clocks are CLOCK_MONOTONIC)
  last_op_ns_.assign(batch.n_ops(), 0);
  for (uint32_t d = 0; d < n_dev; ++d) {
    const uint64_t at = layout.response_offset + static_cast<uint64_t>(d) * layout.response_stride;
    htp_response r{};
    std::memcpy(&r, msg + at, sizeof r);
    for (size_t i = 0; i < last_op_ns_.size(); ++i) {
      uint64_t ns;
      std::memcpy(&ns, msg + at + sizeof(htp_response) + i * sizeof(uint64_t), sizeof ns);
      last_op_ns_[i] = std::max(last_op_ns_[i], ns);
    }
    if (d == 0 || (r.status != HTP_OK && r.status != HTP_ERR_PEER && (rsp.status == HTP_OK || rsp.status == HTP_ERR_PEER))) {
      const uint64_t total = std::max(rsp.total_ns, r.total_ns);
      rsp = r;
      rsp.total_ns = total;
      failed_dev = d;
    } else {
      rsp.total_ns = std::max(rsp.total_ns, r.total_ns);
    }
    fence_ns_ += r.fence_ns;
    first_start = std::min(first_start, r.start_ns);
    if (timeline_ != nullptr)
      timeline_->device_call(d, frame.trace_threads, calls_, r,
                             reinterpret_cast<const htp_trace_record*>(msg + layout.trace_offset +
                                                                       static_cast<uint64_t>(d) * layout.trace_stride),
                             t_call, t_response, batch.ops(), nodes);
  }
  last_serial_ = st == HTP_OK ? serial : 0;
  last_device_ns_ = rsp.total_ns;
  if (timeline_ != nullptr) {
    timeline_->host_phase("write", calls_, t_write, t_call);
    timeline_->host_phase("call", calls_, t_call, t_response);
    timeline_->host_phase("response", calls_, t_response, now_ns());
  }
  if (host_ != nullptr) {
    const uint64_t wall = t_response - t_call;
    uint64_t ops_ns = 0;
    for (size_t i = 0; i < last_op_ns_.size(); i++) {
      ops_.add_op(opcodes_[i], last_op_ns_[i], weight_bytes_[i]);
      ops_ns += last_op_ns_[i];
    }
    ops_.add_call(wall, ops_ns);
    const uint64_t device = std::min(rsp.total_ns, wall);
    host_->add(HostPhase::Write, t_call - t_write);
    // The round trip outside the device's time, split at the device's start: a start outside
    // the call (a device that did not run the batch) counts all of it on the way back.
    const uint64_t outside = wall - device;
    const uint64_t to_device =
        first_start >= t_call && first_start != UINT64_MAX ? std::min(first_start - t_call, outside) : 0;
    host_->add(HostPhase::ToDevice, to_device);
    host_->add(HostPhase::FromDevice, outside - to_device);
    host_->add(HostPhase::Device, device);
    host_->add(HostPhase::Response, now_ns() - t_response);
    host_->count_ops(opcodes_.data(), static_cast<uint32_t>(opcodes_.size()));
  }
  if (st != HTP_OK) {
    const std::string what =
        n_dev > 1 ? strprintf("HTP device %u of %u (%s) failed with %s", failed_dev, n_dev,
                              transport_.member(failed_dev).session().c_str(), htp_status_name(rsp.status))
                  : strprintf("HTP device (%s) failed with %s", transport_.session().c_str(), htp_status_name(st));
    if (rsp.failed_op < nodes.size()) fail_call(batch, nodes, what, rsp.failed_op);
    if (rsp.failed_tensor != HTP_NO_INDEX)
      fail("%s: tensor %u of the batch of %u ops was refused", what.c_str(), rsp.failed_tensor, batch.n_ops());
    fail("%s: the batch of %u ops was refused", what.c_str(), batch.n_ops());
  }
}

}  // namespace hexllm::htp_host
