// Every family's kernel refuses tampered kernel params. The device rebuilds the family's plan
// with the host's builder from the op's shapes, op params and the session, and compares the
// whole struct (htp_kparams_match). So changing any single 32-bit word of the blob's integer
// fields, three ways, must fail the batch with INVALID_PARAMS or VTCM_TOO_SMALL before a
// worker runs, and the bank must stay as the untampered run left it. Only the libm-derived
// floats each params header names as taken as sent are skipped.
// Truth: the host builders (htp/abi/*_params.h) run here as the host runs them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "../test_batch.h"
#include "htp/abi/act_params.h"
#include "htp/abi/binary_params.h"
#include "htp/abi/copy_params.h"
#include "htp/abi/flash_attn_params.h"
#include "htp/abi/norm_params.h"
#include "htp/abi/reduce_params.h"
#include "htp/abi/rope_params.h"
#include "htp/abi/rows_params.h"
#include "htp/abi/softmax_params.h"
#include "htp/abi/unary_params.h"

namespace hexllm::htp::test {
namespace {

constexpr uint32_t kVtcm = 256u << 10;  // small enough that long rows chunk

int32_t f_bits(float f) {
  int32_t v;
  std::memcpy(&v, &f, 4);
  return v;
}

// Byte range [begin, end) of a params struct the device takes as sent.
struct Skip {
  size_t begin, end;
};

// One op in a bank filled with a byte pattern (index tensors zeroed so that every index is valid).
class HtpKparamsTamper : public ::testing::Test {
 protected:
  HtpKparamsTamper() : bank_(8u << 20), s_(bank_, 2, HTP_DMA_ASYNC, kVtcm) {
    std::memset(bank_.base, 0x3c, bank_.size);
  }

  uint16_t tensor(uint32_t type, Shape ne) {
    const uint16_t i = b_.tensor(0, next_, type, ne);
    next_ += (b_.tensors[i].size + 4095) / 4096 * 4096;
    EXPECT_LE(next_, bank_.size);
    return i;
  }
  uint16_t zeros(uint32_t type, Shape ne) {
    const uint16_t i = tensor(type, ne);
    std::memset(bank_.base + b_.tensors[i].offset, 0, b_.tensors[i].size);
    return i;
  }
  const htp_tensor& t(uint16_t i) const { return b_.tensors[i]; }
  uint32_t threads() const { return s_.hw.n_threads; }
  uint32_t vtcm() const { return s_.hw.vtcm_size; }

  // Runs the batch (one op, kparams set) as built, then with each word of the first `bytes`
  // bytes of the blob outside `skip` changed.
  void expect_tampering_refused(size_t bytes, std::vector<Skip> skip = {}) {
    ASSERT_NE(s_.s, nullptr);
    ASSERT_EQ(b_.ops.size(), 1u);
    std::vector<uint64_t> msg = b_.build();
    ASSERT_EQ(process(s_.s, msg), HTP_OK) << "the untampered op";
    const std::vector<uint8_t> after(bank_.base, bank_.base + bank_.size);
    const htp_op_desc good = b_.ops[0];
    uint32_t tried = 0;
    for (size_t w = 0; w + 4 <= bytes; w += 4) {
      bool skipped = false;
      for (const Skip& k : skip) skipped |= w >= k.begin && w < k.end;
      if (skipped) continue;
      for (uint32_t delta : {1u, 0xffffffffu, 0x80000000u}) {
        uint32_t v;
        std::memcpy(&v, good.kparams + w, 4);
        v += delta;
        b_.ops[0] = good;
        std::memcpy(b_.ops[0].kparams + w, &v, 4);
        msg = b_.build();
        const htp_status st = process(s_.s, msg);
        EXPECT_TRUE(st == HTP_ERR_INVALID_PARAMS || st == HTP_ERR_VTCM_TOO_SMALL)
            << "word " << w / 4 << " + " << delta << ": " << htp_status_name(st);
        EXPECT_EQ(std::memcmp(after.data(), bank_.base, bank_.size), 0) << "word " << w / 4 << " wrote the bank";
        ++tried;
      }
    }
    EXPECT_GT(tried, 0u);
    b_.ops[0] = good;
  }

  Bank bank_;
  Session s_;
  BatchBuilder b_;
  uint32_t next_ = 0;
};

TEST_F(HtpKparamsTamper, UnaryWholeAndChunkedRows) {
  for (Shape ne : {Shape{300, 5, 2, 1}, Shape{70000, 1, 1, 1}}) {
    b_ = BatchBuilder();
    next_ = 0;
    const uint16_t x = tensor(HTP_TYPE_F32, ne), y = tensor(HTP_TYPE_F32, ne);
    htp_op_desc& op = b_.op(HTP_OP_SILU, y, {x});
    htp_unary_params p{};
    ASSERT_EQ(htp_unary_params_build(HTP_OP_SILU, t(y), t(x), threads(), vtcm(), &p), HTP_OK);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p);
  }
}

TEST_F(HtpKparamsTamper, ActTwoSources) {
  const Shape ne{300, 5, 1, 1};
  const uint16_t a = tensor(HTP_TYPE_F32, ne), g = tensor(HTP_TYPE_F32, ne), y = tensor(HTP_TYPE_F32, ne);
  htp_op_desc& op = b_.op(HTP_OP_SWIGLU, y, {a, g});
  htp_act_params p{};
  ASSERT_EQ(htp_act_params_build(HTP_OP_SWIGLU, t(y), t(a), &t(g), threads(), vtcm(), &p), HTP_OK);
  htp_kparams_set(&op, p);
  expect_tampering_refused(sizeof p);
}

TEST_F(HtpKparamsTamper, NormAndRmsNormMul) {
  for (uint32_t opcode : {HTP_OP_RMS_NORM, HTP_OP_NORM, HTP_OP_RMS_NORM_MUL}) {
    for (uint32_t ne0 : {4096u, 65536u}) {
      b_ = BatchBuilder();
      next_ = 0;
      const Shape ne{ne0, 3, 1, 1};
      const uint16_t x = tensor(HTP_TYPE_F32, ne), y = tensor(HTP_TYPE_F32, ne);
      const uint16_t w = tensor(HTP_TYPE_F32, {ne0, 1, 1, 1});
      htp_op_desc& op = opcode == HTP_OP_RMS_NORM_MUL ? b_.op(opcode, y, {x, w}) : b_.op(opcode, y, {x});
      op.params[0] = f_bits(1e-5f);
      htp_norm_params p{};
      ASSERT_EQ(htp_norm_params_build(opcode, t(y), t(x), opcode == HTP_OP_RMS_NORM_MUL ? &t(w) : nullptr,
                                      threads(), vtcm(), &p),
                HTP_OK);
      htp_kparams_set(&op, p);
      expect_tampering_refused(sizeof p);
    }
  }
}

TEST_F(HtpKparamsTamper, SoftmaxMaskSinksAlibi) {
  for (float max_bias : {0.0f, 8.0f}) {
    b_ = BatchBuilder();
    next_ = 0;
    const uint16_t a = tensor(HTP_TYPE_F32, {100, 7, 4, 1}), y = tensor(HTP_TYPE_F32, {100, 7, 4, 1});
    const uint16_t mask = tensor(HTP_TYPE_F16, {100, 7, 1, 1}), sinks = tensor(HTP_TYPE_F32, {4, 1, 1, 1});
    htp_op_desc& op = b_.op(HTP_OP_SOFT_MAX, y, {a, mask, sinks});
    op.params[0] = f_bits(0.5f);
    op.params[1] = f_bits(max_bias);
    htp_softmax_params p{};
    ASSERT_EQ(htp_softmax_params_build(t(y), t(a), &t(mask), &t(sinks), threads(), vtcm(), &p), HTP_OK);
    std::vector<Skip> skip;
    if (max_bias > 0.0f) {  // the ALiBi bases: libm, taken as sent
      const double n_head_log2 = htp_softmax_n_head_log2(4);
      p.m0 = std::exp2(-max_bias / n_head_log2);
      p.m1 = std::exp2(-max_bias / 2.0 / n_head_log2);
      skip.push_back({offsetof(htp_softmax_params, m0), offsetof(htp_softmax_params, m1) + sizeof(double)});
    }
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p, skip);
  }
}

TEST_F(HtpKparamsTamper, BinaryBroadcast) {
  const uint16_t a = tensor(HTP_TYPE_F32, {64, 6, 2, 1}), c = tensor(HTP_TYPE_F32, {64, 1, 2, 1});
  const uint16_t y = tensor(HTP_TYPE_F32, {64, 6, 2, 1});
  htp_op_desc& op = b_.op(HTP_OP_MUL, y, {a, c});
  htp_binary_params p{};
  ASSERT_EQ(htp_binary_params_build(t(y), t(a), t(c), threads(), vtcm(), &p), HTP_OK);
  htp_kparams_set(&op, p);
  expect_tampering_refused(sizeof p);
}

TEST_F(HtpKparamsTamper, AddId) {
  const uint16_t a = tensor(HTP_TYPE_F32, {64, 4, 7, 1}), bias = tensor(HTP_TYPE_F32, {64, 32, 1, 1});
  const uint16_t ids = zeros(HTP_TYPE_I32, {4, 7, 1, 1}), y = tensor(HTP_TYPE_F32, {64, 4, 7, 1});
  htp_op_desc& op = b_.op(HTP_OP_ADD_ID, y, {a, bias, ids});
  htp_add_id_params p{};
  ASSERT_EQ(htp_add_id_params_build(t(y), t(a), t(bias), t(ids), threads(), vtcm(), &p), HTP_OK);
  htp_kparams_set(&op, p);
  expect_tampering_refused(sizeof p);
}

TEST_F(HtpKparamsTamper, RopeWithAndWithoutYarn) {
  for (float ext : {0.0f, 1.0f}) {
    b_ = BatchBuilder();
    next_ = 0;
    const uint16_t x = tensor(HTP_TYPE_F32, {128, 8, 7, 1}), pos = zeros(HTP_TYPE_I32, {7, 1, 1, 1});
    const uint16_t y = tensor(HTP_TYPE_F32, {128, 8, 7, 1});
    htp_op_desc& op = b_.op(HTP_OP_ROPE, y, {x, pos});
    op.params[0] = 128;
    op.params[1] = (int32_t)HTP_ROPE_MODE_NEOX;
    op.params[2] = 4096;
    op.params[4] = f_bits(0.25f);  // freq_scale
    op.params[5] = f_bits(ext);    // ext_factor
    op.params[6] = f_bits(1.0f);   // attn_factor
    htp_rope_params p{};
    p.theta_scale = std::pow(10000.0, -2.0 / 128);
    p.freq_scale = 0.25f;
    p.ext_factor = ext;
    p.mscale = 1.0;
    p.corr_low = 0.0f;
    p.corr_denom = 1.0;
    std::vector<Skip> skip = {{offsetof(htp_rope_params, theta_scale), offsetof(htp_rope_params, theta_scale) + 8}};
    if (ext != 0.0f) {  // the YaRN constants: libm, taken as sent
      p.mscale = 1.0 + 0.1 * std::log(4.0);
      p.corr_low = 20.0f;
      p.corr_denom = 23.0;
      skip.push_back({offsetof(htp_rope_params, mscale), offsetof(htp_rope_params, corr_denom) + 8});
      skip.push_back({offsetof(htp_rope_params, corr_low), offsetof(htp_rope_params, corr_low) + 4});
    }
    ASSERT_EQ(htp_rope_plan(t(y), t(x), t(pos), nullptr, 128, HTP_ROPE_MODE_NEOX, threads(), vtcm(), &p), HTP_OK);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p, skip);
  }
}

TEST_F(HtpKparamsTamper, FlashAttnDecodeSplitAndPrefill) {
  const uint32_t d = 64, h = 4, hk = 2;
  // Decode on the session's 2 workers: by heads at 256 keys (the 2 KV heads deal out evenly),
  // split KV at 320 keys.
  for (const uint32_t n_kv : {256u, 320u}) {
    for (uint32_t n_q : {1u, 16u}) {
      for (float max_bias : {0.0f, 8.0f}) {
        b_ = BatchBuilder();
        next_ = 0;
        const uint16_t q = tensor(HTP_TYPE_F32, {d, n_q, h, 1});
        // K and V as the KV cache holds them: the heads of a position side by side in one row.
        auto kv = [&] {
          const uint16_t i = tensor(HTP_TYPE_F16, {d * hk, n_kv, 1, 1});
          htp_tensor& k = b_.tensors[i];
          k.ne[0] = d;
          k.ne[1] = n_kv;
          k.ne[2] = hk;
          k.nb[1] = d * hk * 2;
          k.nb[2] = d * 2;
          k.nb[3] = d * hk * 2 * n_kv;
          return i;
        };
        const uint16_t k = kv(), v = kv();
        const uint16_t mask = tensor(HTP_TYPE_F16, {n_kv, n_q, 1, 1});
        const uint16_t y = tensor(HTP_TYPE_F32, {d, h, n_q, 1});
        htp_op_desc& op = b_.op(HTP_OP_FLASH_ATTN_EXT, y, {q, k, v, mask});
        op.params[0] = f_bits(0.125f);
        op.params[1] = f_bits(max_bias);
        op.params[2] = f_bits(max_bias > 0.0f ? 30.0f : 0.0f);  // softcap
        htp_fa_params p{};
        p.softcap = max_bias > 0.0f ? 30.0f : 0.0f;
        p.q_scale = p.softcap != 0.0f ? 0.125f / p.softcap : 0.125f;
        std::vector<Skip> skip;
        if (max_bias > 0.0f) {  // the ALiBi bases: libm, taken as sent
          p.n_head_log2 = 4;
          p.alibi_m0 = std::exp2(-max_bias / 4.0);
          p.alibi_m1 = std::exp2(-max_bias / 2.0 / 4.0);
          skip.push_back({offsetof(htp_fa_params, alibi_m0), offsetof(htp_fa_params, alibi_m1) + 8});
        }
        ASSERT_EQ(htp_fa_plan(t(y), t(q), t(k), t(v), &t(mask), nullptr, threads(), vtcm(), &p), HTP_OK);
        ASSERT_EQ(threads(), 2u);
        EXPECT_EQ((p.flags & HTP_FA_SPLIT_KV) != 0, n_q == 1 && n_kv == 320u);
        htp_kparams_set(&op, p);
        expect_tampering_refused(sizeof p, skip);
      }
    }
  }
}

TEST_F(HtpKparamsTamper, GetRowsAndSetRows) {
  {
    const uint16_t src = tensor(HTP_TYPE_F32, {64, 10, 1, 1}), idx = zeros(HTP_TYPE_I32, {5, 1, 1, 1});
    const uint16_t y = tensor(HTP_TYPE_F32, {64, 5, 1, 1});
    htp_op_desc& op = b_.op(HTP_OP_GET_ROWS, y, {src, idx});
    htp_rows_params p{};
    ASSERT_EQ(htp_rows_params_build(HTP_OP_GET_ROWS, t(y), t(src), t(idx), threads(), vtcm(), &p), HTP_OK);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p);
  }
  b_ = BatchBuilder();
  next_ = 0;
  const uint16_t cache = tensor(HTP_TYPE_F16, {64, 10, 1, 1}), src = tensor(HTP_TYPE_F32, {64, 5, 1, 1});
  const uint16_t idx = zeros(HTP_TYPE_I32, {5, 1, 1, 1});
  htp_op_desc& op = b_.op(HTP_OP_SET_ROWS, cache, {src, idx});
  htp_rows_params p{};
  ASSERT_EQ(htp_rows_params_build(HTP_OP_SET_ROWS, t(cache), t(src), t(idx), threads(), vtcm(), &p), HTP_OK);
  htp_kparams_set(&op, p);
  expect_tampering_refused(sizeof p);
}

TEST_F(HtpKparamsTamper, CopyCpyPadAndFlat) {
  {
    const uint16_t a = tensor(HTP_TYPE_F32, {64, 6, 1, 1}), y = tensor(HTP_TYPE_F16, {64, 6, 1, 1});
    htp_op_desc& op = b_.op(HTP_OP_CPY, y, {a});
    htp_copy_params p{};
    ASSERT_EQ(htp_copy_params_build(HTP_OP_CPY, op.params, t(y), &t(a), nullptr, threads(), vtcm(), &p), HTP_OK);
    EXPECT_EQ(p.kind, (uint32_t)HTP_COPY_ROWS);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p);
  }
  {
    b_ = BatchBuilder();
    next_ = 0;
    const uint16_t a = tensor(HTP_TYPE_F32, {60, 5, 1, 1}), y = tensor(HTP_TYPE_F32, {64, 7, 1, 1});
    htp_op_desc& op = b_.op(HTP_OP_PAD, y, {a});
    op.params[0] = 4;
    op.params[1] = 2;
    htp_copy_params p{};
    ASSERT_EQ(htp_copy_params_build(HTP_OP_PAD, op.params, t(y), &t(a), nullptr, threads(), vtcm(), &p), HTP_OK);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p);
  }
  // Rows longer than the VTCM take the FLAT kind.
  b_ = BatchBuilder();
  next_ = 0;
  const uint16_t a = tensor(HTP_TYPE_F32, {200000, 1, 1, 1}), y = tensor(HTP_TYPE_F32, {200000, 1, 1, 1});
  htp_op_desc& op = b_.op(HTP_OP_CPY, y, {a});
  htp_copy_params p{};
  ASSERT_EQ(htp_copy_params_build(HTP_OP_CPY, op.params, t(y), &t(a), nullptr, threads(), vtcm(), &p), HTP_OK);
  EXPECT_EQ(p.kind, (uint32_t)HTP_COPY_FLAT);
  htp_kparams_set(&op, p);
  expect_tampering_refused(sizeof p);
}

TEST_F(HtpKparamsTamper, ReduceSumArgsortTopK) {
  struct C {
    uint32_t opcode, dst_ne0, dst_type;
    int32_t param;
  };
  for (const C c : {C{HTP_OP_SUM_ROWS, 1, HTP_TYPE_F32, 0}, C{HTP_OP_ARGSORT, 100, HTP_TYPE_I32, 1},
                    C{HTP_OP_TOP_K, 5, HTP_TYPE_I32, 5}, C{HTP_OP_TOP_K, 80, HTP_TYPE_I32, 80}}) {
    b_ = BatchBuilder();
    next_ = 0;
    const uint16_t x = tensor(HTP_TYPE_F32, {100, 6, 1, 1}), y = tensor(c.dst_type, {c.dst_ne0, 6, 1, 1});
    htp_op_desc& op = b_.op(c.opcode, y, {x});
    op.params[0] = c.param;
    htp_reduce_params p{};
    ASSERT_EQ(htp_reduce_params_build(c.opcode, op.params, t(y), t(x), threads(), vtcm(), &p), HTP_OK);
    htp_kparams_set(&op, p);
    expect_tampering_refused(sizeof p);
  }
}

}  // namespace
}  // namespace hexllm::htp::test
