// The host's half of the device wire: the shared layouts (src/htp/wire/htp_wire.h) plus the
// POSIX helpers the host uses to speak them. The real chip has FastRPC instead.
#pragma once

#include <linux/futex.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <stdint.h>

#include <span>

#include "htp/wire/htp_wire.h"

namespace hexllm::htp_host::wire {

using namespace hexllm::htp::wire;

// Futexes on shared memory (not FUTEX_PRIVATE: the two sides are different processes).
// Returns when woken, when *addr != expected, on a signal or after timeout_ns (0: no timeout).
inline void futex_wait(uint32_t* addr, uint32_t expected, uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000u), static_cast<long>(timeout_ns % 1000000000u)};
  syscall(SYS_futex, addr, FUTEX_WAIT, expected, timeout_ns != 0 ? &ts : nullptr, nullptr, 0);
}
inline void futex_wake(uint32_t* addr) { syscall(SYS_futex, addr, FUTEX_WAKE, 1, nullptr, nullptr, 0); }

// Control::wake_op for ops planned to take op_ns: the first op of the batch's last `lead` ns
// (HTP_NO_INDEX when the last op alone takes longer: a wake-up at its start would come early).
inline uint32_t tail_start(std::span<const uint64_t> op_ns, uint64_t lead) {
  size_t i = op_ns.size();
  for (uint64_t tail = 0; i > 0 && tail + op_ns[i - 1] <= lead; --i) tail += op_ns[i - 1];
  return i < op_ns.size() ? static_cast<uint32_t>(i) : HTP_NO_INDEX;
}

// Sends `len` bytes with `n_fds` descriptors attached (SCM_RIGHTS: how banks reach the device),
// retrying on EINTR; returns what sendmsg returned.
inline ssize_t send_with_fds(int sock, const void* buf, size_t len, const int* fds, uint32_t n_fds) {
  iovec iov{const_cast<void*>(buf), len};
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * HTP_MAX_BANKS)];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (n_fds > 0) {
    if (n_fds > HTP_MAX_BANKS) {
      errno = EINVAL;
      return -1;
    }
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
  }
  ssize_t sent;
  do sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent;
}

}  // namespace hexllm::htp_host::wire
