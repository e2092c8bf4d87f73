// Hexagon Linux implementation of the device process seam (platform_process.h) with raw system
// calls. Layouts here are the kernel's 32-bit ones (qemu-hexagon translates them to the host's):
// msghdr and cmsghdr with 4-byte lengths, stat64 of asm-generic, pollfd, 32-bit timespec.
#include "htp/platform/hexagon/syscall.h"
#include "htp/platform/platform_process.h"

namespace hexllm::htp {

namespace {

struct iovec32 {
  void* base;
  uint32_t len;
};
struct msghdr32 {
  void* name;
  uint32_t namelen;
  iovec32* iov;
  uint32_t iovlen;
  void* control;
  uint32_t controllen;
  int32_t flags;
};
struct cmsghdr32 {
  uint32_t len;
  int32_t level;
  int32_t type;
};
static_assert(sizeof(msghdr32) == 28 && sizeof(cmsghdr32) == 12, "32-bit socket layouts");

// asm-generic struct stat64: st_size sits after dev, ino, mode, nlink, uid, gid, rdev, pad.
struct stat64_generic {
  uint64_t dev;
  uint64_t ino;
  uint32_t mode;
  uint32_t nlink;
  uint32_t uid;
  uint32_t gid;
  uint64_t rdev;
  uint64_t pad1;
  int64_t size;
  int32_t blksize;
  int32_t pad2;
  int64_t blocks;
  int32_t times[6];
  uint32_t unused[2];
};
static_assert(sizeof(stat64_generic) == 104, "asm-generic stat64");

struct pollfd32 {
  int32_t fd;
  int16_t events;
  int16_t revents;
};

constexpr int32_t SOL_SOCKET = 1, SCM_RIGHTS = 1;
constexpr int32_t MSG_CTRUNC = 0x8, MSG_TRUNC = 0x20, MSG_DONTWAIT = 0x40, MSG_NOSIGNAL = 0x4000,
                  MSG_CMSG_CLOEXEC = 0x40000000;
constexpr int16_t POLLIN = 0x1, POLLERR = 0x8, POLLHUP = 0x10;
constexpr uint32_t kMaxFds = 64;

}  // namespace

int64_t proc_recv(int sock, void* buf, size_t len, int* fds, uint32_t max_fds, uint32_t* n_fds, bool wait,
                  bool* truncated) {
  if (max_fds > kMaxFds) max_fds = kMaxFds;
  alignas(4) unsigned char cbuf[sizeof(cmsghdr32) + sizeof(int32_t) * kMaxFds];
  iovec32 iov{buf, (uint32_t)len};
  msghdr32 mh{nullptr, 0, &iov, 1, nullptr, 0, 0};
  if (max_fds > 0) {
    mh.control = cbuf;
    mh.controllen = (uint32_t)(sizeof(cmsghdr32) + sizeof(int32_t) * max_fds);
  }
  int32_t got;
  do got = hx::sys(hx::SYS_recvmsg, sock, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
  while (got == -hx::EINTR_);
  *n_fds = 0;
  *truncated = got >= 0 && (mh.flags & (MSG_CTRUNC | MSG_TRUNC)) != 0;
  if (got < 0 || max_fds == 0) return got;
  // Walk the control messages; each is 4-byte aligned in the 32-bit ABI.
  uint32_t at = 0;
  while (at + sizeof(cmsghdr32) <= mh.controllen) {
    cmsghdr32 c;
    __builtin_memcpy(&c, cbuf + at, sizeof c);
    if (c.len < sizeof(cmsghdr32) || at + c.len > mh.controllen) break;
    if (c.level == SOL_SOCKET && c.type == SCM_RIGHTS) {
      const uint32_t n = (c.len - (uint32_t)sizeof(cmsghdr32)) / sizeof(int32_t);
      for (uint32_t i = 0; i < n; ++i) {
        int32_t fd;
        __builtin_memcpy(&fd, cbuf + at + sizeof(cmsghdr32) + i * sizeof(int32_t), sizeof fd);
        if (*n_fds < max_fds) fds[(*n_fds)++] = fd;
        else {
          hx::sys(hx::SYS_close, fd);
          *truncated = true;
        }
      }
    }
    at += (c.len + 3u) & ~3u;
  }
  return got;
}

int64_t proc_send(int sock, const void* buf, size_t len) {
  iovec32 iov{const_cast<void*>(buf), (uint32_t)len};
  msghdr32 mh{nullptr, 0, &iov, 1, nullptr, 0, 0};
  int32_t sent;
  do sent = hx::sys(hx::SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
  while (sent == -hx::EINTR_);
  return sent;
}

bool proc_peer_gone(int sock) {
  pollfd32 p{sock, POLLIN, 0};
  hx::timespec32 zero{0, 0};
  const int32_t n = hx::sys(hx::SYS_ppoll, &p, 1, &zero, 0, 8);
  return n > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

void* proc_map_fd(int fd, uint64_t bytes, bool populate) {
  if (bytes == 0 || bytes > 0xffffffffull) return nullptr;
  const int32_t r = hx::sys(hx::SYS_mmap2, 0, (uint32_t)bytes, hx::PROT_READ | hx::PROT_WRITE,
                            hx::MAP_SHARED | (populate ? hx::MAP_POPULATE : 0), fd, 0);
  return hx::failed_ptr(r) ? nullptr : (void*)(intptr_t)r;
}

void proc_unmap(void* p, uint64_t bytes) { hx::sys(hx::SYS_munmap, p, (uint32_t)bytes); }

bool proc_fd_size(int fd, uint64_t* bytes) {
  stat64_generic st;
  __builtin_memset(&st, 0, sizeof st);
  if (hx::failed(hx::sys(hx::SYS_fstat64, fd, &st)) || st.size < 0) return false;
  *bytes = (uint64_t)st.size;
  return true;
}

void proc_close(int fd) { hx::sys(hx::SYS_close, fd); }

// Under qemu-hexagon the process also holds the emulator's own descriptors, which the guest
// must not close. The host's end of the socket and its pool memfds are close-on-exec, so the
// host still sees the socket close when the device goes.
void proc_close_others(int) {}

void proc_futex_wait_shared(uint32_t* addr, uint32_t expected, uint64_t timeout_ns) {
  hx::timespec32 ts{(int32_t)(timeout_ns / 1000000000u), (int32_t)(timeout_ns % 1000000000u)};
  hx::sys(hx::SYS_futex, addr, hx::FUTEX_WAIT, expected, timeout_ns != 0 ? &ts : nullptr, 0, 0);
}

void proc_futex_wake_shared(uint32_t* addr, uint32_t n_waiters) {
  hx::sys(hx::SYS_futex, addr, hx::FUTEX_WAKE, n_waiters > 0x7fffffffu ? 0x7fffffff : (int32_t)n_waiters, 0, 0, 0);
}

int proc_pid() { return hx::sys(hx::SYS_getpid); }

int proc_current_cpu() {
  uint32_t cpu = 0;
  return hx::failed(hx::sys(hx::SYS_getcpu, &cpu, 0, 0)) ? -1 : (int)cpu;
}

bool proc_move_off_cpu(int cpu) {
  uint32_t allowed[32] = {}, others[32];  // room for 1024 CPUs
  const int32_t bytes = hx::sys(hx::SYS_sched_getaffinity, 0, sizeof allowed, allowed);
  if (hx::failed(bytes) || cpu < 0 || cpu >= bytes * 8) return false;
  bool any = false;
  for (int i = 0; i < 32; ++i) {
    others[i] = i == cpu / 32 ? allowed[i] & ~(1u << cpu % 32) : allowed[i];
    any |= others[i] != 0;
  }
  // The narrowed mask moves the thread now; the old one, put back, does not move it again.
  if (!any || hx::failed(hx::sys(hx::SYS_sched_setaffinity, 0, bytes, others))) return false;
  return !hx::failed(hx::sys(hx::SYS_sched_setaffinity, 0, bytes, allowed));
}

void proc_write_stderr(const char* s, size_t len) {
  while (len > 0) {
    const int32_t n = hx::sys(hx::SYS_write, 2, s, len);
    if (n == -hx::EINTR_) continue;
    if (n <= 0) return;
    s += n;
    len -= (size_t)n;
  }
}

}  // namespace hexllm::htp
