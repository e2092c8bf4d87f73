#include "tokenizer/chat_template.h"

#include <algorithm>

#include "base/error.h"

namespace hexllm::tokenizer {

namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string render_llama3(std::span<const ChatMessage> msgs, bool add_ass) {
  std::string out;
  for (const auto& m : msgs) {
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
    out += trim(m.content);
    out += "<|eot_id|>";
  }
  if (add_ass) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

std::string render_chatml(std::span<const ChatMessage> msgs, bool add_ass) {
  std::string out;
  for (const auto& m : msgs) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_ass) out += "<|im_start|>assistant\n";
  return out;
}

std::string render_gemma(std::span<const ChatMessage> msgs, bool add_ass) {
  std::string out;
  std::string system;  // Gemma has no system turn: it opens the next user turn instead
  for (const auto& m : msgs) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n";
    if (!system.empty() && role != "model") {
      out += system + "\n\n";
      system.clear();
    }
    out += trim(m.content);
    out += "<end_of_turn>\n";
  }
  if (add_ass) out += "<start_of_turn>model\n";
  return out;
}

std::string render_phi3(std::span<const ChatMessage> msgs, bool add_ass) {
  std::string out;
  for (const auto& m : msgs) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
  if (add_ass) out += "<|assistant|>\n";
  return out;
}

}  // namespace

const char* chat_style_name(ChatStyle style) {
  switch (style) {
    case ChatStyle::LLAMA3:
      return "llama3";
    case ChatStyle::CHATML:
      return "chatml";
    case ChatStyle::GEMMA:
      return "gemma";
    case ChatStyle::PHI3:
      return "phi3";
    case ChatStyle::UNKNOWN:
      break;
  }
  return "unknown";
}

ChatStyle chat_style_from_name(std::string_view name) {
  for (ChatStyle s : {ChatStyle::LLAMA3, ChatStyle::CHATML, ChatStyle::GEMMA, ChatStyle::PHI3}) {
    if (name == chat_style_name(s)) return s;
  }
  return ChatStyle::UNKNOWN;
}

ChatStyle detect_chat_style(std::string_view t) {
  if (contains(t, "<|im_start|>")) return ChatStyle::CHATML;
  if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) return ChatStyle::LLAMA3;
  if (contains(t, "<start_of_turn>")) return ChatStyle::GEMMA;
  if (contains(t, "<|user|>") && contains(t, "<|end|>")) return ChatStyle::PHI3;
  return ChatStyle::UNKNOWN;
}

ChatStyle detect_chat_style(const Vocab& vocab) {
  if (const ChatStyle s = detect_chat_style(vocab.chat_template); s != ChatStyle::UNKNOWN) return s;
  auto has = [&](std::string_view text) {
    return std::find(vocab.tokens.begin(), vocab.tokens.end(), text) != vocab.tokens.end();
  };
  if (has("<|im_start|>") && has("<|im_end|>")) return ChatStyle::CHATML;
  if (has("<|start_header_id|>") && has("<|eot_id|>")) return ChatStyle::LLAMA3;
  if (has("<start_of_turn>") && has("<end_of_turn>")) return ChatStyle::GEMMA;
  if (vocab.arch.rfind("qwen", 0) == 0) return ChatStyle::CHATML;
  if (vocab.arch.rfind("gemma", 0) == 0) return ChatStyle::GEMMA;
  return ChatStyle::UNKNOWN;
}

std::string apply_chat_template(ChatStyle style, std::span<const ChatMessage> messages,
                                bool add_assistant_prompt) {
  switch (style) {
    case ChatStyle::LLAMA3:
      return render_llama3(messages, add_assistant_prompt);
    case ChatStyle::CHATML:
      return render_chatml(messages, add_assistant_prompt);
    case ChatStyle::GEMMA:
      return render_gemma(messages, add_assistant_prompt);
    case ChatStyle::PHI3:
      return render_phi3(messages, add_assistant_prompt);
    case ChatStyle::UNKNOWN:
      break;
  }
  fail("chat template: no known chat format (use one of llama3, chatml, gemma, phi3)");
}

}  // namespace hexllm::tokenizer
