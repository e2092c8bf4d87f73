// Host (Linux/POSIX) implementation of the device process seam (platform_process.h).
#include "htp/platform/platform_process.h"

#include <linux/futex.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace hexllm::htp {

int64_t proc_recv(int sock, void* buf, size_t len, int* fds, uint32_t max_fds, uint32_t* n_fds, bool wait,
                  bool* truncated) {
  constexpr uint32_t kMaxFds = 64;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxFds)];
  iovec iov{buf, len};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (max_fds > kMaxFds) max_fds = kMaxFds;
  if (max_fds > 0) {
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * max_fds);
  }
  ssize_t got;
  do got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
  while (got < 0 && errno == EINTR);
  *n_fds = 0;
  *truncated = got >= 0 && (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) != 0;
  for (cmsghdr* c = got >= 0 && max_fds > 0 ? CMSG_FIRSTHDR(&mh) : nullptr; c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const uint32_t n = (uint32_t)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (uint32_t i = 0; i < n; ++i) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*n_fds < max_fds) fds[(*n_fds)++] = fd;
      else {
        close(fd);
        *truncated = true;
      }
    }
  }
  return got;
}

int64_t proc_send(int sock, const void* buf, size_t len) {
  ssize_t sent;
  do sent = send(sock, buf, len, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent;
}

bool proc_peer_gone(int sock) {
  pollfd p{sock, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

void* proc_map_fd(int fd, uint64_t bytes, bool populate) {
  // At a 2 MiB-aligned address, so that a file whose page cache holds 2 MiB folios (the host's
  // weight banks) maps them whole; the slack of the reservation is returned at once.
  const size_t align = 2u << 20, size = (size_t)bytes;
  void* span = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (span == MAP_FAILED) return nullptr;
  const uintptr_t lo = (uintptr_t)span, at = (lo + align - 1) / align * align;
  void* p = mmap((void*)at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | (populate ? MAP_POPULATE : 0), fd, 0);
  if (p == MAP_FAILED) {
    munmap(span, size + align);
    return nullptr;
  }
  if (at > lo) munmap(span, at - lo);
  if (lo + align > at) munmap((void*)(at + size), lo + align - at);
  return p;
}

void proc_unmap(void* p, uint64_t bytes) { munmap(p, (size_t)bytes); }

bool proc_fd_size(int fd, uint64_t* bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0) return false;
  *bytes = (uint64_t)st.st_size;
  return true;
}

void proc_close(int fd) { close(fd); }

void proc_close_others(int keep) {
  close_range((unsigned)keep + 1, ~0u, 0);
  if (keep > 3) close_range(3, (unsigned)keep - 1, 0);
}

void proc_futex_wait_shared(uint32_t* addr, uint32_t expected, uint64_t timeout_ns) {
  timespec ts{(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, addr, FUTEX_WAIT, expected, timeout_ns != 0 ? &ts : nullptr, nullptr, 0);
}

void proc_futex_wake_shared(uint32_t* addr, uint32_t n_waiters) {
  syscall(SYS_futex, addr, FUTEX_WAKE, n_waiters > INT_MAX ? INT_MAX : (int)n_waiters, nullptr, nullptr, 0);
}

int proc_pid() { return (int)getpid(); }

void proc_write_stderr(const char* s, size_t len) {
  while (len > 0) {
    const ssize_t n = write(2, s, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s += n;
    len -= (size_t)n;
  }
}

int proc_current_cpu() { return sched_getcpu(); }

bool proc_move_off_cpu(int cpu) {
  cpu_set_t allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return false;
  // The narrowed mask moves the thread now; the old one, put back, does not move it again.
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  return sched_setaffinity(0, sizeof allowed, &allowed) == 0;
}

}  // namespace hexllm::htp
