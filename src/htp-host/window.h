// The device's window onto the pool (docs/DESIGN.md §6): at most `bytes` of banks mapped at once.
// Every bank but weights (KV cache, compute, messages) stays mapped; weight banks are mapped
// when a batch uses them and unmapped when a later batch needs the room. The host plans every
// step here, and both transports carry the plan out the same way: in-process through the
// session's bank table, in the device process with mmap/munmap of the bank's memfd.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "htp-host/pool.h"
#include "htp/abi/htp_limits.h"

namespace hexllm::htp_host {

static_assert(Pool::kMaxBanks <= HTP_MAX_BANKS && HTP_MAX_BANKS <= 32, "bank masks are 32-bit");

struct WindowStep {
  uint16_t bank;
  uint16_t map;  // 1: map the pool's bank `bank`; 0: unmap whatever the device has there
};

struct WindowStats {
  uint64_t maps = 0;        // bank mappings made (a bank mapped again after eviction counts again)
  uint64_t unmaps = 0;
  uint64_t peak_bytes = 0;  // most bytes mapped at once
};

class Window {
 public:
  explicit Window(uint64_t bytes) : bytes_(bytes) {}

  uint64_t bytes() const { return bytes_; }
  uint64_t mapped_bytes() const { return mapped_bytes_; }
  uint32_t mapped_mask() const;
  const WindowStats& stats() const { return stats_; }

  // Brings the device's mapping in step with the pool for a batch whose tensors name the banks
  // in `used` (bit i = bank i): banks the pool released or replaced are unmapped, pinned banks
  // mapped, then the used weight banks, unmapping other weight banks when the window would
  // overflow. Steps are appended in the order they must run (unmaps first). Throws
  // hexllm::Error naming the sizes when the pinned plus used banks exceed the window.
  void plan(const Pool& pool, uint32_t used, std::vector<WindowStep>* steps);

  // The device lost every mapping (a restarted device process).
  void forget();

 private:
  struct Slot {
    uint64_t serial = 0;  // pool bank serial mapped here; 0: nothing
    uint64_t size = 0;
    uint64_t last_use = 0;
  };
  void unmap(uint32_t bank, std::vector<WindowStep>* steps);

  uint64_t bytes_;
  uint64_t mapped_bytes_ = 0;
  uint64_t tick_ = 0;
  uint64_t generation_ = ~0ull;  // pool generation of the last plan
  std::array<Slot, HTP_MAX_BANKS> slots_{};
  WindowStats stats_;
};

// ---- the window's budget: every host-side check of what fits the window is here ----

// Bank sizes of the pinned regions for a window: each at most 1/16 of it, so a small window
// still holds KV cache, compute and messages beside a few weight banks.
Pool::BankSizes window_bank_sizes(uint64_t window_bytes);
// Weight bank size: a quarter of the window (a batch's layers then slide through a few banks),
// but large enough that `weights_total` bytes need no more than ~10 of the pool's 16 banks.
uint64_t window_weight_bank_bytes(uint64_t window_bytes, uint64_t weights_total);
// Throws naming the weight when its `device_bytes` alone exceed the window.
void window_check_tensor(uint64_t window_bytes, const graph::Tensor& t, uint64_t device_bytes);
// Whether the pinned banks plus the banks in `used` fit the window at once.
bool window_fits(const Pool& pool, uint64_t window_bytes, uint32_t used);
// Throws, naming `what` (e.g. "MUL_MAT of node 'x'") and every size, when they do not.
void window_require(const Pool& pool, uint64_t window_bytes, uint32_t used, const char* what);

// Banks named by the tensors of the batch message (bit i = bank i). Reads only what lies inside
// `bytes`; names beyond the bank table are left out (the device refuses those tensors).
uint32_t message_banks(const void* message, size_t bytes);

}  // namespace hexllm::htp_host
