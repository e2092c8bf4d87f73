// The device as its own process: hexllm-htp, started per session. The host keeps the pool;
// the device gets each bank's memfd (SCM_RIGHTS) and maps only what the window plan says. One
// call per batch through the control block (transport_wire.h). A device that dies or stops
// making progress is found within one wait slice (kWaitSlice) or --htp-timeout, reaped, and
// reported as a DeviceFault; restart() starts a fresh process over the same pool.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "htp-host/transport.h"
#include "htp-host/transport_wire.h"
#include "htp/platform/platform.h"

extern char** environ;

namespace hexllm::htp_host {

namespace {

// How long the host waits in the futex before it looks at the device process again: the
// bound on how late a death is noticed.
constexpr uint64_t kWaitSlice = 20'000'000;  // ns
// How long the host polls `done` before it sleeps. Short: a spinning host thread takes a core
// from the device's workers, which on an oversubscribed machine slows the call it waits for
// (tests/htp-host/call_overhead.cpp measures it).
constexpr uint64_t kSpin = 2'000;                       // ns
// With a hint of the device time (expect_device_ns), the host wakes this long before the
// expected end and polls, yielding, for at most kPollLate: a futex wake-up took 50-130 us
// (p25-p75) on a loaded 2-vCPU VM, and polling the end took 3-6 us. The device time of one
// decode batch varies by milliseconds from call to call there, so with the last call's op
// times the host re-estimates the end from the ops done so far each time it wakes, sleeping
// three quarters of what is left each time (about four wake-ups per call). A long op running
// late can outlast the poll: the device also wakes a sleeping host as the planned last
// kWakeEarly starts (Control::wake_op).
constexpr uint64_t kWakeEarly = 300'000;                // ns
constexpr uint64_t kPollLate = 1'000'000;               // ns
constexpr int kHandshakeMs = 20'000;                    // a device that does not answer hello
constexpr int kExitMs = 2'000;                          // grace for a clean exit before SIGKILL

std::atomic<uint32_t> g_sessions{0};

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return strprintf("killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return strprintf("exited with status %d", WEXITSTATUS(status));
  return strprintf("stopped (wait status %#x)", status);
}

// The response area of a batch message when its header places it in bounds.
// Device `device` of a group writes the response at its own place.
htp_response* response_of(uint8_t* msg, size_t bytes, uint32_t device) {
  htp_batch_header h;
  if (bytes < sizeof h) return nullptr;
  std::memcpy(&h, msg, sizeof h);
  const uint64_t at = h.response_offset + static_cast<uint64_t>(device) * h.response_stride;
  if (at % 8 != 0 || bytes < sizeof(htp_response) || at > bytes - sizeof(htp_response)) return nullptr;
  return reinterpret_cast<htp_response*>(msg + at);
}

class ProcessTransport final : public Transport {
 public:
  ProcessTransport(Pool& pool, const SessionOptions& opts, bool await_device)
      : pool_(pool), opts_(opts), command_(device_command(opts.target, opts.device_path)), binary_(command_.back()), id_(++g_sessions),
        window_(opts.window_bytes) {
    control_buf_ = pool_.allocate(Region::Messages, sizeof(wire::Control));
    ctl_ = static_cast<wire::Control*>(control_buf_->data());
    if (!pool_.locate(ctl_, sizeof(wire::Control), &control_bank_, &control_offset_))
      fail("HTP process session: the control block is not in the pool");
    begin_start();
    if (await_device) await_started();
  }

  ~ProcessTransport() override { stop(); }

  const char* name() const override { return "process"; }
  std::string session() const override { return strprintf("process session %u (pid %d)", id_, pid_); }
  const htp_hwinfo& hwinfo() const override { return hwinfo_; }
  const Window& window() const override { return window_; }
  int device_pid() const override { return alive_ ? pid_ : 0; }

  htp_status call(void* message, size_t bytes) override;
  void expect_device_ns(uint64_t ns, std::span<const uint64_t> op_ns) override {
    expect_ns_ = ns;
    expect_op_ns_.assign(op_ns.begin(), op_ns.end());
  }

  bool restart() override {
    stop();
    begin_start();
    await_started();
    return true;
  }

  void await_started() override;
  void request_stop() override;

 private:
  // Spawns the device and sends the handshake; await_started() takes the answer.
  void begin_start();
  void stop();
  void spawn();
  void send_hello();
  void take_reply();
  uint32_t send_bank_updates();
  htp_status wait_done(uint32_t seq, uint8_t* message, size_t bytes);
  // Reaps the device if it has exited (or waits for it with `block`); true once reaped.
  bool reap(bool block);
  [[noreturn]] void fault(const std::string& what, uint32_t op_in_flight);

  Pool& pool_;
  SessionOptions opts_;
  std::vector<std::string> command_;  // {binary} or {emulator, binary}
  std::string binary_;
  uint32_t id_;
  std::unique_ptr<backend::Buffer> control_buf_;
  wire::Control* ctl_ = nullptr;
  uint32_t control_bank_ = 0, control_offset_ = 0;
  Window window_;
  htp_hwinfo hwinfo_{};
  pid_t pid_ = 0;
  int sock_ = -1;
  bool alive_ = false;      // spawned and not yet reaped
  bool exit_requested_ = false;
  std::string down_reason_;  // why the session is down, for calls after a fault
  uint32_t seq_ = 0;
  uint64_t expect_ns_ = 0;  // the next call's expected device time, 0 when unknown
  std::vector<uint64_t> expect_op_ns_;  // and its ops' times, empty when unknown
  std::array<uint64_t, HTP_MAX_BANKS> device_serial_{};  // the bank each device slot holds an fd of
  std::vector<WindowStep> steps_;
};

void ProcessTransport::begin_start() {
  std::memset(ctl_, 0, sizeof(wire::Control));
  ctl_->host_cpu = -1;
  seq_ = 0;
  device_serial_.fill(0);
  window_.forget();
  down_reason_.clear();
  exit_requested_ = false;
  spawn();
  try {
    send_hello();
  } catch (...) {
    stop();
    throw;
  }
}

void ProcessTransport::await_started() {
  try {
    take_reply();
  } catch (...) {
    stop();
    throw;
  }
}

void ProcessTransport::spawn() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    fail("HTP process session: socketpair failed: %s", std::strerror(errno));
  if (sv[1] == wire::kDeviceFd) {
    // dup2 onto itself would keep close-on-exec set: move it out of the way first.
    const int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, wire::kDeviceFd + 1);
    const int err = errno;
    ::close(sv[1]);
    if (moved < 0) {
      ::close(sv[0]);
      fail("HTP process session: cannot move the device socket off fd %d: %s", wire::kDeviceFd, std::strerror(err));
    }
    sv[1] = moved;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], wire::kDeviceFd);
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const std::string fd_arg = std::to_string(wire::kDeviceFd);
  std::vector<char*> argv;
  for (const std::string& a : command_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(const_cast<char*>("--socket-fd"));
  argv.push_back(const_cast<char*>(fd_arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, command_[0].c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    fail("HTP process session: cannot start the device '%s': %s", command_[0].c_str(), std::strerror(rc));
  }
  pid_ = pid;
  sock_ = sv[0];
  alive_ = true;
}

void ProcessTransport::send_hello() {
  wire::Hello hello{};
  hello.magic = wire::kHelloMagic;
  hello.abi_version = HTP_ABI_VERSION;
  hello.wire_version = wire::kWireVersion;
  hello.n_threads = opts_.n_threads;
  hello.vtcm_size = opts_.vtcm_bytes;
  hello.dma_mode = opts_.dma_mode;
  hello.window_size = opts_.window_bytes;
  hello.control_bank = control_bank_;
  hello.control_offset = control_offset_;
  hello.mdev_idx = opts_.mdev_idx;
  hello.mdev_count = opts_.n_devices;
  if (::send(sock_, &hello, sizeof hello, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof hello))
    fail("HTP %s: cannot send the handshake: %s", session().c_str(), std::strerror(errno));
  // Every live bank, the control block's among them, before the device replies.
  send_bank_updates();
}

void ProcessTransport::take_reply() {
  pollfd p{sock_, POLLIN, 0};
  int n = 0;
  do n = ::poll(&p, 1, kHandshakeMs);
  while (n < 0 && errno == EINTR);
  wire::HelloReply reply{};
  const ssize_t got = n > 0 ? ::recv(sock_, &reply, sizeof reply, 0) : -1;
  if (got != static_cast<ssize_t>(sizeof reply) || reply.magic != wire::kReplyMagic) {
    std::string why = n == 0 ? strprintf("no answer within %d ms", kHandshakeMs) : "no valid answer";
    ::kill(pid_, SIGKILL);
    if (reap(true)) why += "; the device " + down_reason_;
    fail("HTP %s: the device '%s' failed the handshake: %s", session().c_str(), binary_.c_str(), why.c_str());
  }
  if (reply.status == HTP_ERR_ABI_VERSION)
    fail("HTP %s: the device '%s' speaks ABI %u / wire %u, this host ABI %u / wire %u: rebuild both together",
         session().c_str(), binary_.c_str(), reply.abi_version, reply.wire_version, HTP_ABI_VERSION, wire::kWireVersion);
  if (reply.status != HTP_OK)
    fail("HTP %s: the device could not open the session (%u threads, VTCM %u bytes, DMA mode %u, window %llu bytes): %s",
         session().c_str(), opts_.n_threads, opts_.vtcm_bytes, opts_.dma_mode,
         static_cast<unsigned long long>(opts_.window_bytes), htp_status_name(reply.status));
  hwinfo_ = reply.hwinfo;
}

uint32_t ProcessTransport::send_bank_updates() {
  wire::Banks msg{};
  msg.magic = wire::kBanksMagic;
  int fds[HTP_MAX_BANKS];
  uint32_t n_fds = 0;
  const std::vector<Bank>& banks = pool_.banks();
  for (uint32_t i = 0; i < HTP_MAX_BANKS; ++i) {
    const bool live = i < banks.size() && banks[i].base != nullptr;
    const uint64_t serial = live ? banks[i].serial : 0;
    if (serial == device_serial_[i]) continue;
    wire::BankEntry& e = msg.entries[msg.n++];
    e.bank = i;
    if (live) {
      e.op = wire::kBankOpen;
      e.size = banks[i].size;
      e.flags = banks[i].region == Region::Weights ? wire::kBankWeights : 0u;
      fds[n_fds++] = banks[i].fd;
    } else {
      e.op = wire::kBankClose;
    }
    device_serial_[i] = serial;
  }
  if (msg.n == 0) return 0;

  const size_t len = offsetof(wire::Banks, entries) + msg.n * sizeof(wire::BankEntry);
  const ssize_t sent = wire::send_with_fds(sock_, &msg, len, fds, n_fds);
  if (sent != static_cast<ssize_t>(len)) {
    // The socket breaks when the device exits: give the exit a moment to become visible.
    const int err = errno;
    for (int i = 0; i < 50 && !reap(false); ++i) {
      timespec ts{0, 20000000};
      ::nanosleep(&ts, nullptr);
    }
    if (!alive_) fault("died (" + down_reason_ + ")", HTP_NO_INDEX);
    fault(strprintf("broke the connection (sending pool banks: %s)", std::strerror(err)), HTP_NO_INDEX);
  }
  return 1;
}

htp_status ProcessTransport::call(void* message, size_t bytes) {
  if (!alive_) throw DeviceFault(strprintf("HTP %s is down (%s)", session().c_str(), down_reason_.c_str()), HTP_NO_INDEX);
  uint32_t msg_bank = 0, msg_offset = 0;
  if (!pool_.locate(message, bytes, &msg_bank, &msg_offset) || pool_.banks()[msg_bank].region != Region::Messages)
    fail("HTP %s: a batch message must lie in the pool's message region", session().c_str());
  auto* msg = static_cast<uint8_t*>(message);

  steps_.clear();
  window_.plan(pool_, message_banks(message, bytes) | 1u << msg_bank, &steps_);
  const uint32_t n_bank_msgs = send_bank_updates();

  ctl_->command = wire::kCmdRun;
  ctl_->n_bank_msgs = n_bank_msgs;
  ctl_->message_bank = msg_bank;
  ctl_->message_offset = msg_offset;
  ctl_->message_size = bytes;
  ctl_->n_steps = static_cast<uint32_t>(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) ctl_->steps[i] = {steps_[i].bank, steps_[i].map};
  ctl_->wake_op = expect_ns_ != 0 ? wire::tail_start(expect_op_ns_, kWakeEarly) : HTP_NO_INDEX;
  // The response's seq shows that the batch started, its op counter progress and the op in
  // flight; both are cleared so that a stale response cannot pass for this call's.
  if (htp_response* rsp = response_of(msg, bytes, opts_.mdev_idx)) {
    __atomic_store_n(&rsp->seq, uint64_t{0}, __ATOMIC_RELAXED);
    __atomic_store_n(&rsp->n_ops_done, 0u, __ATOMIC_RELAXED);
  }

  const uint32_t seq = ++seq_;
  __atomic_store_n(&ctl_->doorbell, seq, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&ctl_->device_sleeping, __ATOMIC_SEQ_CST) != 0) wire::futex_wake(&ctl_->doorbell);
  const htp_status st = wait_done(seq, msg, bytes);
  __atomic_store_n(&ctl_->host_cpu, sched_getcpu(), __ATOMIC_RELAXED);  // the device keeps off it
  return st;
}

htp_status ProcessTransport::wait_done(uint32_t seq, uint8_t* msg, size_t bytes) {
  auto finished = [&] { return __atomic_load_n(&ctl_->done, __ATOMIC_ACQUIRE) == seq; };
  const uint64_t start = now_ns();
  while (!finished() && now_ns() - start < kSpin) {
  }

  const htp_response* rsp = response_of(msg, bytes, opts_.mdev_idx);
  uint64_t seq_want = 0;
  if (rsp != nullptr) std::memcpy(&seq_want, msg + offsetof(htp_batch_header, seq), sizeof seq_want);
  auto op_in_flight = [&] {
    if (rsp == nullptr || __atomic_load_n(&rsp->seq, __ATOMIC_RELAXED) != seq_want) return HTP_NO_INDEX;
    return __atomic_load_n(&rsp->n_ops_done, __ATOMIC_RELAXED);
  };

  uint32_t last_ops = op_in_flight();
  uint64_t last_progress = now_ns();
  const uint64_t timeout_ns = static_cast<uint64_t>(opts_.timeout_s * 1e9);
  // The hinted end, re-estimated at every wake-up from the ops done so far. The per-op times
  // are used only when they describe this batch and its response has room for them.
  const uint64_t expect = expect_ns_;
  expect_ns_ = 0;
  const uint64_t* op_ns_now = nullptr;
  if (rsp != nullptr && !expect_op_ns_.empty()) {
    const auto* ops_at = reinterpret_cast<const uint8_t*>(rsp + 1);
    if (ops_at + expect_op_ns_.size() * sizeof(uint64_t) <= msg + bytes) op_ns_now = reinterpret_cast<const uint64_t*>(ops_at);
  }
  auto expected_end = [&](uint64_t now) {
    int64_t drift = 0;  // how much later than last time the ops done so far ended
    uint64_t planned = 0;  // the op in flight's end as planned
    const uint32_t done = op_ns_now != nullptr ? op_in_flight() : HTP_NO_INDEX;
    if (done != HTP_NO_INDEX && done < expect_op_ns_.size()) {
      for (uint32_t i = 0; i < done; ++i)
        drift += static_cast<int64_t>(__atomic_load_n(&op_ns_now[i], __ATOMIC_RELAXED)) - static_cast<int64_t>(expect_op_ns_[i]);
      for (uint32_t i = 0; i <= done; ++i) planned += expect_op_ns_[i];
    }
    const uint64_t end = static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(start + expect) + drift));
    // An op running past its planned end moves the rest as late.
    const uint64_t op_end = static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(start + planned) + drift));
    return planned != 0 && now > op_end ? end + (now - op_end) : end;
  };
  uint64_t polled = 0;  // ns spent polling: at most kPollLate per call
  while (!finished()) {
    uint64_t slice = kWaitSlice;
    if (expect != 0 && polled < kPollLate) {
      const uint64_t now = now_ns();
      const uint64_t end = expected_end(now);
      if (now + kWakeEarly >= end) {
        const uint64_t poll_until = now + (kPollLate - polled);
        for (uint32_t i = 1; !finished() && now_ns() < poll_until; ++i) {
          if (i % wire::kPollsPerYield == 0) htp::platform_yield();  // a device thread waiting for this core runs
          else htp::platform_pause();
        }
        polled += now_ns() - now;
        continue;
      }
      const uint64_t lead = end - now;
      slice = std::min(slice, lead - std::max(kWakeEarly, lead / 4));
    }
    const uint32_t seen = __atomic_load_n(&ctl_->done, __ATOMIC_SEQ_CST);
    __atomic_store_n(&ctl_->host_sleeping, 1u, __ATOMIC_SEQ_CST);
    if (!finished()) wire::futex_wait(&ctl_->done, seen, slice);
    __atomic_store_n(&ctl_->host_sleeping, 0u, __ATOMIC_SEQ_CST);
    if (finished()) break;
    if (reap(false)) fault("died (" + down_reason_ + ")", op_in_flight());
    const uint32_t ops = op_in_flight();
    const uint64_t now = now_ns();
    if (ops != last_ops) {
      last_ops = ops;
      last_progress = now;
    } else if (timeout_ns != 0 && now - last_progress > timeout_ns) {
      ::kill(pid_, SIGKILL);
      reap(true);
      down_reason_ = strprintf("hung: no op finished within %.3g s (--htp-timeout), killed", opts_.timeout_s);
      fault(down_reason_, ops);
    }
  }
  const uint32_t status = __atomic_load_n(&ctl_->status, __ATOMIC_RELAXED);
  if (__atomic_load_n(&ctl_->batch_ran, __ATOMIC_RELAXED) == 0) window_.forget();  // the device emptied its window
  return static_cast<htp_status>(status);
}

bool ProcessTransport::reap(bool block) {
  if (!alive_) return true;
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  alive_ = false;
  down_reason_ = r == pid_ ? describe_wait_status(status) : strprintf("lost: waitpid failed: %s", std::strerror(errno));
  return true;
}

void ProcessTransport::fault(const std::string& what, uint32_t op_in_flight) {
  if (alive_) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
  throw DeviceFault(strprintf("HTP %s %s", session().c_str(), what.c_str()), op_in_flight);
}

void ProcessTransport::request_stop() {
  if (!alive_ || exit_requested_) return;
  __atomic_store_n(&ctl_->command, static_cast<uint32_t>(wire::kCmdExit), __ATOMIC_RELAXED);
  __atomic_store_n(&ctl_->doorbell, ++seq_, __ATOMIC_SEQ_CST);
  wire::futex_wake(&ctl_->doorbell);
  exit_requested_ = true;
}

void ProcessTransport::stop() {
  if (alive_) {
    request_stop();
    // A pidfd turns readable the moment the device exits; without one (kernels before 5.3),
    // look every millisecond.
    // The syscall itself: Debian 12's <sys/pidfd.h> (glibc 2.36) declares pidfd_open without C linkage.
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    const uint64_t deadline = now_ns() + static_cast<uint64_t>(kExitMs) * 1000000u;
    while (!reap(false) && now_ns() < deadline) {
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>((deadline - std::min(deadline, now_ns())) / 1000000u) + 1);
      } else {
        timespec ts{0, 1000000};
        ::nanosleep(&ts, nullptr);
      }
    }
    if (pidfd >= 0) ::close(pidfd);
    if (alive_) {
      ::kill(pid_, SIGKILL);
      reap(true);
    }
  }
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
}

}  // namespace

std::unique_ptr<Transport> make_process_transport(Pool& pool, const SessionOptions& opts, bool await_device) {
  return std::make_unique<ProcessTransport>(pool, opts, await_device);
}

}  // namespace hexllm::htp_host
