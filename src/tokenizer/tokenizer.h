// Text <-> token ids with llama.cpp's exact behaviour (SentencePiece and byte-level BPE),
// special-token parsing, detokenization and UTF-8-safe streaming.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace hexllm::tokenizer {

struct DecodeOptions {
  bool remove_special = false;  // drop a leading BOS / trailing EOS the vocab would add
  bool unparse_special = true;  // render CONTROL/UNKNOWN tokens as their text
  // Apply llama.cpp's detokenizer clean-up (" ?" -> "?", " 's" -> "'s", ...) where the vocab
  // enables it (gpt-2 and llama-bpe style BPE). Off by default: it does not round-trip.
  bool clean_spaces = false;
};

class Tokenizer {
 public:
  // Validates the vocabulary and builds lookup tables; throws hexllm::Error on bad input.
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // add_special: BOS/EOS as the vocab says. parse_special: CONTROL token texts in `text` become
  // those tokens (USER_DEFINED token texts are always matched, as in llama.cpp).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // Raw bytes of one token (may be part of a UTF-8 character). CONTROL/UNKNOWN tokens give
  // their text only when render_special. Throws for ids outside the vocabulary.
  std::string token_to_piece(int32_t id, bool render_special = true) const;

  // Concatenated pieces; for SPM (add_space_prefix) the first piece loses one leading space,
  // so decode(encode(x)) == x for plain text.
  std::string decode(std::span<const int32_t> ids, const DecodeOptions& opts = {}) const;

  int32_t n_vocab() const;
  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  bool add_bos() const;
  bool is_eog(int32_t id) const;                  // eos, eot, eom and "<|im_end|>", "<end_of_turn>", ...
  bool is_control(int32_t id) const;              // CONTROL or UNKNOWN: not text
  int32_t token_id(std::string_view text) const;  // exact token text -> id, or -1
  std::vector<int32_t> eog_ids() const;
  const Vocab& vocab() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of generated ids into text chunks that are always complete, valid UTF-8:
// bytes of a character split across tokens are held back until it is complete. Ill-formed
// bytes become U+FFFD.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool render_special = false)
      : tok_(&tok), render_special_(render_special) {}

  std::string push(int32_t id);
  // Emits whatever is held (an incomplete character becomes U+FFFD) and resets.
  std::string flush();

 private:
  std::string take_complete(bool final);

  const Tokenizer* tok_;
  bool render_special_;
  std::string pending_;
};

}  // namespace hexllm::tokenizer
