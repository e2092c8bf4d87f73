// BPE pre-tokenization: splits text into words with a sequence of regular expressions (PCRE2,
// UTF + UCP, JIT). Each expression further splits the pieces left by the previous one; text
// between matches is kept as its own piece, as llama.cpp does.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hexllm::tokenizer {

enum class PreType { DEFAULT, GPT2, LLAMA3, QWEN2 };

// Maps `tokenizer.ggml.pre` to a regex family; throws hexllm::Error for names we do not know.
PreType pre_type_from_name(std::string_view pre);

// The regex list of a pre-tokenizer (PCRE2 syntax).
std::vector<std::string> pre_patterns(PreType type);

class Pretokenizer {
 public:
  explicit Pretokenizer(const std::vector<std::string>& patterns);
  ~Pretokenizer();
  Pretokenizer(Pretokenizer&&) noexcept;
  Pretokenizer& operator=(Pretokenizer&&) noexcept;

  // Words of `text`, each re-encoded as UTF-8 from the leniently decoded code points (malformed
  // bytes become U+FFFD). Thread-safe.
  std::vector<std::string> split(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hexllm::tokenizer
