// Access to the llama.cpp golden data for the tokenizer tests.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hexllm::tokenizer::testing {

// $HEXLLM_GOLDEN_DIR, or "" when unset or missing.
inline std::string golden_dir() {
  const char* d = std::getenv("HEXLLM_GOLDEN_DIR");
  if (!d || !*d || !std::filesystem::is_directory(d)) return {};
  return d;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Decompresses GOLDEN/vocab/NAME.gguf.xz into $HEXLLM_TEST_TMP (once; concurrent test processes
// each write a private file and rename it into place). Returns the path, or "" on failure.
inline std::string vocab_gguf(const std::string& golden, const std::string& name) {
  const char* tmp_env = std::getenv("HEXLLM_TEST_TMP");
  const std::filesystem::path tmp = (tmp_env && *tmp_env) ? tmp_env : std::filesystem::temp_directory_path();
  const std::filesystem::path dir = tmp / "tokenizer";
  std::filesystem::create_directories(dir);
  const std::filesystem::path out = dir / (name + ".gguf");
  if (std::filesystem::exists(out)) return out.string();
  const std::string src = golden + "/vocab/" + name + ".gguf.xz";
  const std::string part = out.string() + ".part" + std::to_string(getpid());
  const std::string cmd = "xz -dc '" + src + "' > '" + part + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::remove(part.c_str());
    return {};
  }
  std::filesystem::rename(part, out);
  return out.string();
}

// Inputs of a .inp file: each is followed by "\n__ggml_vocab_test__\n".
inline std::vector<std::string> split_inputs(const std::string& inp) {
  static const std::string kSep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < inp.size()) {
    const size_t hit = inp.find(kSep, pos);
    if (hit == std::string::npos) break;
    out.push_back(inp.substr(pos, hit - pos));
    pos = hit + kSep.size();
  }
  return out;
}

// Lines of a .out file as id lists (" 1 2 3" per line).
inline std::vector<std::vector<int32_t>> parse_outputs(const std::string& text) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ids(line);
    std::vector<int32_t> row;
    int64_t v = 0;
    while (ids >> v) row.push_back(static_cast<int32_t>(v));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace hexllm::tokenizer::testing
