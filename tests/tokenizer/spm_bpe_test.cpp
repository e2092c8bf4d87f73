// The two merge algorithms on hand-built vocabularies; every expected id list is worked out by
// hand from the algorithm's rules (SPM: highest score first; BPE: lowest rank first; ties go
// to the leftmost pair).
#include <gtest/gtest.h>

#include "base/error.h"
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

Tokenizer spm_no_prefix(const std::vector<std::pair<std::string, float>>& normal) {
  Vocab v = tiny_spm(normal);
  v.add_space_prefix = false;
  return Tokenizer(std::move(v));
}

TEST(Spm, HigherScoreMergesFirst) {
  // a b c ab bc: "bc" (-0.5) beats "ab" (-1), and "a"+"bc" is not a token.
  EXPECT_EQ(
      spm_no_prefix({{"a", -3}, {"b", -3}, {"c", -3}, {"ab", -1}, {"bc", -0.5}}).encode("abc", false, false),
      (Ids{N + 0, N + 4}));
  EXPECT_EQ(
      spm_no_prefix({{"a", -3}, {"b", -3}, {"c", -3}, {"ab", -0.5}, {"bc", -1}}).encode("abc", false, false),
      (Ids{N + 3, N + 2}));
}

TEST(Spm, EqualScoresMergeLeftmostFirst) {
  EXPECT_EQ(
      spm_no_prefix({{"a", -3}, {"b", -3}, {"c", -3}, {"ab", -1}, {"bc", -1}}).encode("abc", false, false),
      (Ids{N + 3, N + 2}));
}

TEST(Spm, MergesChainThroughLowerScores) {
  // ab, then ab+c = "abc" exists (even with a lower score) and is taken.
  EXPECT_EQ(
      spm_no_prefix({{"a", -3}, {"b", -3}, {"c", -3}, {"ab", -1}, {"abc", -2}}).encode("abc", false, false),
      (Ids{N + 4}));
}

TEST(Spm, SpacePrefixAndEscaping) {
  const std::vector<std::pair<std::string, float>> normal = {
      {kSp, -5}, {"a", -3}, {kSp + "a", -2}, {"b", -3}};
  const Tokenizer with(tiny_spm(normal));
  // "a b" -> "▁a▁b": only "▁a" is a token pair.
  EXPECT_EQ(with.encode("a b", false, false), (Ids{N + 2, N + 0, N + 3}));
  // " a" -> "▁▁a"
  EXPECT_EQ(with.encode(" a", false, false), (Ids{N + 0, N + 2}));
  const Tokenizer without = spm_no_prefix(normal);
  EXPECT_EQ(without.encode("a b", false, false), (Ids{N + 1, N + 0, N + 3}));
}

TEST(Spm, UnknownCharactersFallBackToByteTokens) {
  const Tokenizer tok(tiny_spm({{kSp, -5}, {"a", -3}}));
  EXPECT_EQ(tok.encode("\xC3\xA9", false, false), (Ids{N + 0, spm_byte(0xC3), spm_byte(0xA9)}));
  EXPECT_EQ(tok.encode("a\n", false, false), (Ids{N + 0, N + 1, spm_byte('\n')}));
}

TEST(Spm, UnknownTokenWhenThereAreNoByteTokens) {
  Vocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "a"};
  v.types = {TokenType::UNKNOWN, TokenType::NORMAL};
  v.unk = 0;
  EXPECT_EQ(Tokenizer(v).encode("az", false, false), (Ids{1, 0}));
  v.unk = -1;
  EXPECT_THROW(Tokenizer(v).encode("az", false, false), Error);
}

TEST(Spm, BosAndEos) {
  Vocab v = tiny_spm({{kSp, -5}, {"a", -3}, {kSp + "a", -2}});
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{1, N + 2}));
  EXPECT_EQ(Tokenizer(v).encode("a", false, false), (Ids{N + 2}));
  EXPECT_EQ(Tokenizer(v).encode("", true, false), (Ids{1}));
  EXPECT_EQ(Tokenizer(v).encode("", false, false), (Ids{}));
  v.add_eos = true;
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{1, N + 2, 2}));
}

// Bytes are ids 0..255 ('a' = 97, ' ' = 32, ...), extra tokens from 256.
TEST(Bpe, LowestRankMergesFirst) {
  // Words "abc" and " ab" (mapped "Ġab"). In the second word "a b" (rank 0) beats "Ġ a".
  const Tokenizer tok(tiny_bpe("gpt-2",
                               {"ab",
                                "\xC4\xA0"
                                "a",
                                "abc"},
                               {"a b", "\xC4\xA0 a", "ab c"}));
  EXPECT_EQ(tok.encode("abc ab", false, false), (Ids{258, 32, 256}));
  const Tokenizer swapped(tiny_bpe("gpt-2",
                                   {"ab",
                                    "\xC4\xA0"
                                    "a",
                                    "abc"},
                                   {"\xC4\xA0 a", "a b", "ab c"}));
  EXPECT_EQ(swapped.encode("abc ab", false, false), (Ids{258, 257, 'b'}));
}

TEST(Bpe, EqualRankPairsMergeLeftmostFirst) {
  // "aaa": pairs (a,a) at 0 and 1 have the same rank; the left one merges first.
  const Tokenizer tok(tiny_bpe("gpt-2", {"aa"}, {"a a"}));
  EXPECT_EQ(tok.encode("aaa", false, false), (Ids{256, 'a'}));
}

TEST(Bpe, FirstDuplicateMergeWins) {
  const Tokenizer tok(tiny_bpe("gpt-2", {"ab", "bc"}, {"b c", "a b", "b c"}));
  EXPECT_EQ(tok.encode("abc", false, false), (Ids{'a', 257}));
}

TEST(Bpe, MergedTextThatIsNotATokenFallsBackToSingleBytes) {
  const Tokenizer tok(tiny_bpe("gpt-2", {}, {"x y"}));
  EXPECT_EQ(tok.encode("xy", false, false), (Ids{'x', 'y'}));
  // A non-ASCII result falls back to single bytes of its mapped form, which are not tokens:
  // llama.cpp drops them, and so do we.
  const Tokenizer drop(tiny_bpe("gpt-2", {}, {"\xC3\x83 \xC2\xA9"}));
  EXPECT_EQ(drop.encode("\xC3\xA9", false, false), (Ids{}));
}

TEST(Bpe, Llama3TakesWholeWordTokensIgnoringMerges) {
  const std::vector<std::string> extra = {"ab", "abc"};
  EXPECT_EQ(Tokenizer(tiny_bpe("llama-bpe", extra, {"a b"})).encode("abc", false, false), (Ids{257}));
  EXPECT_EQ(Tokenizer(tiny_bpe("gpt-2", extra, {"a b"})).encode("abc", false, false), (Ids{256, 'c'}));
}

TEST(Bpe, BytesOfNonAsciiText) {
  // No merges: every byte is its own token, in the GPT-2 alphabet.
  const Tokenizer tok(tiny_bpe("qwen2", {}, {}));
  EXPECT_EQ(tok.encode("\xC3\xA9!", false, false), (Ids{0xC3, 0xA9, '!'}));
}

TEST(Bpe, BosWhenAsked) {
  Vocab v = tiny_bpe("llama-bpe", {"<|begin_of_text|>"}, {});
  v.types[256] = TokenType::CONTROL;
  v.bos = 256;
  v.add_bos = true;
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{256, 'a'}));
  EXPECT_EQ(Tokenizer(v).encode("a", false, false), (Ids{'a'}));
  v.bos = -1;
  EXPECT_THROW(Tokenizer(v).encode("a", true, false), Error);
}

TEST(VocabChecks, BadVocabulariesAreRejected) {
  Vocab v = tiny_bpe("gpt-2", {}, {});
  v.model = "bert";
  EXPECT_THROW(Tokenizer{v}, Error);
  v = tiny_bpe("no-such-pre", {}, {});
  EXPECT_THROW(Tokenizer{v}, Error);
  v = tiny_spm({});
  v.scores.pop_back();
  EXPECT_THROW(Tokenizer{v}, Error);
  v = tiny_spm({});
  v.types.push_back(TokenType::NORMAL);
  EXPECT_THROW(Tokenizer{v}, Error);
  v = tiny_spm({});
  v.eos = v.size();
  EXPECT_THROW(Tokenizer{v}, Error);
  v = Vocab{};
  v.model = "llama";
  EXPECT_THROW(Tokenizer{v}, Error);
}

}  // namespace
}  // namespace hexllm::tokenizer
