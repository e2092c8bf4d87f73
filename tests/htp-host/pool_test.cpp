// Pool banks as the window needs them: packed weight banks in call order, unique serials per
// bank (a reused slot is a different bank), pinned regions, byte counts. Offsets and sizes are
// hand-derived from the 128-byte allocation unit and the 64 KiB bank rounding. Weight files are
// checked with fstat and a second mapping of the descriptor, as the device process maps it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "htp-host/pool.h"

namespace hexllm::htp_host {
namespace {

Pool::BankSizes small_banks() {
  Pool::BankSizes s;
  s.cache = 64u << 10;
  s.compute = 64u << 10;
  s.messages = 64u << 10;
  return s;
}

struct Where {
  uint32_t bank, offset;
};

Where where(const Pool& pool, backend::Buffer& b) {
  Where w{~0u, ~0u};
  EXPECT_TRUE(pool.locate(b.data(), b.size(), &w.bank, &w.offset));
  return w;
}

TEST(HtpPool, PackedAllocationsFillBanksInCallOrder) {
  Pool pool(small_banks());
  const uint64_t bank = 256u << 10;
  auto a = pool.allocate_packed(Region::Weights, 100000, bank);  // 100000 -> 100096 (782 x 128)
  auto b = pool.allocate_packed(Region::Weights, 100000, bank);
  auto c = pool.allocate_packed(Region::Weights, 100000, bank);  // 262144 - 200192 = 61952 left: new bank
  auto d = pool.allocate_packed(Region::Weights, 50000, bank);   // fits the newest bank's tail
  const Where wa = where(pool, *a), wb = where(pool, *b), wc = where(pool, *c), wd = where(pool, *d);
  EXPECT_EQ(wa.bank, wb.bank);
  EXPECT_EQ(wa.offset, 0u);
  EXPECT_EQ(wb.offset, 100096u);
  EXPECT_NE(wc.bank, wa.bank);
  EXPECT_EQ(wc.offset, 0u);
  // The first bank still has 61952 free bytes, but packing never goes back.
  EXPECT_EQ(wd.bank, wc.bank);
  EXPECT_EQ(wd.offset, 100096u);
  EXPECT_EQ(pool.banks()[wa.bank].size, bank);
  EXPECT_EQ(pool.bytes(Region::Weights), 2 * bank);
}

// A buffer reads as zeros, also where a released one wrote before; memory no buffer ever
// covered is not written to zero it (its pages stay uncommitted: mincore says not resident).
TEST(HtpPool, BuffersReadZerosAndUntouchedPagesStayUncommitted) {
  Pool::BankSizes sizes = small_banks();
  sizes.compute = 4u << 20;
  Pool pool(sizes);
  auto first = pool.allocate(Region::Compute, 4096);  // makes the 4 MiB bank
  auto dirty = pool.allocate(Region::Compute, 8192);
  std::memset(dirty->data(), 0xab, dirty->size());
  const Where wd = where(pool, *dirty);
  dirty.reset();
  auto again = pool.allocate(Region::Compute, 8192);  // the hole the dirty one left
  EXPECT_EQ(where(pool, *again).offset, wd.offset);
  const auto* p = static_cast<const uint8_t*>(again->data());
  size_t nonzero = 0;
  for (size_t i = 0; i < again->size(); ++i) nonzero += p[i] != 0;
  EXPECT_EQ(nonzero, 0u);

  auto big = pool.allocate(Region::Compute, 2u << 20);  // beyond every buffer so far
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* base = static_cast<uint8_t*>(big->data());
  auto* lo = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + page - 1) / page * page);
  std::vector<unsigned char> resident((big->size() - (lo - base)) / page);
  ASSERT_EQ(::mincore(lo, resident.size() * page, resident.data()), 0) << std::strerror(errno);
  size_t committed = 0;
  for (unsigned char r : resident) committed += r & 1u;
  EXPECT_EQ(committed, 0u) << "of " << resident.size() << " pages";
  const auto* q = static_cast<const uint8_t*>(big->data());
  for (size_t i = 0; i < big->size(); i += 4096) nonzero += q[i] != 0;
  EXPECT_EQ(nonzero, 0u);
}

TEST(HtpPool, PackedAllocationLargerThanTheBankGetsItsOwn) {
  Pool pool(small_banks());
  auto a = pool.allocate_packed(Region::Weights, 300000, 128u << 10);
  const Where w = where(pool, *a);
  EXPECT_EQ(pool.banks()[w.bank].size, 327680u);  // 300032 rounded up to 64 KiB
}

TEST(HtpPool, SerialsNameBanksNotSlots) {
  Pool pool(small_banks());
  auto a = pool.allocate(Region::Compute, 1000);
  const Where wa = where(pool, *a);
  const uint64_t serial = pool.banks()[wa.bank].serial;
  const uint64_t gen = pool.generation();
  a.reset();  // the bank empties and goes back to the system
  EXPECT_EQ(pool.banks()[wa.bank].base, nullptr);
  EXPECT_GT(pool.generation(), gen);
  auto b = pool.allocate(Region::Compute, 1000);
  const Where wb = where(pool, *b);
  EXPECT_EQ(wb.bank, wa.bank);  // the slot is reused ...
  EXPECT_NE(pool.banks()[wb.bank].serial, serial);  // ... by another bank
}

TEST(HtpPool, PinnedMaskIsEveryLiveBankButWeights) {
  Pool pool(small_banks());
  auto w = pool.allocate_packed(Region::Weights, 1000, 64u << 10);
  auto k = pool.allocate(Region::Cache, 1000);
  auto c = pool.allocate(Region::Compute, 1000);
  auto m = pool.allocate(Region::Messages, 1000);
  const uint32_t expect = 1u << where(pool, *k).bank | 1u << where(pool, *c).bank | 1u << where(pool, *m).bank;
  EXPECT_EQ(pool.pinned_mask(), expect);
  EXPECT_EQ(pool.bytes_of(expect), 3u * (64u << 10));
  EXPECT_EQ(pool.bytes_of(1u << where(pool, *w).bank), 64u << 10);
  c.reset();
  EXPECT_EQ(pool.pinned_mask(), 1u << where(pool, *k).bank | 1u << where(pool, *m).bank);
}

TEST(HtpPool, WeightBanksInADirectoryAreUnlinkedFiles) {
  Pool pool(small_banks(), Pool::kDefaultWeightsDir);
  auto w = pool.allocate_packed(Region::Weights, 3000000, 128u << 10);
  auto c = pool.allocate(Region::Compute, 1000);
  const Bank& wb = pool.banks()[where(pool, *w).bank];
  if (!wb.in_file) GTEST_SKIP() << "no weight files here: " << pool.weights_backing();
  EXPECT_EQ(pool.weights_backing(), strprintf("files in %s", Pool::kDefaultWeightsDir));
  EXPECT_FALSE(pool.banks()[where(pool, *c).bank].in_file);  // only weights go to files
  EXPECT_EQ(wb.size, 3014656u);                               // 3000064 rounded up to 64 KiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wb.base) % Pool::kHugePage, 0u);
  struct stat st {};
  ASSERT_EQ(::fstat(wb.fd, &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_nlink, 0u);  // never in the directory: nothing is left behind
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), wb.size);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, wb.size);  // reserved up front
  // What the host writes, a second mapping (the device's) reads.
  std::memset(w->data(), 0x5a, w->size());
  void* other = ::mmap(nullptr, wb.size, PROT_READ, MAP_SHARED, wb.fd, 0);
  ASSERT_NE(other, MAP_FAILED);
  const auto* bytes = static_cast<const uint8_t*>(other);
  EXPECT_EQ(bytes[0], 0x5a);
  EXPECT_EQ(bytes[2999999], 0x5a);
  EXPECT_EQ(bytes[3000064], 0);  // past the allocation: the file's zeros
  ::munmap(other, wb.size);
  EXPECT_LE(pool.weights_huge_bytes(), wb.size);
  std::printf("weights bank: %llu of %llu bytes on 2 MiB pages\n",
              static_cast<unsigned long long>(pool.weights_huge_bytes()), static_cast<unsigned long long>(wb.size));
}

TEST(HtpPool, AWeightsDirectoryThatRefusesFallsBackToMemfd) {
  Pool pool(small_banks(), "/nonexistent/hexllm-weights");
  auto w = pool.allocate_packed(Region::Weights, 1000, 64u << 10);
  const Bank& wb = pool.banks()[where(pool, *w).bank];
  EXPECT_FALSE(wb.in_file);
  EXPECT_EQ(pool.weights_backing(), "memfd (/nonexistent/hexllm-weights: O_TMPFILE: No such file or directory)");
  const auto* bytes = static_cast<const uint8_t*>(w->data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[999], 0);
  EXPECT_EQ(pool.weights_huge_bytes(), 0u);
}

}  // namespace
}  // namespace hexllm::htp_host
