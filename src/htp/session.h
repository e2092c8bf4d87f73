// A device session: worker threads, per-worker DMA queues, the VTCM arena and the bank table,
// all set up once by htp_session_open and held until htp_session_close. Batches go through
// htp_session_process, which never trusts the message: every failure is a status.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/htp_abi.h"

namespace hexllm::htp {

// A pool bank as the device sees it. size == 0 means "not mapped".
struct htp_bank {
  uint8_t* base;  // aligned to HTP_BANK_ALIGN
  uint64_t size;  // < 4 GiB: offsets within a bank are 32-bit
};

inline constexpr uint32_t HTP_BANK_ALIGN = 128;

struct htp_session_config {
  uint32_t n_threads;    // workers including the calling thread, 1..HTP_MAX_THREADS
  uint32_t vtcm_size;    // bytes of the VTCM arena
  uint64_t window_size;  // most bank bytes mapped at once
  uint32_t dma_mode;     // htp_dma_mode
  uint32_t max_tensors;  // per batch, <= HTP_MAX_TENSORS
  uint32_t spin_ns;      // how long idle workers and copiers poll before sleeping
  uint32_t stack_bytes;  // per helper / copier thread
  uint32_t n_banks;
  uint32_t mdev_idx;     // this device's index in its group
  uint32_t mdev_count;   // devices in the group, 1..HTP_MDEV_MAX (1: a single device)
  uint32_t fail_op;      // fault injection for tests: op index that fails with HTP_ERR_INTERNAL (HTP_NO_INDEX: none)
  htp_bank banks[HTP_MAX_BANKS];
};

htp_session_config htp_session_config_default();

struct htp_session;

// On failure *out is nullptr and nothing stays allocated.
htp_status htp_session_open(const htp_session_config* config, htp_session** out);
void htp_session_close(htp_session* s);

void htp_session_hwinfo(const htp_session* s, htp_hwinfo* out);

// Maps (size > 0) or unmaps (size == 0) a bank between batches. HTP_ERR_OUT_OF_WINDOW when the
// mapped banks would exceed the window; the previous mapping stays in place then.
htp_status htp_session_map_bank(htp_session* s, uint32_t bank, uint8_t* base, uint64_t size);

// Called on the calling thread of htp_session_process as op `op` of a batch starts: where the
// transport tells its host how far a batch has come (it must return quickly).
using htp_op_start_fn = void (*)(void* arg, uint32_t op);
void htp_session_on_op_start(htp_session* s, htp_op_start_fn fn, void* arg);

// Runs one batch message (8-byte aligned, `size` bytes). Writes the response into the
// message whenever its header part is in bounds, and returns the batch status.
htp_status htp_session_process(htp_session* s, void* message, size_t size);

}  // namespace hexllm::htp
