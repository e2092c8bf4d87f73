// Chat formats: expected strings written out by hand from the public formats (Llama 3 model
// card, ChatML, Gemma model card, Phi-3 model card).
#include "tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace hexllm::tokenizer {
namespace {

const std::vector<ChatMessage> kChat = {
    {"system", "You are helpful."},
    {"user", " Hi "},
    {"assistant", "Hello!"},
    {"user", "Bye"},
};

TEST(ChatTemplate, Llama3) {
  EXPECT_EQ(apply_chat_template(ChatStyle::LLAMA3, kChat, true),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(apply_chat_template(ChatStyle::LLAMA3, std::vector<ChatMessage>{{"user", "x"}}, false),
            "<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
}

TEST(ChatTemplate, ChatMlKeepsContentVerbatim) {
  EXPECT_EQ(apply_chat_template(ChatStyle::CHATML, kChat, true),
            "<|im_start|>system\nYou are helpful.<|im_end|>\n"
            "<|im_start|>user\n Hi <|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n"
            "<|im_start|>user\nBye<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, GemmaMergesSystemIntoFirstUserTurn) {
  EXPECT_EQ(apply_chat_template(ChatStyle::GEMMA, kChat, true),
            "<start_of_turn>user\nYou are helpful.\n\nHi<end_of_turn>\n"
            "<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\nBye<end_of_turn>\n"
            "<start_of_turn>model\n");
  EXPECT_EQ(apply_chat_template(ChatStyle::GEMMA, std::vector<ChatMessage>{{"user", "q"}}, false),
            "<start_of_turn>user\nq<end_of_turn>\n");
}

TEST(ChatTemplate, Phi3) {
  EXPECT_EQ(
      apply_chat_template(ChatStyle::PHI3, std::vector<ChatMessage>{{"user", "q"}, {"assistant", "a"}}, true),
      "<|user|>\nq<|end|>\n<|assistant|>\na<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, EmptyConversation) {
  EXPECT_EQ(apply_chat_template(ChatStyle::CHATML, {}, true), "<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template(ChatStyle::CHATML, {}, false), "");
}

TEST(ChatTemplate, UnknownStyleThrows) {
  EXPECT_THROW(apply_chat_template(ChatStyle::UNKNOWN, kChat, true), Error);
}

TEST(ChatTemplate, DetectFromTemplateText) {
  EXPECT_EQ(detect_chat_style("{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n'}}"),
            ChatStyle::CHATML);
  EXPECT_EQ(detect_chat_style("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"),
            ChatStyle::LLAMA3);
  EXPECT_EQ(detect_chat_style("{{ '<start_of_turn>' + role + '\\n' }}"), ChatStyle::GEMMA);
  EXPECT_EQ(detect_chat_style("{{'<|user|>' + '\\n' + message['content'] + '<|end|>'}}"), ChatStyle::PHI3);
  EXPECT_EQ(detect_chat_style("[INST] {{ content }} [/INST]"), ChatStyle::UNKNOWN);
  EXPECT_EQ(detect_chat_style(""), ChatStyle::UNKNOWN);
}

TEST(ChatTemplate, DetectFallsBackToVocabThenArchitecture) {
  Vocab v;
  v.tokens = {"a", "<|im_start|>", "<|im_end|>"};
  EXPECT_EQ(detect_chat_style(v), ChatStyle::CHATML);
  v.tokens = {"a", "<|start_header_id|>", "<|eot_id|>"};
  EXPECT_EQ(detect_chat_style(v), ChatStyle::LLAMA3);
  v.tokens = {"a", "<start_of_turn>", "<end_of_turn>"};
  EXPECT_EQ(detect_chat_style(v), ChatStyle::GEMMA);
  v.tokens = {"a"};
  EXPECT_EQ(detect_chat_style(v), ChatStyle::UNKNOWN);
  v.arch = "qwen3";
  EXPECT_EQ(detect_chat_style(v), ChatStyle::CHATML);
  v.arch = "gemma3";
  EXPECT_EQ(detect_chat_style(v), ChatStyle::GEMMA);
  v.chat_template = "<|im_start|>";  // the template text wins
  EXPECT_EQ(detect_chat_style(v), ChatStyle::CHATML);
}

TEST(ChatTemplate, StyleNames) {
  for (ChatStyle s : {ChatStyle::LLAMA3, ChatStyle::CHATML, ChatStyle::GEMMA, ChatStyle::PHI3}) {
    EXPECT_EQ(chat_style_from_name(chat_style_name(s)), s);
  }
  EXPECT_EQ(chat_style_from_name("nope"), ChatStyle::UNKNOWN);
}

}  // namespace
}  // namespace hexllm::tokenizer
