// proc_move_off_cpu (the device process keeping its thread off the host thread's CPU): it moves
// the calling thread to another allowed CPU and leaves the thread's affinity as it found it.
#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

#include "htp/platform/platform_process.h"

namespace hexllm::htp {
namespace {

cpu_set_t affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

TEST(ProcessCpu, MovesOffTheCpuAndKeepsTheAffinity) {
  const cpu_set_t allowed = affinity();
  if (CPU_COUNT(&allowed) == 1) GTEST_SKIP() << "SKIPPED: this process may run on one CPU only";
  std::thread([] {
    const cpu_set_t before = affinity();
    const int cpu = proc_current_cpu();
    ASSERT_TRUE(cpu >= 0 && CPU_ISSET(cpu, &before));  // a CPU this thread may run on
    ASSERT_TRUE(proc_move_off_cpu(cpu));
    EXPECT_NE(sched_getcpu(), cpu);
    const cpu_set_t after = affinity();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  }).join();
}

TEST(ProcessCpu, RefusesWhenNoOtherCpuIsAllowed) {
  std::thread([] {
    const int cpu = sched_getcpu();
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    ASSERT_EQ(sched_setaffinity(0, sizeof only, &only), 0);
    EXPECT_FALSE(proc_move_off_cpu(cpu));
    EXPECT_EQ(sched_getcpu(), cpu);
    const cpu_set_t after = affinity();
    EXPECT_TRUE(CPU_EQUAL(&only, &after));
    EXPECT_FALSE(proc_move_off_cpu(-1));
    EXPECT_FALSE(proc_move_off_cpu(CPU_SETSIZE));
  }).join();
}

}  // namespace
}  // namespace hexllm::htp
