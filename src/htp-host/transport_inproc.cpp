// The in-process transport: the device session runs on the caller's thread (worker 0) and its
// helper threads. Its window is the session's bank table, kept by the same plan as the device
// process (window.h), so both transports map, slide and refuse alike.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/error.h"
#include "htp-host/transport.h"
#include "htp/session.h"

namespace hexllm::htp_host {

namespace {

class InprocTransport final : public Transport {
 public:
  InprocTransport(const Pool& pool, const SessionOptions& opts) : pool_(pool), window_(opts.window_bytes) {
    htp::htp_session_config c = htp::htp_session_config_default();
    c.n_threads = opts.n_threads;
    c.vtcm_size = opts.vtcm_bytes;
    c.dma_mode = opts.dma_mode;
    c.window_size = opts.window_bytes;
    if (opts.max_tensors != 0) c.max_tensors = opts.max_tensors;
    c.mdev_idx = opts.mdev_idx;
    c.mdev_count = opts.n_devices;
    // Test hook: HEXLLM_HTP_TEST_FAIL="device:op" makes that device fail that op of every batch.
    if (const char* f = std::getenv("HEXLLM_HTP_TEST_FAIL")) {
      unsigned dev = 0, op = 0;
      if (std::sscanf(f, "%u:%u", &dev, &op) != 2) fail("HEXLLM_HTP_TEST_FAIL: '%s' is not device:op", f);
      if (dev == opts.mdev_idx) c.fail_op = op;
    }
    const htp_status st = htp::htp_session_open(&c, &session_);
    if (st != HTP_OK)
      fail("HTP session could not open (%u threads, VTCM %u bytes, DMA mode %u): %s", opts.n_threads, opts.vtcm_bytes,
           opts.dma_mode, htp_status_name(st));
    htp::htp_session_hwinfo(session_, &hwinfo_);
  }
  ~InprocTransport() override { htp::htp_session_close(session_); }

  const char* name() const override { return "inproc"; }
  std::string session() const override { return "inproc session"; }
  const htp_hwinfo& hwinfo() const override { return hwinfo_; }
  const Window& window() const override { return window_; }

  htp_status call(void* message, size_t bytes) override {
    steps_.clear();
    window_.plan(pool_, message_banks(message, bytes), &steps_);
    const auto& banks = pool_.banks();
    for (const WindowStep& s : steps_) {
      const htp_status st = s.map != 0 ? htp::htp_session_map_bank(session_, s.bank, banks[s.bank].base, banks[s.bank].size)
                                       : htp::htp_session_map_bank(session_, s.bank, nullptr, 0);
      if (st != HTP_OK) {
        // The session's table and ours no longer agree: empty both, the next call rebuilds them.
        for (uint32_t b = 0; b < HTP_MAX_BANKS; ++b) htp::htp_session_map_bank(session_, b, nullptr, 0);
        window_.forget();
        fail("HTP inproc session: cannot %s pool bank %u: %s", s.map != 0 ? "map" : "unmap", s.bank,
             htp_status_name(st));
      }
    }
    return htp::htp_session_process(session_, message, bytes);
  }

 private:
  const Pool& pool_;
  Window window_;
  htp::htp_session* session_ = nullptr;
  htp_hwinfo hwinfo_{};
  std::vector<WindowStep> steps_;
};

}  // namespace

std::unique_ptr<Transport> make_inproc_transport(const Pool& pool, const SessionOptions& opts) {
  return std::make_unique<InprocTransport>(pool, opts);
}

}  // namespace hexllm::htp_host
