#include "cli/prompt.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace hexllm::cli {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_prompt(const std::string& text, const std::string& file) {
  if (!text.empty() && !file.empty()) fail("give the prompt with -p or -f, not both");
  std::string prompt = file.empty() ? text : read_file(file);
  if (prompt.empty()) fail(file.empty() ? "empty prompt: give a prompt with -p TEXT or -f FILE" : "%s: the prompt file is empty", file.c_str());
  return prompt;
}

std::vector<int32_t> tokenize_prompt(const tokenizer::Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> tokens = tok.encode(text, true, true);
  // A chat template may already begin with the BOS text: do not add a second one.
  if (tokens.size() >= 2 && tokens[0] == tok.bos() && tokens[1] == tok.bos()) tokens.erase(tokens.begin());
  if (tokens.empty()) fail("the prompt produced no tokens");
  return tokens;
}

void fit_prompt_to_context(std::vector<int32_t>& tokens, int64_t n_ctx, bool truncate) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n < n_ctx) return;
  if (!truncate)
    fail("the prompt has %lld tokens but the context holds %lld (leave room to generate): enlarge it with -c, or "
         "use --truncate",
         static_cast<long long>(n), static_cast<long long>(n_ctx));
  // Keep the first token and the last n_ctx / 2 - 1: half the context stays free for output.
  const int64_t keep = n_ctx / 2 > 1 ? n_ctx / 2 - 1 : 0;
  std::vector<int32_t> kept{tokens.front()};
  kept.insert(kept.end(), tokens.end() - keep, tokens.end());
  tokens = std::move(kept);
}

std::vector<int32_t> parse_token_list(const std::string& list) {
  std::vector<int32_t> ids;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const char* s = item.c_str();
    while (*s == ' ') ++s;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    while (end != nullptr && *end == ' ') ++end;
    if (*s == '\0' || end == nullptr || *end != '\0' || errno != 0 || v < 0 || v > INT32_MAX)
      fail("--tokens: '%s' is not a token id (expected a comma-separated list of non-negative integers)",
           item.c_str());
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) fail("--tokens: the list is empty");
  return ids;
}

}  // namespace hexllm::cli
