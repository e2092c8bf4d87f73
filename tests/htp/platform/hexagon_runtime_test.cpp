// platform/hexagon's compiler-runtime helpers and memory functions give the results of the x86
// instructions and libc, bit for bit: the same digest (runtime_digest.h) computed natively and
// by a Hexagon executable under qemu-hexagon. Skips loudly without qemu or the Hexagon build.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime_digest.h"

namespace {

TEST(HexagonRuntime, HelpersMatchTheHostBitForBit) {
  const std::string exe = HEXLLM_TEST_HEXAGON_RUNTIME;
  if (std::system("command -v qemu-hexagon >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "SKIPPED LOUDLY: qemu-hexagon not found (install qemu-user: scripts/setup.sh)";
  if (FILE* f = std::fopen(exe.c_str(), "rb")) std::fclose(f);
  else GTEST_SKIP() << "SKIPPED LOUDLY: " << exe << " not built (needs clang-19 and lld-19)";

  const hexllm::test::Digest want = hexllm::test::runtime_digest();
  char expected[64];
  std::snprintf(expected, sizeof expected, "digest %016llx %016llx", static_cast<unsigned long long>(want.h),
                static_cast<unsigned long long>(want.n));

  FILE* p = ::popen(("qemu-hexagon " + exe).c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[128] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  EXPECT_EQ(::pclose(p), 0);
  ASSERT_TRUE(got);
  std::string s(line);
  if (!s.empty() && s.back() == '\n') s.pop_back();
  EXPECT_EQ(s, expected);
}

}  // namespace
