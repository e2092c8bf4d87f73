// How the host reaches a device session: open it, keep its window onto the pool's banks in
// step (window.h), and make one synchronous call per batch. Two transports: the session on the
// caller's thread in this process (inproc), or the device runtime as its own process
// (hexllm-htp) that sees the pool only through memfds and a doorbell in the message region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "htp-host/pool.h"
#include "htp-host/window.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

struct SessionOptions {
  uint32_t n_threads = 1;
  uint32_t vtcm_bytes = HTP_DEFAULT_VTCM_BYTES;
  uint32_t dma_mode = HTP_DEFAULT_DMA_MODE;
  uint64_t window_bytes = HTP_DEFAULT_WINDOW_BYTES;
  uint32_t max_tensors = 0;  // tensors per batch the session holds; 0: the device's default
  // Device process only.
  std::string device_path;  // the hexllm-htp binary; empty: found by device_command
  std::string target = "host";  // "host": the x86 device; "hexagon": the Hexagon one under qemu-hexagon
  double timeout_s = 10.0;  // no op finished for this long during a call: the device hung (0: never)
  // Device sessions sharing the pool (each with n_threads workers); a group's transport sets
  // each member's place in it.
  uint32_t n_devices = 1;
  uint32_t mdev_idx = 0;

  // The one set of session defaults, for a target: the hexagon target's emulated 32-bit guest
  // has ~3 GiB of address space (a 1 GiB window), and one large op under emulation can take
  // minutes (a 300 s hang timeout).
  static SessionOptions defaults_for(const std::string& target) {
    SessionOptions o;
    o.target = target;
    if (target == "hexagon") {
      o.window_bytes = 1ull << 30;
      o.timeout_s = 300.0;
    }
    return o;
  }
};

// The device process died or hung during a call. The session is down until restart().
class DeviceFault : public Error {
 public:
  DeviceFault(const std::string& what, uint32_t op) : Error(what), op_in_flight(op) {}
  uint32_t op_in_flight;  // index in the batch of the op the device was running; HTP_NO_INDEX if none
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;  // "inproc" or "process"
  // Names the session in errors, e.g. "process session 2 (pid 4242)".
  virtual std::string session() const = 0;
  // What the session reports (threads, VTCM size, window): the host sizes everything by it.
  virtual const htp_hwinfo& hwinfo() const = 0;
  // Runs the batch in `message` and returns its status; the response is written into the
  // message. The window is planned from the banks the batch's tensors name and carried out
  // first. Throws DeviceFault when the device dies or hangs, hexllm::Error when the window
  // cannot hold the batch.
  virtual htp_status call(void* message, size_t bytes) = 0;
  // A hint for the next call: how long the device took on the same batch last time (0: not
  // known), and each of its ops (may be empty). A device process's transport sleeps until
  // shortly before then and polls for the end, instead of waiting for the device's futex
  // wake-up (tens to hundreds of us on a VM); with the op times it follows the batch's progress.
  virtual void expect_device_ns(uint64_t ns, std::span<const uint64_t> op_ns = {}) { (void)ns, (void)op_ns; }
  // Starts the device afresh: a new process whose window maps the same pool (weights stay in
  // the pool, nothing is reloaded). Returns false when this transport cannot restart.
  virtual bool restart() { return false; }
  // The device process, 0 when the session runs in this process.
  virtual int device_pid() const { return 0; }
  virtual const Window& window() const = 0;
  // Device sessions behind this transport; each writes its own response (and trace areas) of
  // the one message (htp_batch.h). member(d) is device d's own transport.
  virtual uint32_t n_devices() const { return 1; }
  virtual const Transport& member(uint32_t d) const {
    (void)d;
    return *this;
  }
  // For a group, which starts and stops its devices side by side: waits until a device made
  // with `await_device = false` has answered its handshake (throws as the factory would), and
  // asks the device to exit without waiting for it (the destructor waits).
  virtual void await_started() {}
  virtual void request_stop() {}
};

// Device threads in this process; the caller is worker 0 of the session.
std::unique_ptr<Transport> make_inproc_transport(const Pool& pool, const SessionOptions& opts);

// A hexllm-htp process per session. Its control block lives in the pool's message region,
// so batch messages must too. Throws hexllm::Error when the device cannot start; with
// `await_device = false`, await_started() does the waiting and throws instead.
std::unique_ptr<Transport> make_process_transport(Pool& pool, const SessionOptions& opts, bool await_device = true);

// opts.n_devices (2..HTP_MDEV_MAX) sessions of `kind` ("inproc" or "process") over the one pool,
// called together with the same message; a fence region in the pool's message region joins them.
std::unique_ptr<Transport> make_group_transport(Pool& pool, const SessionOptions& opts, const std::string& kind);

// The hexllm-htp binary: `hint` when not empty, else $HEXLLM_HTP_DEVICE, else next to the
// running executable, else where this build put it. Throws naming the places tried.
std::string find_device_binary(const std::string& hint);

// The command that starts a device process for `target`: {binary} for "host"; for "hexagon"
// {qemu-hexagon (PATH or $HEXLLM_QEMU_HEXAGON), the Hexagon hexllm-htp (`hint`, else
// hexagon/hexllm-htp next to the executable, else this build's)}. Throws naming what is missing.
std::vector<std::string> device_command(const std::string& target, const std::string& hint);

}  // namespace hexllm::htp_host
