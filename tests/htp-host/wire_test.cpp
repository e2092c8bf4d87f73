// hexllm-htp spoken to directly over its wire (src/htp-host/transport_wire.h), as a broken or
// hostile host would: version mismatches are refused at hello, and garbage in the control block
// or the bank messages gets a status back while the device keeps serving.
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "htp-host/batch_builder.h"
#include "htp-host/pool.h"
#include "htp-host/transport_wire.h"

extern char** environ;

namespace hexllm::htp_host {
namespace {

class RawDevice {
 public:
  RawDevice() : pool_(small()) {
    ctl_buf_ = pool_.allocate(Region::Messages, sizeof(wire::Control));
    msg_buf_ = pool_.allocate(Region::Messages, 4096);
    ctl_ = static_cast<wire::Control*>(ctl_buf_->data());
    EXPECT_TRUE(pool_.locate(ctl_, sizeof *ctl_, &ctl_bank_, &ctl_offset_));
    EXPECT_TRUE(pool_.locate(msg_buf_->data(), 4096, &msg_bank_, &msg_offset_));
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], wire::kDeviceFd);
    char* argv[] = {const_cast<char*>(HEXLLM_TEST_HTP_DEVICE), const_cast<char*>("--socket-fd"),
                    const_cast<char*>("3"), nullptr};
    EXPECT_EQ(::posix_spawn(&pid_, HEXLLM_TEST_HTP_DEVICE, &fa, nullptr, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(sv[1]);
    sock_ = sv[0];
  }
  ~RawDevice() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (sock_ >= 0) ::close(sock_);
  }

  static Pool::BankSizes small() {
    Pool::BankSizes s;
    s.compute = s.cache = s.messages = 1u << 20;
    return s;
  }

  wire::Hello hello() const {
    wire::Hello h{};
    h.magic = wire::kHelloMagic;
    h.abi_version = HTP_ABI_VERSION;
    h.wire_version = wire::kWireVersion;
    h.n_threads = 1;
    h.vtcm_size = 1u << 20;
    h.dma_mode = HTP_DMA_ZERO_COPY;
    h.window_size = 64u << 20;
    h.control_bank = ctl_bank_;
    h.control_offset = ctl_offset_;
    return h;
  }
  void send_raw(const void* p, size_t n) { ASSERT_EQ(::send(sock_, p, n, MSG_NOSIGNAL), static_cast<ssize_t>(n)); }
  // A Banks message with the given entries; `with_fds` attaches the memfd of every open entry.
  void send_banks(const wire::Banks& msg, bool with_fds) {
    int fds[HTP_MAX_BANKS];
    uint32_t n_fds = 0;
    for (uint32_t i = 0; with_fds && i < msg.n; ++i)
      if (msg.entries[i].op == wire::kBankOpen) fds[n_fds++] = pool_.banks()[msg.entries[i].bank].fd;
    ASSERT_EQ(wire::send_with_fds(sock_, &msg, sizeof msg, fds, n_fds), static_cast<ssize_t>(sizeof msg));
  }
  wire::Banks all_banks() const {
    wire::Banks msg{};
    msg.magic = wire::kBanksMagic;
    for (uint32_t i = 0; i < pool_.banks().size(); ++i) msg.entries[msg.n++] = {i, wire::kBankOpen, pool_.banks()[i].size, 0, 0};
    return msg;
  }
  wire::HelloReply reply() {
    wire::HelloReply r{};
    EXPECT_EQ(::recv(sock_, &r, sizeof r, 0), static_cast<ssize_t>(sizeof r));
    return r;
  }
  void handshake() {
    const wire::Hello h = hello();
    send_raw(&h, sizeof h);
    send_banks(all_banks(), true);
    const wire::HelloReply r = reply();
    ASSERT_EQ(r.magic, wire::kReplyMagic);
    ASSERT_EQ(r.status, HTP_OK);
  }
  // The device's exit status (blocks until it exits).
  int wait_exit() {
    int status = 0;
    EXPECT_EQ(::waitpid(pid_, &status, 0), pid_);
    pid_ = 0;
    return status;
  }

  // Rings with the control block as the caller left it; returns the device's status.
  uint32_t ring() {
    const uint32_t seq = ++seq_;
    __atomic_store_n(&ctl_->doorbell, seq, __ATOMIC_SEQ_CST);
    wire::futex_wake(&ctl_->doorbell);
    while (__atomic_load_n(&ctl_->done, __ATOMIC_ACQUIRE) != seq) {
      wire::futex_wait(&ctl_->done, seq - 1, 1000000);
      int st = 0;
      if (__atomic_load_n(&ctl_->done, __ATOMIC_ACQUIRE) != seq && ::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        ADD_FAILURE() << "the device died (wait status " << st << ")";
        return ~0u;
      }
    }
    return ctl_->status;
  }
  // A valid empty batch, mapping the message bank first.
  void set_valid_call() {
    BatchBuilder empty;
    htp_message_layout l{};
    ASSERT_TRUE(empty.layout(&l));
    empty.write(msg_buf_->data(), seq_ + 1, l);
    ctl_->command = wire::kCmdRun;
    ctl_->n_bank_msgs = 0;
    ctl_->message_bank = msg_bank_;
    ctl_->message_offset = msg_offset_;
    ctl_->message_size = l.message_size;
    ctl_->n_steps = 1;
    ctl_->steps[0] = {static_cast<uint16_t>(msg_bank_), 1};
  }
  void expect_serving() {
    set_valid_call();
    EXPECT_EQ(ring(), HTP_OK);
    EXPECT_EQ(ctl_->batch_ran, 1u);
  }

  Pool pool_;
  std::unique_ptr<backend::Buffer> ctl_buf_, msg_buf_;
  wire::Control* ctl_ = nullptr;
  uint32_t ctl_bank_ = 0, ctl_offset_ = 0, msg_bank_ = 0, msg_offset_ = 0;
  pid_t pid_ = 0;
  int sock_ = -1;
  uint32_t seq_ = 0;
};

TEST(HtpWire, AnAbiMismatchIsRefusedAtHello) {
  RawDevice d;
  wire::Hello h = d.hello();
  h.abi_version = HTP_ABI_VERSION + 1;
  d.send_raw(&h, sizeof h);
  const wire::HelloReply r = d.reply();
  EXPECT_EQ(r.magic, wire::kReplyMagic);
  EXPECT_EQ(r.status, HTP_ERR_ABI_VERSION);
  EXPECT_EQ(r.abi_version, HTP_ABI_VERSION);  // the device says which it speaks
  const int st = d.wait_exit();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << st;
}

TEST(HtpWire, AWireVersionMismatchIsRefusedAtHello) {
  RawDevice d;
  wire::Hello h = d.hello();
  h.wire_version = wire::kWireVersion + 1;
  d.send_raw(&h, sizeof h);
  EXPECT_EQ(d.reply().status, HTP_ERR_ABI_VERSION);
  d.wait_exit();
}

TEST(HtpWire, AGarbageHelloIsRefused) {
  RawDevice d;
  const uint64_t junk = 0x1234;
  d.send_raw(&junk, sizeof junk);
  EXPECT_EQ(d.reply().status, HTP_ERR_BAD_BATCH);
  const int st = d.wait_exit();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << st;
}

TEST(HtpWire, AControlBlockOutsideItsBankIsRefused) {
  RawDevice d;
  wire::Hello h = d.hello();
  h.control_offset = 0xfffffc0u;
  d.send_raw(&h, sizeof h);
  d.send_banks(d.all_banks(), true);
  EXPECT_EQ(d.reply().status, HTP_ERR_BAD_BATCH);
  d.wait_exit();
}

TEST(HtpWire, TheControlBlockIsNeverTrusted) {
  RawDevice d;
  d.handshake();
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->n_steps = 1000;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  EXPECT_EQ(d.ctl_->batch_ran, 0u);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->steps[0].bank = 40;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->steps[0].bank = 9;  // no memfd there
  EXPECT_EQ(d.ring(), HTP_ERR_OUT_OF_WINDOW);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->message_bank = 40;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->message_offset = 0xfffff000u;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->message_size = 1ull << 40;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->command = 77;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->n_bank_msgs = 100;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;  // announced, never sent: refused, not waited for
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();
  EXPECT_EQ(::kill(d.pid_, 0), 0);
}

TEST(HtpWire, BadBankMessagesAreRefused) {
  RawDevice d;
  d.handshake();
  auto* extra = d.pool_.allocate(Region::Compute, 1000).release();  // bank 1, not yet on the device
  std::unique_ptr<backend::Buffer> keep(extra);

  wire::Banks bad = d.all_banks();
  bad.magic = 0;
  d.send_banks(bad, true);
  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  wire::Banks no_fd{};
  no_fd.magic = wire::kBanksMagic;
  no_fd.entries[no_fd.n++] = {1, wire::kBankOpen, d.pool_.banks()[1].size, 0, 0};
  d.send_banks(no_fd, false);  // an open without its memfd
  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  wire::Banks close_ctl{};
  close_ctl.magic = wire::kBanksMagic;
  close_ctl.entries[close_ctl.n++] = {d.ctl_bank_, wire::kBankClose, 0, 0, 0};
  d.send_banks(close_ctl, false);  // the control block's bank cannot go
  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  d.expect_serving();

  d.send_banks(no_fd, true);  // now properly: bank 1 arrives and can be mapped
  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;
  d.ctl_->n_steps = 2;
  d.ctl_->steps[1] = {1, 1};
  EXPECT_EQ(d.ring(), HTP_OK);
}

// A bank announced larger than its memfd would raise SIGBUS in the device at the first access
// past the file's end; the device checks the file size and refuses the message instead.
TEST(HtpWire, ABankLargerThanItsFileIsRefused) {
  RawDevice d;
  d.handshake();
  std::unique_ptr<backend::Buffer> extra = d.pool_.allocate(Region::Compute, 1000);  // bank 1
  const uint64_t real = d.pool_.banks()[1].size;

  wire::Banks big{};
  big.magic = wire::kBanksMagic;
  big.entries[big.n++] = {1, wire::kBankOpen, real + (1u << 20), 0, 0};
  d.send_banks(big, true);
  d.set_valid_call();
  d.ctl_->n_bank_msgs = 1;
  d.ctl_->n_steps = 2;
  d.ctl_->steps[1] = {1, 1};
  d.ctl_->message_bank = 1;  // a message past the file's end
  d.ctl_->message_offset = static_cast<uint32_t>(real);
  EXPECT_EQ(d.ring(), HTP_ERR_BAD_BATCH);
  ASSERT_GT(d.pid_, 0);
  d.expect_serving();
}

TEST(HtpWire, TheDeviceExitsOnCommandOrWhenTheHostGoes) {
  {
    RawDevice d;
    d.handshake();
    d.ctl_->command = wire::kCmdExit;
    __atomic_store_n(&d.ctl_->doorbell, 1u, __ATOMIC_SEQ_CST);
    wire::futex_wake(&d.ctl_->doorbell);
    const int st = d.wait_exit();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
  {
    RawDevice d;
    d.handshake();
    ::close(d.sock_);  // the host vanishes without a word
    d.sock_ = -1;
    const int st = d.wait_exit();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
}

// The op whose start wakes a sleeping host: the first of the batch's last `lead` ns.
TEST(HtpWire, TailStartIsTheFirstOpOfTheLastLead) {
  const std::vector<uint64_t> ops = {5000, 100, 11000, 90, 60};  // ns
  EXPECT_EQ(wire::tail_start(ops, 150), 3u);  // 90 + 60 fits exactly
  EXPECT_EQ(wire::tail_start(ops, 149), 4u);
  EXPECT_EQ(wire::tail_start(ops, 59), HTP_NO_INDEX);  // the last op alone is longer
  EXPECT_EQ(wire::tail_start(ops, 10999), 3u);
  EXPECT_EQ(wire::tail_start(ops, 11150), 2u);
  EXPECT_EQ(wire::tail_start(ops, 1u << 30), 0u);
  EXPECT_EQ(wire::tail_start({}, 1000), HTP_NO_INDEX);
}

}  // namespace
}  // namespace hexllm::htp_host
