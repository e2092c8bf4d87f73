// Open-addressing hash index over a vector of strings (internal): maps keys[i] back to i.
// Slots hold only a hash and an index, so indexing a 150k-token vocabulary is one 2 MiB array
// and no per-key allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hexllm::tokenizer::detail {

class StringTable {
 public:
  // Indexes every keys[i] for which include(keys[i]) holds, in order. A repeated text keeps
  // its last index when `last_wins`, else its first. `keys` must outlive the table unchanged.
  template <typename Include>
  void build(const std::vector<std::string>* keys, bool last_wins, Include&& include) {
    std::vector<int32_t> picked;
    picked.reserve(keys->size());
    for (size_t i = 0; i < keys->size(); ++i) {
      if (include((*keys)[i])) picked.push_back(static_cast<int32_t>(i));
    }
    build_from(keys, picked, last_wins);
  }
  // The index stored for `key`, or -1.
  int32_t find(std::string_view key) const;

 private:
  struct Slot {
    uint32_t hash;
    int32_t index;  // -1: empty
  };

  static uint32_t hash_of(std::string_view s);
  void build_from(const std::vector<std::string>* keys, const std::vector<int32_t>& picked, bool last_wins);

  const std::vector<std::string>* keys_ = nullptr;
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace hexllm::tokenizer::detail
