#ifndef CNUKEISOLATION_H
#define CNUKEISOLATION_H

// NukeIsolation's system calls: starting and reaping helper processes, passing file descriptors
// over a Unix socket, shared memory (memfd), resource limits and the seccomp-bpf sandbox.
// Linux only; every function returns -errno (or -1) on failure unless it says otherwise.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Starts `path` with `argv` (NULL-terminated) and the environment plus `SWIFT_BACKTRACE=enable=no`
/// (the runtime's crash reporter would start a process, which the sandbox forbids). The child
/// gets one end of a new socket pair as file descriptor 3, /dev/null as standard input, and
/// `stderr_fd` (or /dev/null when -1) as standard error. On success `*host_fd` is the other end
/// (close-on-exec) and the child's pid is returned.
pid_t nukeiso_spawn(const char *_Nonnull path, char *_Nullable const *_Nonnull argv, int stderr_fd, int *_Nonnull host_fd);

/// A new connected pair of Unix stream sockets, both close-on-exec: `fds[0]` for the host,
/// `fds[1]` for a helper. Returns 0 or -errno.
int nukeiso_socketpair(int *_Nonnull fds);

/// In a zygote (a warmed-up helper program that starts helpers by copying itself): forks. The
/// child's file descriptor 3 becomes `helper_fd` (replacing the zygote's own socket) and it
/// returns 0; the parent closes `helper_fd` and returns the child's pid. Refuses with -EDEADLK
/// when this process runs more than one thread (a lock held by another thread would stay held
/// in the copy forever); -errno when fork fails.
pid_t nukeiso_fork_helper(int helper_fd);

/// The threads of this process (from /proc/self/stat), -1 when unknown.
int nukeiso_thread_count(void);

/// What `nukeiso_wait` found.
typedef struct nukeiso_exit {
    /// 0 still running, 1 exited, 2 killed by a signal.
    int32_t kind;
    /// The exit code or the signal number.
    int32_t value;
} nukeiso_exit;

/// Reaps `pid` if it ended (`block` 0) or when it ends (`block` 1).
int nukeiso_wait(pid_t pid, int block, nukeiso_exit *_Nonnull result);

/// Sends `signal` to `pid`.
int nukeiso_kill(pid_t pid, int signal);

/// The signal's name, such as "SIGSEGV".
const char *_Nonnull nukeiso_signal_name(int signal);

/// The resident set size of `pid` in bytes, from /proc/PID/statm; -1 when unknown.
int64_t nukeiso_rss(pid_t pid);

/// Writes all `length` bytes, retrying on EINTR and short writes.
int nukeiso_write_all(int fd, const void *_Nonnull bytes, size_t length);

/// Reads exactly `length` bytes, waiting at most until `deadline_ms` on the monotonic clock
/// (-1: no deadline). Returns 0, 1 at end of file, 2 when the deadline passed, or -errno.
int nukeiso_read_all(int fd, void *_Nonnull bytes, size_t length, int64_t deadline_ms);

/// 1 when a helper's idle socket has something to read or is hung up (an idle helper sends
/// nothing, so it died or is misbehaving), 0 otherwise; does not wait.
int nukeiso_idle_socket_is_broken(int fd);

/// Milliseconds on the monotonic clock.
int64_t nukeiso_now_ms(void);

/// Sends one byte with `fd` attached (SCM_RIGHTS).
int nukeiso_send_fd(int socket, int fd);

/// Receives one byte with a file descriptor attached, waiting until `deadline_ms`; returns the
/// descriptor (close-on-exec), or -errno, or -1000 at end of file, -1001 at the deadline.
int nukeiso_recv_fd(int socket, int64_t deadline_ms);

/// A new anonymous shared-memory file of `size` bytes (memfd_create), close-on-exec, its size
/// sealed (it can neither shrink nor grow; its contents stay writable); -errno on failure.
int nukeiso_memfd(size_t size);

/// 1 when `fd`'s size is sealed against shrinking and growing, so mapping it cannot fault.
int nukeiso_is_size_sealed(int fd);

/// Starts a thread that ends this process as soon as its parent ends, so that a helper busy in a
/// decode does not outlive its host. Returns 0 or -errno.
int nukeiso_watch_parent(void);

/// Maps `size` bytes of `fd` shared, for reading and writing (`populate`: with every page
/// allocated and mapped now); NULL on failure.
void *_Nullable nukeiso_map(int fd, size_t size, int populate);

/// Unmaps memory from `nukeiso_map`.
void nukeiso_unmap(void *_Nullable address, size_t size);

/// Closes `fd`.
void nukeiso_close(int fd);

/// Sets this process's limits for the next decode: its address space (bytes, 0 = unlimited) and
/// CPU time (`cpu_seconds` more than used so far, 0 = unlimited; beyond it the kernel sends
/// SIGXCPU, then SIGKILL). Core dumps are turned off.
int nukeiso_set_limits(uint64_t address_space, uint64_t cpu_seconds);

/// Installs the sandbox in this process (no new privileges, no root needed):
/// - files: with Landlock (Linux 5.13+; `*files_by_landlock` set to 1), only fonts, their
///   configuration and cache, time zones, iconv modules and locales can be opened, read-only;
///   without it, a seccomp rule makes every open fail with EACCES;
/// - a seccomp-bpf filter under which creating sockets, starting programs, creating processes
///   (clone without CLONE_THREAD, fork, vfork), ptrace and signalling other processes end the
///   process with exit code 100 + the call's index in `nukeiso_blocked_call_name`.
/// Returns 0, or -errno when the kernel refuses seccomp.
int nukeiso_enter_sandbox(int *_Nonnull files_by_landlock);

/// The kernel's Landlock ABI version, 0 when it has none (or it is turned off): whether
/// ``nukeiso_enter_sandbox`` will confine files with Landlock (fonts stay readable) or forbid
/// every open.
int nukeiso_landlock_abi(void);

/// The name of blocked call `index` ("socket", "execve"...), or NULL past the end.
const char *_Nullable nukeiso_blocked_call_name(int index);

#ifdef __cplusplus
}
#endif

#endif
