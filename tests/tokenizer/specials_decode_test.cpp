// Special-token parsing, end-of-generation ids, detokenization and streaming, on hand-built
// vocabularies. Expected values follow llama.cpp's documented rules, worked out by hand.
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tiny_vocabs.h"
#include "tokenizer/tokenizer.h"

namespace hexllm::tokenizer {
namespace {

using testing::kSpmFirstNormal;
using testing::spm_byte;
using testing::tiny_bpe;
using testing::tiny_spm;
using Ids = std::vector<int32_t>;

constexpr int32_t N = kSpmFirstNormal;
const std::string kSp = "\xE2\x96\x81";  // U+2581

// Bytes are ids 0..255; 256 <|im_start|>, 257 <|im_end|>, 259 <x>, 260 <x><y> are CONTROL,
// 258 <tool> is USER_DEFINED.
Vocab chat_bpe() {
  Vocab v = tiny_bpe("gpt-2", {"<|im_start|>", "<|im_end|>", "<tool>", "<x>", "<x><y>"}, {});
  for (int id : {256, 257, 259, 260}) v.types[id] = TokenType::CONTROL;
  v.types[258] = TokenType::USER_DEFINED;
  return v;
}

Ids bytes_of(const std::string& s) {
  Ids ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

TEST(Specials, ControlTokensAreParsedOnlyWhenAsked) {
  const Tokenizer tok(chat_bpe());
  EXPECT_EQ(tok.encode("x<|im_end|>y", false, true), (Ids{'x', 257, 'y'}));
  EXPECT_EQ(tok.encode("x<|im_end|>y", false, false), bytes_of("x<|im_end|>y"));
  EXPECT_EQ(tok.encode("<|im_start|><|im_end|>", false, true), (Ids{256, 257}));
}

TEST(Specials, UserDefinedTokensAreAlwaysSplitOut) {
  const Tokenizer tok(chat_bpe());
  EXPECT_EQ(tok.encode("a<tool>b", false, false), (Ids{'a', 258, 'b'}));
  EXPECT_EQ(tok.encode("a<tool>b", false, true), (Ids{'a', 258, 'b'}));
}

TEST(Specials, LongestTokenTextIsMatchedFirst) {
  const Tokenizer tok(chat_bpe());
  EXPECT_EQ(tok.encode("<x><y><x>", false, true), (Ids{260, 259}));
}

// SPM: ▁ 259, h 260, i 261, hi 262, ▁hi 263, <|user|> 264 (CONTROL).
Vocab chat_spm() {
  Vocab v = tiny_spm({{kSp, -5}, {"h", -3}, {"i", -3}, {"hi", -2}, {kSp + "hi", -1}, {"<|user|>", 0}});
  v.types.back() = TokenType::CONTROL;
  return v;
}

TEST(Specials, SpmTextAfterASpecialTokenGetsTheSpacePrefix) {
  const Tokenizer tok(chat_spm());
  EXPECT_EQ(tok.encode("hi", false, true), (Ids{N + 4}));
  EXPECT_EQ(tok.encode("<|user|>hi", false, true), (Ids{N + 5, N + 4}));
  EXPECT_EQ(tok.encode("hi<|user|>hi", false, true), (Ids{N + 4, N + 5, N + 4}));
  EXPECT_EQ(tok.encode("<|user|>hi", true, true), (Ids{1, N + 5, N + 4}));
  // "  hi" after the token -> "▁▁▁hi": h+i, then ▁+hi.
  EXPECT_EQ(tok.encode("<|user|>  hi", false, true), (Ids{N + 5, N + 0, N + 0, N + 4}));
  Vocab v = chat_spm();
  v.add_space_prefix = false;
  EXPECT_EQ(Tokenizer(v).encode("<|user|>hi", false, true), (Ids{N + 5, N + 3}));
}

TEST(Specials, Phi3SpecialTokensSwallowFollowingWhitespace) {
  Vocab v = chat_spm();
  v.name = "Phi3";
  EXPECT_EQ(Tokenizer(v).encode("<|user|>  hi", false, true), (Ids{N + 5, N + 4}));
}

TEST(Specials, EndOfGenerationTokens) {
  Vocab v = chat_bpe();
  v.eos = 'e';  // any id
  const Tokenizer tok(v);
  EXPECT_EQ(tok.eot(), 257);  // found by its text "<|im_end|>"
  EXPECT_TRUE(tok.is_eog(257));
  EXPECT_TRUE(tok.is_eog('e'));
  EXPECT_FALSE(tok.is_eog(256));
  EXPECT_FALSE(tok.is_eog('a'));
  EXPECT_FALSE(tok.is_eog(-1));
  EXPECT_EQ(tok.eog_ids(), (Ids{'e', 257}));
}

TEST(Specials, EndOfTurnTextIsForcedToControl) {
  Vocab v = chat_bpe();
  v.types[257] = TokenType::NORMAL;
  const Tokenizer tok(v);
  EXPECT_TRUE(tok.is_control(257));
  EXPECT_EQ(tok.token_to_piece(257, false), "");
  EXPECT_EQ(tok.encode("<|im_end|>", false, false), bytes_of("<|im_end|>"));
  EXPECT_EQ(tok.encode("<|im_end|>", false, true), (Ids{257}));
}

TEST(Decode, SpmStripsOneLeadingSpaceOfTheFirstPiece) {
  const Tokenizer tok(chat_spm());
  EXPECT_EQ(tok.decode(Ids{N + 4, N + 4}), "hi hi");
  EXPECT_EQ(tok.decode(Ids{N + 0, N + 4}), " hi");
  EXPECT_EQ(tok.decode(Ids{spm_byte(0xC3), spm_byte(0xA9)}), "\xC3\xA9");
  // A leading BOS takes the strip (its text has no space) ...
  EXPECT_EQ(tok.decode(Ids{1, N + 4}), "<s> hi");
  // ... also when it renders as nothing, and when it is removed (llama.cpp keeps the space).
  EXPECT_EQ(tok.decode(Ids{1, N + 4}, {.remove_special = false, .unparse_special = false}), " hi");
  EXPECT_EQ(tok.decode(Ids{1, N + 4}, {.remove_special = true}), " hi");
  EXPECT_EQ(tok.decode(Ids{N + 5, N + 4}), "<|user|> hi");
  EXPECT_EQ(tok.decode(Ids{N + 5, N + 4}, {.unparse_special = false}), " hi");
}

TEST(Decode, RemoveSpecialDropsTrailingEosOnlyWhenTheVocabAddsIt) {
  Vocab v = chat_spm();
  EXPECT_EQ(Tokenizer(v).decode(Ids{N + 4, 2}, {.remove_special = true}), "hi</s>");
  v.add_eos = true;
  EXPECT_EQ(Tokenizer(v).decode(Ids{N + 4, 2}, {.remove_special = true}), "hi");
}

TEST(Decode, BpeMapsBackToBytes) {
  const Tokenizer tok(tiny_bpe("gpt-2",
                               {"ab",
                                "\xC4\xA0"
                                "a"},
                               {}));
  EXPECT_EQ(tok.decode(Ids{257, 256, 0xC3, 0xA9}), " aab\xC3\xA9");
  EXPECT_EQ(tok.token_to_piece(257), " a");
}

TEST(Decode, BpeTokenTextOutsideTheByteAlphabetIsSpelledOut) {
  const Tokenizer tok(tiny_bpe("gpt-2", {" x"}, {}));  // a raw space is not in GPT-2's alphabet
  EXPECT_EQ(tok.token_to_piece(256), "[UNK_BYTE_0x20 x]x");
}

TEST(Decode, CleanSpacesOnlyWhereTheVocabEnablesIt) {
  const std::string text = "a , b ' c 's d 'm e 't";
  const Tokenizer gpt2(tiny_bpe("gpt-2", {}, {}));
  EXPECT_EQ(gpt2.decode(gpt2.encode(text, false, false)), text);
  EXPECT_EQ(gpt2.decode(gpt2.encode(text, false, false), {.clean_spaces = true}), "a, b'c's d'm e 't");
  const Tokenizer qwen(tiny_bpe("qwen2", {}, {}));
  EXPECT_EQ(qwen.decode(qwen.encode(text, false, false), {.clean_spaces = true}), text);
}

TEST(Decode, RenderSpecialControlsControlAndUnknownOnly) {
  const Tokenizer tok(chat_bpe());
  EXPECT_EQ(tok.token_to_piece(257, true), "<|im_end|>");
  EXPECT_EQ(tok.token_to_piece(257, false), "");
  EXPECT_EQ(tok.token_to_piece(258, false), "<tool>");
  EXPECT_EQ(tok.decode(Ids{256, 'h', 'i', 257}, {.unparse_special = false}), "hi");
}

TEST(Decode, BadIdsThrow) {
  const Tokenizer tok(chat_bpe());
  EXPECT_THROW(tok.token_to_piece(-1), Error);
  EXPECT_THROW(tok.token_to_piece(tok.n_vocab()), Error);
  EXPECT_THROW(tok.decode(Ids{'a', 100000}), Error);
}

TEST(StreamDecoder, HoldsBackSplitCharacters) {
  const Tokenizer tok(chat_spm());
  StreamDecoder sd(tok);
  EXPECT_EQ(sd.push(N + 4), " hi");
  EXPECT_EQ(sd.push(spm_byte(0xC3)), "");
  EXPECT_EQ(sd.push(spm_byte(0xA9)), "\xC3\xA9");
  // U+1F600 in four byte tokens.
  EXPECT_EQ(sd.push(spm_byte(0xF0)), "");
  EXPECT_EQ(sd.push(spm_byte(0x9F)), "");
  EXPECT_EQ(sd.push(spm_byte(0x98)), "");
  EXPECT_EQ(sd.push(spm_byte(0x80)), "\xF0\x9F\x98\x80");
  EXPECT_EQ(sd.flush(), "");
}

TEST(StreamDecoder, IllFormedBytesBecomeReplacementCharacters) {
  const Tokenizer tok(chat_spm());
  const std::string fffd = "\xEF\xBF\xBD";
  StreamDecoder sd(tok);
  EXPECT_EQ(sd.push(spm_byte(0xFF)), fffd);
  EXPECT_EQ(sd.push(spm_byte(0xC3)), "");
  EXPECT_EQ(sd.push(N + 1), fffd + "h");  // the lead byte was not continued
  EXPECT_EQ(sd.push(spm_byte(0xE2)), "");
  EXPECT_EQ(sd.flush(), fffd);  // incomplete at the end
  EXPECT_EQ(sd.flush(), "");
}

TEST(StreamDecoder, SpecialTokensFollowRenderSpecial) {
  const Tokenizer tok(chat_spm());
  StreamDecoder quiet(tok);
  EXPECT_EQ(quiet.push(N + 5), "");
  StreamDecoder loud(tok, /*render_special=*/true);
  EXPECT_EQ(loud.push(N + 5), "<|user|>");
}

// load_vocab on small in-memory GGUF files.
std::vector<uint8_t> gguf_bytes(const std::function<void(gguf::Writer&)>& fill) {
  gguf::Writer w;
  fill(w);
  return w.to_bytes();
}

TEST(LoadVocab, SpmDefaults) {
  const auto bytes = gguf_bytes([](gguf::Writer& w) {
    w.set_string("general.architecture", "llama");
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
    w.set_f32_array("tokenizer.ggml.scores", {0, 0, 0, -1.5f});
    w.set_i32_array("tokenizer.ggml.token_type", {2, 3, 3, 1});
  });
  const Vocab v = load_vocab(gguf::File::parse(bytes, "mem.gguf"));
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.tokens.size(), 4u);
  EXPECT_EQ(v.scores[3], -1.5f);
  EXPECT_EQ(v.types[0], TokenType::UNKNOWN);
  EXPECT_EQ(v.types[1], TokenType::CONTROL);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.arch, "llama");
}

TEST(LoadVocab, BpeDefaultsDependOnThePreTokenizer) {
  auto load = [](const std::string& pre, std::optional<bool> add_bos) {
    const auto bytes = gguf_bytes([&](gguf::Writer& w) {
      w.set_string("tokenizer.ggml.model", "gpt2");
      w.set_string("tokenizer.ggml.pre", pre);
      std::vector<std::string> toks;
      for (int i = 0; i < 20; ++i) toks.push_back(strprintf("t%d", i));
      w.set_string_array("tokenizer.ggml.tokens", toks);
      w.set_string_array("tokenizer.ggml.merges", {"t 1"});
      w.set_u32("tokenizer.ggml.eos_token_id", 7);
      w.set_u32("tokenizer.ggml.padding_token_id", 99);  // out of range: ignored
      if (add_bos) w.set_bool("tokenizer.ggml.add_bos_token", *add_bos);
    });
    return load_vocab(gguf::File::parse(bytes, "mem.gguf"));
  };
  const Vocab l3 = load("llama-bpe", std::nullopt);
  EXPECT_TRUE(l3.add_bos);
  EXPECT_EQ(l3.bos, 11);
  EXPECT_EQ(l3.eos, 7);
  EXPECT_EQ(l3.pad, -1);
  EXPECT_FALSE(l3.add_space_prefix);
  EXPECT_EQ(l3.merges, (std::vector<std::string>{"t 1"}));
  EXPECT_FALSE(load("gpt-2", std::nullopt).add_bos);
  EXPECT_FALSE(load("qwen2", std::nullopt).add_bos);
  EXPECT_FALSE(load("llama-bpe", false).add_bos);
  EXPECT_TRUE(load("qwen2", true).add_bos);
}

TEST(LoadVocab, MissingOrInconsistentKeysThrow) {
  const auto no_model =
      gguf_bytes([](gguf::Writer& w) { w.set_string_array("tokenizer.ggml.tokens", {"a"}); });
  EXPECT_THROW(load_vocab(gguf::File::parse(no_model, "mem.gguf")), Error);
  const auto no_tokens = gguf_bytes([](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "llama"); });
  EXPECT_THROW(load_vocab(gguf::File::parse(no_tokens, "mem.gguf")), Error);
  const auto bad_scores = gguf_bytes([](gguf::Writer& w) {
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_string_array("tokenizer.ggml.tokens", {"a", "b"});
    w.set_f32_array("tokenizer.ggml.scores", {0});
  });
  EXPECT_THROW(load_vocab(gguf::File::parse(bad_scores, "mem.gguf")), Error);
  const auto no_merges = gguf_bytes([](gguf::Writer& w) {
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string_array("tokenizer.ggml.tokens", {"a", "b"});
  });
  EXPECT_THROW(load_vocab(gguf::File::parse(no_merges, "mem.gguf")), Error);
  const auto wrong_type = gguf_bytes([](gguf::Writer& w) {
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_f32_array("tokenizer.ggml.tokens", {1, 2});
  });
  EXPECT_THROW(load_vocab(gguf::File::parse(wrong_type, "mem.gguf")), Error);
  const auto unknown_model = gguf_bytes([](gguf::Writer& w) {
    w.set_string("tokenizer.ggml.model", "t5");
    w.set_string_array("tokenizer.ggml.tokens", {"a"});
  });
  EXPECT_THROW(load_vocab(gguf::File::parse(unknown_model, "mem.gguf")), Error);
}

}  // namespace
}  // namespace hexllm::tokenizer
