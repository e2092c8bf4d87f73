// hexllm-htp: the device runtime as its own process, one per host session (the host target's
// stand-in for the NPU's FastRPC skel). It sees the pool only through the memfds the host
// sends and maps banks only when the host's window plan says so; it never trusts what the host
// writes: every bank, step and message location is checked, and a bad one gets a status back.
// Protocol: src/htp-host/transport_wire.h. Plain POSIX, no exceptions: a device must not throw.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "htp-host/transport_wire.h"
#include "htp/platform/platform.h"
#include "htp/session.h"

namespace {

using namespace hexllm::htp;
namespace wire = hexllm::htp_host::wire;

constexpr uint64_t kMaxBankBytes = 0xffffffffull;
// Poll the doorbell this long before sleeping. Off: between two graphs the host works for far
// longer than a spin could cover, and a spinning device only takes a core from it.
constexpr uint64_t kIdleSpinNs = 0;
constexpr uint64_t kIdleSleepNs = 1'000'000'000;   // then look at the socket once a second
constexpr uint32_t kMaxBankMsgs = 4;

struct DeviceBank {
  int fd = -1;
  uint64_t size = 0;
  uint32_t flags = 0;
  uint8_t* base = nullptr;  // our mapping, nullptr when unmapped
  bool in_session = false;  // in the session's bank table (the window)
};

struct Device {
  int sock = -1;
  htp_session* session = nullptr;
  DeviceBank banks[HTP_MAX_BANKS];
  uint32_t control_bank = HTP_MAX_BANKS;
  wire::Control* ctl = nullptr;
};

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void say(const char* what) { fprintf(stderr, "hexllm-htp[%d]: %s\n", (int)getpid(), what); }

// Out of the session's window; our own mapping goes too unless it holds the control block.
void unmap_bank(Device& d, uint32_t b) {
  DeviceBank& bank = d.banks[b];
  if (bank.in_session) htp_session_map_bank(d.session, b, nullptr, 0);
  bank.in_session = false;
  if (bank.base != nullptr && b != d.control_bank) {
    munmap(bank.base, bank.size);
    bank.base = nullptr;
  }
}

void close_bank(Device& d, uint32_t b) {
  DeviceBank& bank = d.banks[b];
  unmap_bank(d, b);
  if (bank.base != nullptr) munmap(bank.base, bank.size);
  if (bank.fd >= 0) close(bank.fd);
  bank = DeviceBank{};
}

bool mmap_bank(DeviceBank& bank) {
  if (bank.base != nullptr) return true;
  // Weight banks are read whole by the next batch: fault them in now, in one go.
  const int populate = (bank.flags & wire::kBankWeights) != 0 ? MAP_POPULATE : 0;
  void* p = mmap(nullptr, bank.size, PROT_READ | PROT_WRITE, MAP_SHARED | populate, bank.fd, 0);
  if (p == MAP_FAILED) return false;
  bank.base = (uint8_t*)p;
  return true;
}

htp_status map_bank(Device& d, uint32_t b) {
  DeviceBank& bank = d.banks[b];
  if (bank.fd < 0) return HTP_ERR_OUT_OF_WINDOW;
  if (!mmap_bank(bank)) return HTP_ERR_INTERNAL;
  const htp_status st = htp_session_map_bank(d.session, b, bank.base, bank.size);
  if (st != HTP_OK) {
    unmap_bank(d, b);
    return st;
  }
  bank.in_session = true;
  return HTP_OK;
}

// One Banks message with its memfds. Everything is checked before anything changes; on a bad
// message every received fd is closed and false returned. During a call the host has sent the
// message before ringing, so `wait` is false: a missing message is an error, not a hang.
bool recv_banks(Device& d, bool wait) {
  wire::Banks msg;
  memset(&msg, 0, sizeof msg);
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * HTP_MAX_BANKS * 2)];
  iovec iov{&msg, sizeof msg};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof cbuf;
  ssize_t got;
  do got = recvmsg(d.sock, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
  while (got < 0 && errno == EINTR);

  int fds[HTP_MAX_BANKS * 2];
  uint32_t n_fds = 0;
  for (cmsghdr* c = got > 0 ? CMSG_FIRSTHDR(&mh) : nullptr; c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const uint32_t n = (uint32_t)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (uint32_t i = 0; i < n && n_fds < HTP_MAX_BANKS * 2; ++i) memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
  }
  bool ok = got >= (ssize_t)offsetof(wire::Banks, entries) && (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) == 0 &&
            msg.magic == wire::kBanksMagic && msg.n <= HTP_MAX_BANKS * 2 &&
            (size_t)got >= offsetof(wire::Banks, entries) + msg.n * sizeof(wire::BankEntry);
  uint32_t opens = 0;
  for (uint32_t i = 0; ok && i < msg.n; ++i) {
    const wire::BankEntry& e = msg.entries[i];
    ok = e.bank < HTP_MAX_BANKS && (e.op == wire::kBankOpen || e.op == wire::kBankClose) &&
         (e.op == wire::kBankClose || (e.size > 0 && e.size <= kMaxBankBytes && e.size % 4096 == 0)) &&
         !(e.bank == d.control_bank && d.ctl != nullptr);  // the control block's bank stays
    opens += e.op == wire::kBankOpen;
  }
  ok = ok && opens == n_fds;
  if (!ok) {
    for (uint32_t i = 0; i < n_fds; ++i) close(fds[i]);
    return false;
  }
  uint32_t next_fd = 0;
  for (uint32_t i = 0; i < msg.n; ++i) {
    const wire::BankEntry& e = msg.entries[i];
    close_bank(d, e.bank);
    if (e.op == wire::kBankOpen) {
      DeviceBank& bank = d.banks[e.bank];
      bank.fd = fds[next_fd++];
      bank.size = e.size;
      bank.flags = e.flags;
    }
  }
  return true;
}

// A failed window step leaves the table unknown to the host: empty it, the host replans.
void drop_window(Device& d) {
  for (uint32_t b = 0; b < HTP_MAX_BANKS; ++b) unmap_bank(d, b);
}

htp_status run_call(Device& d, uint32_t* batch_ran) {
  *batch_ran = 0;
  wire::Control& c = *d.ctl;
  const uint32_t n_msgs = c.n_bank_msgs;
  if (n_msgs > kMaxBankMsgs) return HTP_ERR_BAD_BATCH;
  for (uint32_t i = 0; i < n_msgs; ++i)
    if (!recv_banks(d, false)) return HTP_ERR_BAD_BATCH;

  const uint32_t n_steps = c.n_steps;
  if (n_steps > HTP_MAX_BANKS * 2) return HTP_ERR_BAD_BATCH;
  for (uint32_t i = 0; i < n_steps; ++i) {
    const wire::Step s = c.steps[i];
    htp_status st = HTP_OK;
    if (s.bank >= HTP_MAX_BANKS || s.map > 1) st = HTP_ERR_BAD_BATCH;
    else if (s.map != 0) st = map_bank(d, s.bank);
    else unmap_bank(d, s.bank);
    if (st != HTP_OK) {
      drop_window(d);
      return st;
    }
  }

  const uint32_t mb = c.message_bank, off = c.message_offset;
  const uint64_t size = c.message_size;
  if (mb >= HTP_MAX_BANKS || d.banks[mb].base == nullptr || off % 8 != 0 || off > d.banks[mb].size ||
      size > d.banks[mb].size - off)
    return HTP_ERR_BAD_BATCH;
  *batch_ran = 1;
  return htp_session_process(d.session, d.banks[mb].base + off, (size_t)size);
}

bool host_gone(int sock) {
  pollfd p{sock, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

// Returns the new doorbell value, or its old value when the host went away.
uint32_t wait_doorbell(Device& d, uint32_t last) {
  uint32_t* bell = &d.ctl->doorbell;
  const uint64_t t0 = now_ns();
  while (__atomic_load_n(bell, __ATOMIC_ACQUIRE) == last && now_ns() - t0 < kIdleSpinNs) platform_pause();
  while (__atomic_load_n(bell, __ATOMIC_ACQUIRE) == last) {
    __atomic_store_n(&d.ctl->device_sleeping, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(bell, __ATOMIC_SEQ_CST) == last) wire::futex_wait(bell, last, kIdleSleepNs);
    __atomic_store_n(&d.ctl->device_sleeping, 0u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(bell, __ATOMIC_ACQUIRE) == last && host_gone(d.sock)) return last;
  }
  return __atomic_load_n(bell, __ATOMIC_ACQUIRE);
}

void serve(Device& d) {
  uint32_t last = 0;
  for (;;) {
    const uint32_t bell = wait_doorbell(d, last);
    if (bell == last) return;  // the host is gone
    last = bell;
    const uint32_t cmd = __atomic_load_n(&d.ctl->command, __ATOMIC_ACQUIRE);
    if (cmd == wire::kCmdExit) return;
    uint32_t ran = 0;
    const htp_status st = cmd == wire::kCmdRun ? run_call(d, &ran) : HTP_ERR_BAD_BATCH;
    __atomic_store_n(&d.ctl->status, (uint32_t)st, __ATOMIC_RELAXED);
    __atomic_store_n(&d.ctl->batch_ran, ran, __ATOMIC_RELAXED);
    __atomic_store_n(&d.ctl->done, bell, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&d.ctl->host_sleeping, __ATOMIC_SEQ_CST) != 0) wire::futex_wake(&d.ctl->done);
  }
}

bool reply(int sock, uint32_t status, const htp_hwinfo* hw) {
  wire::HelloReply r;
  memset(&r, 0, sizeof r);
  r.magic = wire::kReplyMagic;
  r.status = status;
  r.abi_version = HTP_ABI_VERSION;
  r.wire_version = wire::kWireVersion;
  if (hw != nullptr) r.hwinfo = *hw;
  return send(sock, &r, sizeof r, MSG_NOSIGNAL) == (ssize_t)sizeof r;
}

// Hello, the first banks, the control block, the session. Returns false when the device
// should exit (a reply has been sent where one could be).
bool start(Device& d) {
  wire::Hello h;
  memset(&h, 0, sizeof h);
  ssize_t got;
  do got = recv(d.sock, &h, sizeof h, 0);
  while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof h || h.magic != wire::kHelloMagic) {
    say("no valid hello from the host");
    reply(d.sock, HTP_ERR_BAD_BATCH, nullptr);
    return false;
  }
  if (h.abi_version != HTP_ABI_VERSION || h.wire_version != wire::kWireVersion) {
    reply(d.sock, HTP_ERR_ABI_VERSION, nullptr);
    return false;
  }
  if (!recv_banks(d, true) || h.control_bank >= HTP_MAX_BANKS || d.banks[h.control_bank].fd < 0 ||
      h.control_offset % 64 != 0 || h.control_offset > d.banks[h.control_bank].size ||
      d.banks[h.control_bank].size - h.control_offset < sizeof(wire::Control) || !mmap_bank(d.banks[h.control_bank])) {
    say("bad banks or control block in the handshake");
    reply(d.sock, HTP_ERR_BAD_BATCH, nullptr);
    return false;
  }
  d.control_bank = h.control_bank;
  d.ctl = (wire::Control*)(d.banks[h.control_bank].base + h.control_offset);

  htp_session_config c = htp_session_config_default();
  c.n_threads = h.n_threads;
  c.vtcm_size = h.vtcm_size;
  c.dma_mode = h.dma_mode;
  c.window_size = h.window_size;
  const htp_status st = htp_session_open(&c, &d.session);
  if (st != HTP_OK) {
    reply(d.sock, st, nullptr);
    return false;
  }
  htp_hwinfo hw;
  htp_session_hwinfo(d.session, &hw);
  return reply(d.sock, HTP_OK, &hw);
}

void shutdown(Device& d) {
  for (uint32_t b = 0; b < HTP_MAX_BANKS; ++b) {
    unmap_bank(d, b);
  }
  htp_session_close(d.session);
  d.session = nullptr;
  d.ctl = nullptr;
  d.control_bank = HTP_MAX_BANKS;
  for (uint32_t b = 0; b < HTP_MAX_BANKS; ++b) close_bank(d, b);
  close(d.sock);
}

}  // namespace

int main(int argc, char** argv) {
  int fd = -1;
  if (argc == 3 && strcmp(argv[1], "--socket-fd") == 0) fd = atoi(argv[2]);
  if (fd < 0) {
    fprintf(stderr,
            "usage: hexllm-htp --socket-fd N\n"
            "The HTP device process. The hexllm host starts it (--htp-transport process); it is not run by hand.\n");
    return 2;
  }
  // Hold none of the host's other descriptors: the host must see our socket end close when we go.
  close_range((unsigned)fd + 1, ~0u, 0);
  if (fd > 2) close_range(3, (unsigned)fd - 1, 0);
  signal(SIGPIPE, SIG_IGN);

  Device d;
  d.sock = fd;
  const bool ok = start(d);
  if (ok) serve(d);
  shutdown(d);
  return ok ? 0 : 1;
}
