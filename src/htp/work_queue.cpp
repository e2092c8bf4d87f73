#include "htp/work_queue.h"

namespace hexllm::htp {

namespace {

// Waits until q->seq differs from `seen` and returns the new value.
uint32_t wait_next_run(work_queue* q, uint32_t seen) {
  uint64_t spin_until = 0;
  for (uint32_t spins = 0;; ++spins) {
    const uint32_t cur = atomic_load_acquire(&q->seq);
    if (cur != seen) return cur;
    if (atomic_load_relaxed(&q->active)) {
      // Read the clock only every 64 polls; it costs more than a pause. Yielding there too
      // lets a preempted worker run when there are more workers than cores.
      if (spins % 64 != 0) {
        platform_pause();
        continue;
      }
      if (spins != 0) platform_yield();
      const uint64_t now = platform_time_ns();
      if (spin_until == 0) spin_until = now + q->spin_ns;
      if (now < spin_until) {
        platform_pause();
        continue;
      }
    }
    // Dekker pairing with work_queue_run: either the runner sees sleepers != 0 and wakes us,
    // or we see its new seq here (both sides use sequentially consistent operations).
    atomic_fetch_add(&q->sleepers, 1u);
    if (atomic_load_seq(&q->seq) == seen) {
      atomic_fetch_add(&q->n_sleeps, 1u);
      platform_futex_wait(&q->seq, seen);
    }
    atomic_fetch_sub(&q->sleepers, 1u);
    spin_until = 0;
  }
}

void run_jobs(work_fn fn, void* data, uint32_t n, uint32_t first, uint32_t step) {
  for (uint32_t i = first; i < n; i += step) fn(n, i, data);
}

void helper_main(void* arg) {
  auto* h = (work_helper*)arg;
  work_queue* q = h->q;
  uint32_t seen = 0;  // seq at init: a run published before this thread starts is still seen
  for (;;) {
    seen = wait_next_run(q, seen);
    if (atomic_load_acquire(&q->stop)) return;
    run_jobs(q->fn, q->data, q->n_jobs, h->index, q->n_workers);
    // Every helper checks in, even without a job: then no helper can still be reading this
    // run's fields when the next run overwrites them.
    atomic_sub_release(&q->pending, 1u);
  }
}

void wake_sleepers(work_queue* q) {
  if (atomic_load_seq(&q->sleepers) != 0) platform_futex_wake(&q->seq, PLATFORM_WAKE_ALL);
}

}  // namespace

htp_status work_queue_init(work_queue* q, uint32_t n_workers, uint32_t spin_ns, size_t stack_bytes) {
  if (n_workers == 0 || n_workers > HTP_MAX_THREADS) return HTP_ERR_INVALID_PARAMS;
  q->n_workers = n_workers;
  q->spin_ns = spin_ns;
  q->seq = 0;
  q->pending = 0;
  q->sleepers = 0;
  q->active = 0;
  q->stop = 0;
  q->n_sleeps = 0;
  for (uint32_t w = 1; w < n_workers; ++w) {
    work_helper* h = &q->helpers[w];
    h->q = q;
    h->index = w;
    if (!platform_thread_create(&h->thread, helper_main, h, stack_bytes)) {
      q->n_workers = w;  // stop only the helpers that started
      work_queue_destroy(q);
      return HTP_ERR_INTERNAL;
    }
  }
  return HTP_OK;
}

void work_queue_destroy(work_queue* q) {
  atomic_store_seq(&q->stop, 1u);
  atomic_fetch_add(&q->seq, 1u);
  platform_futex_wake(&q->seq, PLATFORM_WAKE_ALL);
  for (uint32_t w = 1; w < q->n_workers; ++w) platform_thread_join(&q->helpers[w].thread);
  q->n_workers = 0;
}

// Wakes sleeping helpers now, not at the first run: a futex wake-up takes tens of us on a VM
// (100 us measured), and the batch's validation and first serial work hide it.
void work_queue_wakeup(work_queue* q) {
  atomic_store_seq(&q->active, 1u);
  wake_sleepers(q);
}

void work_queue_suspend(work_queue* q) { atomic_store_seq(&q->active, 0u); }

void work_queue_run(work_queue* q, work_fn fn, void* data, uint32_t n) {
  if (n == 0) return;
  if (n == 1 || q->n_workers == 1) {
    run_jobs(fn, data, n, 0, 1);
    return;
  }
  q->fn = fn;
  q->data = data;
  q->n_jobs = n;
  atomic_store_relaxed(&q->pending, q->n_workers - 1);
  atomic_fetch_add(&q->seq, 1u);  // publishes the fields above
  wake_sleepers(q);
  run_jobs(fn, data, n, 0, q->n_workers);
  for (uint32_t spins = 0; atomic_load_acquire(&q->pending) != 0; ++spins) {
    if (spins < 256)
      platform_pause();
    else
      platform_yield();  // more workers than cores: let the stragglers run
  }
}

}  // namespace hexllm::htp
