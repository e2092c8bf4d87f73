// Session end to end: hand-built batch messages run F32 binary ops through the dispatcher and
// the DMA/VTCM pipeline, in every DMA engine, with 1 and 2 threads, with a VTCM small enough to
// force many blocks per thread. Truth: the same arithmetic done element by element in the test.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "test_batch.h"

namespace hexllm::htp::test {
namespace {

float read(const Bank& bank, const htp_tensor& t, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  float v;
  memcpy(&v,
         bank.base + t.offset + (size_t)i0 * t.nb[0] + (size_t)i1 * t.nb[1] + (size_t)i2 * t.nb[2] +
             (size_t)i3 * t.nb[3],
         4);
  return v;
}

void write(const Bank& bank, const htp_tensor& t, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3,
           float v) {
  memcpy(bank.base + t.offset + (size_t)i0 * t.nb[0] + (size_t)i1 * t.nb[1] + (size_t)i2 * t.nb[2] +
             (size_t)i3 * t.nb[3],
         &v, 4);
}

template <typename Fn>
void for_each(const htp_tensor& t, Fn fn) {
  for (uint32_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (uint32_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (uint32_t i1 = 0; i1 < t.ne[1]; ++i1)
        for (uint32_t i0 = 0; i0 < t.ne[0]; ++i0) fn(i0, i1, i2, i3);
}

// Fills a tensor with distinct values: base + step * (logical element index).
void fill(const Bank& bank, const htp_tensor& t, float base, float step) {
  uint32_t k = 0;
  for_each(t, [&](uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    write(bank, t, i0, i1, i2, i3, base + step * k++);
  });
}

float apply(uint32_t opcode, float a, float b) {
  switch (opcode) {
    case HTP_OP_ADD: return a + b;
    case HTP_OP_SUB: return a - b;
    case HTP_OP_MUL: return a * b;
    default: return a / b;
  }
}

// dst == src0 (op) src1 repeated to dst's shape, exactly (one IEEE operation per element).
void expect_binary(const Bank& bank, uint32_t opcode, const htp_tensor& d, const std::vector<float>& a_before,
                   const htp_tensor& b) {
  size_t k = 0, bad = 0;
  for_each(d, [&](uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    const float want =
        apply(opcode, a_before[k++], read(bank, b, i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
    const float got = read(bank, d, i0, i1, i2, i3);
    if (got != want && bad++ < 5)
      ADD_FAILURE() << "at (" << i0 << "," << i1 << "," << i2 << "," << i3 << "): got " << got << " want "
                    << want;
  });
  EXPECT_EQ(bad, 0u);
}

std::vector<float> snapshot(const Bank& bank, const htp_tensor& t) {
  std::vector<float> v;
  for_each(t, [&](uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    v.push_back(read(bank, t, i0, i1, i2, i3));
  });
  return v;
}

struct BinaryCase {
  const char* name;
  uint32_t opcode;
  Shape ne;          // src0 and dst
  Shape ne1;         // src1
  uint32_t stride;   // row stride of src0/dst in bytes (0 = dense)
  uint32_t stride1;  // row stride of src1
};

const BinaryCase kCases[] = {
    {"same_shape_add", HTP_OP_ADD, {37, 5, 3, 1}, {37, 5, 3, 1}, 0, 0},
    {"one_row_sub", HTP_OP_SUB, {37, 5, 3, 1}, {37, 1, 1, 1}, 0, 0},
    {"row_and_plane_broadcast_mul", HTP_OP_MUL, {37, 6, 2, 2}, {37, 3, 1, 2}, 0, 0},
    {"scalar_per_row_div", HTP_OP_DIV, {16, 5, 3, 1}, {1, 5, 1, 1}, 0, 0},
    {"within_row_repeat_add", HTP_OP_ADD, {36, 4, 2, 1}, {12, 1, 2, 1}, 0, 0},
    {"padded_row_views_mul", HTP_OP_MUL, {37, 5, 3, 1}, {37, 5, 1, 1}, 256, 160},
};

// threads, DMA mode, VTCM bytes
using SessionParam = std::tuple<uint32_t, uint32_t, uint32_t>;

class HtpSessionBinary : public ::testing::TestWithParam<SessionParam> {};

TEST_P(HtpSessionBinary, AllCasesMatchElementwiseTruth) {
  const auto [threads, mode, vtcm] = GetParam();
  Bank bank(1 << 20);
  Session sess(bank, threads, mode, vtcm);
  ASSERT_NE(sess.s, nullptr);
  for (const BinaryCase& c : kCases) {
    SCOPED_TRACE(c.name);
    BatchBuilder b;
    const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, c.ne, c.stride);
    const uint16_t s1 = b.tensor(0, 128 << 10, HTP_TYPE_F32, c.ne1, c.stride1);
    const uint16_t d = b.tensor(0, 256 << 10, HTP_TYPE_F32, c.ne, c.stride);
    b.op(c.opcode, d, {a, s1});
    ASSERT_EQ(b.set_binary_params(0, sess.hw), HTP_OK);
    const auto p = htp_kparams_get<htp_binary_params>(b.ops[0]);
    const uint64_t rows = htp_tensor_nrows(b.tensors[d]);
    if (vtcm < 65536) {
      ASSERT_LT(p.block_rows, rows / p.n_threads) << "the small VTCM must force several blocks";
    }
    EXPECT_EQ(p.n_threads, threads);

    fill(bank, b.tensors[a], -7.0f, 0.5f);
    fill(bank, b.tensors[s1], c.opcode == HTP_OP_DIV ? 1.0f : 100.0f, c.opcode == HTP_OP_DIV ? 0.25f : -1.0f);
    memset(bank.base + (256 << 10), 0xff, 128 << 10);  // NaN everywhere the op must write
    const std::vector<float> a_before = snapshot(bank, b.tensors[a]);

    std::vector<uint64_t> msg = b.build();
    ASSERT_EQ(process(sess.s, msg), HTP_OK);
    EXPECT_EQ(response(msg).status, HTP_OK);
    EXPECT_EQ(response(msg).failed_op, HTP_NO_INDEX);
    EXPECT_EQ(response(msg).n_ops_done, 1u);
    expect_binary(bank, c.opcode, b.tensors[d], a_before, b.tensors[s1]);
    if (c.stride != 0) {  // the padding between view rows is not written
      uint32_t pad;
      memcpy(&pad, bank.base + (256 << 10) + c.ne[0] * 4, 4);
      EXPECT_EQ(pad, 0xffffffffu);
    }
  }
}

std::string session_name(const ::testing::TestParamInfo<SessionParam>& p) {
  const char* const modes[] = {"Async", "Inline", "ZeroCopy"};
  return std::to_string(std::get<0>(p.param)) + "t_" + modes[std::get<1>(p.param)] + "_vtcm" +
         std::to_string(std::get<2>(p.param));
}

INSTANTIATE_TEST_SUITE_P(ThreadsEnginesVtcm, HtpSessionBinary,
                         ::testing::Combine(::testing::Values(1u, 2u),
                                            ::testing::Values((uint32_t)HTP_DMA_ASYNC,
                                                              (uint32_t)HTP_DMA_INLINE,
                                                              (uint32_t)HTP_DMA_ZERO_COPY),
                                            ::testing::Values(8192u, 8u << 20)),
                         session_name);

TEST(HtpSession, AddHandComputedValues) {
  // dst = a + b for a = {0, 0.5, 1, ...}, b = {100, 99, 98, ...}: dst[i] = 100 - 0.5 i.
  Bank bank(64 << 10);
  Session sess(bank, 2, HTP_DMA_ASYNC, 8192);
  BatchBuilder b;
  const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {8, 4, 1, 1});
  const uint16_t s1 = b.tensor(0, 4096, HTP_TYPE_F32, {8, 4, 1, 1});
  const uint16_t d = b.tensor(0, 8192, HTP_TYPE_F32, {8, 4, 1, 1});
  b.op(HTP_OP_ADD, d, {a, s1});
  ASSERT_EQ(b.set_binary_params(0, sess.hw), HTP_OK);
  for (int i = 0; i < 32; ++i) {
    bank.f32(0)[i] = 0.5f * i;
    bank.f32(4096)[i] = 100.0f - i;
  }
  std::vector<uint64_t> msg = b.build(77);
  ASSERT_EQ(process(sess.s, msg), HTP_OK);
  EXPECT_EQ(response(msg).seq, 77u);
  EXPECT_EQ(bank.f32(8192)[0], 100.0f);
  EXPECT_EQ(bank.f32(8192)[1], 99.5f);
  EXPECT_EQ(bank.f32(8192)[10], 95.0f);
  EXPECT_EQ(bank.f32(8192)[31], 84.5f);
  EXPECT_GT(op_ns(msg)[0], 0u);
  EXPECT_GE(response(msg).total_ns, op_ns(msg)[0]);
}

TEST(HtpSession, InPlaceAndChainedOps) {
  // x = x * y; x = x - y; z = x + x with x = 1..n, y = 2: z = 2 * (2x - 2) = 4x - 4.
  Bank bank(64 << 10);
  Session sess(bank, 2, HTP_DMA_ASYNC, 8192);
  BatchBuilder b;
  const uint16_t x = b.tensor(0, 0, HTP_TYPE_F32, {33, 7, 1, 1});
  const uint16_t y = b.tensor(0, 4096, HTP_TYPE_F32, {1, 1, 1, 1});
  const uint16_t z = b.tensor(0, 8192, HTP_TYPE_F32, {33, 7, 1, 1});
  b.op(HTP_OP_MUL, x, {x, y});
  b.op(HTP_OP_SUB, x, {x, y});
  b.op(HTP_OP_ADD, z, {x, x});
  for (size_t i = 0; i < 3; ++i) ASSERT_EQ(b.set_binary_params(i, sess.hw), HTP_OK);
  for (int i = 0; i < 33 * 7; ++i) bank.f32(0)[i] = (float)(i + 1);
  bank.f32(4096)[0] = 2.0f;
  std::vector<uint64_t> msg = b.build();
  ASSERT_EQ(process(sess.s, msg), HTP_OK);
  EXPECT_EQ(response(msg).n_ops_done, 3u);
  for (int i = 0; i < 33 * 7; ++i) ASSERT_EQ(bank.f32(8192)[i], 4.0f * (i + 1) - 4.0f) << i;
}

TEST(HtpSession, StopsAtFirstFailingOp) {
  Bank bank(64 << 10);
  Session sess(bank, 2, HTP_DMA_INLINE, 1 << 20);
  BatchBuilder b;
  const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {8, 2, 1, 1});
  const uint16_t d0 = b.tensor(0, 1024, HTP_TYPE_F32, {8, 2, 1, 1});
  const uint16_t odd = b.tensor(0, 2048, HTP_TYPE_F32, {3, 2, 1, 1});
  const uint16_t d2 = b.tensor(0, 3072, HTP_TYPE_F32, {8, 2, 1, 1});
  b.op(HTP_OP_ADD, d0, {a, a});
  b.op(HTP_OP_ADD, d2, {a, odd});  // rows of 3 cannot repeat to rows of 8
  b.op(HTP_OP_ADD, d2, {a, a});
  ASSERT_EQ(b.set_binary_params(0, sess.hw), HTP_OK);
  ASSERT_EQ(b.set_binary_params(1, sess.hw), HTP_ERR_INVALID_PARAMS);  // the host would not send it
  ASSERT_EQ(b.set_binary_params(2, sess.hw), HTP_OK);
  for (int i = 0; i < 16; ++i) bank.f32(0)[i] = (float)i;
  bank.f32(3072)[5] = -1.0f;
  std::vector<uint64_t> msg = b.build();
  EXPECT_EQ(process(sess.s, msg), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(response(msg).status, HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(response(msg).failed_op, 1u);
  EXPECT_EQ(response(msg).n_ops_done, 1u);
  EXPECT_EQ(bank.f32(1024)[5], 10.0f);  // op 0 ran
  EXPECT_EQ(bank.f32(3072)[5], -1.0f);  // op 2 did not
  EXPECT_GT(op_ns(msg)[0], 0u);
  EXPECT_EQ(op_ns(msg)[2], 0u);
}

// The op-start hook (how the process transport wakes its host near a batch's end) sees every op
// start in order, each after the op before it finished, and none past a failed op.
TEST(HtpSession, OpStartHookSeesEachOpAfterTheOneBefore) {
  Bank bank(64 << 10);
  Session sess(bank, 2, HTP_DMA_INLINE, 1 << 20);
  struct Seen {
    Bank* bank;
    std::vector<uint32_t> ops;
    std::vector<float> x_at_start;
  } seen{&bank, {}, {}};
  htp_session_on_op_start(sess.s, [](void* arg, uint32_t op) {
    auto* s = static_cast<Seen*>(arg);
    s->ops.push_back(op);
    s->x_at_start.push_back(s->bank->f32(0)[5]);
  }, &seen);
  BatchBuilder b;
  const uint16_t x = b.tensor(0, 0, HTP_TYPE_F32, {8, 2, 1, 1});
  const uint16_t odd = b.tensor(0, 2048, HTP_TYPE_F32, {3, 2, 1, 1});
  b.op(HTP_OP_ADD, x, {x, x});
  b.op(HTP_OP_ADD, x, {x, x});
  b.op(HTP_OP_ADD, x, {x, odd});  // refused: rows of 3 cannot repeat to rows of 8
  b.op(HTP_OP_ADD, x, {x, x});
  for (size_t i = 0; i < 4; ++i) b.set_binary_params(i, sess.hw);
  bank.f32(0)[5] = 1.0f;
  std::vector<uint64_t> msg = b.build();
  EXPECT_EQ(process(sess.s, msg), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(seen.ops, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(seen.x_at_start, (std::vector<float>{1.0f, 2.0f, 4.0f}));

  htp_session_on_op_start(sess.s, nullptr, nullptr);  // off again: nothing more is seen
  std::vector<uint64_t> again = b.build();
  EXPECT_EQ(process(sess.s, again), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(seen.ops.size(), 3u);
}

TEST(HtpSession, SkipComputeRunsNoKernel) {
  Bank bank(64 << 10);
  Session sess(bank, 1, HTP_DMA_INLINE, 1 << 20);
  BatchBuilder b;
  const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {8, 2, 1, 1});
  const uint16_t d = b.tensor(0, 1024, HTP_TYPE_F32, {8, 2, 1, 1});
  b.op(HTP_OP_ADD, d, {a, a}).flags = HTP_OPF_SKIP_COMPUTE;
  bank.f32(0)[0] = 3.0f;
  std::vector<uint64_t> msg = b.build();
  EXPECT_EQ(process(sess.s, msg), HTP_OK);  // not even the (missing) kernel params are looked at
  EXPECT_EQ(bank.f32(1024)[0], 0.0f);
}

TEST(HtpSession, TraceRecordsWhenEnabled) {
  Bank bank(1 << 20);
  Session sess(bank, 2, HTP_DMA_ASYNC, 8192);
  BatchBuilder b;
  const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {37, 12, 1, 1});
  const uint16_t d = b.tensor(0, 65536, HTP_TYPE_F32, {37, 12, 1, 1});
  b.op(HTP_OP_ADD, d, {a, a});
  b.op(HTP_OP_MUL, d, {d, a});
  ASSERT_EQ(b.set_binary_params(0, sess.hw), HTP_OK);
  ASSERT_EQ(b.set_binary_params(1, sess.hw), HTP_OK);

  // Off: nothing recorded.
  std::vector<uint64_t> off = b.build();
  ASSERT_EQ(process(sess.s, off), HTP_OK);
  for (uint32_t t = 0; t < HTP_MAX_THREADS; ++t) EXPECT_EQ(response(off).trace_count[t], 0u);

  b.trace(2, 512);
  std::vector<uint64_t> msg = b.build();
  ASSERT_EQ(process(sess.s, msg), HTP_OK);
  const htp_response& r = response(msg);
  EXPECT_EQ(r.trace_dropped, 0u);
  for (uint32_t t = 0; t < 2; ++t) {
    SCOPED_TRACE(t);
    const uint32_t n = r.trace_count[t];
    const htp_trace_record* rec = trace_area(msg, t);
    ASSERT_GT(n, 0u);
    int depth = 0, compute = 0, ops = 0;
    for (uint32_t k = 0; k < n; ++k) {
      if (k > 0) {
        EXPECT_GE(rec[k].time_ns, rec[k - 1].time_ns);
      }
      const bool end = (rec[k].event & HTP_EV_END) != 0;
      const uint16_t ev = rec[k].event & ~HTP_EV_END;
      EXPECT_STRNE(htp_trace_event_name(ev), "UNKNOWN_EVENT");
      depth += end ? -1 : 1;
      EXPECT_GE(depth, 0);
      if (!end && ev == HTP_EV_COMPUTE) ++compute;
      if (!end && ev == HTP_EV_OP) {
        EXPECT_EQ(rec[k].info, ops);  // OP events carry the op index
        ++ops;
      }
    }
    EXPECT_EQ(depth, 0);             // every begin has its end
    EXPECT_GE(compute, 2);           // several blocks per op with this small VTCM
    EXPECT_EQ(ops, 2);               // the dispatcher records every op on every worker
  }
  EXPECT_EQ(r.trace_count[2], 0u);

  // A full area drops records and says so.
  b.trace(2, 3);
  std::vector<uint64_t> small = b.build();
  ASSERT_EQ(process(sess.s, small), HTP_OK);
  EXPECT_EQ(response(small).trace_count[0], 3u);
  EXPECT_GT(response(small).trace_dropped, 0u);
}

TEST(HtpSession, ManyBatchesReuseTheSession) {
  Bank bank(256 << 10);
  Session sess(bank, 2, HTP_DMA_ASYNC, 16384);
  BatchBuilder b;
  const uint16_t x = b.tensor(0, 0, HTP_TYPE_F32, {64, 9, 1, 1});
  const uint16_t one = b.tensor(0, 65536, HTP_TYPE_F32, {64, 1, 1, 1});
  b.op(HTP_OP_ADD, x, {x, one});
  ASSERT_EQ(b.set_binary_params(0, sess.hw), HTP_OK);
  for (int i = 0; i < 64; ++i) bank.f32(65536)[i] = 1.0f;
  for (uint64_t seq = 1; seq <= 200; ++seq) {
    std::vector<uint64_t> msg = b.build(seq);
    ASSERT_EQ(process(sess.s, msg), HTP_OK) << seq;
    ASSERT_EQ(response(msg).seq, seq);
  }
  for (int i = 0; i < 64 * 9; ++i) ASSERT_EQ(bank.f32(0)[i], 200.0f) << i;
}

TEST(HtpSession, OpenValidatesConfig) {
  Bank bank(64 << 10);
  htp_session* s = nullptr;
  htp_session_config c = htp_session_config_default();
  c.n_threads = 0;
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_INVALID_PARAMS);
  c.n_threads = HTP_MAX_THREADS + 1;
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_INVALID_PARAMS);
  c = htp_session_config_default();
  c.vtcm_size = 0;
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_INVALID_PARAMS);
  c = htp_session_config_default();
  c.dma_mode = HTP_DMA_MODE_COUNT;
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_INVALID_PARAMS);
  c = htp_session_config_default();
  c.n_banks = 1;
  c.banks[0] = {bank.base + 8, 1024};  // misaligned bank
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_INVALID_PARAMS);
  c.banks[0] = {bank.base, bank.size};
  c.window_size = bank.size - 1;
  EXPECT_EQ(htp_session_open(&c, &s), HTP_ERR_OUT_OF_WINDOW);
  EXPECT_EQ(s, nullptr);
}

TEST(HtpSession, HwinfoAndBankWindow) {
  Bank bank(64 << 10), other(64 << 10);
  htp_session_config c = htp_session_config_default();
  c.n_threads = 3;
  c.vtcm_size = 1 << 20;
  c.window_size = 100 << 10;
  c.dma_mode = HTP_DMA_ZERO_COPY;
  c.n_banks = 1;
  c.banks[0] = {bank.base, bank.size};
  htp_session* s = nullptr;
  ASSERT_EQ(htp_session_open(&c, &s), HTP_OK);
  htp_hwinfo hw{};
  htp_session_hwinfo(s, &hw);
  EXPECT_EQ(hw.abi_version, HTP_ABI_VERSION);
  EXPECT_EQ(hw.n_threads, 3u);
  EXPECT_EQ(hw.vtcm_size, 1u << 20);
  EXPECT_EQ(hw.dma_mode, (uint32_t)HTP_DMA_ZERO_COPY);
  EXPECT_EQ(hw.window_size, 100u << 10);
  EXPECT_EQ(hw.n_banks, 1u);

  // 64 + 64 KiB exceed the 100 KiB window; after unmapping bank 0 the second bank fits.
  EXPECT_EQ(htp_session_map_bank(s, 1, other.base, other.size), HTP_ERR_OUT_OF_WINDOW);
  EXPECT_EQ(htp_session_map_bank(s, 0, nullptr, 0), HTP_OK);
  EXPECT_EQ(htp_session_map_bank(s, 1, other.base, other.size), HTP_OK);
  EXPECT_EQ(htp_session_map_bank(s, HTP_MAX_BANKS, other.base, 64), HTP_ERR_INVALID_PARAMS);

  // A tensor in the unmapped bank is out of the window; one in the mapped bank works.
  BatchBuilder b;
  const uint16_t a0 = b.tensor(0, 0, HTP_TYPE_F32, {4, 1, 1, 1});
  b.op(HTP_OP_ADD, a0, {a0, a0}).flags = HTP_OPF_SKIP_COMPUTE;
  std::vector<uint64_t> msg = b.build();
  EXPECT_EQ(process(s, msg), HTP_ERR_OUT_OF_WINDOW);
  EXPECT_EQ(response(msg).failed_tensor, 0u);
  b.tensors[0].bank = 1;
  msg = b.build();
  EXPECT_EQ(process(s, msg), HTP_OK);
  htp_session_close(s);
}

}  // namespace
}  // namespace hexllm::htp::test
