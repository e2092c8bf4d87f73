// The process transport against a real hexllm-htp: handshake, batches with hand-computed
// results, malformed batches answered with a status while the device keeps serving, banks
// created and released after start, a dead or hung device reported and restarted, and a
// clean shutdown (no process, zombie or descriptor left behind).
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "htp-host/batch_builder.h"
#include "htp-host/transport.h"
#include "htp/abi/binary_params.h"
#include "htp/vec/vec.h"

namespace hexllm::htp_host {
namespace {

// Descriptors open in process `pid` ("self" for ours), and how many are pool memfds.
struct FdCount {
  int all = 0, memfds = 0;
};
FdCount count_fds(const std::string& pid) {
  FdCount n;
  const std::string dir = "/proc/" + pid + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return n;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++n.all;
    char target[256] = {};
    if (readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1) > 0 &&
        std::strstr(target, "memfd:hexllm-pool") != nullptr)
      ++n.memfds;
  }
  closedir(d);
  return n;
}

bool process_gone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

SessionOptions options() {
  SessionOptions o;
  o.n_threads = 2;
  o.vtcm_bytes = 1u << 20;
  o.window_bytes = 16u << 20;
  o.device_path = HEXLLM_TEST_HTP_DEVICE;
  o.timeout_s = 10;
  return o;
}

class HtpProcess : public ::testing::Test {
 protected:
  HtpProcess() : pool_(small()) {
    data_ = pool_.allocate(Region::Compute, 64u << 10);
    message_ = pool_.allocate(Region::Messages, 64u << 10);
    transport_ = make_process_transport(pool_, options());
  }
  static Pool::BankSizes small() {
    Pool::BankSizes s;
    s.compute = s.cache = s.messages = 256u << 10;
    return s;
  }

  float* f32(backend::Buffer& b, uint32_t offset) { return reinterpret_cast<float*>(static_cast<uint8_t*>(b.data()) + offset); }

  htp_tensor tensor(backend::Buffer& b, uint32_t offset, uint32_t n) {
    uint32_t bank = 0, base = 0;
    EXPECT_TRUE(pool_.locate(b.data(), b.size(), &bank, &base));
    htp_tensor t{};
    t.bank = static_cast<uint16_t>(bank);
    t.flags = HTP_TENSOR_COMPUTE | HTP_TENSOR_PINNED;
    t.type = HTP_TYPE_F32;
    t.offset = base + offset;
    t.ne[0] = n, t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4, t.nb[1] = t.nb[2] = t.nb[3] = 4 * n;
    t.size = 4 * n;
    return t;
  }

  // dst = a + b over `n` floats, written into message_.
  size_t add_batch(backend::Buffer& buf, uint32_t a, uint32_t b, uint32_t dst, uint32_t n, uint64_t seq = 1) {
    BatchBuilder bb;
    const htp_tensor ta = tensor(buf, a, n), tb = tensor(buf, b, n), td = tensor(buf, dst, n);
    htp_op_desc& op = bb.add_op();
    op.opcode = HTP_OP_ADD;
    htp_binary_params p{};
    EXPECT_EQ(htp_binary_params_build(td, ta, tb, transport_->hwinfo().n_threads, transport_->hwinfo().vtcm_size, &p),
              HTP_OK);
    htp_kparams_set(&op, p);
    op.src[0] = bb.add_tensor(ta);
    op.src[1] = bb.add_tensor(tb);
    op.dst = bb.add_tensor(td);
    return write(bb, seq);
  }
  size_t write(const BatchBuilder& bb, uint64_t seq) {
    htp_message_layout l{};
    EXPECT_TRUE(bb.layout(&l));
    bb.write(message_->data(), seq, l);
    return l.message_size;
  }
  htp_batch_header& header() { return *static_cast<htp_batch_header*>(message_->data()); }
  const htp_response& response() {
    return *reinterpret_cast<const htp_response*>(static_cast<uint8_t*>(message_->data()) + header().response_offset);
  }

  // 100 + i plus 1000: exact in float.
  void expect_add_works(uint64_t seq) {
    for (uint32_t i = 0; i < 40; ++i) *f32(*data_, 4 * i) = 100.0f + i, *f32(*data_, 4096 + 4 * i) = 1000.0f;
    std::memset(f32(*data_, 8192), 0, 160);
    const size_t bytes = add_batch(*data_, 0, 4096, 8192, 40, seq);
    ASSERT_EQ(transport_->call(message_->data(), bytes), HTP_OK);
    for (uint32_t i = 0; i < 40; ++i) ASSERT_EQ(*f32(*data_, 8192 + 4 * i), 1100.0f + i);
    EXPECT_EQ(response().seq, seq);
    EXPECT_EQ(response().n_ops_done, 1u);
  }

  Pool pool_;
  std::unique_ptr<backend::Buffer> data_, message_;
  std::unique_ptr<Transport> transport_;
};

TEST_F(HtpProcess, HandshakeReportsTheSession) {
  const htp_hwinfo& hw = transport_->hwinfo();
  EXPECT_EQ(hw.abi_version, HTP_ABI_VERSION);
  EXPECT_EQ(hw.n_threads, 2u);
  EXPECT_EQ(hw.vtcm_size, 1u << 20);
  EXPECT_EQ(hw.window_size, 16u << 20);
  // The device process picks its kernels on this same CPU and environment (the values are 0
  // unless that is the amx table, or the avx512 table's ymm GEMV on AMD for the GEMV unit).
  EXPECT_EQ(hw.gemm.min_pass_rows, htp::htp_vec_select().gemm_prefs.min_pass_rows);
  EXPECT_EQ(hw.gemm.bf16_min_rows, htp::htp_vec_select().gemm_prefs.bf16_min_rows);
  EXPECT_EQ(hw.gemm.gemv_unit_bytes, htp::htp_vec_select().gemm_prefs.gemv_unit_bytes);
  EXPECT_STREQ(transport_->name(), "process");
  const int pid = transport_->device_pid();
  ASSERT_GT(pid, 0);
  EXPECT_NE(pid, getpid());
  EXPECT_NE(transport_->session().find("pid " + std::to_string(pid)), std::string::npos);
}

TEST_F(HtpProcess, RunsABatchAndAnEmptyOne) {
  expect_add_works(7);
  BatchBuilder empty;
  const size_t bytes = write(empty, 8);
  EXPECT_EQ(transport_->call(message_->data(), bytes), HTP_OK);
  EXPECT_EQ(response().seq, 8u);
  EXPECT_EQ(response().n_ops_done, 0u);
  expect_add_works(9);
}

TEST_F(HtpProcess, MalformedBatchesGetAStatusAndTheDeviceKeepsServing) {
  size_t bytes = add_batch(*data_, 0, 4096, 8192, 40);
  header().magic ^= 1;
  EXPECT_EQ(transport_->call(message_->data(), bytes), HTP_ERR_BAD_BATCH);
  expect_add_works(2);

  bytes = add_batch(*data_, 0, 4096, 8192, 40);
  header().n_ops = 100000;  // ops beyond the message
  EXPECT_EQ(transport_->call(message_->data(), bytes), HTP_ERR_BAD_BATCH);
  expect_add_works(3);

  bytes = add_batch(*data_, 0, 4096, 8192, 40);
  auto* t = reinterpret_cast<htp_tensor*>(static_cast<uint8_t*>(message_->data()) + header().tensors_offset);
  t[0].offset = 0xfffff000u;  // past the end of its bank
  EXPECT_EQ(transport_->call(message_->data(), bytes), HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response().failed_tensor, 0u);
  expect_add_works(4);

  bytes = add_batch(*data_, 0, 4096, 8192, 40);
  t[1].bank = 12;  // a bank the pool never had: not in the device's window
  EXPECT_NE(transport_->call(message_->data(), bytes), HTP_OK);
  expect_add_works(5);
  EXPECT_GT(transport_->device_pid(), 0);
}

TEST_F(HtpProcess, BanksCreatedAndReleasedAfterStartReachTheDevice) {
  expect_add_works(1);
  const int pid = transport_->device_pid();
  // Larger than a compute bank: a new bank, created after the device started.
  auto big = pool_.allocate(Region::Compute, 300u << 10);
  for (uint32_t i = 0; i < 40; ++i) *f32(*big, 4 * i) = 2.0f * i, *f32(*big, 8192 + 4 * i) = -1.0f;
  size_t bytes = add_batch(*big, 0, 8192, 200000, 40, 2);
  ASSERT_EQ(transport_->call(message_->data(), bytes), HTP_OK);
  for (uint32_t i = 0; i < 40; ++i) ASSERT_EQ(*f32(*big, 200000 + 4 * i), 2.0f * i - 1.0f);

  // The device holds one memfd per live bank: compute, messages and the new one.
  EXPECT_EQ(count_fds(std::to_string(pid)).memfds, 3);
  big.reset();
  expect_add_works(3);  // the call that tells the device the bank is gone
  EXPECT_EQ(count_fds(std::to_string(pid)).memfds, 2);
}

TEST_F(HtpProcess, AMessageOutsideThePoolIsRefused) {
  std::vector<uint64_t> outside(1024);
  try {
    transport_->call(outside.data(), outside.size() * 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("message region"), std::string::npos) << e.what();
  }
  expect_add_works(2);
}

TEST_F(HtpProcess, AKilledDeviceIsReportedAndRestarts) {
  expect_add_works(1);
  const int pid = transport_->device_pid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const size_t bytes = add_batch(*data_, 0, 4096, 8192, 40, 2);
  try {
    transport_->call(message_->data(), bytes);
    FAIL() << "expected a device fault";
  } catch (const DeviceFault& f) {
    const std::string m = f.what();
    EXPECT_NE(m.find("pid " + std::to_string(pid)), std::string::npos) << m;
    EXPECT_NE(m.find("killed by signal 9"), std::string::npos) << m;
  }
  EXPECT_TRUE(process_gone(pid)) << "the dead device is reaped";
  EXPECT_EQ(transport_->device_pid(), 0);
  // Down until restarted.
  EXPECT_THROW(transport_->call(message_->data(), bytes), DeviceFault);
  ASSERT_TRUE(transport_->restart());
  EXPECT_GT(transport_->device_pid(), 0);
  EXPECT_NE(transport_->device_pid(), pid);
  expect_add_works(3);
}

// The device-time hint (expect_device_ns) only moves when the host looks: short, exact and far
// too long hints give the same results, and a hint far too long does not hold the call back
// (the device still wakes a sleeping host).
TEST_F(HtpProcess, DeviceTimeHintsChangeOnlyWhenTheHostLooks) {
  uint64_t seq = 1;
  for (const uint64_t hint : {uint64_t{0}, uint64_t{1'000}, uint64_t{400'000}, uint64_t{2'000'000}}) {
    transport_->expect_device_ns(hint);
    expect_add_works(seq++);
  }
  transport_->expect_device_ns(4'000'000'000ull);
  const auto t0 = std::chrono::steady_clock::now();
  expect_add_works(seq++);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 2.0) << "a 4 s hint held a tiny batch back";
}

// Without a hint, and with one that expires while the device makes no progress (the host
// polls, then sleeps and finds the device hung as without one).
TEST_F(HtpProcess, AHungDeviceTimesOut) {
  SessionOptions o = options();
  o.timeout_s = 0.3;
  uint64_t seq = 1;
  for (const uint64_t hint : {uint64_t{0}, uint64_t{500'000}}) {
    transport_.reset();
    transport_ = make_process_transport(pool_, o);
    expect_add_works(seq++);
    const int pid = transport_->device_pid();
    ASSERT_EQ(::kill(pid, SIGSTOP), 0);  // alive, but makes no progress
    const size_t bytes = add_batch(*data_, 0, 4096, 8192, 40, seq++);
    transport_->expect_device_ns(hint);
    try {
      transport_->call(message_->data(), bytes);
      FAIL() << "expected a device fault (hint " << hint << " ns)";
    } catch (const DeviceFault& f) {
      EXPECT_NE(std::string(f.what()).find("hung"), std::string::npos) << f.what();
    }
    EXPECT_TRUE(process_gone(pid)) << "the hung device is killed and reaped";
    ASSERT_TRUE(transport_->restart());
    expect_add_works(seq++);
  }
}

TEST(HtpProcessLifetime, ShutdownLeavesNothingBehind) {
  const FdCount before = count_fds("self");
  int pid = 0;
  {
    Pool pool;
    auto t = make_process_transport(pool, options());
    pid = t->device_pid();
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(process_gone(pid));
  }
  EXPECT_TRUE(process_gone(pid));
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1) << "no child left, not even a zombie";
  EXPECT_EQ(errno, ECHILD);
  const FdCount after = count_fds("self");
  EXPECT_EQ(after.all, before.all);
  EXPECT_EQ(after.memfds, 0);
}

TEST(HtpProcessLifetime, AMissingDeviceBinaryIsNamed) {
  Pool pool;
  SessionOptions o = options();
  o.device_path = "/nonexistent/hexllm-htp";
  try {
    make_process_transport(pool, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/hexllm-htp"), std::string::npos) << e.what();
  }
}

// The socket pair can land on fd 3, the number the device expects its socket on; the host then
// moves it higher first. When no higher descriptor is allowed, the error says what failed.
TEST(HtpProcessLifetime, ASocketThatCannotLeaveTheDeviceFdIsReported) {
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Descriptors 0 and 3 free, everything else above 3: socketpair returns {0, 3}, and a limit
    // of 4 descriptors leaves nowhere to move fd 3 to.
    const int out = ::fcntl(report[1], F_DUPFD_CLOEXEC, 200);
    for (int fd = 3; fd < 200; ++fd) ::close(fd);
    const int placeholder = ::open("/dev/null", O_RDONLY);  // holds fd 3 while the pool opens its memfds
    std::string what = "no error";
    {
      Pool pool;
      auto message = pool.allocate(Region::Messages, 4096);  // the message bank's memfd opens now, too
      ::close(0);
      ::close(placeholder);
      const rlimit limit{4, 4};
      ::setrlimit(RLIMIT_NOFILE, &limit);
      try {
        make_process_transport(pool, options());
      } catch (const Error& e) {
        what = e.what();
      }
    }
    ssize_t ignored = ::write(out, what.data(), what.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(report[1]);
  std::string what;
  char buf[512];
  for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;) what.append(buf, static_cast<size_t>(n));
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(what.find("cannot move the device socket off fd 3"), std::string::npos) << what;
}

}  // namespace
}  // namespace hexllm::htp_host
