// Byte sizes as people write them on a command line: "8388608", "256K", "8M", "3.5G", "1TiB".
// Suffixes are binary (K = 1024) and case-insensitive; "i", "B" and "iB" may follow them.
#pragma once

#include <cstdint>
#include <string>

namespace hexllm {

// The size `text` names, between min and max inclusive; throws hexllm::Error naming `flag`, the
// text and the range otherwise (malformed text, overflow, out of range).
uint64_t parse_byte_size(const std::string& text, const char* flag, uint64_t min, uint64_t max);

}  // namespace hexllm
