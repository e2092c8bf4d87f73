#include "synth/vocab.h"

#include "base/error.h"
#include "gguf/gguf.h"
#include "synth/bpe_learn.h"

namespace hexllm::synth {

namespace {

struct Special {
  std::string text;
  int32_t type;
};

// Llama-3.1/3.2 layout of the 256 specials at 128000+.
std::vector<Special> llama3_specials(int64_t n) {
  std::vector<Special> s = {
      {"<|begin_of_text|>", kTokenControl},
      {"<|end_of_text|>", kTokenControl},
      {"<|reserved_special_token_0|>", kTokenControl},
      {"<|reserved_special_token_1|>", kTokenControl},
      {"<|finetune_right_pad_id|>", kTokenControl},
      {"<|reserved_special_token_2|>", kTokenControl},
      {"<|start_header_id|>", kTokenControl},
      {"<|end_header_id|>", kTokenControl},
      {"<|eom_id|>", kTokenControl},
      {"<|eot_id|>", kTokenControl},
      {"<|python_tag|>", kTokenControl},
  };
  for (int k = 3; static_cast<int64_t>(s.size()) < n; ++k)
    s.push_back({"<|reserved_special_token_" + std::to_string(k) + "|>", kTokenControl});
  s.resize(static_cast<size_t>(n));
  return s;
}

// Qwen2.5's 22 added tokens; tool_call markers are not special (USER_DEFINED) upstream either.
std::vector<Special> qwen2_specials() {
  std::vector<Special> s;
  for (const char* t :
       {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
        "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
        "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"})
    s.push_back({t, kTokenControl});
  s.push_back({"<tool_call>", kTokenUserDefined});
  s.push_back({"</tool_call>", kTokenUserDefined});
  for (const char* t :
       {"<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"})
    s.push_back({t, kTokenControl});
  return s;
}

std::vector<Special> gemma3_specials() {
  return {{"<pad>", kTokenControl}, {"<eos>", kTokenControl},           {"<bos>", kTokenControl},
          {"<unk>", kTokenUnknown}, {"<start_of_turn>", kTokenControl}, {"<end_of_turn>", kTokenControl}};
}

// Short Jinja templates with each family's usual markers.
const char* kLlama3Template =
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + "
    "'<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

const char* kChatmlTemplate =
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const char* kGemmaTemplate =
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = message['role'] "
    "%}"
    "{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

int32_t find_token(const Vocab& v, const std::string& text) {
  for (size_t i = v.tokens.size(); i-- > 0;)
    if (v.tokens[i] == text) return static_cast<int32_t>(i);
  fail("synthetic vocab: special token '%s' missing", text.c_str());
}

}  // namespace

Vocab build_vocab(const VocabSpec& spec) {
  std::vector<Special> specials;
  switch (spec.family) {
    case VocabFamily::Llama3:
      specials = llama3_specials(spec.n_llama3_specials);
      break;
    case VocabFamily::Qwen2:
      specials = qwen2_specials();
      break;
    case VocabFamily::Gemma3:
      specials = gemma3_specials();
      break;
  }
  if (spec.n_regular < 256 || spec.n_total < spec.n_regular + static_cast<int64_t>(specials.size()))
    fail("synthetic vocab: %lld regular + %zu special tokens do not fit in %lld", (long long)spec.n_regular,
         specials.size(), (long long)spec.n_total);

  const LearnedBpe& bpe = builtin_bpe();
  Vocab v;
  v.pre = spec.pre;
  const int64_t n_learned = std::min<int64_t>(spec.n_regular, static_cast<int64_t>(bpe.tokens.size()));
  v.tokens.assign(bpe.tokens.begin(), bpe.tokens.begin() + n_learned);
  v.n_learned = n_learned;
  // Merges in priority order, up to the first one whose token did not make the cut.
  for (size_t m = 0; m < bpe.merges.size() && bpe.merge_result[m] < n_learned; ++m)
    v.merges.push_back(bpe.tokens[bpe.merges[m].first] + " " + bpe.tokens[bpe.merges[m].second]);
  v.types.assign(v.tokens.size(), kTokenNormal);
  for (int64_t id = n_learned; id < spec.n_regular; ++id) {
    v.tokens.push_back("[UNUSED_" + std::to_string(id) + "]");
    v.types.push_back(kTokenUnused);
  }
  for (const Special& s : specials) {
    v.tokens.push_back(s.text);
    v.types.push_back(s.type);
  }
  for (int64_t id = static_cast<int64_t>(v.tokens.size()); id < spec.n_total; ++id) {
    v.tokens.push_back("[PAD" + std::to_string(id) + "]");
    v.types.push_back(kTokenUnused);
  }

  switch (spec.family) {
    case VocabFamily::Llama3:
      v.bos = find_token(v, "<|begin_of_text|>");
      v.eos = find_token(v, "<|end_of_text|>");
      v.eot = find_token(v, "<|eot_id|>");
      v.add_bos = true;
      v.chat_template = kLlama3Template;
      break;
    case VocabFamily::Qwen2:
      v.bos = v.eos = v.pad = find_token(v, "<|endoftext|>");
      v.eot = find_token(v, "<|im_end|>");
      v.add_bos = false;
      v.chat_template = kChatmlTemplate;
      break;
    case VocabFamily::Gemma3:
      v.bos = find_token(v, "<bos>");
      v.eos = find_token(v, "<eos>");
      v.eot = find_token(v, "<end_of_turn>");
      v.pad = find_token(v, "<pad>");
      v.add_bos = true;
      v.chat_template = kGemmaTemplate;
      break;
  }
  return v;
}

void write_vocab(const Vocab& v, gguf::Writer& w) {
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", v.pre);
  w.set_string_array("tokenizer.ggml.tokens", v.tokens);
  w.set_i32_array("tokenizer.ggml.token_type", v.types);
  w.set_string_array("tokenizer.ggml.merges", v.merges);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos));
  w.set_u32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(v.eot));
  if (v.pad >= 0) w.set_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(v.pad));
  w.set_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  w.set_string("tokenizer.chat_template", v.chat_template);
}

}  // namespace hexllm::synth
