#include "htp-host/window.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "htp/abi/htp_batch.h"

namespace hexllm::htp_host {

Pool::BankSizes window_bank_sizes(uint64_t window_bytes) {
  constexpr uint64_t kStep = 64u << 10;
  auto part = [&](uint64_t cap) { return std::clamp<uint64_t>(window_bytes / 16 / kStep * kStep, kStep, cap); };
  Pool::BankSizes s;
  s.cache = part(64ull << 20);
  s.compute = part(64ull << 20);
  s.messages = part(4ull << 20);
  return s;
}

uint64_t window_weight_bank_bytes(uint64_t window_bytes, uint64_t weights_total) {
  return std::max<uint64_t>(std::min<uint64_t>(window_bytes / 4, 1ull << 30), (weights_total + 9) / 10);
}

void window_check_tensor(uint64_t window_bytes, const graph::Tensor& t, uint64_t device_bytes) {
  if (device_bytes <= window_bytes) return;
  fail("HTP: weight '%s' (%s, %lld x %lld x %lld x %lld) needs %llu bytes on the device, more than the device window "
       "of %llu bytes (--htp-window): the window must hold the largest tensor",
       t.name, type_name(t.type), static_cast<long long>(t.ne[0]), static_cast<long long>(t.ne[1]),
       static_cast<long long>(t.ne[2]), static_cast<long long>(t.ne[3]), static_cast<unsigned long long>(device_bytes),
       static_cast<unsigned long long>(window_bytes));
}

bool window_fits(const Pool& pool, uint64_t window_bytes, uint32_t used) {
  return pool.bytes_of(pool.pinned_mask() | used) <= window_bytes;
}

void window_require(const Pool& pool, uint64_t window_bytes, uint32_t used, const char* what) {
  if (window_fits(pool, window_bytes, used)) return;
  const uint32_t pinned = pool.pinned_mask();
  fail("HTP window: %s needs %llu bytes mapped at once (%llu pinned: KV cache, compute and messages; %llu of "
       "weights), more than the device window of %llu bytes (--htp-window)",
       what, static_cast<unsigned long long>(pool.bytes_of(pinned | used)),
       static_cast<unsigned long long>(pool.bytes_of(pinned)), static_cast<unsigned long long>(pool.bytes_of(used & ~pinned)),
       static_cast<unsigned long long>(window_bytes));
}

uint32_t Window::mapped_mask() const {
  uint32_t mask = 0;
  for (uint32_t i = 0; i < HTP_MAX_BANKS; ++i)
    if (slots_[i].serial != 0) mask |= 1u << i;
  return mask;
}

void Window::unmap(uint32_t bank, std::vector<WindowStep>* steps) {
  Slot& s = slots_[bank];
  mapped_bytes_ -= s.size;
  s = Slot{};
  steps->push_back({static_cast<uint16_t>(bank), 0});
  ++stats_.unmaps;
}

void Window::forget() {
  slots_.fill(Slot{});
  mapped_bytes_ = 0;
  generation_ = ~0ull;
}

void Window::plan(const Pool& pool, uint32_t used, std::vector<WindowStep>* steps) {
  const std::vector<Bank>& banks = pool.banks();
  ++tick_;
  // Fast path (every decode step once the model fits): nothing changed, everything is mapped.
  if (pool.generation() == generation_) {
    bool all = true;
    for (uint32_t i = 0; i < banks.size(); ++i) {
      if ((used >> i & 1u) == 0 || banks[i].base == nullptr) continue;
      if (slots_[i].serial != banks[i].serial) {
        all = false;
        break;
      }
      slots_[i].last_use = tick_;
    }
    if (all) return;
  }

  uint32_t needed = pool.pinned_mask();
  for (uint32_t i = 0; i < banks.size(); ++i)
    if ((used >> i & 1u) != 0 && banks[i].base != nullptr) needed |= 1u << i;
  window_require(pool, bytes_, needed, "a batch");

  // Nothing changes before this point, so a refused batch leaves the window as it was.
  // Banks the pool released, or whose slot now holds another bank, go first.
  for (uint32_t i = 0; i < HTP_MAX_BANKS; ++i) {
    if (slots_[i].serial == 0) continue;
    if (i >= banks.size() || banks[i].base == nullptr || banks[i].serial != slots_[i].serial) unmap(i, steps);
  }

  // Room for what is missing: unmap unneeded weight banks, the most recently used first. The
  // batches of a graph walk the layers in order, so evicting the newest keeps the oldest banks
  // (the first layers of the next graph) mapped; least-recently-used would miss every time.
  uint64_t missing = 0;
  for (uint32_t i = 0; i < banks.size(); ++i)
    if ((needed >> i & 1u) != 0 && slots_[i].serial == 0) missing += banks[i].size;
  while (mapped_bytes_ + missing > bytes_) {
    uint32_t victim = HTP_MAX_BANKS;
    for (uint32_t i = 0; i < HTP_MAX_BANKS; ++i) {
      if (slots_[i].serial == 0 || (needed >> i & 1u) != 0) continue;
      if (victim == HTP_MAX_BANKS || slots_[i].last_use > slots_[victim].last_use) victim = i;
    }
    if (victim == HTP_MAX_BANKS) break;  // cannot happen: needed alone fits
    unmap(victim, steps);
  }

  for (uint32_t i = 0; i < banks.size(); ++i) {
    if ((needed >> i & 1u) == 0) continue;
    Slot& s = slots_[i];
    if (s.serial == 0) {
      s.serial = banks[i].serial;
      s.size = banks[i].size;
      mapped_bytes_ += s.size;
      steps->push_back({static_cast<uint16_t>(i), 1});
      ++stats_.maps;
    }
    s.last_use = tick_;
  }
  if (mapped_bytes_ > stats_.peak_bytes) stats_.peak_bytes = mapped_bytes_;
  generation_ = pool.generation();
}

uint32_t message_banks(const void* message, size_t bytes) {
  if (message == nullptr || bytes < sizeof(htp_batch_header)) return 0;
  const auto* msg = static_cast<const uint8_t*>(message);
  htp_batch_header h;
  std::memcpy(&h, msg, sizeof h);
  const uint64_t end = static_cast<uint64_t>(h.tensors_offset) + static_cast<uint64_t>(h.n_tensors) * sizeof(htp_tensor);
  if (end > bytes) return 0;
  uint32_t mask = 0;
  for (uint32_t i = 0; i < h.n_tensors; ++i) {
    uint16_t bank;
    std::memcpy(&bank, msg + h.tensors_offset + static_cast<uint64_t>(i) * sizeof(htp_tensor) + offsetof(htp_tensor, bank),
                sizeof bank);
    if (bank < HTP_MAX_BANKS) mask |= 1u << bank;
  }
  return mask;
}

}  // namespace hexllm::htp_host
