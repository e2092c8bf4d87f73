// Block geometry of every wire type id (htp_type_ids.h), tiled types included.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_type_ids.h"
#include "htp/abi/tiles.h"

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
        htp_type_info base = htp_type_geometry(hexllm::htp::htp_tile_info(type).src);
        base.name = "TILED";
        return base;
      }
      return {"UNKNOWN_TYPE", 0, 0, 0};
  }
}

constexpr bool htp_type_known(uint32_t type) { return htp_type_geometry(type).block_size != 0; }
inline const char* htp_type_name(uint32_t type) { return htp_type_geometry(type).name; }
