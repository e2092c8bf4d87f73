// Malformed files, each built by hand: the reader must throw a FormatError whose message names
// the file, the byte offset and the field. Expected offsets come from the image builder.
#include <gtest/gtest.h>

#include "base/error.h"
#include "gguf/gguf.h"
#include "image.h"

namespace hexllm::gguf {
namespace {

using test::Image;

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    File::parse(bytes, "bad.gguf");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(parsed without error)";
}

// The exact message: "bad.gguf: offset N: FIELD: PROBLEM".
std::string msg(size_t offset, const std::string& rest) {
  return strprintf("bad.gguf: offset %zu: %s", offset, rest.c_str());
}

// A header for a file holding one kv "a" whose value the test appends.
Image one_kv(std::string_view key = "a") {
  Image im;
  im.header(3, 0, 1).str(key);
  return im;
}

// A file with one kv and one tensor info "x" whose fields the test appends.
Image one_tensor() {
  Image im;
  im.header(3, 1, 1).kv_u32("k", 1);
  return im;
}

TEST(GgufMalformed, EmptyAndShortFiles) {
  EXPECT_EQ(error_of({}), msg(0, "magic: file is 0 bytes, too short for a GGUF header"));
  EXPECT_EQ(error_of({'G', 'G'}), msg(0, "magic: file is 2 bytes, too short for a GGUF header"));
  Image im;
  im.raw({'G', 'G', 'U', 'F'}).u32(3);
  EXPECT_EQ(error_of(im.bytes()),
            msg(8, "tensor_count: needs 8 bytes but only 0 remain (file is 8 bytes, truncated?)"));
}

TEST(GgufMalformed, BadMagic) {
  Image im;
  im.raw({'G', 'G', 'M', 'L'}).u32(3).u64(0).u64(0);
  EXPECT_EQ(error_of(im.bytes()), msg(0, "magic: bad magic 47 47 4d 4c (expected 'GGUF')"));
}

TEST(GgufMalformed, UnsupportedVersions) {
  for (uint32_t v : {0u, 1u, 4u, 1000u}) {
    Image im;
    im.header(v, 0, 0);
    EXPECT_EQ(
        error_of(im.bytes()),
        msg(4, strprintf("version: unsupported GGUF version %u (only versions 2 and 3 are supported)", v)));
  }
  Image be;
  be.raw({'G', 'G', 'U', 'F', 0, 0, 0, 3}).u64(0).u64(0);
  EXPECT_EQ(
      error_of(be.bytes()),
      msg(4,
          "version: version field reads 50331648: a big-endian GGUF file, only little-endian is supported"));
}

TEST(GgufMalformed, CountsThatCannotFitAreRejectedBeforeAllocation) {
  Image kv;
  kv.header(3, 0, 1ull << 60).zeros(20);
  EXPECT_EQ(error_of(kv.bytes()),
            msg(16,
                "kv_count: 1152921504606846976 key-value pairs cannot fit in the 20 remaining bytes "
                "(each needs >= 13)"));
  Image t;
  t.header(3, ~0ull, 0).zeros(20);
  EXPECT_EQ(error_of(t.bytes()),
            msg(8,
                "tensor_count: 18446744073709551615 tensor infos (>= 32 bytes each) and 0 key-value pairs "
                "cannot fit in the 20 remaining bytes"));
  // Each count fits alone, both together do not: 2 * 13 + 1 * 32 > 40.
  Image both;
  both.header(3, 1, 2).zeros(40);
  EXPECT_EQ(error_of(both.bytes()),
            msg(8,
                "tensor_count: 1 tensor infos (>= 32 bytes each) and 2 key-value pairs cannot fit in the "
                "40 remaining bytes"));
}

TEST(GgufMalformed, KeyLength) {
  Image im;
  im.header(3, 0, 1).u64(1000).zeros(13);
  EXPECT_EQ(error_of(im.bytes()),
            msg(24, "kv[0] key: string of 1000 bytes runs past the end of the file (13 bytes remain)"));
  Image big;
  big.header(3, 0, 1).u64(70000).zeros(70000);
  EXPECT_EQ(error_of(big.bytes()), msg(24, "kv[0] key: length 70000 exceeds the limit of 65535 bytes"));
}

TEST(GgufMalformed, UnknownValueType) {
  Image im = one_kv();
  const size_t at = im.pos();
  im.u32(13).u32(0);
  EXPECT_EQ(error_of(im.bytes()), msg(at, "kv[0] key 'a' value type: unknown value type 13"));
}

TEST(GgufMalformed, StringValueLength) {
  Image im = one_kv("s");
  im.u32(test::kStr);
  const size_t at = im.pos();
  im.u64(100).raw({'x', 'y'});
  EXPECT_EQ(
      error_of(im.bytes()),
      msg(at,
          "kv[0] key 's' string value: string of 100 bytes runs past the end of the file (2 bytes remain)"));
}

TEST(GgufMalformed, TruncatedScalarValue) {
  Image im = one_kv();
  im.u32(test::kU64);
  const size_t at = im.pos();
  im.raw({1, 2, 3});
  EXPECT_EQ(
      error_of(im.bytes()),
      msg(at,
          strprintf("kv[0] key 'a' value: needs 8 bytes but only 3 remain (file is %zu bytes, truncated?)",
                    im.pos())));
}

TEST(GgufMalformed, BoolNotZeroOrOne) {
  Image im = one_kv("b");
  im.u32(test::kBool);
  const size_t at = im.pos();
  im.u8(2);
  EXPECT_EQ(error_of(im.bytes()), msg(at, "kv[0] key 'b' value: bool value 2 is neither 0 nor 1"));

  Image arr = one_kv("b");
  arr.u32(test::kArr).u32(test::kBool).u64(3);
  const size_t elems = arr.pos();
  arr.raw({1, 3, 0});
  EXPECT_EQ(error_of(arr.bytes()),
            msg(elems + 1, "kv[0] key 'b' element 1: bool value 3 is neither 0 nor 1"));
}

TEST(GgufMalformed, ArrayElementType) {
  Image unknown = one_kv();
  unknown.u32(test::kArr);
  const size_t at = unknown.pos();
  unknown.u32(77).u64(0);
  EXPECT_EQ(error_of(unknown.bytes()), msg(at, "kv[0] key 'a' array element type: unknown value type 77"));

  Image nested = one_kv();
  nested.u32(test::kArr);
  const size_t at2 = nested.pos();
  nested.u32(test::kArr).u64(1).u32(test::kU8).u64(1).u8(0);
  EXPECT_EQ(error_of(nested.bytes()),
            msg(at2, "kv[0] key 'a' array element type: arrays of arrays are not supported"));
}

TEST(GgufMalformed, ArrayLengthBeyondTheFile) {
  Image im = one_kv();
  im.u32(test::kArr).u32(test::kU32);
  const size_t at = im.pos();
  im.u64(1ull << 61).u32(5);
  EXPECT_EQ(error_of(im.bytes()),
            msg(at,
                "kv[0] key 'a' array length: 2305843009213693952 elements of UINT32 (>= 4 bytes each) "
                "cannot fit in the 4 remaining bytes"));
  // A string array is bounded by 8 bytes (the length field) per element.
  Image s = one_kv();
  s.u32(test::kArr).u32(test::kStr);
  const size_t at2 = s.pos();
  s.u64(3).str("ab").zeros(7);
  EXPECT_EQ(error_of(s.bytes()),
            msg(at2,
                "kv[0] key 'a' array length: 3 elements of STRING (>= 8 bytes each) cannot fit in the "
                "17 remaining bytes"));
}

TEST(GgufMalformed, StringArrayElementLength) {
  Image im = one_kv("tok");
  im.u32(test::kArr).u32(test::kStr).u64(3).str("ok");
  const size_t at = im.pos();
  im.u64(50).zeros(20);
  EXPECT_EQ(
      error_of(im.bytes()),
      msg(at,
          "kv[0] key 'tok' element 1: string of 50 bytes runs past the end of the file (20 bytes remain)"));
}

TEST(GgufMalformed, DuplicateKeys) {
  Image im;
  im.header(3, 0, 2).kv_u32("a", 1);
  const size_t second = im.pos();
  im.kv_u32("a", 2);
  EXPECT_EQ(error_of(im.bytes()), msg(second, "kv[1] key 'a': duplicate key (first at offset 24)"));
}

TEST(GgufMalformed, HostileKeysAreEscapedInMessages) {
  Image im;
  im.header(3, 0, 1).str(std::string_view("\x01'\n", 3)).u32(99).u32(0);
  EXPECT_EQ(error_of(im.bytes()), msg(35, "kv[0] key '\\x01\\x27\\x0a' value type: unknown value type 99"));
}

TEST(GgufMalformed, AlignmentKey) {
  Image wrong;
  wrong.header(3, 0, 1).str("general.alignment").u32(test::kU64).u64(64);
  EXPECT_EQ(error_of(wrong.bytes()), msg(24, "key 'general.alignment': type UINT64, expected UINT32"));
  for (uint32_t a : {0u, 48u, 3u}) {
    Image im;
    im.header(3, 0, 2).kv_str("general.name", "n");
    const size_t at = im.pos();
    im.kv_u32("general.alignment", a);
    EXPECT_EQ(error_of(im.bytes()),
              msg(at, strprintf("key 'general.alignment': alignment %u is not a nonzero power of two", a)));
  }
}

TEST(GgufMalformed, TensorNameLength) {
  Image im = one_tensor();
  const size_t at = im.pos();
  im.tensor(std::string(65, 'n'), {4}, 0, 0);
  EXPECT_EQ(error_of(im.bytes()), msg(at, "tensor[0] name: length 65 exceeds the limit of 64 bytes"));
}

TEST(GgufMalformed, NDims) {
  Image seven = one_tensor();
  seven.str("x");
  const size_t at = seven.pos();
  seven.u32(7).zeros(7 * 8 + 12);
  EXPECT_EQ(error_of(seven.bytes()), msg(at, "tensor 'x': n_dims 7 > 4"));

  Image zero = one_tensor();
  zero.str("x");
  const size_t at0 = zero.pos();
  zero.u32(0).zeros(40);
  EXPECT_EQ(error_of(zero.bytes()), msg(at0, "tensor 'x': n_dims 0 (a tensor has at least one dimension)"));
}

TEST(GgufMalformed, Dimensions) {
  Image zero = one_tensor();
  zero.str("x").u32(2).u64(4);
  const size_t at = zero.pos();
  zero.u64(0).u32(0).u64(0);
  EXPECT_EQ(error_of(zero.bytes()), msg(at, "tensor 'x' ne[1]: dimension is 0"));

  Image huge = one_tensor();
  huge.str("x").u32(1);
  const size_t at2 = huge.pos();
  huge.u64(1ull << 63).u32(0).u64(0);
  EXPECT_EQ(error_of(huge.bytes()),
            msg(at2, "tensor 'x' ne[0]: dimension 9223372036854775808 does not fit in int64"));
}

TEST(GgufMalformed, ElementCountAndByteSizeOverflow) {
  Image count = one_tensor();
  count.str("x").u32(3);
  const size_t at = count.pos();
  count.u64(1ull << 32).u64(1ull << 32).u64(1ull << 32).u32(0).u64(0);
  EXPECT_EQ(error_of(count.bytes()), msg(at, "tensor 'x' shape: element count overflows int64"));

  // 2^62 F32 elements fit in int64, but 2^64 bytes do not fit in uint64.
  Image bytes = one_tensor();
  bytes.str("x").u32(2);
  const size_t at2 = bytes.pos();
  bytes.u64(1ull << 31).u64(1ull << 31).u32(0).u64(0);
  EXPECT_EQ(error_of(bytes.bytes()), msg(at2, "tensor 'x' shape: byte size overflows uint64"));
}

TEST(GgufMalformed, RowNotAWholeNumberOfBlocks) {
  Image im = one_tensor();
  im.str("blk.0.attn_q.weight").u32(2);
  const size_t at = im.pos();
  im.u64(33).u64(2).u32(2).u64(0);
  EXPECT_EQ(error_of(im.bytes()),
            msg(at, "tensor 'blk.0.attn_q.weight' ne[0]: 33 is not a multiple of the block size 32 of Q4_0"));
}

TEST(GgufMalformed, UnknownTensorType) {
  for (uint32_t type : {99u, 4u, 40u}) {
    Image im = one_tensor();
    im.str("w").u32(1).u64(32);
    const size_t at = im.pos();
    im.u32(type).u64(0);
    EXPECT_EQ(error_of(im.bytes()), msg(at, strprintf("tensor 'w' type: unknown tensor type %u", type)));
  }
}

TEST(GgufMalformed, DuplicateTensorNames) {
  Image im;
  im.header(3, 2, 0);
  const size_t first = im.pos();
  im.tensor("x", {8}, 0, 0);
  const size_t second = im.pos();
  im.tensor("x", {8}, 0, 32);
  im.pad_to(32).zeros(64);
  EXPECT_EQ(error_of(im.bytes()),
            msg(second, strprintf("tensor 'x': duplicate tensor name (first at offset %zu)", first)));
}

TEST(GgufMalformed, TensorOffsetNotAligned) {
  Image im;
  im.header(3, 1, 0).str("x").u32(1).u64(4).u32(0);
  const size_t at = im.pos();
  im.u64(16).pad_to(32).zeros(64);
  EXPECT_EQ(error_of(im.bytes()), msg(at, "tensor 'x' offset: 16 is not a multiple of the alignment 32"));
  // With general.alignment = 16 the same offset is fine.
  Image ok;
  ok.header(3, 1, 1).kv_u32("general.alignment", 16).tensor("x", {4}, 0, 16).pad_to(16).zeros(32);
  EXPECT_EQ(File::parse(ok.bytes(), "ok.gguf").tensors()[0].offset, 16u);
}

TEST(GgufMalformed, TensorDataOutsideTheFile) {
  Image im;
  im.header(3, 1, 0).str("x").u32(1).u64(4).u32(0);
  const size_t at = im.pos();
  im.u64(32).pad_to(32);
  const size_t data = im.pos();
  im.zeros(40);  // the tensor needs [data + 32, data + 48)
  EXPECT_EQ(
      error_of(im.bytes()),
      msg(at, strprintf("tensor 'x' offset: 16 bytes at data section %zu + offset 32 run past the end of "
                        "the file (%zu bytes)",
                        data, data + 40)));
  // An offset near 2^64 must not wrap around.
  Image wrap;
  wrap.header(3, 1, 0).str("x").u32(1).u64(4).u32(0);
  const size_t at2 = wrap.pos();
  wrap.u64(~0ull - 31).pad_to(32).zeros(64);
  EXPECT_NE(error_of(wrap.bytes()).find(strprintf("offset %zu: tensor 'x' offset: ", at2)),
            std::string::npos);
  // No data section at all: the file ends after the tensor infos.
  Image none;
  none.header(3, 1, 0).str("x").u32(1).u64(4).u32(0);
  const size_t at3 = none.pos();
  none.u64(0);
  EXPECT_NE(
      error_of(none.bytes()).find(strprintf("offset %zu: tensor 'x' offset: 16 bytes at data section", at3)),
      std::string::npos);
}

// A valid file with every value type and several tensors, ending with the last tensor's data.
std::vector<uint8_t> rich_file() {
  Writer w;
  w.set_u8("u8", 1);
  w.set_i8("i8", -1);
  w.set_u16("u16", 2);
  w.set_i16("i16", -2);
  w.set_u32("u32", 3);
  w.set_i32("i32", -3);
  w.set_u64("u64", 4);
  w.set_i64("i64", -4);
  w.set_f32("f32", 0.5f);
  w.set_f64("f64", 0.25);
  w.set_bool("bool", true);
  w.set_string("str", "text");
  w.set_string_array("strs", {"a", "", "bcd"});
  w.set_f32_array("f32s", {1, 2});
  w.set_i32_array("i32s", {7});
  w.set_u32("general.alignment", 64);
  const uint8_t data[256] = {1, 2, 3};
  const int64_t ne_a[] = {3, 2};
  const int64_t ne_b[] = {32};
  const int64_t ne_c[] = {5};
  w.add_tensor("a", Type::F32, ne_a, data);
  w.add_tensor("b", Type::Q8_0, ne_b, data);
  w.add_tensor("c", Type::F16, ne_c, data);
  return w.to_bytes();
}

TEST(GgufMalformed, TruncationAtEveryByteIsAFormatError) {
  const std::vector<uint8_t> full = rich_file();
  ASSERT_NO_THROW(File::parse(full, "full.gguf"));
  for (size_t n = 0; n < full.size(); ++n) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    try {
      File::parse(cut, "cut.gguf");
      ADD_FAILURE() << "truncated at " << n << " of " << full.size() << " bytes but parsed";
    } catch (const FormatError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("cut.gguf: offset ", 0), 0u) << e.what();
    }
  }
}

TEST(GgufMalformed, FlippedBytesNeverEscapeAsAnythingButFormatError) {
  const std::vector<uint8_t> full = rich_file();
  int rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> b = full;
      b[i] ^= mask;
      try {
        const File f = File::parse(b, "flip.gguf");
        for (const TensorInfo& t : f.tensors()) ASSERT_LE(f.data_offset() + t.offset + t.nbytes, b.size());
      } catch (const FormatError&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace hexllm::gguf
