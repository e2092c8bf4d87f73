// UTF-8 decoding (llama.cpp leniency), GPT-2 byte mapping, strict UTF-8 checks and the
// pre-tokenizer regex sets. Expected values are derived by hand from the UTF-8 spec, GPT-2's
// published bytes_to_unicode table and the published split patterns.
#include "tokenizer/unicode.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "tokenizer/pretokenizer.h"

namespace hexllm::tokenizer {
namespace {

using Cps = std::vector<uint32_t>;

TEST(Utf8Decode, ValidSequences) {
  EXPECT_EQ(unicode::decode_utf8("A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            (Cps{0x41, 0xE9, 0x20AC, 0x1F600}));
}

TEST(Utf8Decode, MalformedBytesBecomeReplacementOneByteAtATime) {
  EXPECT_EQ(unicode::decode_utf8("\x80"), (Cps{0xFFFD}));
  // A truncated 3-byte sequence: the lead and then the stray continuation byte.
  EXPECT_EQ(unicode::decode_utf8("\xE2\x82"), (Cps{0xFFFD, 0xFFFD}));
  EXPECT_EQ(unicode::decode_utf8("\xE2\x82"
                                 "a"),
            (Cps{0xFFFD, 0xFFFD, 'a'}));
  EXPECT_EQ(unicode::decode_utf8("\xFF"
                                 "b"),
            (Cps{0xFFFD, 'b'}));
  // Overlong forms are decoded as written (llama.cpp does not reject them).
  EXPECT_EQ(unicode::decode_utf8("\xC0\x80"), (Cps{0}));
}

TEST(Utf8Encode, AllLengths) {
  std::string s;
  for (uint32_t cp : {0x24u, 0xA2u, 0x20ACu, 0x10348u}) unicode::append_utf8(s, cp);
  EXPECT_EQ(s, "$\xC2\xA2\xE2\x82\xAC\xF0\x90\x8D\x88");
}

TEST(Gpt2Bytes, KnownEntries) {
  EXPECT_EQ(unicode::byte_to_bpe_char('A'), "A");
  EXPECT_EQ(unicode::byte_to_bpe_char(' '), "\xC4\xA0");   // U+0120 'Ġ'
  EXPECT_EQ(unicode::byte_to_bpe_char('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(unicode::byte_to_bpe_char(0x00), "\xC4\x80");  // U+0100
  EXPECT_EQ(unicode::byte_to_bpe_char(0x7F), "\xC4\xA1");  // U+0121, 34th unprintable byte
  EXPECT_EQ(unicode::byte_to_bpe_char(0xAD), "\xC5\x83");  // U+0143 'Ń', the last one
  EXPECT_EQ(unicode::byte_to_bpe_char(0xE9), "\xC3\xA9");  // printable Latin-1 maps to itself
}

TEST(Gpt2Bytes, InverseCoversAllBytes) {
  for (int b = 0; b < 256; ++b) {
    const auto cps = unicode::decode_utf8(unicode::byte_to_bpe_char(static_cast<uint8_t>(b)));
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(unicode::bpe_char_to_byte(cps[0]), b);
  }
  EXPECT_EQ(unicode::bpe_char_to_byte(0x20), -1);  // a raw space is not in the alphabet
  EXPECT_EQ(unicode::bpe_char_to_byte(0x144), -1);
}

TEST(Utf8Check, CompleteIncompleteAndIllFormed) {
  EXPECT_EQ(unicode::utf8_check("a", 0), 1);
  EXPECT_EQ(unicode::utf8_check("\xC3\xA9", 0), 2);
  EXPECT_EQ(unicode::utf8_check("\xF0\x9F\x98\x80", 0), 4);
  EXPECT_EQ(unicode::utf8_check("\xC3", 0), 0);  // waits for one more byte
  EXPECT_EQ(unicode::utf8_check("\xF0\x9F\x98", 0), 0);
  EXPECT_EQ(unicode::utf8_check("\xE2\x82"
                                "A",
                                0),
            -2);                                              // maximal subpart E2 82
  EXPECT_EQ(unicode::utf8_check("\xE0\x80\x80", 0), -1);      // overlong
  EXPECT_EQ(unicode::utf8_check("\xED\xA0\x80", 0), -1);      // surrogate
  EXPECT_EQ(unicode::utf8_check("\xF4\x90\x80\x80", 0), -1);  // above U+10FFFF
  EXPECT_EQ(unicode::utf8_check("\x80", 0), -1);
  EXPECT_EQ(unicode::utf8_check("\xC0\xAF", 0), -1);
}

using Words = std::vector<std::string>;

Words split(PreType t, const std::string& s) { return Pretokenizer(pre_patterns(t)).split(s); }

TEST(Pretokenizer, Gpt2) {
  // ' ?\p{L}+', contractions, "\s+(?!\S)" leaves one space for the next word.
  EXPECT_EQ(split(PreType::GPT2, "Hello world's  123!!"),
            (Words{"Hello", " world", "'s", " ", " 123", "!!"}));
  // Upper-case contractions are not special for GPT-2.
  EXPECT_EQ(split(PreType::GPT2, "I'M"), (Words{"I", "'", "M"}));
  EXPECT_EQ(split(PreType::GPT2, "h\xC3\xA9llo w\xC3\xB6rld"), (Words{"h\xC3\xA9llo", " w\xC3\xB6rld"}));
  // A lone newline before a letter matches nothing and stays a piece of its own.
  EXPECT_EQ(split(PreType::GPT2, "a\nb  "), (Words{"a", "\n", "b", "  "}));
}

TEST(Pretokenizer, Llama3) {
  EXPECT_EQ(split(PreType::LLAMA3, "12345 abc\n\nX"), (Words{"123", "45", " abc", "\n\n", "X"}));
  EXPECT_EQ(split(PreType::LLAMA3, "I'M you'RE"), (Words{"I", "'M", " you", "'RE"}));
  // U+3000 (ideographic space) is whitespace but may prefix a word like any non-letter.
  EXPECT_EQ(split(PreType::LLAMA3,
                  "a\xE3\x80\x80"
                  "b"),
            (Words{"a",
                   "\xE3\x80\x80"
                   "b"}));
  EXPECT_EQ(split(PreType::LLAMA3, "x  \n y"), (Words{"x", "  \n", " y"}));
  EXPECT_EQ(split(PreType::LLAMA3, "ok!!\n\nz"), (Words{"ok", "!!\n\n", "z"}));
}

TEST(Pretokenizer, Qwen2SplitsDigitsOneByOne) {
  EXPECT_EQ(split(PreType::QWEN2, "x12345"), (Words{"x", "1", "2", "3", "4", "5"}));
}

TEST(Pretokenizer, DefaultChainsFourExpressions) {
  // punctuation runs, then GPT-2 words, then digit runs, then groups of three ASCII digits.
  EXPECT_EQ(split(PreType::DEFAULT, "a,b 123456"), (Words{"a", ",", "b", " ", "123", "456"}));
}

TEST(Pretokenizer, MalformedUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(split(PreType::GPT2, "a\xFF"), (Words{"a", "\xEF\xBF\xBD"}));
}

TEST(Pretokenizer, EmptyText) { EXPECT_TRUE(split(PreType::LLAMA3, "").empty()); }

TEST(Pretokenizer, PreNames) {
  EXPECT_EQ(pre_type_from_name("gpt-2"), PreType::GPT2);
  EXPECT_EQ(pre_type_from_name("llama-bpe"), PreType::LLAMA3);
  EXPECT_EQ(pre_type_from_name("qwen2"), PreType::QWEN2);
  EXPECT_EQ(pre_type_from_name("default"), PreType::DEFAULT);
  EXPECT_EQ(pre_type_from_name(""), PreType::DEFAULT);
  EXPECT_THROW(pre_type_from_name("no-such-pre"), Error);
}

}  // namespace
}  // namespace hexllm::tokenizer
