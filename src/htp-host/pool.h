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
  uint64_t serial = 0;      // unique per bank ever created: a reused slot gets a new serial
  Region region = Region::Compute;
  std::map<uint64_t, uint64_t> free;  // offset -> bytes, coalesced
  uint64_t used = 0;
};

class Pool {
 public:
  static constexpr uint64_t kAlign = 128;
  static constexpr uint64_t kMaxBankBytes = (4ull << 30) - (64ull << 10);
  static constexpr uint32_t kMaxBanks = 16;

  // Bytes of a new bank of each region unless a request needs more (weights, cache, compute,
  // messages). Smaller banks let a small device window hold the pinned regions.
  struct BankSizes {
    uint64_t weights = 1ull << 30;
    uint64_t cache = 64ull << 20;
    uint64_t compute = 64ull << 20;
    uint64_t messages = 4ull << 20;
  };

  Pool();
  explicit Pool(const BankSizes& sizes);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Zero-filled memory of `bytes` in a bank of `region`; the memory returns to the pool when
  // the buffer is destroyed (the pool must outlive it). Throws hexllm::Error when a bank
  // cannot be created or the request exceeds a bank.
  std::unique_ptr<backend::Buffer> allocate(Region region, uint64_t bytes);
  // Like allocate, but only from the newest bank of `region` or from a new bank of at least
  // `bank_bytes`: consecutive calls fill banks in call order (weights packed in layer order,
  // so that a sliding device window maps few banks per batch).
  std::unique_ptr<backend::Buffer> allocate_packed(Region region, uint64_t bytes, uint64_t bank_bytes);

  // Bank and offset holding [p, p + bytes), if the range lies inside one bank.
  bool locate(const void* p, uint64_t bytes, uint32_t* bank, uint32_t* offset) const;

  const std::vector<Bank>& banks() const { return banks_; }
  // Bumped whenever a bank is created or released, so transports know to remap.
  uint64_t generation() const { return generation_; }
  uint64_t bytes(Region region) const;
  // Bytes of the live banks in `mask` (bit i = bank i).
  uint64_t bytes_of(uint32_t mask) const;
  // Live banks of every region but weights: the ones a device window keeps mapped.
  uint32_t pinned_mask() const;

 private:
  friend class PoolBuffer;
  uint32_t new_bank(Region region, uint64_t bytes);
  std::unique_ptr<backend::Buffer> take(uint32_t bank, uint64_t offset, uint64_t bytes, uint64_t need);
  std::unique_ptr<backend::Buffer> take_fresh(uint32_t bank, uint64_t bytes, uint64_t need);
  void release(uint32_t bank, uint64_t offset, uint64_t bytes);

  BankSizes sizes_;
  std::vector<Bank> banks_;
  uint64_t generation_ = 0;
  uint64_t next_serial_ = 1;
  int32_t packed_bank_[4] = {-1, -1, -1, -1};  // per region: the bank allocate_packed fills
};

}  // namespace hexllm::htp_host
