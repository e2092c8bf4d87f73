// `hexllm eval`: evaluate a prompt in one batch and write the logits of every position, plus
// the top-K per position (human-readable or JSON). This is how goldens are checked.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/prompt.h"

namespace hexllm::cli {

namespace {

struct EvalOptions {
  EngineOptions engine;
  std::string prompt;
  std::string tokens;
  std::string logits_file;
  int top_k = 5;
  bool json = false;
};

// Indices of the k largest values, largest first, ties by lower index.
std::vector<int32_t> top_indices(std::span<const float> row, int k) {
  std::vector<int32_t> idx(row.size());
  std::iota(idx.begin(), idx.end(), 0);
  const size_t kk = std::min(row.size(), static_cast<size_t>(k));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk), idx.end(),
                    [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  idx.resize(kk);
  return idx;
}

void write_logits(const std::string& path, std::span<const float> logits) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) fail("%s: cannot open for writing", path.c_str());
  const size_t written = std::fwrite(logits.data(), sizeof(float), logits.size(), f);
  const bool ok = written == logits.size() && std::fclose(f) == 0;
  if (!ok) fail("%s: write failed", path.c_str());
}

int eval(const EvalOptions& o) {
  if (o.prompt.empty() == o.tokens.empty()) fail("give exactly one of -p TEXT or --tokens LIST");
  auto e = open_engine_with_progress(o.engine);
  const tokenizer::Tokenizer& tok = e->model->tokenizer();
  const std::vector<int32_t> tokens = o.tokens.empty() ? tokenize_prompt(tok, o.prompt) : parse_token_list(o.tokens);

  e->context->decode(tokens, true);
  const std::span<const float> logits = e->context->logits();
  const size_t n_vocab = static_cast<size_t>(tok.n_vocab());
  if (!o.logits_file.empty()) write_logits(o.logits_file, logits);

  nlohmann::json positions = nlohmann::json::array();
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    const std::span<const float> row = logits.subspan(pos * n_vocab, n_vocab);
    const std::vector<int32_t> top = top_indices(row, o.top_k);
    if (o.json) {
      nlohmann::json t = nlohmann::json::array();
      for (int32_t id : top) t.push_back({id, row[static_cast<size_t>(id)]});
      positions.push_back({{"pos", pos}, {"token", tokens[pos]}, {"top", t}});
    } else {
      std::printf("%4zu %7d %-16s", pos, tokens[pos], ("'" + tok.token_to_piece(tokens[pos]) + "'").c_str());
      for (int32_t id : top)
        std::printf("  %d:%s:%.4f", id, tok.token_to_piece(id).c_str(), static_cast<double>(row[static_cast<size_t>(id)]));
      std::printf("\n");
    }
  }
  if (o.json) {
    nlohmann::json out = {{"model", e->model->file().name()}, {"n_vocab", n_vocab}, {"tokens", tokens},
                          {"positions", positions}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return 0;
}

}  // namespace

Action add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* sub = app.add_subcommand("eval", "Evaluate a prompt in one batch; write logits and top-K per position");
  add_engine_options(*sub, o->engine, false);
  sub->add_option("-p,--prompt", o->prompt, "Prompt text (tokenized with BOS and special tokens)");
  sub->add_option("--tokens", o->tokens, "Comma-separated token ids instead of a prompt");
  sub->add_option("--logits", o->logits_file, "Write float32 logits (n_tokens x n_vocab, row-major) to FILE");
  sub->add_option("--top-k", o->top_k, "How many top logits to print per position")->check(CLI::Range(1, 1 << 20));
  sub->add_flag("--json", o->json, "Print JSON");
  return [o] { return eval(*o); };
}

}  // namespace hexllm::cli
