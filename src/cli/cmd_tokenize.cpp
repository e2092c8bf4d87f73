// `hexllm tokenize`: llama-tokenize's flags and output.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/prompt.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace hexllm::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string prompt;
  std::string file;
  bool ids = false;
  bool no_bos = false;
  bool no_parse_special = false;
  bool show_count = false;
};

int tokenize(const TokenizeOptions& o) {
  if (o.prompt.empty() == o.file.empty()) fail("give exactly one of -p TEXT or -f FILE");
  const std::string text = o.file.empty() ? o.prompt : read_file(o.file);  // -f: the file's bytes exactly
  const gguf::File file = gguf::File::open(o.model);
  const tokenizer::Tokenizer tok(tokenizer::load_vocab(file));
  const std::vector<int32_t> ids = tok.encode(text, !o.no_bos, !o.no_parse_special);
  if (o.ids) {
    std::printf("[");
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? ", " : "", ids[i]);
    std::printf("]\n");
  } else {
    for (int32_t id : ids) std::printf("%6d -> '%s'\n", id, tok.token_to_piece(id).c_str());
  }
  if (o.show_count) std::printf("Total number of tokens: %zu\n", ids.size());
  return 0;
}

}  // namespace

Action add_tokenize_command(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand("tokenize", "Tokenize text with a model's tokenizer");
  sub->add_option("-m,--model", o->model, "GGUF model or vocab file")->required();
  sub->add_option("-p,--prompt", o->prompt, "Text to tokenize");
  sub->add_option("-f,--file", o->file, "Tokenize the bytes of a file");
  sub->add_flag("--ids", o->ids, "Print only the ids, as a list");
  sub->add_flag("--no-bos", o->no_bos, "Do not add BOS (or other automatic special tokens)");
  sub->add_flag("--no-parse-special", o->no_parse_special, "Tokenize special-token text as plain text");
  sub->add_flag("--show-count", o->show_count, "Print the number of tokens");
  return [o] { return tokenize(*o); };
}

}  // namespace hexllm::cli
