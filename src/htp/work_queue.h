// A fixed pool of n workers running `fn(n, i, data)` jobs; the calling thread is worker 0.
// work_queue_run returns when every job of the run has finished. No allocation per run.
//
// Workers claim jobs in index order from one counter, the caller too: each job runs exactly
// once, on whichever worker claimed it, so a helper that is late (still waking, or preempted on
// a shared machine) does not hold up the run; the caller runs the jobs nobody claimed. State a
// job owns by index (a DMA queue, a trace buffer, a VTCM area) is used by one worker at a time.
//
// Helpers poll for the next run for a bounded time while a batch is active (between
// work_queue_wakeup and work_queue_suspend) and otherwise sleep on a futex.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/htp_limits.h"
#include "htp/abi/htp_status.h"
#include "htp/platform/platform.h"

namespace hexllm::htp {

// Job i of n. Jobs must be re-entrant: derive everything from (n, i, data).
typedef void (*work_fn)(unsigned n, unsigned i, void* data);

struct work_queue;

struct work_helper {
  work_queue* q;
  platform_thread thread;
};

struct work_queue {
  uint32_t n_workers;  // including the caller
  uint32_t spin_ns;    // how long a helper polls for the next run while active
  // Shared state; workers read the job fields (fn, data) only after claiming a job.
  uint32_t seq;        // futex word, bumped once per run (and once on stop)
  uint32_t claim;      // current run: n_jobs << 16 | next unclaimed job
  uint32_t done;       // jobs of the current run finished
  uint32_t sleepers;   // helpers in (or entering) futex_wait
  uint32_t active;
  uint32_t stop;
  uint32_t n_sleeps;   // times a helper went to sleep (statistics)
  work_fn fn;
  void* data;
  work_helper helpers[HTP_MAX_THREADS];
};

// Starts n_workers - 1 helper threads. The queue must be zeroed memory that stays put.
htp_status work_queue_init(work_queue* q, uint32_t n_workers, uint32_t spin_ns, size_t stack_bytes);
void work_queue_destroy(work_queue* q);

// Bracket a batch: helpers poll between runs while active, sleep otherwise. wakeup also wakes
// the sleeping helpers, so that they are polling by the batch's first run.
void work_queue_wakeup(work_queue* q);
void work_queue_suspend(work_queue* q);

// Runs fn(n, i, data) for every i in [0, n); workers claim the jobs in index order (n > 65535:
// all on the caller).
void work_queue_run(work_queue* q, work_fn fn, void* data, uint32_t n);

}  // namespace hexllm::htp
