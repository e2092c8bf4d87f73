#include <vector>

#include "base/error.h"
#include "htp-host/transport.h"
#include "htp/session.h"

namespace hexllm::htp_host {

namespace {

class InprocTransport final : public Transport {
 public:
  InprocTransport(const Pool& pool, const SessionOptions& opts) : pool_(pool) {
    htp::htp_session_config c = htp::htp_session_config_default();
    c.n_threads = opts.n_threads;
    c.vtcm_size = opts.vtcm_bytes;
    c.dma_mode = opts.dma_mode;
    c.window_size = opts.window_bytes;
    const htp_status st = htp::htp_session_open(&c, &session_);
    if (st != HTP_OK)
      fail("HTP session could not open (%u threads, VTCM %u bytes, DMA mode %u): %s", opts.n_threads, opts.vtcm_bytes,
           opts.dma_mode, htp_status_name(st));
    htp::htp_session_hwinfo(session_, &hwinfo_);
  }
  ~InprocTransport() override { htp::htp_session_close(session_); }

  const char* name() const override { return "inproc"; }
  const htp_hwinfo& hwinfo() const override { return hwinfo_; }

  htp_status call(void* message, size_t bytes) override {
    sync_banks();
    return htp::htp_session_process(session_, message, bytes);
  }

 private:
  // The device's bank table follows the pool: new banks mapped, released ones unmapped.
  void sync_banks() {
    if (pool_.generation() == synced_generation_) return;
    const auto& banks = pool_.banks();
    mapped_.resize(std::max(mapped_.size(), banks.size()), nullptr);
    for (uint32_t i = 0; i < banks.size(); ++i) {
      if (mapped_[i] == banks[i].base) continue;
      const htp_status st = htp::htp_session_map_bank(session_, i, banks[i].base, banks[i].size);
      if (st != HTP_OK)
        fail("HTP session: cannot map pool bank %u (%s, %llu bytes): %s", i, region_name(banks[i].region),
             static_cast<unsigned long long>(banks[i].size), htp_status_name(st));
      mapped_[i] = banks[i].base;
    }
    synced_generation_ = pool_.generation();
  }

  const Pool& pool_;
  htp::htp_session* session_ = nullptr;
  htp_hwinfo hwinfo_{};
  std::vector<const uint8_t*> mapped_;
  uint64_t synced_generation_ = ~0ull;
};

}  // namespace

std::unique_ptr<Transport> make_inproc_transport(const Pool& pool, const SessionOptions& opts) {
  return std::make_unique<InprocTransport>(pool, opts);
}

}  // namespace hexllm::htp_host
