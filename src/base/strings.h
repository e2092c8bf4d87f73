// Small string helpers shared by the layers.
#pragma once

#include <string_view>

namespace hexllm {

// ASCII case-insensitive equality: type names and flag values are matched this way, as
// llama.cpp's tools take "q4_0" for Q4_0.
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

}  // namespace hexllm
