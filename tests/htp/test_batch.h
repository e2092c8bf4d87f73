// Test-side helpers: banks of device-visible memory and a builder for batch messages laid out
// with the ABI's own htp_message_layout_build (as the host's prepare step will).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "htp/abi/binary_params.h"
#include "htp/abi/htp_abi.h"
#include "htp/platform/platform.h"
#include "htp/session.h"

namespace hexllm::htp::test {

struct Bank {
  uint8_t* base;
  size_t size;
  explicit Bank(size_t n) : base((uint8_t*)platform_mem_map(n, 4096)), size(n) {}
  ~Bank() { platform_mem_unmap(base, size); }
  Bank(const Bank&) = delete;
  Bank& operator=(const Bank&) = delete;
  float* f32(uint32_t offset) const { return (float*)(base + offset); }
};

using Shape = std::array<uint32_t, 4>;

class BatchBuilder {
 public:
  // A tensor with rows `row_stride` bytes apart (0: dense), planes dense over rows.
  uint16_t tensor(uint16_t bank, uint32_t offset, uint32_t type, Shape ne, uint32_t row_stride = 0,
                  uint16_t flags = HTP_TENSOR_COMPUTE) {
    const htp_type_info ti = htp_type_geometry(type);
    htp_tensor t{};
    t.bank = bank;
    t.flags = flags;
    t.type = type;
    t.offset = offset;
    for (int d = 0; d < 4; ++d) t.ne[d] = ne[d];
    t.nb[0] = ti.type_size;
    t.nb[1] = row_stride != 0 ? row_stride : ne[0] / (ti.block_size ? ti.block_size : 1) * ti.type_size;
    t.nb[2] = t.nb[1] * ne[1];
    t.nb[3] = t.nb[2] * ne[2];
    const uint64_t extent = htp_tensor_extent(t);
    t.size = extent == HTP_BAD_EXTENT ? 0 : (uint32_t)extent;
    tensors.push_back(t);
    return (uint16_t)(tensors.size() - 1);
  }

  htp_op_desc& op(uint32_t opcode, uint16_t dst, std::initializer_list<uint16_t> srcs) {
    htp_op_desc o{};
    o.opcode = opcode;
    o.dst = dst;
    for (uint16_t& s : o.src) s = HTP_NO_TENSOR;
    for (uint16_t& d : o.dst_ext) d = HTP_NO_TENSOR;
    int k = 0;
    for (uint16_t s : srcs) o.src[k++] = s;
    ops.push_back(o);
    return ops.back();
  }

  // Kernel params for a binary op, as the host computes them for this session.
  htp_status set_binary_params(size_t op_index, const htp_hwinfo& hw) {
    htp_op_desc& o = ops[op_index];
    htp_binary_params p{};
    const htp_status st = htp_binary_params_build(tensors[o.dst], tensors[o.src[0]], tensors[o.src[1]],
                                                  hw.n_threads, hw.vtcm_size, &p);
    if (st == HTP_OK) htp_kparams_set(&o, p);
    return st;
  }

  void trace(uint32_t threads, uint32_t capacity) {
    trace_threads = threads;
    trace_capacity = capacity;
  }

  // The message in u64 words, so it is 8-byte aligned.
  std::vector<uint64_t> build(uint64_t seq = 1) const {
    htp_message_layout l{};
    EXPECT_TRUE(htp_message_layout_build((uint32_t)tensors.size(), (uint32_t)ops.size(), trace_threads,
                                         trace_capacity, &l));
    std::vector<uint64_t> msg(l.message_size / 8, 0);
    auto* bytes = (uint8_t*)msg.data();
    htp_batch_header h{};
    h.magic = HTP_BATCH_MAGIC;
    h.abi_version = HTP_ABI_VERSION;
    h.seq = seq;
    h.n_tensors = (uint32_t)tensors.size();
    h.n_ops = (uint32_t)ops.size();
    h.flags = trace_threads != 0 ? (uint32_t)HTP_BATCH_TRACE : 0u;
    h.trace_threads = trace_threads;
    h.trace_capacity = trace_capacity;
    h.tensors_offset = l.tensors_offset;
    h.ops_offset = l.ops_offset;
    h.response_offset = l.response_offset;
    h.trace_offset = l.trace_offset;
    h.message_size = l.message_size;
    memcpy(bytes, &h, sizeof h);
    if (!tensors.empty())
      memcpy(bytes + l.tensors_offset, tensors.data(), tensors.size() * sizeof(htp_tensor));
    if (!ops.empty()) memcpy(bytes + l.ops_offset, ops.data(), ops.size() * sizeof(htp_op_desc));
    return msg;
  }

  std::vector<htp_tensor> tensors;
  std::vector<htp_op_desc> ops;
  uint32_t trace_threads = 0;
  uint32_t trace_capacity = 0;
};

inline htp_batch_header& header(std::vector<uint64_t>& msg) { return *(htp_batch_header*)msg.data(); }

inline const htp_response& response(const std::vector<uint64_t>& msg) {
  const auto& h = *(const htp_batch_header*)msg.data();
  return *(const htp_response*)((const uint8_t*)msg.data() + h.response_offset);
}

inline const uint64_t* op_ns(const std::vector<uint64_t>& msg) {
  return (const uint64_t*)(&response(msg) + 1);
}

inline const htp_trace_record* trace_area(const std::vector<uint64_t>& msg, uint32_t thread) {
  const auto& h = *(const htp_batch_header*)msg.data();
  return (const htp_trace_record*)((const uint8_t*)msg.data() + h.trace_offset) +
         (size_t)thread * h.trace_capacity;
}

inline htp_status process(htp_session* s, std::vector<uint64_t>& msg) {
  return htp_session_process(s, msg.data(), msg.size() * 8);
}

// A session over one bank; closed on destruction.
struct Session {
  htp_session* s = nullptr;
  htp_hwinfo hw{};
  Session(const Bank& bank, uint32_t n_threads, uint32_t dma_mode, uint32_t vtcm_size) {
    htp_session_config c = htp_session_config_default();
    c.n_threads = n_threads;
    c.dma_mode = dma_mode;
    c.vtcm_size = vtcm_size;
    c.stack_bytes = 128 << 10;
    c.n_banks = 1;
    c.banks[0] = {bank.base, bank.size};
    EXPECT_EQ(htp_session_open(&c, &s), HTP_OK);
    if (s != nullptr) htp_session_hwinfo(s, &hw);
  }
  ~Session() { htp_session_close(s); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

}  // namespace hexllm::htp::test
