// Built-in chat prompt formats. We do not run the Jinja source of tokenizer.chat_template; we
// recognise which well-known format it implements and render that format ourselves.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tokenizer/vocab.h"

namespace hexllm::tokenizer {

enum class ChatStyle {
  UNKNOWN,
  LLAMA3,  // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  CHATML,  // <|im_start|>role\ncontent<|im_end|>\n   (Qwen, many others)
  GEMMA,   // <start_of_turn>user\ncontent<end_of_turn>\n, assistant is "model", no system role
  PHI3,    // <|role|>\ncontent<|end|>\n
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

const char* chat_style_name(ChatStyle style);
// "llama3", "chatml", "gemma", "phi3"; UNKNOWN for anything else.
ChatStyle chat_style_from_name(std::string_view name);

// Looks for each format's markers in a Jinja template; UNKNOWN when none is present.
ChatStyle detect_chat_style(std::string_view template_text);
// The template text first; then marker tokens present in the vocabulary; then the
// architecture (qwen*: chatml, gemma*: gemma). UNKNOWN when nothing fits.
ChatStyle detect_chat_style(const Vocab& vocab);

// The prompt text (no BOS: the tokenizer adds it). LLAMA3 and GEMMA trim each message's
// content; GEMMA merges system messages into the next user turn. With add_assistant_prompt the
// text ends with the header of an assistant turn. Throws hexllm::Error for UNKNOWN.
std::string apply_chat_template(ChatStyle style, std::span<const ChatMessage> messages,
                                bool add_assistant_prompt);

}  // namespace hexllm::tokenizer
