// What a batch needs to run again after its device died part way: the bytes it reads before
// writing them (its inputs) that it also writes somewhere (a reused compute slot, the KV rows it
// fills). Only those can differ from the state the batch started in, so saving them before the
// call and putting them back after a restart makes the retry compute exactly the first run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "htp-host/pool.h"

namespace hexllm::htp_host {

class ReplayLog {
 public:
  // Saves the inputs of the batch in `message` that the batch also overwrites.
  void capture(const Pool& pool, const void* message, size_t bytes);
  // Puts them back (the pool's banks must be the ones of the capture).
  void restore(const Pool& pool) const;
  uint64_t saved_bytes() const { return data_.size(); }

 private:
  struct Range {
    uint64_t begin, end;  // (bank << 32) + offset
  };
  static void merge(std::vector<Range>* v);
  void add_exposed(uint64_t begin, uint64_t end);

  std::map<uint64_t, uint64_t> covered_;  // written whole by an earlier op: begin -> end
  std::vector<Range> exposed_, written_, saved_;
  std::vector<uint8_t> data_;
};

}  // namespace hexllm::htp_host
