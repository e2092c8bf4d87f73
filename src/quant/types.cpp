#include "quant/types.h"

namespace hexllm {

namespace {

struct Entry {
  uint32_t id;
  TypeTraits traits;
};

// Block geometry from the GGUF specification.
constexpr Entry kEntries[] = {
    {0, {"F32", 1, 4, false}},       {1, {"F16", 1, 2, false}},       {2, {"Q4_0", 32, 18, true}},
    {3, {"Q4_1", 32, 20, true}},     {6, {"Q5_0", 32, 22, true}},     {7, {"Q5_1", 32, 24, true}},
    {8, {"Q8_0", 32, 34, true}},     {9, {"Q8_1", 32, 36, true}},     {10, {"Q2_K", 256, 84, true}},
    {11, {"Q3_K", 256, 110, true}},  {12, {"Q4_K", 256, 144, true}},  {13, {"Q5_K", 256, 176, true}},
    {14, {"Q6_K", 256, 210, true}},  {15, {"Q8_K", 256, 292, true}},  {20, {"IQ4_NL", 32, 18, true}},
    {24, {"I8", 1, 1, false}},       {25, {"I16", 1, 2, false}},      {26, {"I32", 1, 4, false}},
    {27, {"I64", 1, 8, false}},      {28, {"F64", 1, 8, false}},      {30, {"BF16", 1, 2, false}},
    {39, {"MXFP4", 32, 17, true}},
};

}  // namespace

const TypeTraits* type_traits_or_null(uint32_t id) {
  for (const Entry& e : kEntries)
    if (e.id == id) return &e.traits;
  return nullptr;
}

}  // namespace hexllm
