// VTCM arena: allocated once, capacity enforced as a status.
#include <gtest/gtest.h>

#include "htp/abi/htp_session_defaults.h"
#include "htp/vtcm.h"

namespace hexllm::htp {
namespace {

TEST(HtpVtcm, OpenDefaultSizeAndUseAllOfIt) {
  vtcm_arena a{};
  ASSERT_EQ(vtcm_open(&a, HTP_DEFAULT_VTCM_BYTES), HTP_OK);
  EXPECT_EQ(a.size, 8u << 20);
  EXPECT_EQ((uintptr_t)a.base % 128, 0u);
  for (uint32_t i = 0; i < a.size; i += 4096) a.base[i] = (uint8_t)i;
  a.base[a.size - 1] = 1;
  EXPECT_EQ(a.base[4096 * 3], (uint8_t)(4096 * 3));
  vtcm_close(&a);
  EXPECT_EQ(a.base, nullptr);
}

TEST(HtpVtcm, CapacityIsEnforcedAsStatus) {
  vtcm_arena a{};
  ASSERT_EQ(vtcm_open(&a, 64 << 10), HTP_OK);
  EXPECT_EQ(vtcm_check(a.size, 64 << 10), HTP_OK);
  EXPECT_EQ(vtcm_check(a.size, (64 << 10) + 1), HTP_ERR_VTCM_TOO_SMALL);
  EXPECT_EQ(vtcm_check(a.size, 1ull << 40), HTP_ERR_VTCM_TOO_SMALL);
  vtcm_close(&a);
}

TEST(HtpVtcm, RejectsBadSizes) {
  vtcm_arena a{};
  EXPECT_EQ(vtcm_open(&a, 0), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(vtcm_open(&a, VTCM_MAX_SIZE + 1), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(a.base, nullptr);
}

}  // namespace
}  // namespace hexllm::htp
