#include "tokenizer/vocab.h"

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"

namespace hexllm::tokenizer {

namespace {

TokenType token_type_from(int64_t v) {
  return (v >= 0 && v <= 6) ? static_cast<TokenType>(v) : TokenType::UNDEFINED;
}

}  // namespace

Vocab load_vocab(const gguf::File& f) {
  const std::string& file = f.name();
  Vocab v;

  const auto model = f.get_string("tokenizer.ggml.model");
  if (!model) fail("%s: missing key tokenizer.ggml.model", file.c_str());
  v.model = *model;

  const auto* tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->empty()) fail("%s: missing or empty key tokenizer.ggml.tokens", file.c_str());
  v.tokens = *tokens;
  const size_t n = v.tokens.size();

  if (auto scores = f.get_float_array("tokenizer.ggml.scores")) {
    if (scores->size() != n) {
      fail("%s: tokenizer.ggml.scores has %zu entries for %zu tokens", file.c_str(), scores->size(), n);
    }
    v.scores = std::move(*scores);
  }
  if (auto types = f.get_int_array("tokenizer.ggml.token_type")) {
    if (types->size() != n) {
      fail("%s: tokenizer.ggml.token_type has %zu entries for %zu tokens", file.c_str(), types->size(), n);
    }
    v.types.reserve(n);
    for (int64_t t : *types) v.types.push_back(token_type_from(t));
  }
  v.pre = f.get_string("tokenizer.ggml.pre").value_or("default");
  v.chat_template = f.get_string("tokenizer.chat_template").value_or("");
  v.arch = f.get_string("general.architecture").value_or("");
  v.name = f.get_string("general.name").value_or("");

  // llama.cpp's defaults per tokenizer model; the keys below override them.
  if (v.model == "llama") {
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.add_bos = true;
    v.add_space_prefix = true;
  } else if (v.model == "gpt2") {
    const auto* merges = f.get_string_array("tokenizer.ggml.merges");
    if (!merges) fail("%s: BPE vocab without tokenizer.ggml.merges", file.c_str());
    v.merges = *merges;
    v.bos = 11;
    v.eos = 11;
    v.add_bos = pre_type_from_name(v.pre) == PreType::LLAMA3;
  } else {
    fail("%s: unsupported tokenizer.ggml.model '%s' (supported: llama, gpt2)", file.c_str(), v.model.c_str());
  }
  for (int32_t* id : {&v.bos, &v.eos}) {
    if (*id >= static_cast<int32_t>(n)) *id = -1;  // default that does not exist in a tiny vocab
  }

  const std::pair<const char*, int32_t*> ids[] = {
      {"tokenizer.ggml.bos_token_id", &v.bos},     {"tokenizer.ggml.eos_token_id", &v.eos},
      {"tokenizer.ggml.unknown_token_id", &v.unk}, {"tokenizer.ggml.seperator_token_id", &v.sep},
      {"tokenizer.ggml.padding_token_id", &v.pad}, {"tokenizer.ggml.eot_token_id", &v.eot},
      {"tokenizer.ggml.eom_token_id", &v.eom},
  };
  for (const auto& [key, id] : ids) {
    const auto val = f.get_int(key);
    // Out-of-range ids keep the default, as llama.cpp does (it only warns).
    if (val && *val >= 0 && *val < static_cast<int64_t>(n)) *id = static_cast<int32_t>(*val);
  }
  if (auto b = f.get_bool("tokenizer.ggml.add_bos_token")) v.add_bos = *b;
  if (auto b = f.get_bool("tokenizer.ggml.add_eos_token")) v.add_eos = *b;
  if (auto b = f.get_bool("tokenizer.ggml.add_space_prefix")) v.add_space_prefix = *b;
  return v;
}

}  // namespace hexllm::tokenizer
