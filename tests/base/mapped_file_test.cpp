// MappedFile: the mapping reads the file, and dropping resident pages frees this process's
// memory without changing what the mapping reads.
#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "golden.h"

namespace hexllm {
namespace {

// Resident kB of the mapping that starts at `addr`, from /proc/self/smaps.
long resident_kb(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  char head[32];
  std::snprintf(head, sizeof head, "%lx-", reinterpret_cast<unsigned long>(addr));
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    if (line.rfind(head, 0) == 0) in = true;
    else if (in && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + i / 4096);
  return v;
}

long sum_of(const MappedFile& f) {
  long s = 0;
  for (size_t i = 0; i < f.size(); ++i) s += f.data()[i];
  return s;
}

TEST(MappedFile, ReadsTheFile) {
  const auto bytes = pattern(3 * 4096 + 17);
  const MappedFile f(write_file("mapped_reads.bin", bytes));
  ASSERT_EQ(f.size(), bytes.size());
  EXPECT_EQ(0, std::memcmp(f.data(), bytes.data(), bytes.size()));
}

TEST(MappedFile, DroppingPagesFreesMemoryAndKeepsTheBytes) {
  const size_t n = 64 * 4096 + 100;
  const auto bytes = pattern(n);
  const MappedFile f(write_file("mapped_drop.bin", bytes));
  long expect = 0;
  for (uint8_t b : bytes) expect += b;
  ASSERT_EQ(sum_of(f), expect);  // every page touched
  const long before = resident_kb(f.data());
  ASSERT_GE(before, 64 * 4);

  // A range in the middle (unaligned ends: whole pages around it go).
  f.drop_resident_pages(f.data() + 10 * 4096 + 5, 20 * 4096);
  const long middle = resident_kb(f.data());
  EXPECT_LE(middle, before - 20 * 4);
  EXPECT_GE(middle, before - 22 * 4);

  // Everything, then past the end and outside the mapping: the latter are no-ops.
  f.drop_resident_pages(f.data(), n + 12345);
  const uint8_t outside = 0;
  f.drop_resident_pages(&outside, 1);
  EXPECT_LE(resident_kb(f.data()), 8);

  // The bytes are still the file's.
  EXPECT_EQ(0, std::memcmp(f.data(), bytes.data(), n));
  EXPECT_GE(resident_kb(f.data()), 64 * 4);
}

TEST(MappedFile, MissingFileIsAnErrorNamingThePath) {
  try {
    MappedFile f(test::temp_dir() + "/no-such-file.bin");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-file.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hexllm
