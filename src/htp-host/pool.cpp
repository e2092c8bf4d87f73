#include "htp-host/pool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace hexllm::htp_host {

namespace {

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

// A shared mapping of fd at an address aligned to `align`, so that the kernel can map its 2 MiB
// folios whole. MADV_HUGEPAGE before the first write asks the page cache for folios that size.
void* map_aligned(int fd, uint64_t size, uint64_t align, bool huge) {
  void* span = ::mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (span == MAP_FAILED) return MAP_FAILED;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(span);
  const uintptr_t at = (lo + align - 1) / align * align;
  void* p = ::mmap(reinterpret_cast<void*>(at), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    ::munmap(span, size + align);
    return MAP_FAILED;
  }
  if (at > lo) ::munmap(span, at - lo);
  if (lo + align > at) ::munmap(reinterpret_cast<void*>(at + size), lo + align - at);
#if defined(MADV_HUGEPAGE)
  if (huge) ::madvise(p, size, MADV_HUGEPAGE);
#else
  (void)huge;
#endif
  return p;
}

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

Pool::Pool(const BankSizes& sizes, std::string weights_dir) : sizes_(sizes), weights_dir_(std::move(weights_dir)) {}

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
  const bool weights_file = region == Region::Weights && !weights_dir_.empty();
  // 64 KiB units for files too: the window sizes banks, and a tail under 2 MiB only gets smaller pages.
  const uint64_t size = round_up(bytes, 1u << 16);
  if (size > kMaxBankBytes)
    fail("HTP pool: %llu bytes exceed the largest bank (%llu bytes)", static_cast<unsigned long long>(bytes),
         static_cast<unsigned long long>(kMaxBankBytes));
  int fd = weights_file ? open_weights_file(size) : -1;
  const bool in_file = fd >= 0;
  if (!in_file) {
    fd = ::memfd_create("hexllm-pool", MFD_CLOEXEC);
    if (fd < 0) fail("HTP pool: memfd_create failed: %s", std::strerror(errno));
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      const int err = errno;
      ::close(fd);
      fail("HTP pool: cannot size a %llu-byte bank: %s", static_cast<unsigned long long>(size), std::strerror(err));
    }
  }
  void* p = map_aligned(fd, size, in_file ? kHugePage : 1u << 16, in_file);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    fail("HTP pool: cannot map a %llu-byte bank: %s", static_cast<unsigned long long>(size), std::strerror(err));
  }
  Bank bank;
  bank.fd = fd;
  bank.in_file = in_file;
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

int Pool::open_weights_file(uint64_t size) {
  const int fd = ::open(weights_dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    weights_refused_ = std::string("O_TMPFILE: ") + std::strerror(errno);
    return -1;
  }
  // Reserve the blocks now: a write fault on a full disk would be a SIGBUS, not an error.
  // (fallocate, not posix_fallocate, which writes zeros where the filesystem cannot reserve.)
  if (::fallocate(fd, 0, 0, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    weights_refused_ = std::string("cannot reserve ") + std::to_string(size >> 20) + " MiB: " + std::strerror(err);
    return -1;
  }
  return fd;
}

std::string Pool::weights_backing() const {
  bool files = false, memfds = false;
  for (const Bank& b : banks_)
    if (b.base != nullptr && b.region == Region::Weights) (b.in_file ? files : memfds) = true;
  std::string s;
  if (files) s = "files in " + weights_dir_;
  if (memfds) {
    if (!s.empty()) s += " and ";
    s += "memfd";
    if (!weights_refused_.empty()) s += " (" + weights_dir_ + ": " + weights_refused_ + ")";
  }
  return s.empty() ? "none" : s;
}

uint64_t Pool::weights_huge_bytes() const {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  uint64_t total = 0;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's header line
      inside = false;
      for (const Bank& b : banks_) {
        const auto base = reinterpret_cast<uintptr_t>(b.base);
        inside |= b.base != nullptr && b.region == Region::Weights && lo >= base && hi <= base + b.size;
      }
      continue;
    }
    unsigned long kb = 0;
    if (inside && (std::sscanf(line.c_str(), "FilePmdMapped: %lu kB", &kb) == 1 ||
                   std::sscanf(line.c_str(), "ShmemPmdMapped: %lu kB", &kb) == 1))
      total += uint64_t{kb} << 10;
  }
  return total;
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
  const uint64_t end = offset + need;
  if (offset < b.handed_out_end) std::memset(b.base + offset, 0, std::min(end, b.handed_out_end) - offset);
  b.handed_out_end = std::max(b.handed_out_end, end);
  return std::make_unique<PoolBuffer>(*this, bank, offset, bytes, need);
}

std::unique_ptr<backend::Buffer> Pool::take_fresh(uint32_t bank, uint64_t bytes, uint64_t need) {
  // A new memfd reads as zeros already: no memset, so untouched pages stay uncommitted.
  Bank& b = banks_[bank];
  b.free.erase(b.free.begin());
  if (b.size > need) b.free[need] = b.size - need;
  b.used = need;
  b.handed_out_end = need;
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
