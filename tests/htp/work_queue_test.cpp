// Work queue: every job index of a run executes exactly once, runs return only when all jobs
// are done, helpers that went to sleep are always woken, and a helper that cannot run holds
// up no run.
#include "htp/work_queue.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "htp/platform/platform.h"

namespace hexllm::htp {
namespace {

constexpr uint32_t kMaxJobs = 64;

struct run_record {
  std::atomic<uint32_t> hits[kMaxJobs];
  std::atomic<uint32_t> bad_n;
  uint32_t expected_n;
};

void count_job(unsigned n, unsigned i, void* data) {
  auto* r = (run_record*)data;
  if (n != r->expected_n) r->bad_n.fetch_add(1);
  r->hits[i].fetch_add(1);
}

struct QueueOwner {
  work_queue* q;
  QueueOwner(uint32_t n_workers, uint32_t spin_ns) {
    q = (work_queue*)platform_mem_map(sizeof(work_queue), 64);
    EXPECT_EQ(work_queue_init(q, n_workers, spin_ns, 64 << 10), HTP_OK);
  }
  ~QueueOwner() {
    work_queue_destroy(q);
    platform_mem_unmap(q, sizeof(work_queue));
  }
};

void run_and_check(work_queue* q, run_record* rec, uint32_t n) {
  for (uint32_t i = 0; i < kMaxJobs; ++i) rec->hits[i].store(0);
  rec->bad_n.store(0);
  rec->expected_n = n;
  work_queue_run(q, count_job, rec, n);
  // All done by the time run returns: every index exactly once, none beyond n.
  for (uint32_t i = 0; i < kMaxJobs; ++i)
    ASSERT_EQ(rec->hits[i].load(), i < n ? 1u : 0u) << "job " << i << " of " << n;
  ASSERT_EQ(rec->bad_n.load(), 0u);
}

TEST(HtpWorkQueue, EachJobOncePerRunActive) {
  for (uint32_t nw = 1; nw <= 4; ++nw) {
    QueueOwner o(nw, 1000000);
    run_record rec;
    work_queue_wakeup(o.q);
    for (uint32_t run = 0; run < 3000; ++run) {
      const uint32_t n = 1 + run % (2 * nw + 3);  // fewer, equal and more jobs than workers
      ASSERT_NO_FATAL_FAILURE(run_and_check(o.q, &rec, n)) << "workers " << nw << " run " << run;
    }
    work_queue_suspend(o.q);
  }
}

// Jobs that each wait until all n have started: a run completes only when n distinct workers
// took part, so every helper must have been woken (a lost wake-up fails the run at the deadline
// instead of hanging it).
struct rendezvous {
  std::atomic<uint32_t> started{0};
  std::atomic<uint32_t> timed_out{0};
};

void meet_all(unsigned n, unsigned, void* data) {
  auto* r = (rendezvous*)data;
  r->started.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (r->started.load() < n) {
    if (std::chrono::steady_clock::now() > deadline) {
      r->timed_out.fetch_add(1);
      return;
    }
    platform_yield();
  }
}

TEST(HtpWorkQueue, SleepingHelpersAreWokenEveryRun) {
  for (uint32_t nw = 2; nw <= 4; ++nw) {
    QueueOwner o(nw, 0);  // no polling: idle helpers go straight to the futex
    for (uint32_t run = 0; run < 300; ++run) {
      // Wait (without timing) until every helper is inside its sleep path, then run.
      while (atomic_load_seq(&o.q->sleepers) != nw - 1) platform_yield();
      rendezvous r;
      work_queue_run(o.q, meet_all, &r, nw);
      ASSERT_EQ(r.timed_out.load(), 0u) << "workers " << nw << " run " << run;
      ASSERT_EQ(r.started.load(), nw);
    }
    EXPECT_GE(atomic_load_seq(&o.q->n_sleeps), 300u * (nw - 1));
  }
}

// A helper that cannot run (here: parked in a signal handler, as a preempted thread would be)
// holds up no run: the caller claims the jobs it would have taken.
std::atomic<int> g_parked{0};
std::atomic<int> g_release{0};

void park_until_released(int) {
  g_parked.store(1);
  while (g_release.load() == 0) {
  }
}

TEST(HtpWorkQueue, RunsCompleteWhileAHelperCannotRun) {
  QueueOwner o(2, 1000000);
  struct sigaction sa {};
  sa.sa_handler = park_until_released;
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  g_parked.store(0);
  g_release.store(0);
  work_queue_wakeup(o.q);
  ASSERT_EQ(pthread_kill((pthread_t)o.q->helpers[1].thread.handle, SIGUSR1), 0);
  while (g_parked.load() == 0) platform_yield();
  // The runs run on a thread of their own, so that a run waiting for the parked helper fails
  // the test instead of hanging it.
  std::atomic<bool> finished{false};
  run_record rec;
  std::thread runner([&] {
    for (uint32_t run = 0; run < 1000; ++run) run_and_check(o.q, &rec, 1 + run % 5);
    finished.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!finished.load() && std::chrono::steady_clock::now() < deadline) platform_yield();
  const bool done = finished.load();
  g_release.store(1);  // the helper resumes (and the runner, if it was stuck, completes)
  runner.join();
  work_queue_suspend(o.q);
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(done) << "runs waited for a helper that could not run";
}

TEST(HtpWorkQueue, BatchesAlternatingWithIdle) {
  // Thousands of runs across wakeup/suspend brackets with a short poll: helpers mix polling,
  // sleeping and racing the next run.
  QueueOwner o(4, 2000);
  run_record rec;
  for (uint32_t batch = 0; batch < 200; ++batch) {
    work_queue_wakeup(o.q);
    for (uint32_t run = 0; run < 20; ++run)
      ASSERT_NO_FATAL_FAILURE(run_and_check(o.q, &rec, 1 + (batch + run) % 9));
    work_queue_suspend(o.q);
  }
}

TEST(HtpWorkQueue, StartCoordinatesFromIndex) {
  // A re-entrant job that partitions a range from (n, i) alone covers it exactly once.
  QueueOwner o(3, 100000);
  std::vector<std::atomic<uint32_t>> cover(1000);
  struct job {
    std::vector<std::atomic<uint32_t>>* cover;
  } j{&cover};
  work_queue_run(
      o.q,
      [](unsigned n, unsigned i, void* data) {
        auto* c = ((job*)data)->cover;
        const size_t begin = c->size() * i / n, end = c->size() * (i + 1) / n;
        for (size_t k = begin; k < end; ++k) (*c)[k].fetch_add(1);
      },
      &j, 7);
  for (auto& c : cover) EXPECT_EQ(c.load(), 1u);
}

TEST(HtpWorkQueue, InitDestroyRepeatedly) {
  // Helpers may be anywhere (not started, polling, asleep) when destroy asks them to stop.
  auto* q = (work_queue*)platform_mem_map(sizeof(work_queue), 64);
  run_record rec;
  for (int k = 0; k < 300; ++k) {
    memset((void*)q, 0, sizeof(work_queue));
    ASSERT_EQ(work_queue_init(q, 2 + k % 3, k % 2 ? 0 : 10000, 64 << 10), HTP_OK);
    if (k % 3 == 0) {
      ASSERT_NO_FATAL_FAILURE(run_and_check(q, &rec, 3));
    }
    work_queue_destroy(q);
  }
  platform_mem_unmap(q, sizeof(work_queue));
}

TEST(HtpWorkQueue, RejectsBadWorkerCounts) {
  auto* q = (work_queue*)platform_mem_map(sizeof(work_queue), 64);
  EXPECT_EQ(work_queue_init(q, 0, 0, 64 << 10), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(work_queue_init(q, HTP_MAX_THREADS + 1, 0, 64 << 10), HTP_ERR_INVALID_PARAMS);
  platform_mem_unmap(q, sizeof(work_queue));
}

}  // namespace
}  // namespace hexllm::htp
