// Tensor data type ids on the wire: the GGUF numbering for the standard types (the host checks
// them against hexllm::Type where it converts, htp-host/device_weights.cpp); the repacked tile
// types of tiles.h from 200 up. Freestanding: the ABI includes nothing from the host.
#pragma once

#include <stdint.h>

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

  // Ids from 200 up are the weight tiles of htp/abi/tiles.h (htp_tile_type), the one list of
  // them. A tiled tensor is described with its base type's ne/nb; its `size` is the tiled size.
};
