// A progress bar on stderr, drawn only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace hexllm::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  void update(size_t done, size_t total);
  void finish();

 private:
  std::string label_;
  bool enabled_;
  bool finished_ = false;
  int last_percent_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace hexllm::cli
