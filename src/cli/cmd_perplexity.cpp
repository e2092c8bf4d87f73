// `hexllm perplexity`: llama-perplexity's method. The text is cut into chunks of n_ctx tokens,
// each evaluated from an empty cache with its first token replaced by BOS (when the vocabulary
// adds one); only the second half of each chunk is scored, so every scored token has at least
// n_ctx / 2 tokens of context.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/progress.h"
#include "cli/prompt.h"

namespace hexllm::cli {

namespace {

struct PerplexityOptions {
  PerplexityOptions() { engine.n_ctx = 512; }  // llama-perplexity's default chunk
  EngineOptions engine;
  std::string file;
  int n_chunks = -1;
};

int perplexity(const PerplexityOptions& o) {
  const std::string text = read_file(o.file);
  if (text.empty()) fail("%s: the text file is empty", o.file.c_str());
  auto e = open_engine_with_progress(o.engine);
  const tokenizer::Tokenizer& tok = e->model->tokenizer();
  const std::vector<int32_t> tokens = tok.encode(text, true, false);
  const int64_t n_ctx = e->context->n_ctx();
  if (n_ctx < 16) fail("-c: perplexity needs a context of at least 16 tokens (got %lld)", static_cast<long long>(n_ctx));
  int64_t n_chunks = static_cast<int64_t>(tokens.size()) / n_ctx;
  if (n_chunks == 0)
    fail("%s: %zu tokens are fewer than one chunk of %lld (use a smaller -c)", o.file.c_str(), tokens.size(),
         static_cast<long long>(n_ctx));
  if (o.n_chunks > 0 && o.n_chunks < n_chunks) n_chunks = o.n_chunks;

  const size_t n_vocab = static_cast<size_t>(tok.n_vocab());
  const int64_t first = n_ctx / 2;
  double nll = 0.0, nll2 = 0.0;
  int64_t count = 0;
  ProgressBar progress("perplexity");
  std::fprintf(stderr, "perplexity: %lld chunks of %lld tokens, scoring the last %lld of each\n",
               static_cast<long long>(n_chunks), static_cast<long long>(n_ctx), static_cast<long long>(n_ctx - first - 1));
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    if (tok.add_bos()) chunk[0] = tok.bos();
    e->context->reset();
    e->context->decode(chunk, true);
    const std::span<const float> logits = e->context->logits();
    for (int64_t j = first; j < n_ctx - 1; ++j) {
      const std::span<const float> row = logits.subspan(static_cast<size_t>(j) * n_vocab, n_vocab);
      double max = row[0];
      for (float v : row) max = std::max(max, static_cast<double>(v));
      double sum = 0.0;
      for (float v : row) sum += std::exp(static_cast<double>(v) - max);
      const double lp = static_cast<double>(row[static_cast<size_t>(chunk[static_cast<size_t>(j + 1)])]) - max - std::log(sum);
      nll -= lp;
      nll2 += lp * lp;
      ++count;
    }
    progress.update(static_cast<size_t>(c + 1), static_cast<size_t>(n_chunks));
    std::printf("[%lld]%.4f,", static_cast<long long>(c + 1), std::exp(nll / static_cast<double>(count)));
    std::fflush(stdout);
  }
  progress.finish();
  const double mean = nll / static_cast<double>(count);
  const double var = nll2 / static_cast<double>(count) - mean * mean;
  const double ppl = std::exp(mean);
  const double err = count > 1 ? ppl * std::sqrt(std::max(var, 0.0) / static_cast<double>(count - 1)) : 0.0;
  std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, err);
  return 0;
}

}  // namespace

Action add_perplexity_command(CLI::App& app) {
  auto o = std::make_shared<PerplexityOptions>();
  CLI::App* sub = app.add_subcommand("perplexity", "Perplexity of a text file (llama-perplexity's method)");
  add_engine_options(*sub, o->engine, false);
  sub->add_option("-f,--file", o->file, "Text file")->required();
  sub->add_option("--chunks", o->n_chunks, "Evaluate at most this many chunks")->check(CLI::PositiveNumber);
  return [o] { return perplexity(*o); };
}

}  // namespace hexllm::cli
