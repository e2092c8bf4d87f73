// Worker threads on Hexagon Linux: clone() onto a stack we map (with a PROT_NONE guard page at
// its low end). Join waits on the thread-id word the kernel clears and futex-wakes when the
// thread has exited (CLONE_CHILD_CLEARTID), after which its stack is no longer in use.
#include "htp/platform/hexagon/syscall.h"
#include "htp/platform/platform.h"

extern "C" {
// The child half of clone must not return through the parent's frames, so the call is written
// in assembly (below): hexllm_clone_thread(flags, stack_top, tid_word, fn, arg). The parent gets
// the new thread id (or -errno); the child runs fn(arg) on the new stack and then exit().
int32_t hexllm_clone_thread(int32_t flags, void* stack_top, uint32_t* tid, void (*fn)(void*), void* arg);
}

// clone's argument order differs between architectures (parent tid, child tid and TLS in
// slots 3-5 in some order); passing the tid word in all three is right for every order, and
// CLONE_SETTLS is not set, so the TLS slot is unused. r10/r11 carry fn and arg across the trap:
// the child starts with a copy of the parent's registers, r0 = 0 and r29 = the new stack.
__asm__(R"(
  .text
  .globl hexllm_clone_thread
  .type hexllm_clone_thread, @function
  .p2align 4
hexllm_clone_thread:
  { r10 = r3
    r11 = r4 }
  { r3 = r2
    r4 = r2 }
  r6 = #220
  trap0(#1)
  p0 = cmp.eq(r0, #0)
  if (!p0) jumpr r31
  { r30 = #0
    r31 = #0 }
  r0 = r11
  callr r10
  r0 = #0
  r6 = #93
  trap0(#1)
  .size hexllm_clone_thread, . - hexllm_clone_thread
)");

namespace hexllm::htp {

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMinStack = 64 * 1024;

constexpr int32_t CLONE_VM = 0x100, CLONE_FS = 0x200, CLONE_FILES = 0x400, CLONE_SIGHAND = 0x800,
                  CLONE_THREAD = 0x10000, CLONE_SYSVSEM = 0x40000, CLONE_CHILD_CLEARTID = 0x200000;

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

uint32_t* tid_word(platform_thread* t) { return (uint32_t*)&t->handle; }

void thread_entry(void* p) {
  auto* t = (platform_thread*)p;
  t->fn(t->arg);
}

}  // namespace

bool platform_thread_create(platform_thread* t, void (*fn)(void*), void* arg, size_t stack_bytes) {
  const size_t bytes = round_up(stack_bytes < kMinStack ? kMinStack : stack_bytes, kPage);
  const size_t total = bytes + kPage;
  const int32_t mem = hx::sys(hx::SYS_mmap2, 0, total, hx::PROT_READ | hx::PROT_WRITE,
                              hx::MAP_PRIVATE | hx::MAP_ANONYMOUS, -1, 0);
  if (hx::failed_ptr(mem)) return false;
  if (hx::failed(hx::sys(hx::SYS_mprotect, mem, kPage, hx::PROT_NONE))) {
    hx::sys(hx::SYS_munmap, mem, total);
    return false;
  }
  t->fn = fn;
  t->arg = arg;
  t->stack = (void*)(intptr_t)mem;
  t->stack_bytes = total;
  // Nonzero until the kernel clears it at the thread's exit.
  __atomic_store_n(&t->handle, uint64_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(tid_word(t), 1u, __ATOMIC_SEQ_CST);
  void* top = (void*)(((uintptr_t)mem + total) & ~(uintptr_t)15);
  const int32_t flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                        CLONE_CHILD_CLEARTID;
  const int32_t rc = hexllm_clone_thread(flags, top, tid_word(t), thread_entry, t);
  if (rc < 0) {
    hx::sys(hx::SYS_munmap, mem, total);
    t->stack = nullptr;
    t->stack_bytes = 0;
    return false;
  }
  return true;
}

void platform_thread_join(platform_thread* t) {
  uint32_t* w = tid_word(t);
  for (uint32_t v; (v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != 0;)
    hx::sys(hx::SYS_futex, w, hx::FUTEX_WAIT, v, 0, 0, 0);
  hx::sys(hx::SYS_munmap, t->stack, t->stack_bytes);
  t->stack = nullptr;
  t->stack_bytes = 0;
}

}  // namespace hexllm::htp
