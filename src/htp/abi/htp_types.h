// Tensor data types on the wire: GGUF numbering for the standard types (checked against
// hexllm::Type below), device-only repacked ("tiled") layouts from 200 up.
#pragma once

#include <stdint.h>

#include "htp/abi/tiles.h"
#include "quant/types.h"

enum htp_type : uint32_t {
  HTP_TYPE_F32 = 0,
  HTP_TYPE_F16 = 1,
  HTP_TYPE_Q4_0 = 2,
  HTP_TYPE_Q4_1 = 3,
  HTP_TYPE_Q5_0 = 6,
  HTP_TYPE_Q5_1 = 7,
  HTP_TYPE_Q8_0 = 8,
  HTP_TYPE_Q8_1 = 9,
  HTP_TYPE_Q2_K = 10,
  HTP_TYPE_Q3_K = 11,
  HTP_TYPE_Q4_K = 12,
  HTP_TYPE_Q5_K = 13,
  HTP_TYPE_Q6_K = 14,
  HTP_TYPE_Q8_K = 15,
  HTP_TYPE_IQ4_NL = 20,
  HTP_TYPE_I8 = 24,
  HTP_TYPE_I16 = 25,
  HTP_TYPE_I32 = 26,
  HTP_TYPE_I64 = 27,
  HTP_TYPE_F64 = 28,
  HTP_TYPE_BF16 = 30,
  HTP_TYPE_MXFP4 = 39,

  // Weights repacked at load into 8-row kernel tiles: ids 200.. of htp/abi/tiles.h (the single
  // source of truth). A tiled tensor is described with its base type's ne/nb; its `size` is the
  // tiled size, so the geometry below is the base type's.
  HTP_TYPE_TILED_FIRST = 200,
  HTP_TYPE_Q4_0_TILED = 200,
  HTP_TYPE_Q4_1_TILED = 201,
  HTP_TYPE_Q8_0_TILED = 202,
  HTP_TYPE_MXFP4_TILED = 203,
  HTP_TYPE_IQ4_NL_TILED = 204,
};

#define HTP_CHECK_TYPE(name) \
  static_assert((uint32_t)HTP_TYPE_##name == (uint32_t)hexllm::Type::name, "GGUF id of " #name)
HTP_CHECK_TYPE(F32);
HTP_CHECK_TYPE(F16);
HTP_CHECK_TYPE(Q4_0);
HTP_CHECK_TYPE(Q4_1);
HTP_CHECK_TYPE(Q5_0);
HTP_CHECK_TYPE(Q5_1);
HTP_CHECK_TYPE(Q8_0);
HTP_CHECK_TYPE(Q8_1);
HTP_CHECK_TYPE(Q2_K);
HTP_CHECK_TYPE(Q3_K);
HTP_CHECK_TYPE(Q4_K);
HTP_CHECK_TYPE(Q5_K);
HTP_CHECK_TYPE(Q6_K);
HTP_CHECK_TYPE(Q8_K);
HTP_CHECK_TYPE(IQ4_NL);
HTP_CHECK_TYPE(I8);
HTP_CHECK_TYPE(I16);
HTP_CHECK_TYPE(I32);
HTP_CHECK_TYPE(I64);
HTP_CHECK_TYPE(F64);
HTP_CHECK_TYPE(BF16);
HTP_CHECK_TYPE(MXFP4);
#undef HTP_CHECK_TYPE

// Block geometry the device needs to bound-check tensors. block_size == 0 means "unknown type".
// align: the natural alignment of a block (its widest scalar member) that offsets and strides keep.
struct htp_type_info {
  const char* name;
  uint32_t block_size;  // elements per block
  uint32_t type_size;   // bytes per block
  uint32_t align;
};

constexpr htp_type_info htp_type_geometry(uint32_t type) {
  switch (type) {
    case HTP_TYPE_F32: return {"F32", 1, 4, 4};
    case HTP_TYPE_F16: return {"F16", 1, 2, 2};
    case HTP_TYPE_Q4_0: return {"Q4_0", 32, 18, 2};
    case HTP_TYPE_Q4_1: return {"Q4_1", 32, 20, 2};
    case HTP_TYPE_Q5_0: return {"Q5_0", 32, 22, 2};
    case HTP_TYPE_Q5_1: return {"Q5_1", 32, 24, 2};
    case HTP_TYPE_Q8_0: return {"Q8_0", 32, 34, 2};
    case HTP_TYPE_Q8_1: return {"Q8_1", 32, 36, 2};
    case HTP_TYPE_Q2_K: return {"Q2_K", 256, 84, 2};
    case HTP_TYPE_Q3_K: return {"Q3_K", 256, 110, 2};
    case HTP_TYPE_Q4_K: return {"Q4_K", 256, 144, 2};
    case HTP_TYPE_Q5_K: return {"Q5_K", 256, 176, 2};
    case HTP_TYPE_Q6_K: return {"Q6_K", 256, 210, 2};
    case HTP_TYPE_Q8_K: return {"Q8_K", 256, 292, 4};
    case HTP_TYPE_IQ4_NL: return {"IQ4_NL", 32, 18, 2};
    case HTP_TYPE_I8: return {"I8", 1, 1, 1};
    case HTP_TYPE_I16: return {"I16", 1, 2, 2};
    case HTP_TYPE_I32: return {"I32", 1, 4, 4};
    case HTP_TYPE_I64: return {"I64", 1, 8, 8};
    case HTP_TYPE_F64: return {"F64", 1, 8, 8};
    case HTP_TYPE_BF16: return {"BF16", 1, 2, 2};
    case HTP_TYPE_MXFP4: return {"MXFP4", 32, 17, 1};
    default:
      if (hexllm::htp::htp_tile_valid(type)) {
        htp_type_info base = htp_type_geometry((uint32_t)hexllm::htp::htp_tile_info(type).src);
        base.name = "TILED";
        return base;
      }
      return {"UNKNOWN_TYPE", 0, 0, 0};
  }
}

constexpr bool htp_type_known(uint32_t type) { return htp_type_geometry(type).block_size != 0; }
inline const char* htp_type_name(uint32_t type) { return htp_type_geometry(type).name; }
