// The shared memory pool: memfd banks (each under 4 GiB, so the device addresses them with
// 32-bit offsets) that the host maps once and the device sees as (bank, offset). Regions by
// kind: weights (read-only after load), KV cache, compute, messages. Allocations are 128-byte
// aligned; a bank serves many allocations of its kind.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace hexllm::htp_host {

enum class Region { Weights, Cache, Compute, Messages };
const char* region_name(Region r);

struct Bank {
  int fd = -1;
  bool in_file = false;     // an unlinked file in the pool's weights directory, not a memfd
  uint8_t* base = nullptr;  // host mapping
  uint64_t size = 0;
  uint64_t serial = 0;      // unique per bank ever created: a reused slot gets a new serial
  Region region = Region::Compute;
  std::map<uint64_t, uint64_t> free;  // offset -> bytes, coalesced
  uint64_t used = 0;
  // Bytes from the start that a buffer has ever covered; beyond them the bank still reads as
  // the zeros it was made with, so a new buffer there needs no memset (and commits no pages).
  uint64_t handed_out_end = 0;
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

  // Weight banks live in unlinked files (O_TMPFILE) in `weights_dir` when it is not empty, all
  // others in memfds. Why: the weights are most of what a decode token reads, and memfd memory
  // gets 2 MiB pages only where shmem THP is on (off by default), while a disk filesystem whose
  // page cache holds large folios (ext4, xfs on recent kernels) maps them as 2 MiB pages at
  // 2 MiB-aligned addresses. Each file's blocks are reserved when its bank is made, so a full
  // disk falls back to a memfd instead of faulting later; so does a directory that refuses.
  static constexpr uint64_t kHugePage = 2ull << 20;
  // On disk by the FHS (unlike /tmp, which may be tmpfs) and writable by every user.
  static constexpr const char* kDefaultWeightsDir = "/var/tmp";

  Pool();
  explicit Pool(const BankSizes& sizes, std::string weights_dir = {});
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
  // Where the weight banks live, e.g. "files in /var/tmp" or "memfd (/var/tmp: <why not>)".
  std::string weights_backing() const;
  // Bytes of the weight banks this process maps with 2 MiB pages (from /proc/self/smaps).
  uint64_t weights_huge_bytes() const;
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

  int open_weights_file(uint64_t size);

  BankSizes sizes_;
  std::string weights_dir_;
  std::string weights_refused_;  // why the last weights file could not be made; empty if none
  std::vector<Bank> banks_;
  uint64_t generation_ = 0;
  uint64_t next_serial_ = 1;
  int32_t packed_bank_[4] = {-1, -1, -1, -1};  // per region: the bank allocate_packed fills
};

}  // namespace hexllm::htp_host
