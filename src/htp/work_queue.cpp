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

// The claim word: this run's job count in the high half, the next unclaimed job in the low half.
constexpr uint32_t kClaimShift = 16;
constexpr uint32_t kClaimMask = (1u << kClaimShift) - 1;

// Claims jobs of the current run one by one and runs them, until none is left. A successful CAS
// claims a job of the run the word holds then, whatever run this worker last saw: that run
// cannot end (and its fields cannot change) before the claimed job is done.
void run_claimed(work_queue* q) {
  uint32_t c = atomic_load_acquire(&q->claim);
  for (;;) {
    const uint32_t n = c >> kClaimShift, i = c & kClaimMask;
    if (i >= n) return;
    if (!atomic_cas_acquire(&q->claim, &c, c + 1)) continue;  // c now holds the current word
    q->fn(n, i, q->data);
    atomic_add_release(&q->done, 1u);
    c = atomic_load_acquire(&q->claim);
  }
}

void helper_main(void* arg) {
  auto* h = (work_helper*)arg;
  work_queue* q = h->q;
  uint32_t seen = 0;  // seq at init: a run published before this thread starts is still seen
  for (;;) {
    seen = wait_next_run(q, seen);
    if (atomic_load_acquire(&q->stop)) return;
    run_claimed(q);
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
  q->claim = 0;
  q->done = 0;
  q->sleepers = 0;
  q->active = 0;
  q->stop = 0;
  q->n_sleeps = 0;
  for (uint32_t w = 1; w < n_workers; ++w) {
    work_helper* h = &q->helpers[w];
    h->q = q;
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
  // More jobs than the claim word counts (no op asks for that many) run serially here.
  if (n == 1 || q->n_workers == 1 || n > kClaimMask) {
    for (uint32_t i = 0; i < n; ++i) fn(n, i, data);
    return;
  }
  // Every job of the previous run is done, so no worker reads these fields now; the release
  // store of the claim word publishes them to whoever claims a job.
  q->fn = fn;
  q->data = data;
  atomic_store_relaxed(&q->done, 0u);
  atomic_store_release(&q->claim, n << kClaimShift);
  atomic_fetch_add(&q->seq, 1u);  // wakes the pollers
  wake_sleepers(q);
  run_claimed(q);
  // Only jobs that were claimed are waited for: a helper that is not running (preempted, still
  // waking) holds up nothing, the caller has taken its jobs.
  for (uint32_t spins = 0; atomic_load_acquire(&q->done) != n; ++spins) {
    if (spins < 256)
      platform_pause();
    else
      platform_yield();  // more workers than cores: let the one running a claimed job finish
  }
}

}  // namespace hexllm::htp
