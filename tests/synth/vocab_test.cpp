// The built-in tokenizer: GPT-2's byte alphabet (hand-checked code points), the pre-splitter
// and merge learner on hand-traced inputs, and the consistency of every preset's vocabulary.
#include "synth/vocab.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "synth/bpe_learn.h"
#include "synth/presets.h"

namespace hexllm::synth {
namespace {

TEST(SynthVocab, ByteToUnicodeIsGpt2Mapping) {
  const auto& m = byte_to_unicode();
  EXPECT_EQ(m['A'], "A");
  EXPECT_EQ(m['!'], "!");
  EXPECT_EQ(m['~'], "~");
  EXPECT_EQ(m[0xFF], "\xC3\xBF");  // U+00FF: printable, maps to itself
  EXPECT_EQ(m[0x00], "\xC4\x80");  // U+0100: first remapped byte
  EXPECT_EQ(m['\n'], "\xC4\x8A");  // U+010A "Ċ"
  EXPECT_EQ(m[' '], "\xC4\xA0");   // U+0120 "Ġ"
  EXPECT_EQ(m[0x7F], "\xC4\xA1");  // U+0121: after the 33 bytes 0x00..0x20
  EXPECT_EQ(m[0xA0], "\xC5\x82");  // U+0142
  EXPECT_EQ(m[0xAD], "\xC5\x83");  // U+0143: the last remapped byte
  std::set<std::string> distinct(m.begin(), m.end());
  EXPECT_EQ(distinct.size(), 256u);
}

TEST(SynthVocab, ByteTokenOrderIsGpt2Order) {
  const auto& o = byte_token_order();
  EXPECT_EQ(o[0], '!');
  EXPECT_EQ(o[93], '~');
  EXPECT_EQ(o[94], 0xA1);
  EXPECT_EQ(o[187], 0xFF);
  EXPECT_EQ(o[188], 0x00);
  EXPECT_EQ(o[198], '\n');  // as in the Llama-3 and Qwen2.5 vocabularies: 198 "Ċ", 220 "Ġ"
  EXPECT_EQ(o[220], ' ');
  EXPECT_EQ(o[255], 0xAD);
}

TEST(SynthVocab, PreSplit) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pre_split("Hello world, it's 12345!"),
            (V{"Hello", " world", ",", " it", "'s", " ", "123", "45", "!"}));
  EXPECT_EQ(pre_split("a  b\n\nc"), (V{"a", " ", " b", "\n\n", "c"}));
  EXPECT_EQ(pre_split("x -- y"), (V{"x", " --", " y"}));
  EXPECT_EQ(pre_split("I'LL we've"), (V{"I", "'LL", " we", "'ve"}));
  EXPECT_EQ(pre_split(""), V{});
}

TEST(SynthVocab, LearnBpeHandTraced) {
  // Pre-tokens "abab", " abab", " ab". Pair counts: (a,b) 5 -> "ab"; then (ab,ab) 2 and
  // (Ġ,ab) 2 tie and the smaller ids win (Ġ = 220 < ab = 256); then (ab,ab) 1 vs (Ġab,ab) 1
  // -> "abab"; then "Ġabab".
  const LearnedBpe b = learn_bpe("abab abab ab", 1000);
  ASSERT_EQ(b.tokens.size(), 260u);
  EXPECT_EQ(b.tokens[256], "ab");
  EXPECT_EQ(b.tokens[257],
            "\xC4\xA0"
            "ab");
  EXPECT_EQ(b.tokens[258], "abab");
  EXPECT_EQ(b.tokens[259],
            "\xC4\xA0"
            "abab");
  const int a = 'a' - '!', bb = 'b' - '!';
  ASSERT_EQ(b.merges.size(), 4u);
  EXPECT_EQ(b.merges[0], std::make_pair(a, bb));
  EXPECT_EQ(b.merges[1], std::make_pair(220, 256));
  EXPECT_EQ(b.merges[2], std::make_pair(256, 256));
  EXPECT_EQ(b.merges[3], std::make_pair(257, 256));
  // A token cap stops learning early.
  EXPECT_EQ(learn_bpe("abab abab ab", 258).merges.size(), 2u);
}

TEST(SynthVocab, LearnedMergesAreConsistent) {
  const LearnedBpe& b = builtin_bpe();
  ASSERT_EQ(b.merges.size(), b.merge_result.size());
  std::unordered_set<std::string> seen;
  for (const std::string& t : b.tokens) EXPECT_TRUE(seen.insert(t).second) << "duplicate token " << t;
  for (size_t m = 0; m < b.merges.size(); ++m) {
    const auto [l, r] = b.merges[m];
    ASSERT_LT(l, static_cast<int32_t>(b.tokens.size()));
    ASSERT_LT(r, static_cast<int32_t>(b.tokens.size()));
    EXPECT_EQ(b.tokens[b.merge_result[m]], b.tokens[l] + b.tokens[r]);
  }
  // The corpus is big enough for the tiny presets' 1000 regular tokens.
  EXPECT_GT(b.tokens.size(), 1000u);
}

// Every merge "a b" has tokens a, b and a+b; tokens are unique; counts and types add up.
void check_vocab(const Vocab& v, int64_t n_regular, int64_t n_total) {
  ASSERT_EQ(static_cast<int64_t>(v.tokens.size()), n_total);
  ASSERT_EQ(v.types.size(), v.tokens.size());
  std::unordered_map<std::string, int64_t> id;
  for (size_t i = 0; i < v.tokens.size(); ++i) EXPECT_TRUE(id.emplace(v.tokens[i], i).second) << v.tokens[i];
  for (int i = 0; i < 256; ++i) EXPECT_EQ(v.tokens[i], byte_to_unicode()[byte_token_order()[i]]);
  for (const std::string& m : v.merges) {
    const size_t sp = m.find(' ');
    ASSERT_NE(sp, std::string::npos) << m;
    ASSERT_EQ(m.find(' ', sp + 1), std::string::npos) << m;
    const std::string l = m.substr(0, sp), r = m.substr(sp + 1);
    ASSERT_TRUE(id.count(l)) << m;
    ASSERT_TRUE(id.count(r)) << m;
    ASSERT_TRUE(id.count(l + r)) << m;
    EXPECT_LT(id[l], v.n_learned);
    EXPECT_LT(id[r], v.n_learned);
    EXPECT_LT(id[l + r], v.n_learned);
  }
  for (int64_t i = 0; i < n_regular; ++i)
    ASSERT_EQ(v.types[i], i < v.n_learned ? kTokenNormal : kTokenUnused) << "token " << i;
  for (int64_t i = n_regular; i < n_total; ++i) ASSERT_NE(v.types[i], kTokenNormal) << "token " << i;
}

TEST(SynthVocab, Llama32Layout) {
  const Vocab v = build_vocab(find_preset("llama-3.2-1b").vocab);
  check_vocab(v, 128000, 128256);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_EQ(v.tokens[128000], "<|begin_of_text|>");
  EXPECT_EQ(v.tokens[128001], "<|end_of_text|>");
  EXPECT_EQ(v.tokens[128004], "<|finetune_right_pad_id|>");
  EXPECT_EQ(v.tokens[128006], "<|start_header_id|>");
  EXPECT_EQ(v.tokens[128007], "<|end_header_id|>");
  EXPECT_EQ(v.tokens[128008], "<|eom_id|>");
  EXPECT_EQ(v.tokens[128009], "<|eot_id|>");
  EXPECT_EQ(v.tokens[128010], "<|python_tag|>");
  EXPECT_EQ(v.tokens[128011], "<|reserved_special_token_3|>");
  EXPECT_EQ(v.tokens[128255], "<|reserved_special_token_247|>");
  for (int i = 128000; i < 128256; ++i) EXPECT_EQ(v.types[i], kTokenControl);
  EXPECT_EQ(v.tokens[127999], "[UNUSED_127999]");
  EXPECT_EQ(v.bos, 128000);
  EXPECT_EQ(v.eos, 128001);
  EXPECT_EQ(v.eot, 128009);
  EXPECT_TRUE(v.add_bos);
  EXPECT_NE(v.chat_template.find("<|start_header_id|>"), std::string::npos);
  EXPECT_NE(v.chat_template.find("<|eot_id|>"), std::string::npos);
}

TEST(SynthVocab, Qwen25Layout) {
  const Vocab v = build_vocab(find_preset("qwen2.5-0.5b").vocab);
  check_vocab(v, 151643, 151936);
  EXPECT_EQ(v.pre, "qwen2");
  EXPECT_EQ(v.tokens[151643], "<|endoftext|>");
  EXPECT_EQ(v.tokens[151644], "<|im_start|>");
  EXPECT_EQ(v.tokens[151645], "<|im_end|>");
  EXPECT_EQ(v.tokens[151656], "<|video_pad|>");
  EXPECT_EQ(v.tokens[151657], "<tool_call>");
  EXPECT_EQ(v.types[151657], kTokenUserDefined);
  EXPECT_EQ(v.types[151658], kTokenUserDefined);
  EXPECT_EQ(v.tokens[151664], "<|file_sep|>");
  EXPECT_EQ(v.types[151664], kTokenControl);
  EXPECT_EQ(v.tokens[151665], "[PAD151665]");
  EXPECT_EQ(v.tokens[151935], "[PAD151935]");
  for (int i = 151665; i < 151936; ++i) EXPECT_EQ(v.types[i], kTokenUnused);
  EXPECT_EQ(v.bos, 151643);
  EXPECT_EQ(v.eos, 151643);
  EXPECT_EQ(v.pad, 151643);
  EXPECT_EQ(v.eot, 151645);
  EXPECT_FALSE(v.add_bos);
  EXPECT_NE(v.chat_template.find("<|im_start|>"), std::string::npos);
}

TEST(SynthVocab, SmallPresetsHaveOnlyLearnedRegularTokens) {
  for (const char* name : {"tiny", "tiny-qwen2", "tiny-qwen3", "tiny-qwen3moe", "tiny-gemma3"}) {
    SCOPED_TRACE(name);
    const VocabSpec& spec = find_preset(name).vocab;
    const Vocab v = build_vocab(spec);
    check_vocab(v, 1000, spec.n_total);
    EXPECT_EQ(v.n_learned, 1000);
  }
  const Vocab g = build_vocab(find_preset("tiny-gemma3").vocab);
  EXPECT_EQ(g.tokens[g.bos], "<bos>");
  EXPECT_EQ(g.tokens[g.eot], "<end_of_turn>");
  EXPECT_NE(g.chat_template.find("<start_of_turn>"), std::string::npos);
}

// Greedy BPE by merge rank, written independently of the library, on one pre-token.
std::vector<std::string> bpe_encode(const Vocab& v, const std::string& word) {
  std::unordered_map<std::string, size_t> rank;
  for (size_t i = 0; i < v.merges.size(); ++i) rank.emplace(v.merges[i], i);
  std::vector<std::string> sym;
  for (const char c : word) sym.push_back(byte_to_unicode()[static_cast<unsigned char>(c)]);
  for (;;) {
    size_t best = SIZE_MAX, at = 0;
    for (size_t k = 0; k + 1 < sym.size(); ++k) {
      const auto it = rank.find(sym[k] + " " + sym[k + 1]);
      if (it != rank.end() && it->second < best) {
        best = it->second;
        at = k;
      }
    }
    if (best == SIZE_MAX) return sym;
    sym[at] += sym[at + 1];
    sym.erase(sym.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
}

TEST(SynthVocab, CommonWordsAreSingleTokensInTinyVocab) {
  const Vocab v = build_vocab(find_preset("tiny").vocab);
  for (const char* w : {" the", " of", " and", " to", " is", "The", " in", " that", " people", " water"})
    EXPECT_EQ(bpe_encode(v, w).size(), 1u) << "'" << w << "'";
}

}  // namespace
}  // namespace hexllm::synth
