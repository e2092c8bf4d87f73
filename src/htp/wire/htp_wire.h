// The wire between the host and a hexllm-htp device process, compiled by both sides and by
// every device target (x86 and Hexagon), so it holds only layouts and constants: no libc. The
// host's socket and futex helpers live in src/htp-host/transport_wire.h.
// Control messages go over a SOCK_SEQPACKET socket: the hello handshake (ABI check, session
// config, hwinfo back) and bank updates, whose memfds travel as SCM_RIGHTS. Calls go through a
// control block in the pool's message region: the host fills it, bumps `doorbell` and wakes the
// device with a shared futex; the device runs the batch and bumps `done`. No pointer crosses:
// banks are named by index, messages by (bank, offset). Every field has a fixed width, so a
// 32-bit device (Hexagon) and a 64-bit host agree on each layout.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_abi.h"

namespace hexllm::htp::wire {

// Bumped whenever a struct or rule in this file changes (the ABI version covers src/htp/abi).
inline constexpr uint32_t kWireVersion = 5;  // 2: the device's place in its group; 3: host_cpu, wake_op; 4, 5: longer hwinfo
inline constexpr uint32_t kHelloMagic = 0x4f4c4548;  // "HELO"
inline constexpr uint32_t kReplyMagic = 0x594c5052;  // "RPLY"
inline constexpr uint32_t kBanksMagic = 0x534b4e42;  // "BNKS"
inline constexpr int kDeviceFd = 3;                  // the device's end of the socket
// A side polling the control block (the device its doorbell, the host `done`) yields every
// this many polls, so that a thread of the other side placed on its core runs at once.
inline constexpr uint32_t kPollsPerYield = 16;

// Host -> device, the first message.
struct Hello {
  uint32_t magic;  // kHelloMagic
  uint32_t abi_version;
  uint32_t wire_version;
  uint32_t n_threads;
  uint32_t vtcm_size;
  uint32_t dma_mode;
  uint64_t window_size;
  uint32_t control_bank;    // where the control block lives; the bank arrives in the first Banks
  uint32_t control_offset;  // 64-byte aligned
  uint32_t mdev_idx;        // this device's index in its group
  uint32_t mdev_count;      // devices in the group (1: alone)
};
static_assert(sizeof(Hello) == 48, "Hello layout");

// Device -> host, after the first Banks message (or at once when the versions differ).
struct HelloReply {
  uint32_t magic;   // kReplyMagic
  uint32_t status;  // htp_status: HTP_ERR_ABI_VERSION when host and device differ
  uint32_t abi_version;
  uint32_t wire_version;
  htp_hwinfo hwinfo;
};
static_assert(sizeof(HelloReply) == 64, "HelloReply layout");

enum BankOp : uint32_t {
  kBankOpen = 1,   // the bank's memfd is attached; replaces whatever the slot held
  kBankClose = 2,  // the pool released the bank: unmap and close it
};
enum BankFlags : uint32_t {
  kBankWeights = 1u << 0,  // filled at load and read whole: prefault when mapping
};
struct BankEntry {
  uint32_t bank;
  uint32_t op;  // BankOp
  uint64_t size;
  uint32_t flags;  // BankFlags
  uint32_t pad;
};
static_assert(sizeof(BankEntry) == 24, "BankEntry layout");
// Host -> device. One fd per kBankOpen entry, in entry order.
struct Banks {
  uint32_t magic;  // kBanksMagic
  uint32_t n;
  BankEntry entries[HTP_MAX_BANKS * 2];
};

enum Command : uint32_t {
  kCmdRun = 1,   // read n_bank_msgs socket messages, carry out the window steps, run the batch
  kCmdExit = 2,  // close the session and exit
};

struct Step {
  uint16_t bank;
  uint16_t map;  // 1 map, 0 unmap
};

// In shared memory. Host-written and device-written words sit on separate cache lines.
struct alignas(64) Control {
  uint32_t doorbell;         // host bumps it to start a call; the device futex-waits on it
  uint32_t device_sleeping;  // set by the device while it waits in the futex
  uint32_t command;          // Command
  uint32_t n_bank_msgs;      // Banks messages sent on the socket for this call
  uint32_t message_bank;
  uint32_t message_offset;
  uint64_t message_size;
  uint32_t n_steps;
  int32_t host_cpu;          // the host thread's CPU when it saw the last call end (-1: none yet)
  uint32_t wake_op;          // the device wakes a sleeping host as this op starts (none: HTP_NO_INDEX)
  uint32_t pad0[5];
  Step steps[HTP_MAX_BANKS * 2];
  alignas(64) uint32_t done;  // the device sets it to the doorbell value it finished
  uint32_t host_sleeping;     // set by the host while it waits in the futex
  uint32_t status;            // htp_status of the call
  uint32_t batch_ran;         // 0: failed before the batch (banks or window; the device then
                              // unmapped its whole window), 1: status is the batch's
  uint32_t pad1[12];
};
static_assert(sizeof(Control) % 64 == 0, "Control layout");

}  // namespace hexllm::htp::wire
