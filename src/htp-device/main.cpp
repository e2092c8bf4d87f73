// hexllm-htp: the device runtime as its own process, one per host session (the host target's
// stand-in for the NPU's FastRPC skel). It sees the pool only through the memfds the host
// sends and maps banks only when the host's window plan says so; it never trusts what the host
// writes: every bank, step and message location is checked, and a bad one gets a status back.
// Protocol: src/htp/wire/htp_wire.h. Freestanding like the rest of the device: the OS is reached
// only through platform.h and platform_process.h, so the same source builds the x86 device and
// the Hexagon one (which runs under qemu-hexagon). No exceptions: a device must not throw.
#include "htp/platform/platform.h"
#include "htp/platform/platform_process.h"
#include "htp/session.h"
#include "htp/util.h"
#include "htp/wire/htp_wire.h"

namespace {

using namespace hexllm::htp;


constexpr uint64_t kMaxBankBytes = 0xffffffffull;
// A device alone polls the doorbell this long after a call before it sleeps. Between two
// decode graphs the host works 15-40 us on a quiet machine and 130-270 us (p50) on a loaded
// 2-vCPU VM (sampling, the next graph's inputs): with 200 us the device slept before 20-50 of
// 61 doorbells there, and each cost a futex wake-up of ~100 us; with 1 ms, none. Longer host
// work (prompt processing on the host, the user) ends it. The poll yields now and then, so a
// host thread placed on this core runs at once. A device in a group does not poll: its
// siblings' threads and the host already fill the cores.
constexpr uint64_t kIdleSpinNs = 1'000'000;
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
  uint64_t idle_spin_ns = 0;  // kIdleSpinNs when alone
  bool keep_apart = false;    // moves off the host thread's CPU (when alone)
};

uint64_t now_ns() { return platform_time_ns(); }

size_t str_len(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

// Appends the decimal digits of v at p; returns the end.
char* put_uint(char* p, uint64_t v) {
  char digits[20];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

// One line to stderr: "hexllm-htp[pid]: what" and, when given, " bank N: detail".
void say(const char* what, uint32_t bank = HTP_MAX_BANKS, const char* detail = nullptr) {
  char line[256];
  char* p = line;
  char* const end = line + sizeof line - 40;
  auto put = [&](const char* s) {
    for (; *s != '\0' && p < end; ++s) *p++ = *s;
  };
  put("hexllm-htp[");
  p = put_uint(p, (uint64_t)proc_pid());
  put("]: ");
  put(what);
  if (bank < HTP_MAX_BANKS) {
    put(": bank ");
    p = put_uint(p, bank);
  }
  if (detail != nullptr) {
    put(" ");
    put(detail);
  }
  *p++ = '\n';
  proc_write_stderr(line, (size_t)(p - line));
}

// Out of the session's window; our own mapping goes too unless it holds the control block.
void unmap_bank(Device& d, uint32_t b) {
  DeviceBank& bank = d.banks[b];
  if (bank.in_session) htp_session_map_bank(d.session, b, nullptr, 0);
  bank.in_session = false;
  if (bank.base != nullptr && b != d.control_bank) {
    proc_unmap(bank.base, bank.size);
    bank.base = nullptr;
  }
}

void close_bank(Device& d, uint32_t b) {
  DeviceBank& bank = d.banks[b];
  unmap_bank(d, b);
  if (bank.base != nullptr) proc_unmap(bank.base, bank.size);
  if (bank.fd >= 0) proc_close(bank.fd);
  bank = DeviceBank{};
}

bool mmap_bank(DeviceBank& bank) {
  if (bank.base != nullptr) return true;
  // Weight banks are read whole by the next batch: fault them in now, in one go.
  void* p = proc_map_fd(bank.fd, bank.size, (bank.flags & wire::kBankWeights) != 0);
  if (p == nullptr) return false;
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
  htp_memset(&msg, 0, sizeof msg);
  int fds[HTP_MAX_BANKS * 2];
  uint32_t n_fds = 0;
  bool truncated = false;
  const int64_t got = proc_recv(d.sock, &msg, sizeof msg, fds, HTP_MAX_BANKS * 2, &n_fds, wait, &truncated);
  bool ok = got >= (int64_t)offsetof(wire::Banks, entries) && !truncated &&
            msg.magic == wire::kBanksMagic && msg.n <= HTP_MAX_BANKS * 2 &&
            (uint64_t)got >= offsetof(wire::Banks, entries) + msg.n * sizeof(wire::BankEntry);
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
    for (uint32_t i = 0; i < n_fds; ++i) proc_close(fds[i]);
    return false;
  }
  // A bank larger than its file would fault the device (SIGBUS) at the first access past the
  // end: refuse the message, naming the bank.
  uint32_t fd_i = 0;
  for (uint32_t i = 0; i < msg.n; ++i) {
    const wire::BankEntry& e = msg.entries[i];
    if (e.op != wire::kBankOpen) continue;
    uint64_t file_bytes = 0;
    const bool sized = proc_fd_size(fds[fd_i++], &file_bytes);
    if (!sized || file_bytes < e.size) {
      say(sized ? "refused a bank larger than its file" : "cannot fstat the memfd of", e.bank);
      for (uint32_t k = 0; k < n_fds; ++k) proc_close(fds[k]);
      return false;
    }
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

bool host_gone(int sock) { return proc_peer_gone(sock); }

// The scheduler can leave this thread on the host thread's CPU with another CPU idle (it places
// a woken thread by its waker): the two then take turns on that CPU at every call's start and
// end (1B decode on a 2-vCPU VM: to and from the device ~13 us each instead of 3-4 us, p50). At
// a call's start this thread moves off the CPU the host saw the last call end on, if it is on
// it; the pair then stays apart for many calls.
void keep_apart(Device& d) {
  const int32_t host = __atomic_load_n(&d.ctl->host_cpu, __ATOMIC_RELAXED);
  if (host < 0 || host != proc_current_cpu()) return;
  if (!proc_move_off_cpu(host)) d.keep_apart = false;  // it cannot (one CPU allowed): stop trying
}

// A host asleep near a call's end takes tens of us to wake on a VM (55-85 us p50 measured), more
// than the batch's last short ops: the host names the first op of that tail and is woken as it
// starts, so its wake-up overlaps them and it is polling when the batch ends.
void wake_host_at(void* arg, uint32_t op) {
  wire::Control* c = static_cast<Device*>(arg)->ctl;
  if (op == __atomic_load_n(&c->wake_op, __ATOMIC_RELAXED) && __atomic_load_n(&c->host_sleeping, __ATOMIC_SEQ_CST) != 0)
    proc_futex_wake_shared(&c->done, 1);
}

// Returns the new doorbell value, or its old value when the host went away.
uint32_t wait_doorbell(Device& d, uint32_t last) {
  uint32_t* bell = &d.ctl->doorbell;
  const uint64_t t0 = now_ns();
  for (uint32_t spins = 1; __atomic_load_n(bell, __ATOMIC_ACQUIRE) == last && now_ns() - t0 < d.idle_spin_ns; ++spins) {
    if (spins % wire::kPollsPerYield == 0) platform_yield();
    else platform_pause();
  }
  while (__atomic_load_n(bell, __ATOMIC_ACQUIRE) == last) {
    __atomic_store_n(&d.ctl->device_sleeping, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(bell, __ATOMIC_SEQ_CST) == last) proc_futex_wait_shared(bell, last, kIdleSleepNs);
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
    if (d.keep_apart) keep_apart(d);
    const uint32_t cmd = __atomic_load_n(&d.ctl->command, __ATOMIC_ACQUIRE);
    if (cmd == wire::kCmdExit) return;
    uint32_t ran = 0;
    const htp_status st = cmd == wire::kCmdRun ? run_call(d, &ran) : HTP_ERR_BAD_BATCH;
    __atomic_store_n(&d.ctl->status, (uint32_t)st, __ATOMIC_RELAXED);
    __atomic_store_n(&d.ctl->batch_ran, ran, __ATOMIC_RELAXED);
    __atomic_store_n(&d.ctl->done, bell, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&d.ctl->host_sleeping, __ATOMIC_SEQ_CST) != 0) proc_futex_wake_shared(&d.ctl->done, 1);
  }
}

bool reply(int sock, uint32_t status, const htp_hwinfo* hw) {
  wire::HelloReply r;
  htp_memset(&r, 0, sizeof r);
  r.magic = wire::kReplyMagic;
  r.status = status;
  r.abi_version = HTP_ABI_VERSION;
  r.wire_version = wire::kWireVersion;
  if (hw != nullptr) r.hwinfo = *hw;
  return proc_send(sock, &r, sizeof r) == (int64_t)sizeof r;
}

// Hello, the first banks, the control block, the session. Returns false when the device
// should exit (a reply has been sent where one could be).
bool start(Device& d) {
  wire::Hello h;
  htp_memset(&h, 0, sizeof h);
  uint32_t n_fds = 0;
  bool truncated = false;
  const int64_t got = proc_recv(d.sock, &h, sizeof h, nullptr, 0, &n_fds, true, &truncated);
  if (got != (int64_t)sizeof h || h.magic != wire::kHelloMagic) {
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
  c.mdev_idx = h.mdev_idx;
  c.mdev_count = h.mdev_count == 0 ? 1 : h.mdev_count;  // 0: a host that names no group
  d.idle_spin_ns = c.mdev_count == 1 ? kIdleSpinNs : 0;
  d.keep_apart = c.mdev_count == 1 && proc_current_cpu() >= 0;
  const htp_status st = htp_session_open(&c, &d.session);
  if (st != HTP_OK) {
    reply(d.sock, st, nullptr);
    return false;
  }
  htp_session_on_op_start(d.session, wake_host_at, &d);
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
  proc_close(d.sock);
}

// A plain decimal, or -1.
int parse_fd(const char* s) {
  int v = 0;
  if (*s == '\0') return -1;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || v > 100000) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

bool str_eq(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

}  // namespace

// C linkage: a freestanding compiler gives main no special treatment (it would be mangled),
// and the Hexagon _start calls it by this name.
extern "C" int main(int argc, char** argv) {
  int fd = -1;
  if (argc == 3 && str_eq(argv[1], "--socket-fd")) fd = parse_fd(argv[2]);
  if (fd < 0) {
    const char* usage =
        "usage: hexllm-htp --socket-fd N\n"
        "The HTP device process. The hexllm host starts it (--htp-transport process); it is not run by hand.\n";
    proc_write_stderr(usage, str_len(usage));
    return 2;
  }
  // Hold none of the host's other descriptors: the host must see our socket end close when we go.
  // SIGPIPE cannot come: every send is MSG_NOSIGNAL.
  proc_close_others(fd);

  Device d;
  d.sock = fd;
  const bool ok = start(d);
  if (ok) serve(d);
  shutdown(d);
  return ok ? 0 : 1;
}
