// The shared memory pool: memfd banks (each under 4 GiB, so the device addresses them with
// 32-bit offsets) that the host maps once and the device sees as (bank, offset). Regions by
// kind: weights (read-only after load), KV cache, compute, messages. Allocations are 128-byte
// aligned; a bank serves many allocations of its kind.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "backend/backend.h"

namespace hexllm::htp_host {

enum class Region { Weights, Cache, Compute, Messages };
const char* region_name(Region r);

struct Bank {
  int fd = -1;
  uint8_t* base = nullptr;  // host mapping
  uint64_t size = 0;
  Region region = Region::Compute;
  std::map<uint64_t, uint64_t> free;  // offset -> bytes, coalesced
  uint64_t used = 0;
};

class Pool {
 public:
  static constexpr uint64_t kAlign = 128;
  static constexpr uint64_t kMaxBankBytes = (4ull << 30) - (64ull << 10);
  static constexpr uint32_t kMaxBanks = 16;

  Pool();
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Zero-filled memory of `bytes` in a bank of `region`; the memory returns to the pool when
  // the buffer is destroyed (the pool must outlive it). Throws hexllm::Error when a bank
  // cannot be created or the request exceeds a bank.
  std::unique_ptr<backend::Buffer> allocate(Region region, uint64_t bytes);

  // Bank and offset holding [p, p + bytes), if the range lies inside one bank.
  bool locate(const void* p, uint64_t bytes, uint32_t* bank, uint32_t* offset) const;

  const std::vector<Bank>& banks() const { return banks_; }
  // Bumped whenever a bank is created or released, so transports know to remap.
  uint64_t generation() const { return generation_; }
  uint64_t bytes(Region region) const;

 private:
  friend class PoolBuffer;
  uint32_t new_bank(Region region, uint64_t bytes);
  void release(uint32_t bank, uint64_t offset, uint64_t bytes);

  std::vector<Bank> banks_;
  uint64_t generation_ = 0;
};

}  // namespace hexllm::htp_host
