// Access to the golden reference data of ../shared/golden (llama.cpp outputs). Tests that
// need it call golden_dir_or_skip() through the GOLDEN_OR_SKIP macro.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hexllm::test {

// $HEXLLM_GOLDEN_DIR if it holds the golden README, else nullopt.
std::optional<std::string> golden_dir();

// Decompresses `relative_xz` (e.g. "models/qwen2-q4emb.gguf.xz") into the test temp folder
// once (atomically, safe for parallel tests) and returns the uncompressed path.
std::string decompress(const std::string& golden, const std::string& relative_xz);

nlohmann::json read_json(const std::string& path);
std::vector<float> read_f32(const std::string& path);

// Σ(a−b)² / Σa² in double precision, a being the reference.
double nmse(std::span<const float> ref, std::span<const float> got);

// Folder for test outputs ($HEXLLM_TEST_TMP, else /tmp).
std::string temp_dir();

// Where a test keeps a synthetic model it generates once: temp_dir()/stem-<fingerprint>.gguf,
// the fingerprint being that of the generator's sources, so a changed generator never leaves
// a test on a stale file.
std::string generated_model_path(const std::string& stem);

}  // namespace hexllm::test

#define GOLDEN_OR_SKIP(var)                                                                             \
  const auto var##_opt = ::hexllm::test::golden_dir();                                                  \
  if (!var##_opt) {                                                                                     \
    GTEST_SKIP() << "SKIPPED LOUDLY: golden data not found (set HEXLLM_GOLDEN_DIR; default ../shared/golden)"; \
  }                                                                                                     \
  const std::string var = *var##_opt
