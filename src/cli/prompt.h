// Prompt helpers shared by the subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace CLI {
class App;
}

namespace hexllm::sampling {
struct SamplerParams;
}

namespace hexllm::cli {

// The prompt from -p or the bytes of -f (exactly one); an empty prompt is an error.
std::string read_prompt(const std::string& text, const std::string& file);
// Reads a whole file as bytes; errors name the path.
std::string read_file(const std::string& path);
// Tokenizes as llama.cpp does for prompts: special tokens parsed, BOS added when the vocabulary
// asks for it and the text does not already start with it.
std::vector<int32_t> tokenize_prompt(const tokenizer::Tokenizer& tok, const std::string& text);
// A prompt longer than the context is an error, or with `truncate` keeps its first token (BOS)
// and its end.
void fit_prompt_to_context(std::vector<int32_t>& tokens, int64_t n_ctx, bool truncate);
// Parses "1,2,3" (errors name the offending item).
std::vector<int32_t> parse_token_list(const std::string& list);

void add_sampling_options(CLI::App& app, sampling::SamplerParams& p);

}  // namespace hexllm::cli
