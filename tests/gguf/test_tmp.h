// Scratch folder for the GGUF tests: $HEXLLM_TEST_TMP, else the build tree's test-tmp.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace hexllm::gguf::test {

inline std::filesystem::path test_tmp() {
  const char* env = std::getenv("HEXLLM_TEST_TMP");
  return (env != nullptr && *env != '\0') ? std::filesystem::path(env)
                                          : std::filesystem::path(HEXLLM_GGUF_TEST_TMP);
}

}  // namespace hexllm::gguf::test
