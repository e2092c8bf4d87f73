#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace hexllm::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(size_t done, size_t total) {
  if (!enabled_ || finished_ || total == 0) return;
  const int percent = static_cast<int>(done * 100 / total);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.1fs", label_.c_str(), filled, "==============================",
               kWidth - filled, "", percent, secs);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (last_percent_ >= 0) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace hexllm::cli
