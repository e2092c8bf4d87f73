#include "base/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hexllm {

static std::atomic<LogLevel> g_level{LogLevel::Warn};

void set_log_level(LogLevel level) { g_level.store(level); }
LogLevel log_level() { return g_level.load(); }

void log(LogLevel level, const char* fmt, ...) {
  if (level < g_level.load()) return;
  static const char* const kTags[] = {"debug", "info", "warning", "error", ""};
  std::fprintf(stderr, "hexllm: %s: ", kTags[static_cast<int>(level)]);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
}

}  // namespace hexllm
