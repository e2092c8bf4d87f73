// Writer -> reader round trips: every value type, arrays of every element type, several
// tensor types with hand-set bytes, default and custom alignment, files on disk, lazy tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "gguf/gguf.h"
#include "test_tmp.h"

namespace hexllm::gguf {
namespace {

namespace fs = std::filesystem;

File reparse(const std::vector<uint8_t>& bytes) { return File::parse(bytes, "roundtrip.gguf"); }

fs::path tmp_dir(const std::string& leaf) {
  const fs::path dir = test::test_tmp() / "gguf" / leaf;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

template <class T>
Value array_of(ValueType elem, std::initializer_list<T> v) {
  Value out;
  out.type = ValueType::ARRAY;
  out.array_type = elem;
  out.array_len = v.size();
  out.raw.resize(v.size() * sizeof(T));
  if (v.size() > 0) std::memcpy(out.raw.data(), v.begin(), out.raw.size());
  return out;
}

TEST(GgufRoundTrip, EveryScalarType) {
  Writer w;
  w.set_u8("u8", 200);
  w.set_i8("i8", -100);
  w.set_u16("u16", 60000);
  w.set_i16("i16", -30000);
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", std::numeric_limits<uint64_t>::max());
  w.set_i64("i64", std::numeric_limits<int64_t>::min());
  w.set_f32("f32", -1.5e-7f);
  w.set_f64("f64", 3.141592653589793);
  w.set_bool("yes", true);
  w.set_bool("no", false);
  const File f = reparse(w.to_bytes());

  const struct {
    const char* key;
    ValueType type;
  } types[] = {{"u8", ValueType::UINT8},    {"i8", ValueType::INT8},    {"u16", ValueType::UINT16},
               {"i16", ValueType::INT16},   {"u32", ValueType::UINT32}, {"i32", ValueType::INT32},
               {"u64", ValueType::UINT64},  {"i64", ValueType::INT64},  {"f32", ValueType::FLOAT32},
               {"f64", ValueType::FLOAT64}, {"yes", ValueType::BOOL},   {"no", ValueType::BOOL}};
  ASSERT_EQ(f.metadata().size(), std::size(types));
  for (size_t i = 0; i < std::size(types); ++i) {
    EXPECT_EQ(f.metadata()[i].key, types[i].key) << "insertion order";
    EXPECT_EQ(f.metadata()[i].value.type, types[i].type) << types[i].key;
  }
  EXPECT_EQ(f.get_uint("u8"), 200u);
  EXPECT_EQ(f.get_int("i8"), -100);
  EXPECT_EQ(f.get_uint("u16"), 60000u);
  EXPECT_EQ(f.get_int("i16"), -30000);
  EXPECT_EQ(f.get_uint("u32"), 4000000000u);
  EXPECT_EQ(f.get_int("u32"), 4000000000);
  EXPECT_EQ(f.get_int("i32"), -2000000000);
  EXPECT_EQ(f.get_uint("u64"), 18446744073709551615ull);
  EXPECT_EQ(f.get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.get_float("f32"), static_cast<double>(-1.5e-7f));
  EXPECT_EQ(f.get_float("f64"), 3.141592653589793);
  EXPECT_EQ(f.get_float("i16"), -30000.0);  // integers read as floats too
  EXPECT_EQ(f.get_bool("yes"), true);
  EXPECT_EQ(f.get_bool("no"), false);
  EXPECT_TRUE(f.find("u8")->value.is_integer());
  EXPECT_FALSE(f.find("u8")->value.is_float());
  EXPECT_TRUE(f.find("f64")->value.is_float());
  EXPECT_FALSE(f.find("yes")->value.is_integer());
}

TEST(GgufRoundTrip, Strings) {
  const std::string utf8 = "h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\xa6\x99";  // héllo, 世界 🦙
  const std::string with_nul("a\0b", 3);
  Writer w;
  w.set_string("empty", "");
  w.set_string("utf8", utf8);
  w.set_string("nul", with_nul);
  w.set_string("long", std::string(100000, 'x'));
  const File f = reparse(w.to_bytes());
  EXPECT_EQ(f.get_string("empty"), "");
  EXPECT_EQ(f.get_string("utf8"), utf8);
  EXPECT_EQ(f.get_string("nul"), with_nul);
  EXPECT_EQ(f.get_string("long"), std::string(100000, 'x'));
}

TEST(GgufRoundTrip, ArraysOfEveryElementType) {
  Writer w;
  w.copy_kv({"a.u8", array_of<uint8_t>(ValueType::UINT8, {0, 7, 255})});
  w.copy_kv({"a.i8", array_of<int8_t>(ValueType::INT8, {-128, 0, 127})});
  w.copy_kv({"a.u16", array_of<uint16_t>(ValueType::UINT16, {1, 65535})});
  w.copy_kv({"a.i16", array_of<int16_t>(ValueType::INT16, {-32768, 32767})});
  w.copy_kv({"a.u32", array_of<uint32_t>(ValueType::UINT32, {4294967295u, 3})});
  w.set_i32_array("a.i32", {-1, 2, -3, 2147483647});
  w.copy_kv({"a.u64", array_of<uint64_t>(ValueType::UINT64, {5, 1ull << 40})});
  w.copy_kv({"a.i64", array_of<int64_t>(ValueType::INT64, {-(1ll << 50), 9})});
  w.set_f32_array("a.f32", {0.25f, -2.0f, 1e30f});
  w.copy_kv({"a.f64", array_of<double>(ValueType::FLOAT64, {0.1, -1e300})});
  w.copy_kv({"a.bool", array_of<uint8_t>(ValueType::BOOL, {1, 0, 1})});
  w.set_string_array("a.str", {"", "x", "\xe2\x82\xac", std::string(300, 'y')});
  w.set_string_array("a.str_empty", {});
  w.set_f32_array("a.f32_empty", {});
  w.copy_kv({"a.bool_empty", array_of<uint8_t>(ValueType::BOOL, {})});
  w.copy_kv({"a.u64_big", array_of<uint64_t>(ValueType::UINT64, {1ull << 63})});
  const File f = reparse(w.to_bytes());

  EXPECT_EQ(f.get_int_array("a.u8"), (std::vector<int64_t>{0, 7, 255}));
  EXPECT_EQ(f.get_int_array("a.i8"), (std::vector<int64_t>{-128, 0, 127}));
  EXPECT_EQ(f.get_int_array("a.u16"), (std::vector<int64_t>{1, 65535}));
  EXPECT_EQ(f.get_int_array("a.i16"), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(f.get_int_array("a.u32"), (std::vector<int64_t>{4294967295ll, 3}));
  EXPECT_EQ(f.get_int_array("a.i32"), (std::vector<int64_t>{-1, 2, -3, 2147483647}));
  EXPECT_EQ(f.get_int_array("a.u64"), (std::vector<int64_t>{5, 1ll << 40}));
  EXPECT_EQ(f.get_int_array("a.i64"), (std::vector<int64_t>{-(1ll << 50), 9}));
  EXPECT_EQ(f.get_float_array("a.f32"), (std::vector<float>{0.25f, -2.0f, 1e30f}));
  EXPECT_EQ(f.get_float_array("a.f64"), (std::vector<float>{0.1f, -INFINITY}));
  const Value& b = f.find("a.bool")->value;
  EXPECT_EQ(b.array_type, ValueType::BOOL);
  EXPECT_EQ(b.raw, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(*f.get_string_array("a.str"),
            (std::vector<std::string>{"", "x", "\xe2\x82\xac", std::string(300, 'y')}));
  EXPECT_TRUE(f.get_string_array("a.str_empty")->empty());
  EXPECT_EQ(f.find("a.str_empty")->value.array_len, 0u);
  EXPECT_TRUE(f.get_float_array("a.f32_empty")->empty());
  EXPECT_EQ(f.find("a.bool_empty")->value.array_len, 0u);
  // Raw element bytes are kept little-endian: 0xffffffff then 3.
  EXPECT_EQ(f.find("a.u32")->value.raw, (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0}));
  EXPECT_EQ(f.find("a.u16")->value.array_len, 2u);
  EXPECT_THROW(f.get_int_array("a.u64_big"), FormatError);  // 2^63 does not fit int64
}

// Expected byte sizes are hand-derived from the block geometry in the GGUF spec.
struct TensorCase {
  const char* name;
  Type type;
  std::vector<int64_t> ne;
  uint64_t nbytes;
};

const std::vector<TensorCase>& tensor_cases() {
  static const std::vector<TensorCase> cases = {
      {"t.f32", Type::F32, {5, 3}, 60},             // 15 * 4
      {"t.f16", Type::F16, {16}, 32},               // 16 * 2
      {"t.bf16", Type::BF16, {7}, 14},              // odd size: the next tensor needs padding
      {"t.q4_0", Type::Q4_0, {64, 2}, 72},          // 2 blocks * 2 rows * 18
      {"t.q8_0", Type::Q8_0, {32, 3}, 102},         // 3 * 34
      {"t.q4_k", Type::Q4_K, {256, 2, 1, 2}, 576},  // 4 * 144
      {"t.i8", Type::I8, {3}, 3},
  };
  return cases;
}

std::vector<uint8_t> pattern(uint64_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed * 7 + 1);
  return v;
}

void check_tensors(const File& f, uint64_t alignment) {
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  const auto& cases = tensor_cases();
  ASSERT_EQ(f.tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorCase& c = cases[i];
    const TensorInfo& t = f.tensors()[i];
    SCOPED_TRACE(c.name);
    EXPECT_EQ(t.name, c.name);
    EXPECT_EQ(t.type, c.type);
    EXPECT_EQ(t.n_dims, c.ne.size());
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < c.ne.size() ? c.ne[d] : 1);
    EXPECT_EQ(t.nbytes, c.nbytes);
    EXPECT_EQ(t.offset % alignment, 0u);
    if (i > 0) {
      EXPECT_GE(t.offset, f.tensors()[i - 1].offset + f.tensors()[i - 1].nbytes);
    }
    const std::vector<uint8_t> want = pattern(c.nbytes, static_cast<unsigned>(i));
    EXPECT_EQ(std::memcmp(f.tensor_data(t), want.data(), want.size()), 0);
  }
}

void add_cases(Writer& w) {
  const auto& cases = tensor_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<uint8_t> data = pattern(cases[i].nbytes, static_cast<unsigned>(i));
    w.add_tensor(cases[i].name, cases[i].type, cases[i].ne, data.data());
  }
}

TEST(GgufRoundTrip, TensorsDefaultAlignment) {
  Writer w;
  w.set_string("general.architecture", "test");
  add_cases(w);
  const std::vector<uint8_t> bytes = w.to_bytes();
  const File f = reparse(bytes);
  EXPECT_EQ(f.find("general.alignment"), nullptr);
  check_tensors(f, 32);
  // The last tensor ends the file.
  const TensorInfo& last = f.tensors().back();
  EXPECT_EQ(f.data_offset() + last.offset + last.nbytes, bytes.size());
}

TEST(GgufRoundTrip, TensorsCustomAlignment) {
  for (uint32_t alignment : {64u, 1u, 4096u}) {
    SCOPED_TRACE(alignment);
    Writer w;
    w.set_u32("general.alignment", alignment);
    add_cases(w);
    check_tensors(reparse(w.to_bytes()), alignment);
  }
}

TEST(GgufRoundTrip, LazyTensorsGetExactlyTheirBytes) {
  Writer w;
  const auto& cases = tensor_cases();
  int calls = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const uint64_t want = cases[i].nbytes;
    w.add_tensor_lazy(cases[i].name, cases[i].type, cases[i].ne, [&calls, want, i](uint8_t* dst, size_t n) {
      ++calls;
      EXPECT_EQ(n, want);
      const std::vector<uint8_t> p = pattern(n, static_cast<unsigned>(i));
      std::memcpy(dst, p.data(), n);
    });
  }
  EXPECT_EQ(calls, 0) << "fill runs while writing, not when registering";
  const std::vector<uint8_t> bytes = w.to_bytes();
  EXPECT_EQ(calls, static_cast<int>(cases.size()));
  check_tensors(reparse(bytes), 32);
}

TEST(GgufRoundTrip, WriteToDiskAndOpenWithMmap) {
  const fs::path dir = tmp_dir("disk");
  const std::string path = (dir / "model.gguf").string();
  Writer w;
  w.set_string("general.name", "on disk");
  add_cases(w);
  w.write(path);
  {
    const File f = File::open(path);
    EXPECT_EQ(f.name(), path);
    EXPECT_EQ(f.get_string("general.name"), "on disk");
    check_tensors(f, 32);
    // Copies share the mapping and the tensor index.
    const File copy = f;
    EXPECT_EQ(copy.find_tensor("t.q8_0"), &copy.tensors()[4]);
  }
  // Overwriting replaces the file; no temp files are left behind.
  Writer w2;
  w2.set_string("general.name", "second");
  w2.write(path);
  EXPECT_EQ(File::open(path).get_string("general.name"), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(GgufRoundTrip, WriteErrorNamesThePathAndLeavesNothing) {
  const fs::path dir = tmp_dir("write-error");
  const std::string bad = (dir / "no-such-dir" / "x.gguf").string();
  Writer w;
  w.set_u8("k", 1);
  try {
    w.write(bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  // A fill function that throws aborts the write and removes the temp file.
  const std::string path = (dir / "y.gguf").string();
  const int64_t ne[] = {4};
  w.add_tensor_lazy("t", Type::F32, ne, [](uint8_t*, size_t) { throw Error("fill failed"); });
  EXPECT_THROW(w.write(path), Error);
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(GgufRoundTrip, CopyKvReproducesEveryValue) {
  Writer a;
  a.set_string("s", "str");
  a.set_i16("i", -7);
  a.set_f64("d", 2.5);
  a.set_bool("b", true);
  a.set_string_array("sa", {"p", "q"});
  a.set_i32_array("ia", {3, -4});
  a.copy_kv({"ba", array_of<uint8_t>(ValueType::BOOL, {0, 1})});
  const std::vector<uint8_t> first = a.to_bytes();
  const File fa = reparse(first);
  Writer b;
  for (const KeyValue& kv : fa.metadata()) b.copy_kv(kv);
  EXPECT_EQ(b.to_bytes(), first);
}

TEST(GgufRoundTrip, SettingAKeyAgainReplacesItInPlace) {
  Writer w;
  w.set_u32("a", 1);
  w.set_u32("b", 2);
  w.set_string("a", "now a string");
  const File f = reparse(w.to_bytes());
  ASSERT_EQ(f.metadata().size(), 2u);
  EXPECT_EQ(f.metadata()[0].key, "a");
  EXPECT_EQ(f.get_string("a"), "now a string");
  EXPECT_EQ(f.get_uint("b"), 2u);
}

TEST(GgufWriter, RejectsInvalidInput) {
  Writer w;
  const int64_t ne33[] = {33};
  const int64_t ne32[] = {32};
  const int64_t ne0[] = {4, 0};
  const int64_t ne5[] = {1, 1, 1, 1, 1};
  const uint8_t data[64] = {};
  EXPECT_THROW(w.add_tensor("q", Type::Q4_0, ne33, data), Error);  // not a whole block
  EXPECT_THROW(w.add_tensor("z", Type::F32, ne0, data), Error);
  EXPECT_THROW(w.add_tensor("d", Type::F32, ne5, data), Error);
  EXPECT_THROW(w.add_tensor(std::string(65, 'n'), Type::F32, ne32, data), Error);
  w.add_tensor("x", Type::I8, ne32, data);
  EXPECT_THROW(w.add_tensor("x", Type::I8, ne32, data), Error);  // duplicate name

  Writer bad_alignment;
  bad_alignment.set_u32("general.alignment", 48);
  EXPECT_THROW(bad_alignment.to_bytes(), Error);
  Writer wrong_type;
  wrong_type.set_u64("general.alignment", 64);
  EXPECT_THROW(wrong_type.to_bytes(), Error);

  Value inconsistent = array_of<uint32_t>(ValueType::UINT32, {1, 2});
  inconsistent.array_len = 3;
  EXPECT_THROW(w.copy_kv({"k", inconsistent}), Error);
  Value big_u8;
  big_u8.type = ValueType::UINT8;
  big_u8.u = 256;
  EXPECT_THROW(w.copy_kv({"k", big_u8}), Error);
  Value bool2;
  bool2.type = ValueType::BOOL;
  bool2.u = 2;
  EXPECT_THROW(w.copy_kv({"k", bool2}), Error);
  Value small_i16;
  small_i16.type = ValueType::INT16;
  small_i16.i = -32769;
  EXPECT_THROW(w.copy_kv({"k", small_i16}), Error);
  Value nested;
  nested.type = ValueType::ARRAY;
  nested.array_type = ValueType::ARRAY;
  EXPECT_THROW(w.copy_kv({"k", nested}), Error);
}

TEST(GgufGetters, WrongTypesNameKeyOffsetAndTypes) {
  Writer w;
  w.set_u32("u", 5);
  w.set_i32("neg", -1);
  w.set_u64("big", std::numeric_limits<uint64_t>::max());
  w.set_string("s", "x");
  w.set_i32_array("ia", {1});
  const File f = reparse(w.to_bytes());
  auto message = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const FormatError& e) {
      return e.what();
    }
    return "(no error)";
  };
  // "u" is the first key: it starts right after the 24-byte header.
  EXPECT_EQ(message([&] { f.get_string("u"); }),
            "roundtrip.gguf: offset 24: key 'u': type UINT32, expected STRING");
  EXPECT_NE(message([&] { f.get_uint("neg"); }).find("negative"), std::string::npos);
  EXPECT_NE(message([&] { f.get_int("big"); }).find("does not fit in int64"), std::string::npos);
  EXPECT_NE(message([&] { f.get_bool("u"); }).find("expected BOOL"), std::string::npos);
  EXPECT_NE(message([&] { f.get_float("s"); }).find("key 's'"), std::string::npos);
  EXPECT_NE(message([&] { f.get_string_array("ia"); }).find("type ARRAY of INT32, expected ARRAY of STRING"),
            std::string::npos);
  EXPECT_NE(message([&] { f.get_float_array("ia"); }).find("key 'ia'"), std::string::npos);
  EXPECT_NE(message([&] { f.get_int_array("s"); }).find("type STRING"), std::string::npos);
  EXPECT_EQ(f.get_string_array("absent"), nullptr);
  EXPECT_EQ(f.get_float_array("absent"), std::nullopt);
}

}  // namespace
}  // namespace hexllm::gguf
