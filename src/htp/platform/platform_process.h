// The process-level seam of the device process (src/htp-device/main.cpp): the socket, the
// mappings of the host's memfds, the shared futex and the process's own lifetime. Kernels never
// use it. platform/host implements it with POSIX, platform/hexagon with raw Linux syscalls, so
// one main.cpp serves both the x86 device and the Hexagon device under qemu-hexagon.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {

// Receives one datagram of at most `len` bytes into buf and up to max_fds descriptors passed
// with it (SCM_RIGHTS, close-on-exec). Retries on EINTR. `wait` false: returns at once when
// nothing is queued. Returns the byte count (negative on error or nothing queued); *n_fds
// counts the descriptors received, *truncated is set when the data or the descriptors did not
// fit (the caller must then reject the message and close what it got).
int64_t proc_recv(int sock, void* buf, size_t len, int* fds, uint32_t max_fds, uint32_t* n_fds, bool wait,
                  bool* truncated);

// Sends one datagram without raising SIGPIPE; retries on EINTR. Returns the byte count or < 0.
int64_t proc_send(int sock, const void* buf, size_t len);

// True when the peer of `sock` has hung up or the socket failed (does not block).
bool proc_peer_gone(int sock);

// A shared read-write mapping of `bytes` of fd from offset 0; `populate` faults it in now.
// nullptr on failure.
void* proc_map_fd(int fd, uint64_t bytes, bool populate);
void proc_unmap(void* p, uint64_t bytes);

// The size of the file behind fd (fstat); false when fstat fails.
bool proc_fd_size(int fd, uint64_t* bytes);

void proc_close(int fd);

// Closes every descriptor other than 0, 1, 2 and keep, where the platform allows it.
void proc_close_others(int keep);

// Futexes on memory shared with another process (never FUTEX_PRIVATE). wait returns when
// woken, when *addr != expected, on a signal or after timeout_ns (0: no timeout).
void proc_futex_wait_shared(uint32_t* addr, uint32_t expected, uint64_t timeout_ns);
void proc_futex_wake_shared(uint32_t* addr, uint32_t n_waiters);

int proc_pid();

// The CPU the calling thread runs on, or -1 where the platform cannot tell.
int proc_current_cpu();
// Moves the calling thread to another CPU it may run on, off `cpu`, and leaves it free to run
// anywhere it could before. false when it cannot (one CPU allowed, no affinity calls).
bool proc_move_off_cpu(int cpu);

// Writes the whole string to stderr (best effort).
void proc_write_stderr(const char* s, size_t len);

}  // namespace hexllm::htp
