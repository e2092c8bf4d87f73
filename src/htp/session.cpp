#include "htp/session.h"

#include "htp/platform/platform.h"
#include "htp/session_impl.h"
#include "htp/vec/vec.h"

namespace hexllm::htp {

namespace {

constexpr uint64_t kMaxBankBytes = 0xffffffffull;

htp_status check_bank(const uint8_t* base, uint64_t size) {
  if (size == 0) return HTP_OK;
  if (base == nullptr || (uintptr_t)base % HTP_BANK_ALIGN != 0 || size > kMaxBankBytes)
    return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

size_t tensors_bytes(uint32_t max_tensors) { return (size_t)max_tensors * sizeof(tensor_ref); }

}  // namespace

htp_session_config htp_session_config_default() {
  htp_session_config c{};
  c.n_threads = 1;
  c.vtcm_size = HTP_DEFAULT_VTCM_BYTES;
  c.window_size = HTP_DEFAULT_WINDOW_BYTES;
  c.dma_mode = HTP_DEFAULT_DMA_MODE;
  c.max_tensors = HTP_DEFAULT_MAX_TENSORS;
  c.spin_ns = 100000;
  c.stack_bytes = 256u << 10;
  c.mdev_count = 1;
  c.fail_op = HTP_NO_INDEX;
  return c;
}

htp_status htp_session_open(const htp_session_config* config, htp_session** out) {
  *out = nullptr;
  const htp_session_config& c = *config;
  if (c.n_threads == 0 || c.n_threads > HTP_MAX_THREADS || c.dma_mode >= HTP_DMA_MODE_COUNT ||
      c.max_tensors == 0 || c.max_tensors > HTP_MAX_TENSORS || c.n_banks > HTP_MAX_BANKS || c.mdev_count == 0 ||
      c.mdev_count > HTP_MDEV_MAX || c.mdev_idx >= c.mdev_count)
    return HTP_ERR_INVALID_PARAMS;
  uint64_t mapped = 0;
  for (uint32_t b = 0; b < c.n_banks; ++b) {
    if (check_bank(c.banks[b].base, c.banks[b].size) != HTP_OK) return HTP_ERR_INVALID_PARAMS;
    mapped += c.banks[b].size;
  }
  if (mapped > c.window_size) return HTP_ERR_OUT_OF_WINDOW;

  auto* s = (htp_session*)platform_mem_map(sizeof(htp_session), 64);
  if (s == nullptr) return HTP_ERR_INTERNAL;
  s->config = c;
  s->mapped_bytes = mapped;
  s->mdev = htp_mdev_make(c.mdev_idx, c.mdev_count);
  htp_status st = vtcm_open(&s->vtcm, c.vtcm_size);
  if (st == HTP_OK) {
    s->tensors = (tensor_ref*)platform_mem_map(tensors_bytes(c.max_tensors), 64);
    if (s->tensors == nullptr) st = HTP_ERR_INTERNAL;
  }
  for (uint32_t i = 0; st == HTP_OK && i < c.n_threads; ++i) {
    st = dma_queue_init(&s->dma[i], c.dma_mode, c.spin_ns, c.stack_bytes);
    if (st == HTP_OK) s->n_dma = i + 1;
  }
  if (st == HTP_OK) st = work_queue_init(&s->wq, c.n_threads, c.spin_ns, c.stack_bytes);
  if (st != HTP_OK) {
    htp_session_close(s);
    return st;
  }
  *out = s;
  return HTP_OK;
}

void htp_session_close(htp_session* s) {
  if (s == nullptr) return;
  if (s->wq.n_workers != 0) work_queue_destroy(&s->wq);
  for (uint32_t i = 0; i < s->n_dma; ++i) dma_queue_destroy(&s->dma[i]);
  if (s->tensors != nullptr) platform_mem_unmap(s->tensors, tensors_bytes(s->config.max_tensors));
  if (s->vtcm.base != nullptr) vtcm_close(&s->vtcm);
  platform_mem_unmap(s, sizeof(htp_session));
}

void htp_session_on_op_start(htp_session* s, htp_op_start_fn fn, void* arg) {
  s->op_start = fn;
  s->op_start_arg = arg;
}

void htp_session_hwinfo(const htp_session* s, htp_hwinfo* out) {
  *out = {HTP_ABI_VERSION,       s->config.n_threads,   s->vtcm.size,     s->config.dma_mode,
          s->config.window_size, s->config.max_tensors, s->config.n_banks, htp_vec_select().gemm_prefs};
}

htp_status htp_session_map_bank(htp_session* s, uint32_t bank, uint8_t* base, uint64_t size) {
  if (bank >= HTP_MAX_BANKS || check_bank(base, size) != HTP_OK) return HTP_ERR_INVALID_PARAMS;
  htp_bank& b = s->config.banks[bank];
  const uint64_t mapped = s->mapped_bytes - b.size + size;
  if (mapped > s->config.window_size) return HTP_ERR_OUT_OF_WINDOW;
  b = {size != 0 ? base : nullptr, size};
  s->mapped_bytes = mapped;
  if (bank >= s->config.n_banks) s->config.n_banks = bank + 1;
  return HTP_OK;
}

}  // namespace hexllm::htp
