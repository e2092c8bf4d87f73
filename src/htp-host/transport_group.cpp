// Several device sessions over one pool (--htp-devices N): each member is an ordinary inproc or
// process transport with its own workers, VTCM arena, DMA queues and window; all map the same
// banks. A call sends the same batch message to every member at once (members 1..N-1 from
// helper threads, member 0 from the caller) and returns when all are done. The group owns the
// fence region in the pool: each call gets a fresh range of fence sequences, and when a member
// fails or dies the host publishes that in the member's slot, so no peer stays in a barrier.
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "htp-host/transport.h"

namespace hexllm::htp_host {

namespace {

class GroupTransport final : public Transport {
 public:
  GroupTransport(Pool& pool, const SessionOptions& opts, const std::string& kind) : n_(opts.n_devices) {
    if (n_ < 2 || n_ > HTP_MDEV_MAX) fail("--htp-devices: %u is not between 1 and %u", n_, HTP_MDEV_MAX);
    fence_ = pool.allocate(Region::Messages, HTP_FENCE_REGION);
    std::memset(fence_->data(), 0, HTP_FENCE_REGION);
    if (!pool.locate(fence_->data(), HTP_FENCE_REGION, &fence_bank_, &fence_offset_) ||
        fence_offset_ % HTP_FENCE_SLOT != 0)
      fail("HTP device group: the fence region is not a 128-byte aligned part of the pool");
    slots_ = static_cast<htp_fence_slot*>(fence_->data());
    for (uint32_t d = 0; d < n_; ++d) {
      SessionOptions o = opts;
      o.mdev_idx = d;
      members_.push_back(kind == "process" ? make_process_transport(pool, o, false) : make_inproc_transport(pool, o));
    }
    // The device processes start side by side: each spawn and handshake takes milliseconds.
    for (auto& m : members_) m->await_started();
    results_.resize(n_);
    for (uint32_t d = 1; d < n_; ++d) helpers_.emplace_back([this, d] { helper(d); });
  }

  ~GroupTransport() override {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    go_cv_.notify_all();
    for (auto& t : helpers_) t.join();
    for (auto& m : members_) m->request_stop();  // they exit side by side; each destructor waits
  }

  const char* name() const override { return members_[0]->name(); }
  std::string session() const override {
    std::string s = strprintf("group of %u devices:", n_);
    for (uint32_t d = 0; d < n_; ++d) s += strprintf(" [%u] %s", d, members_[d]->session().c_str());
    return s;
  }
  const htp_hwinfo& hwinfo() const override { return members_[0]->hwinfo(); }
  const Window& window() const override { return members_[0]->window(); }
  uint32_t n_devices() const override { return n_; }
  const Transport& member(uint32_t d) const override { return *members_.at(d); }
  int device_pid() const override { return members_[0]->device_pid(); }

  bool restart() override {
    bool ok = true;
    for (uint32_t d = 0; d < n_; ++d)
      if (results_[d].fault) {
        ok = members_[d]->restart() && ok;
        results_[d].fault = false;
      }
    return ok;
  }

  htp_status call(void* message, size_t bytes) override {
    auto* msg = static_cast<uint8_t*>(message);
    htp_batch_header h;
    if (bytes < sizeof h) fail("HTP device group: a message of %zu bytes has no header", bytes);
    std::memcpy(&h, msg, sizeof h);
    // A fresh range of sequences per call (retries included), so no slot left from an earlier
    // call, failed or not, can pass for this one's.
    h.fence_seq = next_seq_;
    h.fence_bank = fence_bank_;
    h.fence_offset = fence_offset_;
    next_seq_ += htp_fence_span(h.n_ops);
    last_seq_ = h.fence_seq + h.n_ops;
    std::memcpy(msg, &h, sizeof h);

    message_ = message;
    bytes_ = bytes;
    {
      std::lock_guard<std::mutex> lock(m_);
      ++generation_;
      pending_ = n_ - 1;
    }
    go_cv_.notify_all();
    run_member(0);
    {
      std::unique_lock<std::mutex> lock(m_);
      done_cv_.wait(lock, [this] { return pending_ == 0; });
    }

    // A dead or hung device first, then host-side errors, then the first failing device's status
    // (a peer's HTP_ERR_PEER only says that it stopped with it).
    for (uint32_t d = 0; d < n_; ++d)
      if (results_[d].fault) {
        try {
          std::rethrow_exception(results_[d].error);
        } catch (const DeviceFault& f) {
          throw DeviceFault(strprintf("device %u of %u: %s", d, n_, f.what()), f.op_in_flight);
        }
      }
    for (uint32_t d = 0; d < n_; ++d)
      if (results_[d].error) std::rethrow_exception(results_[d].error);
    htp_status st = HTP_OK;
    for (uint32_t d = 0; d < n_; ++d)
      if (results_[d].status != HTP_OK && (st == HTP_OK || st == HTP_ERR_PEER)) st = results_[d].status;
    return st;
  }

 private:
  struct Result {
    htp_status status = HTP_OK;
    std::exception_ptr error;
    bool fault = false;  // the device died or hung: restart() starts it again
  };

  // The host's word for a member that could not: its failure, at the call's last sequence.
  void publish_failure(uint32_t d, htp_status st) {
    htp_fence_slot* slot = &slots_[d];
    __atomic_store_n(&slot->status, static_cast<uint32_t>(st), __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, last_seq_, __ATOMIC_RELEASE);
  }

  void run_member(uint32_t d) {
    Result& r = results_[d];
    r = Result{};
    try {
      r.status = members_[d]->call(message_, bytes_);
      if (r.status != HTP_OK) publish_failure(d, r.status);
    } catch (const DeviceFault&) {
      r.error = std::current_exception();
      r.fault = true;
      r.status = HTP_ERR_INTERNAL;
      publish_failure(d, HTP_ERR_INTERNAL);
    } catch (...) {
      r.error = std::current_exception();
      r.status = HTP_ERR_INTERNAL;
      publish_failure(d, HTP_ERR_INTERNAL);
    }
  }

  void helper(uint32_t d) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        go_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      run_member(d);
      {
        std::lock_guard<std::mutex> lock(m_);
        --pending_;
      }
      done_cv_.notify_one();
    }
  }

  uint32_t n_;
  std::vector<std::unique_ptr<Transport>> members_;
  std::unique_ptr<backend::Buffer> fence_;
  htp_fence_slot* slots_ = nullptr;
  uint32_t fence_bank_ = 0, fence_offset_ = 0;
  uint32_t next_seq_ = 1;  // slots start at 0: not yet reached
  uint32_t last_seq_ = 0;
  std::vector<Result> results_;
  void* message_ = nullptr;
  size_t bytes_ = 0;
  std::mutex m_;
  std::condition_variable go_cv_, done_cv_;
  uint64_t generation_ = 0;
  uint32_t pending_ = 0;
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace

std::unique_ptr<Transport> make_group_transport(Pool& pool, const SessionOptions& opts, const std::string& kind) {
  return std::make_unique<GroupTransport>(pool, opts, kind);
}

}  // namespace hexllm::htp_host
