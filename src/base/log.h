// Minimal leveled logging to stderr. Not for hot paths.
#pragma once

namespace hexllm {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Silent = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define HEXLLM_LOG_DEBUG(...) ::hexllm::log(::hexllm::LogLevel::Debug, __VA_ARGS__)
#define HEXLLM_LOG_INFO(...) ::hexllm::log(::hexllm::LogLevel::Info, __VA_ARGS__)
#define HEXLLM_LOG_WARN(...) ::hexllm::log(::hexllm::LogLevel::Warn, __VA_ARGS__)
#define HEXLLM_LOG_ERROR(...) ::hexllm::log(::hexllm::LogLevel::Error, __VA_ARGS__)

}  // namespace hexllm
