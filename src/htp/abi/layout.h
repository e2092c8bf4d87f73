// A bump layout for VTCM: the per-op builders (header-only, compiled by host and device) place
// their buffers with it, so the host decides feasibility with the device's own offsets.
#pragma once

#include <stdint.h>

inline constexpr uint32_t HTP_VTCM_ALIGN = 128;  // one HVX vector; every region starts on one

constexpr uint64_t htp_align_up(uint64_t v, uint64_t align) { return (v + align - 1) / align * align; }

struct htp_layout {
  uint64_t size;  // bytes placed so far (64-bit so oversized requests cannot wrap)
};

// Places `bytes` at the next `align` boundary and returns its offset.
constexpr uint64_t htp_layout_add(htp_layout* l, uint64_t bytes, uint64_t align = HTP_VTCM_ALIGN) {
  const uint64_t at = htp_align_up(l->size, align);
  l->size = at + bytes;
  return at;
}

// Total bytes, rounded so that consecutive copies (per-thread areas) stay aligned.
constexpr uint64_t htp_layout_total(const htp_layout& l) { return htp_align_up(l.size, HTP_VTCM_ALIGN); }
