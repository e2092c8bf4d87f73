#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include <cstdint>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace hexllm::tokenizer {

namespace {

// Unicode White_Space spelled out (as the inside of a character class), so the split does not
// depend on what the regex engine counts as \s; llama.cpp's table has these code points only.
constexpr const char* kWs =
    "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// The published GPT-2 split pattern (without the trailing `\s+`: a lone whitespace before a
// non-space is left unmatched and so becomes its own piece anyway).
std::string gpt2_pattern() {
  const std::string ws = kWs;
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + ws + "\\p{L}\\p{N}]+|[" + ws + "]+(?![^" + ws +
         "])";
}

// Llama-3 / Qwen2 patterns with the case-insensitive contractions written out as classes
// (ASCII case only, as llama.cpp does). They differ only in the digit run length.
std::string llama3_like_pattern(const std::string& digits) {
  const std::string ws = kWs;
  return "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" + digits +
         "| ?[^" + ws + "\\p{L}\\p{N}]+[\\r\\n]*|[" + ws + "]*[\\r\\n]+|[" + ws + "]+(?![^" + ws + "])|[" +
         ws + "]+";
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

// Surrogates cannot be fed to PCRE2 in UTF mode; a private-use code point has the same classes
// here (not a letter, digit or space).
uint32_t regex_safe(uint32_t cp) { return (cp >= 0xD800 && cp <= 0xDFFF) ? 0xE000 : cp; }

}  // namespace

PreType pre_type_from_name(std::string_view pre) {
  if (pre.empty() || pre == "default") return PreType::DEFAULT;
  for (const char* n : {"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"}) {
    if (pre == n) return PreType::LLAMA3;
  }
  for (const char* n : {"qwen2", "deepseek-r1-qwen"}) {
    if (pre == n) return PreType::QWEN2;
  }
  for (const char* n : {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es",
                        "jina-v2-de", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "trillion"}) {
    if (pre == n) return PreType::GPT2;
  }
  fail(
      "tokenizer: unsupported BPE pre-tokenizer tokenizer.ggml.pre = '%.*s' (supported: default, gpt-2 "
      "family, llama-bpe/llama3 family, qwen2)",
      static_cast<int>(pre.size()), pre.data());
}

std::vector<std::string> pre_patterns(PreType type) {
  switch (type) {
    case PreType::GPT2:
      return {gpt2_pattern()};
    case PreType::LLAMA3:
      return {llama3_like_pattern("\\p{N}{1,3}")};
    case PreType::QWEN2:
      return {llama3_like_pattern("\\p{N}")};
    case PreType::DEFAULT:
      break;
  }
  return {"[\\p{P}\\$\\+<=>\\^~\\|]+", gpt2_pattern(), "\\p{N}+", "[0-9][0-9][0-9]"};
}

struct Pretokenizer::Impl {
  std::vector<pcre2_code*> codes;
  std::vector<bool> jit;
  pcre2_match_context* mctx = nullptr;  // read-only while matching, shared by threads

  ~Impl() {
    for (auto* c : codes) pcre2_code_free(c);
    pcre2_match_context_free(mctx);
  }
};

Pretokenizer::Pretokenizer(const std::vector<std::string>& patterns) : impl_(std::make_unique<Impl>()) {
  // Our patterns backtrack at most linearly in a whitespace run; the default match limit (10M)
  // would reject a long run of spaces that llama.cpp tokenizes fine.
  impl_->mctx = pcre2_match_context_create(nullptr);
  if (!impl_->mctx) fail("tokenizer: out of memory for a regex match context");
  pcre2_set_match_limit(impl_->mctx, UINT32_MAX);
  for (const auto& p : patterns) {
    int err = 0;
    PCRE2_SIZE err_off = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), PCRE2_UTF | PCRE2_UCP,
                                     &err, &err_off, nullptr);
    if (!code) {
      fail("tokenizer: cannot compile pre-tokenizer regex at offset %zu: %s: %s",
           static_cast<size_t>(err_off), pcre2_message(err).c_str(), p.c_str());
    }
    impl_->codes.push_back(code);
    impl_->jit.push_back(pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0);
  }
}

Pretokenizer::~Pretokenizer() = default;
Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;

std::vector<std::string> Pretokenizer::split(std::string_view text) const {
  const std::vector<uint32_t> cps = unicode::decode_utf8(text);
  if (cps.empty()) return {};

  // The text the regexes see, and for each of its byte offsets the code point index.
  std::string subject;
  subject.reserve(text.size() + 8);
  std::vector<uint32_t> cp_at_byte;
  cp_at_byte.reserve(text.size() + 8);
  for (size_t i = 0; i < cps.size(); ++i) {
    const size_t before = subject.size();
    unicode::append_utf8(subject, regex_safe(cps[i]));
    cp_at_byte.insert(cp_at_byte.end(), subject.size() - before, static_cast<uint32_t>(i));
  }
  cp_at_byte.push_back(static_cast<uint32_t>(cps.size()));
  std::vector<size_t> byte_at_cp(cps.size() + 1);
  for (size_t b = cp_at_byte.size(); b-- > 0;) byte_at_cp[cp_at_byte[b]] = b;

  // Pieces as code point lengths, refined by each regex in turn.
  std::vector<size_t> pieces{cps.size()};
  pcre2_match_data* md = nullptr;
  struct MatchDataGuard {
    pcre2_match_data*& md;
    ~MatchDataGuard() { pcre2_match_data_free(md); }
  } guard{md};

  for (size_t r = 0; r < impl_->codes.size(); ++r) {
    pcre2_code* code = impl_->codes[r];
    pcre2_match_data_free(md);
    md = pcre2_match_data_create_from_pattern(code, nullptr);
    if (!md) fail("tokenizer: out of memory for regex match data");
    std::vector<size_t> next;
    next.reserve(pieces.size() * 2);
    size_t piece_start = 0;  // code points
    for (size_t len : pieces) {
      const size_t b0 = byte_at_cp[piece_start];
      const size_t b1 = byte_at_cp[piece_start + len];
      const auto* sub = reinterpret_cast<PCRE2_SPTR>(subject.data() + b0);
      const size_t sub_len = b1 - b0;
      size_t pos = 0;      // bytes within the piece
      size_t emitted = 0;  // bytes of the piece already turned into sub-pieces
      while (pos < sub_len) {
        pcre2_match_context* mctx = impl_->mctx;
        int rc = impl_->jit[r] ? pcre2_jit_match(code, sub, sub_len, pos, PCRE2_NO_UTF_CHECK, md, mctx)
                               : pcre2_match(code, sub, sub_len, pos, PCRE2_NO_UTF_CHECK, md, mctx);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
          rc = pcre2_match(code, sub, sub_len, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, mctx);
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) fail("tokenizer: pre-tokenizer regex failed: %s", pcre2_message(rc).c_str());
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t m0 = ov[0], m1 = ov[1];
        if (m1 == m0) {  // none of our patterns match empty; step over it to stay safe
          pos = m1 + unicode::utf8_len(static_cast<uint8_t>(subject[b0 + m1]));
          continue;
        }
        if (m0 > emitted) next.push_back(cp_at_byte[b0 + m0] - cp_at_byte[b0 + emitted]);
        next.push_back(cp_at_byte[b0 + m1] - cp_at_byte[b0 + m0]);
        emitted = pos = m1;
      }
      if (emitted < sub_len) next.push_back(cp_at_byte[b0 + sub_len] - cp_at_byte[b0 + emitted]);
      piece_start += len;
    }
    pieces = std::move(next);
  }

  std::vector<std::string> words;
  words.reserve(pieces.size());
  size_t start = 0;
  for (size_t len : pieces) {
    std::string w;
    for (size_t i = start; i < start + len; ++i) unicode::append_utf8(w, cps[i]);
    words.push_back(std::move(w));
    start += len;
  }
  return words;
}

}  // namespace hexllm::tokenizer
