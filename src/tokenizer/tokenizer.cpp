#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "tokenizer/algorithms.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"

namespace hexllm::tokenizer {

namespace {

// Token attributes (llama.cpp's llama_token_attr bits that matter here).
enum Attr : uint32_t {
  kUnknown = 1u << 0,
  kUnused = 1u << 1,
  kNormal = 1u << 2,
  kControl = 1u << 3,
  kUserDefined = 1u << 4,
  kByte = 1u << 5,
  kLstrip = 1u << 7,
  kRstrip = 1u << 8,
};

uint32_t attr_of(TokenType t) {
  switch (t) {
    case TokenType::NORMAL:
      return kNormal;
    case TokenType::UNKNOWN:
      return kUnknown;
    case TokenType::CONTROL:
      return kControl;
    case TokenType::USER_DEFINED:
      return kUserDefined;
    case TokenType::UNUSED:
      return kUnused;
    case TokenType::BYTE:
      return kByte;
    case TokenType::UNDEFINED:
      break;
  }
  return 0;
}

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Texts llama.cpp treats as end-of-turn (first found becomes eot) and end-of-generation.
constexpr std::string_view kEotTexts[] = {"<|eot_id|>",
                                          "<|im_end|>",
                                          "<|end|>",
                                          "<end_of_turn>",
                                          "<|endoftext|>",
                                          "<EOT>",
                                          "_<EOT>",
                                          "<\xEF\xBD\x9C"
                                          "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};
constexpr std::string_view kEogTexts[] = {"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
                                          "<|endoftext|>", "<|eom_id|>", "<EOT>",   "_<EOT>"};
// Fill-in-the-middle pad / repo / file-separator tokens: the first of each group found also ends
// generation in llama.cpp (Qwen2.5 has all three).
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                             "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string escape_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char c : s) {
    if (c == ' ') {
      out += kSpaceMark;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
      out += ' ';
      i += kSpaceMark.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// BPE token text (GPT-2 alphabet) back to bytes. Characters outside the alphabet are spelled
// out the way llama.cpp does it, so garbage stays visible.
std::string bpe_text_to_bytes(const std::string& text) {
  std::string out;
  bool plain = true;  // fast path: printable ASCII maps to itself
  for (char c : text) plain = plain && c >= '!' && c <= '~';
  if (plain) return text;
  for (uint32_t cp : unicode::decode_utf8(text)) {
    const int b = unicode::bpe_char_to_byte(cp);
    if (b >= 0) {
      out += static_cast<char>(b);
      continue;
    }
    std::string utf8;
    unicode::append_utf8(utf8, cp);
    out += "[UNK_BYTE_0x";
    for (char c : utf8) out += strprintf("%02x", static_cast<unsigned>(static_cast<uint8_t>(c)));
    out += text + "]";
  }
  return out;
}

// Value of the hex digits after "<0x" in a byte token's text (strtol-like, stops at a non-digit).
uint8_t byte_token_value(const std::string& text) {
  unsigned v = 0;
  for (size_t i = 3; i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    v = v * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return static_cast<uint8_t>(v);
}

// llama.cpp's three detokenizer clean-up passes, byte for byte.
std::string clean_up_spaces(std::string in) {
  auto pass = [](const std::string& s, auto&& step) {
    std::string out;
    if (s.empty()) return out;
    std::string buf = s;  // step may blank a byte ahead of the cursor
    out += buf[0];
    for (size_t i = 1; i < buf.size(); ++i) step(buf, i, out);
    return out;
  };
  in = pass(in, [](std::string& s, size_t& i, std::string& out) {
    const char x = s[i];
    if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) out.pop_back();
    out += x;
  });
  in = pass(in, [](std::string& s, size_t& i, std::string& out) {
    const char x = s[i];
    if (x == '\'' && i + 1 < s.size() && s[i - 1] == ' ' && s[i + 1] == ' ') {  // " ' " -> "'"
      out.pop_back();
      s[++i] = '\0';
    }
    out += x;
  });
  in = pass(in, [](std::string& s, size_t& i, std::string& out) {
    const char x = s[i];
    if (s[i - 1] == ' ' && x == '\'' && i + 1 < s.size() && (s[i + 1] == 's' || s[i + 1] == 'm')) {
      out.pop_back();  // " 's" -> "'s", " 'm" -> "'m"
    }
    out += x;
  });
  return in;
}

struct Fragment {
  int32_t token;  // -1: raw text [off, off + len)
  size_t off;
  size_t len;
};

}  // namespace

struct Tokenizer::Impl {
  Vocab vocab;
  bool spm = false;
  bool clean_spaces = false;
  std::vector<uint32_t> attrs;
  detail::StringTable ids;
  detail::SpmModel spm_model;
  detail::BpeModel bpe_model;
  std::unique_ptr<Pretokenizer> pretok;
  std::vector<int32_t> specials;  // CONTROL / USER_DEFINED / UNKNOWN, longest text first
  std::vector<std::string> pieces;
  std::vector<int32_t> eog;  // sorted

  int32_t find(std::string_view text) const { return ids.find(text); }

  void partition(std::string_view text, std::vector<Fragment>& frags, bool parse_special) const;
};

Tokenizer::Tokenizer(Vocab v) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.vocab = std::move(v);
  Vocab& voc = m.vocab;
  const int32_t n = voc.size();

  if (voc.model == "llama") {
    m.spm = true;
  } else if (voc.model != "gpt2") {
    fail("tokenizer: unsupported tokenizer model '%s' (supported: llama, gpt2)", voc.model.c_str());
  }
  if (n == 0) fail("tokenizer: vocabulary has no tokens");
  if (!voc.scores.empty() && voc.scores.size() != voc.tokens.size()) {
    fail("tokenizer: %zu scores for %d tokens", voc.scores.size(), n);
  }
  if (!voc.types.empty() && voc.types.size() != voc.tokens.size()) {
    fail("tokenizer: %zu token types for %d tokens", voc.types.size(), n);
  }
  if (voc.scores.empty()) voc.scores.assign(voc.tokens.size(), 0.0f);
  const std::pair<const char*, int32_t*> special_ids[] = {
      {"bos", &voc.bos}, {"eos", &voc.eos}, {"unk", &voc.unk}, {"sep", &voc.sep},
      {"pad", &voc.pad}, {"eot", &voc.eot}, {"eom", &voc.eom}};
  for (const auto& [what, id] : special_ids) {
    if (*id < -1 || *id >= n) fail("tokenizer: %s token id %d outside the vocabulary of %d", what, *id, n);
  }

  m.attrs.resize(voc.tokens.size());
  for (int32_t i = 0; i < n; ++i) m.attrs[i] = voc.types.empty() ? kNormal : attr_of(voc.types[i]);
  m.ids.build(&voc.tokens, /*last_wins=*/true, [](const std::string&) { return true; });

  // End-of-turn / end-of-generation tokens by text; llama.cpp also forces them to CONTROL.
  if (voc.eot < 0) {
    for (std::string_view t : kEotTexts) {
      if (const int32_t id = m.find(t); id >= 0) {
        voc.eot = id;
        break;
      }
    }
    if (voc.eot >= 0) m.attrs[voc.eot] = kControl;
  }
  if (voc.eom < 0) voc.eom = m.find("<|eom_id|>");
  for (std::span<const std::string_view> group :
       {std::span<const std::string_view>(kFimPadTexts), std::span<const std::string_view>(kFimRepTexts),
        std::span<const std::string_view>(kFimSepTexts)}) {
    for (std::string_view t : group) {
      if (const int32_t id = m.find(t); id >= 0) {
        m.eog.push_back(id);
        m.attrs[id] = kControl;
        break;
      }
    }
  }
  for (std::string_view t : kEogTexts) {
    if (const int32_t id = m.find(t); id >= 0) {
      m.eog.push_back(id);
      m.attrs[id] = kControl;
    }
  }
  for (int32_t id : {voc.eos, voc.eot, voc.eom}) {
    if (id >= 0) m.eog.push_back(id);
  }
  std::sort(m.eog.begin(), m.eog.end());
  m.eog.erase(std::unique(m.eog.begin(), m.eog.end()), m.eog.end());

  for (int32_t i = 0; i < n; ++i) {
    if ((m.attrs[i] & (kControl | kUserDefined | kUnknown)) && !voc.tokens[i].empty())
      m.specials.push_back(i);
  }
  std::stable_sort(m.specials.begin(), m.specials.end(),
                   [&](int32_t a, int32_t b) { return voc.tokens[a].size() > voc.tokens[b].size(); });

  // Phi-3: special tokens swallow the whitespace after them (llama.cpp keys this on the name).
  std::string lname = voc.name;
  for (char& c : lname) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lname.find("phi-3") != std::string::npos || lname.find("phi3") != std::string::npos) {
    for (int32_t id : m.specials) m.attrs[id] |= kRstrip;
    if (const int32_t id = m.find("</s>"); id >= 0) m.attrs[id] |= kRstrip;
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const int32_t id = m.find(t); id >= 0) m.attrs[id] &= ~kRstrip;
    }
  }

  m.pieces.resize(voc.tokens.size());
  for (int32_t i = 0; i < n; ++i) {
    const uint32_t a = m.attrs[i];
    const std::string& text = voc.tokens[i];
    if (a & (kUnknown | kControl | kUserDefined)) {
      m.pieces[i] = text;
    } else if (a & kNormal) {
      m.pieces[i] = m.spm ? unescape_spaces(text) : bpe_text_to_bytes(text);
    } else if ((a & kByte) && m.spm) {
      m.pieces[i] = std::string(1, static_cast<char>(byte_token_value(text)));
    }
  }

  if (m.spm) {
    m.spm_model.ids = &m.ids;
    m.spm_model.scores = &voc.scores;
    for (int b = 0; b < 256; ++b) {
      int32_t id = m.find(strprintf("<0x%02X>", b));
      if (id < 0) id = m.find(std::string(1, static_cast<char>(b)));
      if (id < 0) id = voc.unk;
      m.spm_model.byte_tokens[b] = id;
    }
  } else {
    const PreType pre = pre_type_from_name(voc.pre);
    m.clean_spaces = pre != PreType::QWEN2;
    m.bpe_model.ids = &m.ids;
    m.bpe_model.ignore_merges = pre == PreType::LLAMA3;
    // llama.cpp splits a merge at the first space after its first byte; keying by the whole
    // string is the same for every pair a word can produce (mapped words contain no spaces).
    m.bpe_model.ranks.build(&voc.merges, /*last_wins=*/false, [](const std::string& mg) {
      return mg.size() >= 2 && mg.find(' ', 1) != std::string::npos;
    });
    m.pretok = std::make_unique<Pretokenizer>(pre_patterns(pre));
  }
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

// Splits raw text on special-token texts, one token at a time, longest first (llama.cpp's
// order; this differs from a left-to-right scan only when specials overlap).
void Tokenizer::Impl::partition(std::string_view text, std::vector<Fragment>& frags,
                                bool parse_special) const {
  std::vector<Fragment> next;
  for (int32_t id : specials) {
    const uint32_t a = attrs[id];
    if (!parse_special && (a & (kControl | kUnknown))) continue;
    const std::string& tok = vocab.tokens[id];
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t off = f.off, len = f.len;
      while (len > 0) {
        const size_t hit = text.substr(off, len).find(tok);
        if (hit == std::string_view::npos) {
          next.push_back({-1, off, len});
          break;
        }
        size_t left_len = hit;
        if (a & kLstrip) {
          while (left_len > 0 && is_ascii_space(text[off + left_len - 1])) --left_len;
        }
        if (left_len > 0) next.push_back({-1, off, left_len});
        next.push_back({id, 0, 0});
        size_t right_off = off + hit + tok.size();
        size_t right_len = off + len - right_off;
        if (a & kRstrip) {
          while (right_len > 0 && is_ascii_space(text[right_off])) {
            ++right_off;
            --right_len;
          }
        }
        off = right_off;
        len = right_len;
      }
    }
    frags.swap(next);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Impl& m = *impl_;
  const Vocab& v = m.vocab;
  std::vector<Fragment> frags;
  if (!text.empty()) {
    frags.push_back({-1, 0, text.size()});
    m.partition(text, frags, parse_special);
  }

  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_special && v.add_bos) {
    if (v.bos < 0) fail("tokenizer: the vocab asks for a BOS token but has no bos id");
    out.push_back(v.bos);
  }
  if (m.spm) {
    bool prev_special = true;  // the text start counts as "after a special token"
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        out.push_back(f.token);
        prev_special = true;
        continue;
      }
      std::string raw;
      if (v.add_space_prefix && prev_special) raw = " ";
      raw.append(text.substr(f.off, f.len));
      detail::spm_encode(m.spm_model, escape_spaces(raw), out);
      prev_special = false;
    }
  } else {
    std::string mapped;
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        out.push_back(f.token);
        continue;
      }
      for (const std::string& word : m.pretok->split(text.substr(f.off, f.len))) {
        mapped.clear();
        for (char c : word) mapped += unicode::byte_to_bpe_char(static_cast<uint8_t>(c));
        detail::bpe_encode_word(m.bpe_model, mapped, out);
      }
    }
  }
  if (add_special && v.add_eos) {
    if (v.eos < 0) fail("tokenizer: the vocab asks for an EOS token but has no eos id");
    out.push_back(v.eos);
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  const Impl& m = *impl_;
  if (id < 0 || id >= m.vocab.size())
    fail("tokenizer: token id %d outside the vocabulary of %d", id, m.vocab.size());
  if (!render_special && (m.attrs[id] & (kControl | kUnknown))) return {};
  return m.pieces[id];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, const DecodeOptions& opts) const {
  const Impl& m = *impl_;
  const Vocab& v = m.vocab;
  bool strip_space = v.add_space_prefix;
  if (opts.remove_special && v.add_bos && !ids.empty() && ids.front() == v.bos) {
    strip_space = false;
    ids = ids.subspan(1);
  }
  if (opts.remove_special && v.add_eos && !ids.empty() && ids.back() == v.eos)
    ids = ids.first(ids.size() - 1);

  std::string out;
  for (int32_t id : ids) {
    const std::string piece = token_to_piece(id, opts.unparse_special);
    const size_t skip = (strip_space && !piece.empty() && piece[0] == ' ') ? 1 : 0;
    out.append(piece, skip);
    strip_space = false;
  }
  if (opts.clean_spaces && m.clean_spaces) out = clean_up_spaces(std::move(out));
  return out;
}

int32_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
int32_t Tokenizer::bos() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos() const { return impl_->vocab.eos; }
int32_t Tokenizer::eot() const { return impl_->vocab.eot; }
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }
const Vocab& Tokenizer::vocab() const { return impl_->vocab; }
std::vector<int32_t> Tokenizer::eog_ids() const { return impl_->eog; }

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && std::binary_search(impl_->eog.begin(), impl_->eog.end(), id);
}

bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && (impl_->attrs[id] & (kControl | kUnknown)) != 0;
}

int32_t Tokenizer::token_id(std::string_view text) const { return impl_->find(text); }

std::string StreamDecoder::push(int32_t id) {
  pending_ += tok_->token_to_piece(id, render_special_);
  return take_complete(false);
}

std::string StreamDecoder::flush() { return take_complete(true); }

std::string StreamDecoder::take_complete(bool final) {
  static constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const int r = unicode::utf8_check(pending_, i);
    if (r > 0) {
      out.append(pending_, i, static_cast<size_t>(r));
      i += static_cast<size_t>(r);
    } else if (r < 0) {
      out += kReplacementUtf8;
      i += static_cast<size_t>(-r);
    } else if (final) {  // incomplete character at the very end
      out += kReplacementUtf8;
      i = pending_.size();
    } else {
      break;  // wait for the rest of the character
    }
  }
  pending_.erase(0, i);
  return out;
}

}  // namespace hexllm::tokenizer
