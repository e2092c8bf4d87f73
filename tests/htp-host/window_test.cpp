// The window plan on a real pool, step by step against hand-derived sequences: pinned banks
// mapped first and kept, weight banks mapped on use, the most recently used unneeded bank
// evicted when the window is full, released banks unmapped, a refused batch leaves nothing
// changed. message_banks reads the banks a batch names.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "htp-host/batch_builder.h"
#include "htp-host/window.h"

namespace hexllm::htp_host {
namespace {

constexpr uint64_t K64 = 64u << 10, K128 = 128u << 10;

class HtpWindow : public ::testing::Test {
 protected:
  HtpWindow() : pool_(sizes()) {
    compute_ = pool_.allocate(Region::Compute, 1000);  // bank 0, 64 KiB, pinned
    for (auto& w : weights_) w = pool_.allocate_packed(Region::Weights, 100000, K128);  // banks 1, 2, 3
  }
  static Pool::BankSizes sizes() {
    Pool::BankSizes s;
    s.compute = s.cache = s.messages = K64;
    return s;
  }
  std::vector<WindowStep> plan(Window& w, uint32_t used) {
    std::vector<WindowStep> steps;
    w.plan(pool_, used, &steps);
    return steps;
  }
  static std::vector<std::pair<int, int>> pairs(const std::vector<WindowStep>& steps) {
    std::vector<std::pair<int, int>> out;
    for (const WindowStep& s : steps) out.emplace_back(s.bank, s.map);
    return out;
  }

  Pool pool_;
  std::unique_ptr<backend::Buffer> compute_;
  std::unique_ptr<backend::Buffer> weights_[3];
};

using Steps = std::vector<std::pair<int, int>>;

TEST_F(HtpWindow, BanksAreWhereTheFixtureSays) {
  for (uint32_t i = 0; i < 4; ++i) ASSERT_NE(pool_.banks()[i].base, nullptr);
  EXPECT_EQ(pool_.banks()[0].region, Region::Compute);
  for (uint32_t i = 1; i < 4; ++i) EXPECT_EQ(pool_.banks()[i].size, K128);
}

TEST_F(HtpWindow, SlidesWeightBanksEvictingTheNewestUnneeded) {
  Window w(K64 + 2 * K128);  // the pinned bank and two weight banks
  EXPECT_EQ(pairs(plan(w, 1u << 1)), (Steps{{0, 1}, {1, 1}}));
  EXPECT_EQ(pairs(plan(w, 1u << 2)), (Steps{{2, 1}}));
  EXPECT_EQ(w.mapped_bytes(), K64 + 2 * K128);
  // Full: bank 2 (used last) goes, bank 1 (the start of the next pass) stays.
  EXPECT_EQ(pairs(plan(w, 1u << 3)), (Steps{{2, 0}, {3, 1}}));
  EXPECT_EQ(pairs(plan(w, 1u << 1)), Steps{});
  EXPECT_EQ(pairs(plan(w, 1u << 2)), (Steps{{1, 0}, {2, 1}}));  // 1 was used after 3
  EXPECT_EQ(w.mapped_mask(), 0b1101u);
  EXPECT_EQ(w.stats().maps, 5u);
  EXPECT_EQ(w.stats().unmaps, 2u);
  EXPECT_EQ(w.stats().peak_bytes, K64 + 2 * K128);
}

TEST_F(HtpWindow, NonWeightBanksInTheBatchAreAlreadyPinned) {
  Window w(K64 + K128);
  EXPECT_EQ(pairs(plan(w, 1u << 0 | 1u << 1)), (Steps{{0, 1}, {1, 1}}));
  EXPECT_EQ(pairs(plan(w, 1u << 0)), Steps{});
}

TEST_F(HtpWindow, RefusesABatchLargerThanTheWindowAndKeepsItsState) {
  Window w(K64 + 2 * K128);
  plan(w, 1u << 1);
  try {
    plan(w, 0b1110);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    // 64 KiB pinned + 3 x 128 KiB of weights = 458752 bytes against 327680.
    const std::string m = e.what();
    EXPECT_NE(m.find("458752 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("65536 pinned"), std::string::npos) << m;
    EXPECT_NE(m.find("393216 of weights"), std::string::npos) << m;
    EXPECT_NE(m.find("327680 bytes"), std::string::npos) << m;
  }
  EXPECT_EQ(w.mapped_mask(), 0b0011u);
  EXPECT_EQ(pairs(plan(w, 1u << 1)), Steps{});
}

TEST_F(HtpWindow, ReleasedAndReplacedBanksAreUnmapped) {
  Window w(1u << 20);
  plan(w, 0b1110);
  weights_[1].reset();  // bank 2 released
  EXPECT_EQ(pairs(plan(w, 1u << 1)), (Steps{{2, 0}}));
  // A new compute bank lands in slot 2: a different bank, mapped as pinned.
  auto more = pool_.allocate(Region::Compute, 100000);
  uint32_t bank = 0, offset = 0;
  ASSERT_TRUE(pool_.locate(more->data(), 1, &bank, &offset));
  ASSERT_EQ(bank, 2u);
  EXPECT_EQ(pairs(plan(w, 0)), (Steps{{2, 1}}));
  // Released and reused between two plans: unmapped, then mapped again.
  more.reset();
  auto again = pool_.allocate(Region::Compute, 100000);
  EXPECT_EQ(pairs(plan(w, 0)), (Steps{{2, 0}, {2, 1}}));
}

TEST_F(HtpWindow, ForgetStartsOver) {
  Window w(1u << 20);
  plan(w, 0b0010);
  w.forget();
  EXPECT_EQ(w.mapped_bytes(), 0u);
  EXPECT_EQ(pairs(plan(w, 0b0010)), (Steps{{0, 1}, {1, 1}}));
}

TEST(HtpMessageBanks, NamesTheBanksOfTheBatchTensors) {
  BatchBuilder b;
  htp_tensor t{};
  t.type = HTP_TYPE_F32;
  t.ne[0] = t.ne[1] = t.ne[2] = t.ne[3] = 1;
  t.bank = 0;
  b.add_tensor(t);
  t.bank = 3;
  b.add_tensor(t);
  t.bank = 40;  // beyond the bank table: left for the device to refuse
  b.add_tensor(t);
  htp_message_layout l{};
  ASSERT_TRUE(b.layout(&l));
  std::vector<uint64_t> msg(l.message_size / 8 + 1);
  b.write(msg.data(), 1, l);
  EXPECT_EQ(message_banks(msg.data(), l.message_size), 0b1001u);
  // A tensor table that runs past the message names nothing.
  EXPECT_EQ(message_banks(msg.data(), l.tensors_offset + sizeof(htp_tensor)), 0u);
  EXPECT_EQ(message_banks(msg.data(), 8), 0u);
}

}  // namespace
}  // namespace hexllm::htp_host
