// GGUF v2/v3 parser. Every length, count and offset read from the file is checked against the
// bytes that remain before it is used, so arbitrary input yields a FormatError, never a crash.
#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "gguf/detail.h"
#include "gguf/gguf.h"

namespace hexllm::gguf {

using detail::quoted;
using ull = unsigned long long;

namespace {

// Smallest encodings, used to bound counts before anything is allocated.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, type, one-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, ne[0], type, offset
constexpr uint64_t kReserveCap = 4096;                       // entries reserved up front at most

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, const std::string& name)
      : p_(bytes.data()), size_(bytes.size()), name_(name) {}

  void run(File& f) {
    f.bytes_ = {p_, size_};
    f.name_ = name_;
    read_header(f);
    read_metadata(f);
    read_alignment(f);
    read_tensor_infos(f);
    check_tensor_data(f);
  }

 private:
  // Field descriptions are built by lambdas that only run when an error is reported, so the
  // hot loops (150k vocabulary strings) format nothing.
  template <class Field>
  [[noreturn]] void fail_at(uint64_t offset, const Field& field, const std::string& problem) const {
    detail::raise(name_, offset, field(), problem);
  }

  uint64_t left() const { return size_ - pos_; }

  template <class Field>
  void need(uint64_t n, const Field& field) const {
    if (n > left())
      fail_at(pos_, field,
              strprintf("needs %llu bytes but only %llu remain (file is %llu bytes, truncated?)", (ull)n,
                        (ull)left(), (ull)size_));
  }

  template <class T, class Field>
  T read(const Field& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  template <class Field>
  std::string_view read_string(const Field& field, uint64_t max_len) {
    const uint64_t at = pos_;
    const uint64_t len = read<uint64_t>([&] { return field() + " length"; });
    if (len > max_len)
      fail_at(at, field, strprintf("length %llu exceeds the limit of %llu bytes", (ull)len, (ull)max_len));
    if (len > left())
      fail_at(at, field,
              strprintf("string of %llu bytes runs past the end of the file (%llu bytes remain)", (ull)len,
                        (ull)left()));
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

  void read_header(File& f) {
    if (size_ < 4)
      fail_at(
          0, [] { return std::string("magic"); },
          strprintf("file is %llu bytes, too short for a GGUF header", (ull)size_));
    const uint32_t magic = read<uint32_t>([] { return std::string("magic"); });
    if (magic != detail::kMagic)
      fail_at(
          0, [] { return std::string("magic"); },
          strprintf("bad magic %02x %02x %02x %02x (expected 'GGUF')", p_[0], p_[1], p_[2], p_[3]));
    const uint32_t version = read<uint32_t>([] { return std::string("version"); });
    if (version != 2 && version != 3) {
      std::string why =
          strprintf("unsupported GGUF version %u (only versions 2 and 3 are supported)", version);
      if (version == 0x02000000u || version == 0x03000000u)
        why = strprintf("version field reads %u: a big-endian GGUF file, only little-endian is supported",
                        version);
      fail_at(
          4, [] { return std::string("version"); }, why);
    }
    f.version_ = version;
    const uint64_t n_tensors = read<uint64_t>([] { return std::string("tensor_count"); });
    const uint64_t n_kv = read<uint64_t>([] { return std::string("kv_count"); });
    // Bound both counts by the bytes that remain before any vector is sized from them.
    const uint64_t rest = left();
    if (n_kv > rest / kMinKvBytes)
      fail_at(
          16, [] { return std::string("kv_count"); },
          strprintf("%llu key-value pairs cannot fit in the %llu remaining bytes (each needs >= %llu)",
                    (ull)n_kv, (ull)rest, (ull)kMinKvBytes));
    if (n_tensors > rest / kMinTensorInfoBytes || n_kv * kMinKvBytes + n_tensors * kMinTensorInfoBytes > rest)
      fail_at(
          8, [] { return std::string("tensor_count"); },
          strprintf("%llu tensor infos (>= %llu bytes each) and %llu key-value pairs cannot fit in the "
                    "%llu remaining bytes",
                    (ull)n_tensors, (ull)kMinTensorInfoBytes, (ull)n_kv, (ull)rest));
    n_tensors_ = n_tensors;
    n_kv_ = n_kv;
  }

  void read_metadata(File& f) {
    // Grown as entries are parsed (counts are bounded by the file size, but a KeyValue is far
    // larger than its smallest encoding, so a lying count must not size the vector up front).
    f.kv_.reserve(std::min<uint64_t>(n_kv_, kReserveCap));
    std::unordered_map<std::string_view, uint64_t> seen;
    seen.reserve(std::min<uint64_t>(n_kv_, kReserveCap));
    for (uint64_t k = 0; k < n_kv_; ++k) {
      KeyValue& kv = f.kv_.emplace_back();
      kv.offset = pos_;
      const std::string_view key =
          read_string([&] { return strprintf("kv[%llu] key", (ull)k); }, detail::kMaxKeyLength);
      auto field = [&] { return strprintf("kv[%llu] key %s", (ull)k, quoted(key).c_str()); };
      const auto [it, inserted] = seen.emplace(key, kv.offset);
      if (!inserted)
        fail_at(kv.offset, field, strprintf("duplicate key (first at offset %llu)", (ull)it->second));
      kv.key.assign(key);
      read_value(kv.value, field);
    }
  }

  template <class Field>
  void read_value(Value& v, const Field& field) {
    const uint64_t type_at = pos_;
    auto type_field = [&] { return field() + " value type"; };
    const uint32_t type = read<uint32_t>(type_field);
    if (type > detail::kMaxValueType) fail_at(type_at, type_field, strprintf("unknown value type %u", type));
    v.type = static_cast<ValueType>(type);
    if (v.type == ValueType::STRING) {
      v.str.assign(
          read_string([&] { return field() + " string value"; }, std::numeric_limits<uint64_t>::max()));
    } else if (v.type == ValueType::ARRAY) {
      read_array(v, field);
    } else {
      read_scalar(v, v.type, [&] { return field() + " value"; });
    }
  }

  // Reads one fixed-size value at the cursor and widens it into v.u / v.i / v.f.
  template <class Field>
  void read_scalar(Value& v, ValueType t, const Field& field) {
    const uint64_t at = pos_;
    const size_t n = detail::scalar_size(t);
    need(n, field);
    const uint8_t* src = p_ + pos_;
    pos_ += n;
    auto load = [&](auto tag) {
      decltype(tag) x;
      std::memcpy(&x, src, sizeof x);
      return x;
    };
    switch (t) {
      case ValueType::UINT8: set_unsigned(v, load(uint8_t{})); break;
      case ValueType::UINT16: set_unsigned(v, load(uint16_t{})); break;
      case ValueType::UINT32: set_unsigned(v, load(uint32_t{})); break;
      case ValueType::UINT64: set_unsigned(v, load(uint64_t{})); break;
      case ValueType::INT8: set_signed(v, load(int8_t{})); break;
      case ValueType::INT16: set_signed(v, load(int16_t{})); break;
      case ValueType::INT32: set_signed(v, load(int32_t{})); break;
      case ValueType::INT64: set_signed(v, load(int64_t{})); break;
      case ValueType::FLOAT32: v.f = load(float{}); break;
      case ValueType::FLOAT64: v.f = load(double{}); break;
      case ValueType::BOOL: {
        const uint8_t b = src[0];
        if (b > 1) fail_at(at, field, strprintf("bool value %u is neither 0 nor 1", b));
        v.u = b;
        v.i = b;
        break;
      }
      case ValueType::STRING:
      case ValueType::ARRAY: break;  // not scalars; callers never pass them
    }
  }

  static void set_unsigned(Value& v, uint64_t x) {
    v.u = x;
    if (x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v.i = static_cast<int64_t>(x);
  }
  static void set_signed(Value& v, int64_t x) {
    v.i = x;
    if (x >= 0) v.u = static_cast<uint64_t>(x);
  }

  template <class Field>
  void read_array(Value& v, const Field& field) {
    const uint64_t elem_at = pos_;
    auto elem_field = [&] { return field() + " array element type"; };
    const uint32_t elem = read<uint32_t>(elem_field);
    if (elem > detail::kMaxValueType) fail_at(elem_at, elem_field, strprintf("unknown value type %u", elem));
    v.array_type = static_cast<ValueType>(elem);
    if (v.array_type == ValueType::ARRAY) fail_at(elem_at, elem_field, "arrays of arrays are not supported");
    const uint64_t len_at = pos_;
    auto len_field = [&] { return field() + " array length"; };
    const uint64_t n = read<uint64_t>(len_field);
    const size_t elem_size = detail::scalar_size(v.array_type);
    const uint64_t min_elem = v.array_type == ValueType::STRING ? 8 : elem_size;  // a string is >= its length
    if (n > left() / min_elem)
      fail_at(len_at, len_field,
              strprintf("%llu elements of %s (>= %llu bytes each) cannot fit in the %llu remaining bytes",
                        (ull)n, value_type_name(v.array_type), (ull)min_elem, (ull)left()));
    v.array_len = n;
    if (v.array_type == ValueType::STRING) {
      v.strings.resize(n);
      for (uint64_t j = 0; j < n; ++j)
        v.strings[j].assign(read_string([&] { return strprintf("%s element %llu", field().c_str(), (ull)j); },
                                        std::numeric_limits<uint64_t>::max()));
      return;
    }
    const uint64_t nbytes = n * elem_size;  // bounded by left() above
    const uint8_t* src = p_ + pos_;
    if (v.array_type == ValueType::BOOL) {
      for (uint64_t j = 0; j < n; ++j)
        if (src[j] > 1)
          fail_at(
              pos_ + j, [&] { return strprintf("%s element %llu", field().c_str(), (ull)j); },
              strprintf("bool value %u is neither 0 nor 1", src[j]));
    }
    v.raw.assign(src, src + nbytes);
    pos_ += nbytes;
  }

  void read_alignment(File& f) {
    f.alignment_ = detail::kDefaultAlignment;
    const KeyValue* kv = f.find(detail::kAlignmentKey);
    if (kv == nullptr) return;
    auto field = [] { return strprintf("key '%s'", detail::kAlignmentKey); };
    if (kv->value.type != ValueType::UINT32)
      fail_at(kv->offset, field, strprintf("type %s, expected UINT32", value_type_name(kv->value.type)));
    const uint64_t a = kv->value.u;
    if (a == 0 || (a & (a - 1)) != 0)
      fail_at(kv->offset, field, strprintf("alignment %llu is not a nonzero power of two", (ull)a));
    f.alignment_ = a;
  }

  void read_tensor_infos(File& f) {
    f.tensors_.reserve(std::min<uint64_t>(n_tensors_, kReserveCap));
    offset_field_at_.reserve(std::min<uint64_t>(n_tensors_, kReserveCap));
    f.tensor_index_.reserve(std::min<uint64_t>(n_tensors_, kReserveCap));
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      TensorInfo& t = f.tensors_.emplace_back();
      t.info_offset = pos_;
      const std::string_view name =
          read_string([&] { return strprintf("tensor[%llu] name", (ull)i); }, detail::kMaxTensorName);
      const std::string qname = quoted(name);
      auto field = [&](const char* what) {
        return [&qname, what] { return strprintf("tensor %s%s", qname.c_str(), what); };
      };
      const auto [it, inserted] = f.tensor_index_.emplace(name, i);
      if (!inserted)
        fail_at(t.info_offset, field(""),
                strprintf("duplicate tensor name (first at offset %llu)",
                          (ull)f.tensors_[it->second].info_offset));
      t.name.assign(name);

      const uint64_t dims_at = pos_;
      t.n_dims = read<uint32_t>(field(" n_dims"));
      if (t.n_dims == 0) fail_at(dims_at, field(""), "n_dims 0 (a tensor has at least one dimension)");
      if (t.n_dims > detail::kMaxDims)
        fail_at(dims_at, field(""), strprintf("n_dims %u > %u", t.n_dims, detail::kMaxDims));
      const uint64_t ne_at = pos_;
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        const uint64_t at = pos_;
        const std::string dim = strprintf(" ne[%u]", d);
        const uint64_t ne = read<uint64_t>(field(dim.c_str()));
        if (ne == 0) fail_at(at, field(dim.c_str()), "dimension is 0");
        if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail_at(at, field(dim.c_str()), strprintf("dimension %llu does not fit in int64", (ull)ne));
        t.ne[d] = static_cast<int64_t>(ne);
      }

      const uint64_t type_at = pos_;
      const uint32_t type_id = read<uint32_t>(field(" type"));
      const TypeTraits* tr = type_traits_or_null(type_id);
      if (tr == nullptr) fail_at(type_at, field(" type"), strprintf("unknown tensor type %u", type_id));
      t.type = static_cast<Type>(type_id);

      offset_field_at_.push_back(pos_);
      t.offset = read<uint64_t>(field(" offset"));

      // Shape checks need the type, so they come after it has been read.
      if (static_cast<uint64_t>(t.ne[0]) % tr->block_size != 0)
        fail_at(ne_at, field(" ne[0]"),
                strprintf("%lld is not a multiple of the block size %u of %s", (long long)t.ne[0],
                          tr->block_size, tr->name));
      uint64_t n_elements = 1;
      uint64_t nbytes = (static_cast<uint64_t>(t.ne[0]) / tr->block_size) * tr->type_size;  // cannot overflow
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        const uint64_t ne = static_cast<uint64_t>(t.ne[d]);
        if (mul_overflows(n_elements, ne, &n_elements) ||
            n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail_at(ne_at, field(" shape"), "element count overflows int64");
        if (d > 0 && mul_overflows(nbytes, ne, &nbytes))
          fail_at(ne_at, field(" shape"), "byte size overflows uint64");
      }
      t.nbytes = nbytes;
    }
    f.data_offset_ = (pos_ + f.alignment_ - 1) / f.alignment_ * f.alignment_;  // pos_ <= size_: no overflow
  }

  void check_tensor_data(const File& f) const {
    for (size_t i = 0; i < f.tensors_.size(); ++i) {
      const TensorInfo& t = f.tensors_[i];
      auto field = [&] { return strprintf("tensor %s offset", quoted(t.name).c_str()); };
      if (t.offset % f.alignment_ != 0)
        fail_at(offset_field_at_[i], field,
                strprintf("%llu is not a multiple of the alignment %llu", (ull)t.offset, (ull)f.alignment_));
      uint64_t begin = 0;
      uint64_t end = 0;
      if (__builtin_add_overflow(f.data_offset_, t.offset, &begin) ||
          __builtin_add_overflow(begin, t.nbytes, &end) || end > size_)
        fail_at(offset_field_at_[i], field,
                strprintf("%llu bytes at data section %llu + offset %llu run past the end of the file "
                          "(%llu bytes)",
                          (ull)t.nbytes, (ull)f.data_offset_, (ull)t.offset, (ull)size_));
    }
  }

  const uint8_t* p_;
  uint64_t size_;
  const std::string& name_;
  uint64_t pos_ = 0;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
  std::vector<uint64_t> offset_field_at_;  // where each tensor's offset field was read
};

File File::parse(std::span<const uint8_t> bytes, const std::string& name) {
  File f;
  Parser(bytes, name).run(f);
  return f;
}

File File::open(const std::string& path) {
  auto map = std::make_shared<MappedFile>(path);
  File f = parse(map->bytes(), path);
  f.map_ = std::move(map);
  return f;
}

}  // namespace hexllm::gguf
