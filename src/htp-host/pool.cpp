#include "htp-host/pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace hexllm::htp_host {

namespace {

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

}  // namespace

const char* region_name(Region r) {
  switch (r) {
    case Region::Weights: return "weights";
    case Region::Cache: return "kv-cache";
    case Region::Compute: return "compute";
    case Region::Messages: return "messages";
  }
  return "?";
}

class PoolBuffer final : public backend::Buffer {
 public:
  PoolBuffer(Pool& pool, uint32_t bank, uint64_t offset, uint64_t bytes, uint64_t reserved)
      : pool_(pool), bank_(bank), offset_(offset), bytes_(bytes), reserved_(reserved) {}
  ~PoolBuffer() override { pool_.release(bank_, offset_, reserved_); }
  void* data() override { return pool_.banks_[bank_].base + offset_; }
  size_t size() const override { return bytes_; }

 private:
  Pool& pool_;
  uint32_t bank_;
  uint64_t offset_, bytes_, reserved_;
};

Pool::Pool() = default;

Pool::Pool(const BankSizes& sizes) : sizes_(sizes) {}

Pool::~Pool() {
  for (Bank& b : banks_) {
    if (b.base != nullptr) ::munmap(b.base, b.size);
    if (b.fd >= 0) ::close(b.fd);
  }
}

uint32_t Pool::new_bank(Region region, uint64_t bytes) {
  if (banks_.size() >= kMaxBanks) {
    // Reuse the slot of a released bank before giving up.
    bool found = false;
    for (const Bank& b : banks_) found |= b.base == nullptr;
    if (!found) fail("HTP pool: all %u banks are in use (%s region needs %llu more bytes)", kMaxBanks,
                     region_name(region), static_cast<unsigned long long>(bytes));
  }
  const uint64_t size = round_up(bytes, 1u << 16);
  if (size > kMaxBankBytes)
    fail("HTP pool: %llu bytes exceed the largest bank (%llu bytes)", static_cast<unsigned long long>(bytes),
         static_cast<unsigned long long>(kMaxBankBytes));
  const int fd = ::memfd_create("hexllm-pool", MFD_CLOEXEC);
  if (fd < 0) fail("HTP pool: memfd_create failed: %s", std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    fail("HTP pool: cannot size a %llu-byte bank: %s", static_cast<unsigned long long>(size), std::strerror(err));
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    fail("HTP pool: cannot map a %llu-byte bank: %s", static_cast<unsigned long long>(size), std::strerror(err));
  }
  Bank bank;
  bank.fd = fd;
  bank.base = static_cast<uint8_t*>(p);
  bank.size = size;
  bank.region = region;
  bank.serial = next_serial_++;
  bank.free[0] = size;
  ++generation_;
  for (uint32_t i = 0; i < banks_.size(); ++i) {
    if (banks_[i].base == nullptr) {
      banks_[i] = std::move(bank);
      return i;
    }
  }
  banks_.push_back(std::move(bank));
  return static_cast<uint32_t>(banks_.size() - 1);
}

std::unique_ptr<backend::Buffer> Pool::allocate(Region region, uint64_t bytes) {
  const uint64_t need = round_up(bytes == 0 ? 1 : bytes, kAlign);
  for (uint32_t i = 0; i < banks_.size(); ++i) {
    Bank& b = banks_[i];
    if (b.base == nullptr || b.region != region) continue;
    for (auto it = b.free.begin(); it != b.free.end(); ++it) {
      if (it->second < need) continue;
      const uint64_t offset = it->first, left = it->second - need;
      b.free.erase(it);
      if (left > 0) b.free[offset + need] = left;
      return take(i, offset, bytes, need);
    }
  }
  const uint64_t sizes[] = {sizes_.weights, sizes_.cache, sizes_.compute, sizes_.messages};
  const uint64_t default_bytes = sizes[static_cast<int>(region)];
  return take_fresh(new_bank(region, need > default_bytes ? need : default_bytes), bytes, need);
}

std::unique_ptr<backend::Buffer> Pool::allocate_packed(Region region, uint64_t bytes, uint64_t bank_bytes) {
  const uint64_t need = round_up(bytes == 0 ? 1 : bytes, kAlign);
  int32_t& current = packed_bank_[static_cast<int>(region)];
  if (current >= 0 && static_cast<size_t>(current) < banks_.size()) {
    Bank& b = banks_[current];
    // Only the tail counts: filling a hole in the middle would break the call order.
    if (b.base != nullptr && b.region == region && !b.free.empty()) {
      const auto last = std::prev(b.free.end());
      if (last->first + last->second == b.size && last->second >= need) {
        const uint64_t offset = last->first, left = last->second - need;
        b.free.erase(last);
        if (left > 0) b.free[offset + need] = left;
        return take(static_cast<uint32_t>(current), offset, bytes, need);
      }
    }
  }
  const uint32_t i = new_bank(region, need > bank_bytes ? need : bank_bytes);
  current = static_cast<int32_t>(i);
  return take_fresh(i, bytes, need);
}

std::unique_ptr<backend::Buffer> Pool::take(uint32_t bank, uint64_t offset, uint64_t bytes, uint64_t need) {
  Bank& b = banks_[bank];
  b.used += need;
  std::memset(b.base + offset, 0, need);
  return std::make_unique<PoolBuffer>(*this, bank, offset, bytes, need);
}

std::unique_ptr<backend::Buffer> Pool::take_fresh(uint32_t bank, uint64_t bytes, uint64_t need) {
  // A new memfd reads as zeros already: no memset, so untouched pages stay uncommitted.
  Bank& b = banks_[bank];
  b.free.erase(b.free.begin());
  if (b.size > need) b.free[need] = b.size - need;
  b.used = need;
  return std::make_unique<PoolBuffer>(*this, bank, 0, bytes, need);
}

void Pool::release(uint32_t bank, uint64_t offset, uint64_t bytes) {
  Bank& b = banks_[bank];
  b.used -= bytes;
  if (b.used == 0) {
    // An empty bank goes back to the system; its slot may be reused.
    ::munmap(b.base, b.size);
    ::close(b.fd);
    b = Bank{};
    ++generation_;
    return;
  }
  auto it = b.free.emplace(offset, bytes).first;
  if (auto next = std::next(it); next != b.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b.free.erase(next);
  }
  if (it != b.free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b.free.erase(it);
    }
  }
}

bool Pool::locate(const void* p, uint64_t bytes, uint32_t* bank, uint32_t* offset) const {
  const auto* q = static_cast<const uint8_t*>(p);
  for (uint32_t i = 0; i < banks_.size(); ++i) {
    const Bank& b = banks_[i];
    if (b.base == nullptr || q < b.base || q >= b.base + b.size) continue;
    const uint64_t off = static_cast<uint64_t>(q - b.base);
    if (bytes > b.size - off) return false;
    *bank = i;
    *offset = static_cast<uint32_t>(off);
    return true;
  }
  return false;
}

uint64_t Pool::bytes_of(uint32_t mask) const {
  uint64_t n = 0;
  for (uint32_t i = 0; i < banks_.size() && i < 32; ++i)
    if ((mask >> i & 1u) != 0 && banks_[i].base != nullptr) n += banks_[i].size;
  return n;
}

uint32_t Pool::pinned_mask() const {
  uint32_t mask = 0;
  for (uint32_t i = 0; i < banks_.size() && i < 32; ++i)
    if (banks_[i].base != nullptr && banks_[i].region != Region::Weights) mask |= 1u << i;
  return mask;
}

uint64_t Pool::bytes(Region region) const {
  uint64_t n = 0;
  for (const Bank& b : banks_)
    if (b.base != nullptr && b.region == region) n += b.size;
  return n;
}

}  // namespace hexllm::htp_host
