// Host-side error mechanism: exceptions that carry a message naming what is wrong
// (file, field, offset, value). They are caught at the CLI and server boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace hexllm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// printf-style formatting into a std::string (GCC 12 has no std::format).
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

[[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace hexllm
