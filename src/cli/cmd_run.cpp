// `hexllm run`: generate text from a prompt, streaming it, then print load and speed figures.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/prompt.h"
#include "sampling/sampler.h"
#include "tokenizer/chat_template.h"

namespace hexllm::cli {

namespace {

struct RunOptions {
  EngineOptions engine;
  std::string prompt;
  std::string prompt_file;
  int n_predict = 64;
  sampling::SamplerParams sampling;
  bool chat = false;
  bool truncate = false;
  bool ignore_eos = false;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int run(const RunOptions& o) {
  const std::string text = read_prompt(o.prompt, o.prompt_file);
  auto e = open_engine_with_progress(o.engine);
  const tokenizer::Tokenizer& tok = e->model->tokenizer();

  std::string input = text;
  if (o.chat) {
    const tokenizer::ChatStyle style = tokenizer::detect_chat_style(tok.vocab());
    if (style == tokenizer::ChatStyle::UNKNOWN)
      fail("--chat: the model's chat template is not one of llama3, chatml, gemma or phi3");
    const tokenizer::ChatMessage turn[] = {{"user", text}};
    input = tokenizer::apply_chat_template(style, turn, true);
  }
  std::vector<int32_t> tokens = tokenize_prompt(tok, input);
  fit_prompt_to_context(tokens, e->context->n_ctx(), o.truncate);

  sampling::SamplerParams sp = o.sampling;
  sampling::Sampler sampler(sp, static_cast<int32_t>(tok.n_vocab()));
  for (int32_t t : tokens) sampler.accept(t);
  e->context->want_best_ids(static_cast<int64_t>(sampler.best_ids_wanted()));  // sampled from the device's TOP_K

  std::fputs(o.chat ? "" : text.c_str(), stdout);
  std::fflush(stdout);

  const auto t_prompt = std::chrono::steady_clock::now();
  e->context->decode(tokens, false);
  const double prompt_s = seconds_since(t_prompt);

  tokenizer::StreamDecoder stream(tok);
  const auto t_gen = std::chrono::steady_clock::now();
  int n_generated = 0;
  bool context_full = false;
  const int limit = o.n_predict < 0 ? INT32_MAX : o.n_predict;
  while (n_generated < limit) {
    const int32_t next = sampler.sample(e->context->last_logits(), e->context->last_best_ids());
    sampler.accept(next);
    ++n_generated;
    if (!o.ignore_eos && tok.is_eog(next)) break;
    std::fputs(stream.push(next).c_str(), stdout);
    std::fflush(stdout);
    if (n_generated == limit) break;
    if (e->context->n_past() >= e->context->n_ctx()) {
      context_full = true;
      break;
    }
    const int32_t one[1] = {next};
    e->context->decode(one, false);
  }
  std::fputs(stream.flush().c_str(), stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);
  const double gen_s = seconds_since(t_gen);

  if (context_full) std::fprintf(stderr, "note: stopped: the context of %lld tokens is full\n",
                                 static_cast<long long>(e->context->n_ctx()));
  std::fprintf(stderr, "\nmodel: %s (%s)\n", e->model->description().c_str(), e->model->file().name().c_str());
  std::fprintf(stderr, "load time:   %10.2f ms\n", e->load_seconds * 1e3);
  std::fprintf(stderr, "prompt:      %10.2f ms / %5zu tokens (%8.2f tokens/s)\n", prompt_s * 1e3, tokens.size(),
               static_cast<double>(tokens.size()) / prompt_s);
  // The first token comes from the prompt's logits; the rest each took one decode.
  const int decoded = n_generated > 0 ? n_generated - 1 : 0;
  std::fprintf(stderr, "generation:  %10.2f ms / %5d tokens (%8.2f tokens/s)\n", gen_s * 1e3, n_generated,
               decoded > 0 ? decoded / gen_s : 0.0);
  return 0;
}

}  // namespace

void add_sampling_options(CLI::App& app, sampling::SamplerParams& p) {
  app.add_option("--temp", p.temperature, "Temperature (0 = greedy)")->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", p.top_k, "Top-k sampling (0 = off)")->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", p.top_p, "Top-p sampling (1 = off)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", p.min_p, "Min-p sampling (0 = off)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--repeat-penalty", p.repeat_penalty, "Repetition penalty (1 = off)")->check(CLI::PositiveNumber);
  app.add_option("--repeat-last-n", p.repeat_last_n, "Tokens the repetition penalty looks back at")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", p.seed, "Random seed");
}

Action add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Generate text from a prompt");
  add_engine_options(*sub, o->engine, true);
  sub->add_option("-p,--prompt", o->prompt, "Prompt text");
  sub->add_option("-f,--file", o->prompt_file, "Read the prompt from a file");
  sub->add_option("-n,--n-predict", o->n_predict, "Tokens to generate (-1 = until end of text or full context)")
      ->check(CLI::Range(-1, 1 << 24));
  add_sampling_options(*sub, o->sampling);
  sub->add_flag("--chat", o->chat, "Wrap the prompt in the model's chat template as a user turn");
  sub->add_flag("--truncate", o->truncate, "Keep the end of a prompt longer than the context");
  sub->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-generation tokens");
  return [o] { return run(*o); };
}

}  // namespace hexllm::cli
