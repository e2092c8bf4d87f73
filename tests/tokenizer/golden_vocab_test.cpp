// Golden tests against llama.cpp (build 5601): the tokenizer test vectors of the five vocab
// files and the prompt tokens of every golden model case (README §3-§5).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "gguf/gguf.h"
#include "golden_util.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace hexllm::tokenizer {
namespace {

using testing::golden_dir;
using testing::read_file;

#define REQUIRE_GOLDEN(dir)                                                                  \
  const std::string dir = golden_dir();                                                      \
  if (dir.empty()) {                                                                         \
    GTEST_SKIP() << "\n*** HEXLLM_GOLDEN_DIR is not set or missing: tokenizer golden tests " \
                    "SKIPPED ***\n";                                                         \
  }

Tokenizer load(const std::string& golden, const std::string& name, Vocab* vocab_out = nullptr) {
  const std::string path = testing::vocab_gguf(golden, name);
  if (path.empty()) throw Error("cannot decompress " + name);
  const gguf::File f = gguf::File::open(path);
  Vocab v = load_vocab(f);
  if (vocab_out) *vocab_out = v;
  return Tokenizer(std::move(v));
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += strprintf(" %d", id);
  return s;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20)
      out += strprintf("\\x%02x", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

class VocabGolden : public ::testing::TestWithParam<const char*> {};

// Every input of NAME.gguf.inp encodes (no specials added or parsed) to the ids of NAME.gguf.out.
TEST_P(VocabGolden, EncodeMatchesLlamaCpp) {
  REQUIRE_GOLDEN(golden);
  const std::string name = GetParam();
  const Tokenizer tok = load(golden, name);
  const auto inputs = testing::split_inputs(read_file(golden + "/vocab/" + name + ".gguf.inp"));
  const auto expected = testing::parse_outputs(read_file(golden + "/vocab/" + name + ".gguf.out"));
  ASSERT_EQ(inputs.size(), 46u);
  ASSERT_EQ(expected.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(show(tok.encode(inputs[i], false, false)), show(expected[i]))
        << "input " << i << ": \"" << escaped(inputs[i]) << "\"";
  }
}

// decode(encode(x)) == x. For SPM the prefix space added by the encoder is removed again by
// the decoder's first-token rule, so plain text round-trips exactly too.
TEST_P(VocabGolden, DecodeRoundTrips) {
  REQUIRE_GOLDEN(golden);
  const std::string name = GetParam();
  const Tokenizer tok = load(golden, name);
  const auto inputs = testing::split_inputs(read_file(golden + "/vocab/" + name + ".gguf.inp"));
  ASSERT_FALSE(inputs.empty());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(escaped(tok.decode(tok.encode(inputs[i], false, false))), escaped(inputs[i])) << "input " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabs, VocabGolden,
                         ::testing::Values("ggml-vocab-llama-spm", "ggml-vocab-phi-3", "ggml-vocab-gpt-2",
                                           "ggml-vocab-llama-bpe", "ggml-vocab-qwen2"),
                         [](const auto& p) {
                           std::string n = std::string(p.param).substr(11);
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

// The vocab file whose tokenizer keys each golden model copies (README §3 table).
std::string vocab_for_model(const std::string& model_file) {
  if (model_file.rfind("llama-bpe", 0) == 0) return "ggml-vocab-llama-bpe";
  if (model_file.rfind("qwen2", 0) == 0 || model_file.rfind("qwen3", 0) == 0) return "ggml-vocab-qwen2";
  return "ggml-vocab-llama-spm";  // llama-spm-*, gemma3-f32
}

// The prompt tokens of every golden case: add_special = true, parse_special = true.
TEST(CaseGolden, PromptTokensMatch) {
  REQUIRE_GOLDEN(golden);
  const auto index = nlohmann::json::parse(read_file(golden + "/cases/cases_index.json"));
  ASSERT_GE(index["cases"].size(), 16u);
  std::map<std::string, std::unique_ptr<Tokenizer>> toks;
  for (const auto& c : index["cases"]) {
    const auto js = nlohmann::json::parse(read_file(golden + "/" + c["json"].get<std::string>()));
    const std::string vocab = vocab_for_model(js["model_file"].get<std::string>());
    auto& tok = toks[vocab];
    if (!tok) tok = std::make_unique<Tokenizer>(load(golden, vocab));
    ASSERT_TRUE(js["tokenize"]["add_special"].get<bool>());
    ASSERT_TRUE(js["tokenize"]["parse_special"].get<bool>());
    EXPECT_EQ(tok->add_bos(), js["tokenize"]["vocab_add_bos"].get<bool>()) << c["case"];
    EXPECT_EQ(tok->bos(), js["tokenize"]["bos_id"].get<int32_t>()) << c["case"];
    const auto expected = js["tokens"].get<std::vector<int32_t>>();
    const std::string prompt = js["prompt"].get<std::string>();
    EXPECT_EQ(show(tok->encode(prompt, true, true)), show(expected)) << c["case"];
    // Pieces with special tokens rendered, as in the case file (all ASCII here, no U+FFFD).
    const auto pieces = js["token_pieces"].get<std::vector<std::string>>();
    ASSERT_EQ(pieces.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(tok->token_to_piece(expected[i], true), pieces[i]) << c["case"] << " position " << i;
    }
  }
}

// All .inp inputs glued together and repeated to ~12 KB: one long text, exact round trip.
TEST_P(VocabGolden, LongTextRoundTrips) {
  REQUIRE_GOLDEN(golden);
  const std::string name = GetParam();
  const Tokenizer tok = load(golden, name);
  std::string text;
  for (const auto& in : testing::split_inputs(read_file(golden + "/vocab/" + name + ".gguf.inp")))
    text += in + " ";
  while (text.size() < 12000) text += text;
  const auto ids = tok.encode(text, false, false);
  EXPECT_GT(ids.size(), text.size() / 8);
  EXPECT_EQ(tok.decode(ids), text);
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Llama 3: the file's template is recognised, and the rendered prompt's markers become the
// special ids listed in the vocab (128006 <|start_header_id|>, 128007 <|end_header_id|>,
// 128009 <|eot_id|>) with the text between them tokenized as usual.
TEST(ChatGolden, Llama3PromptTokens) {
  REQUIRE_GOLDEN(golden);
  Vocab v;
  const Tokenizer tok = load(golden, "ggml-vocab-llama-bpe", &v);
  ASSERT_EQ(detect_chat_style(v), ChatStyle::LLAMA3);
  const std::vector<ChatMessage> chat = {{"user", "Hi"}};
  const std::string prompt = apply_chat_template(ChatStyle::LLAMA3, chat, true);
  const auto expected = concat({{128000, 128006},
                                tok.encode("user", false, false),
                                {128007},
                                tok.encode("\n\nHi", false, false),
                                {128009, 128006},
                                tok.encode("assistant", false, false),
                                {128007},
                                tok.encode("\n\n", false, false)});
  EXPECT_EQ(show(tok.encode(prompt, true, true)), show(expected));
  EXPECT_EQ(tok.encode("\n\n", false, false), (std::vector<int32_t>{271}));  // .out of input "\n\n"
  EXPECT_EQ(tok.decode(tok.encode(prompt, true, true)), "<|begin_of_text|>" + prompt);
}

TEST(ChatGolden, QwenAndPhi3Styles) {
  REQUIRE_GOLDEN(golden);
  Vocab qwen, phi;
  load(golden, "ggml-vocab-qwen2", &qwen);
  load(golden, "ggml-vocab-phi-3", &phi);
  EXPECT_TRUE(qwen.chat_template.empty());
  EXPECT_EQ(detect_chat_style(qwen), ChatStyle::CHATML);  // from the <|im_start|> token
  EXPECT_EQ(detect_chat_style(phi), ChatStyle::PHI3);     // from the file's template text
}

// End-of-generation ids, by the token texts listed in the vocab files.
TEST(EogGolden, KnownIds) {
  REQUIRE_GOLDEN(golden);
  const Tokenizer l3 = load(golden, "ggml-vocab-llama-bpe");
  EXPECT_TRUE(l3.is_eog(128001));   // <|end_of_text|> (eos)
  EXPECT_TRUE(l3.is_eog(128009));   // <|eot_id|>
  EXPECT_FALSE(l3.is_eog(128000));  // <|begin_of_text|>
  EXPECT_EQ(l3.eot(), 128009);
  const Tokenizer qw = load(golden, "ggml-vocab-qwen2");
  for (int32_t id : {151643, 151645, 151662, 151663, 151664}) EXPECT_TRUE(qw.is_eog(id)) << id;
  EXPECT_FALSE(qw.is_eog(151644));  // <|im_start|>
  EXPECT_EQ(qw.eot(), 151645);      // <|im_end|>
  const Tokenizer spm = load(golden, "ggml-vocab-llama-spm");
  EXPECT_EQ(spm.eog_ids(), (std::vector<int32_t>{2}));
}

}  // namespace
}  // namespace hexllm::tokenizer
