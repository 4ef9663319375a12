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
/// Starts a detached thread running `body` with a stack of `stack_size` bytes; 0 or -errno.
int nukeiso_start_thread(void *_Nullable (*_Nonnull body)(void *_Nullable), size_t stack_size);
/// Whether a helper inherits the environment entry `NAME=value` (a named allow-list).
int nukeiso_helper_may_inherit(const char *_Nonnull entry);
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

/// Waits up to `timeout_ms` for `pid` (a child, or a zygote's child) to end, without reaping it,
/// on a pidfd (the kernel says when; no polling). 1 when it ended (or is gone), 0 when the time
/// passed, -1 when this kernel has no pidfd_open (before Linux 5.3).
int nukeiso_await_exit(pid_t pid, int timeout_ms);

/// Sends `signal` to `pid`.
int nukeiso_kill(pid_t pid, int signal);

/// The signal's name, such as "SIGSEGV".
const char *_Nonnull nukeiso_signal_name(int signal);

/// The resident set size of `pid` in bytes, from /proc/PID/statm; -1 when unknown.
int64_t nukeiso_rss(pid_t pid);

/// Writes all `length` bytes, retrying on EINTR and short writes.
int nukeiso_write_all(int fd, const void *_Nonnull bytes, size_t length);

/// Writes one message: `kind`, `length` as 32 bits little-endian, then the payload, in one
/// call without copying the payload (retrying on EINTR and short writes). Returns 0 or -errno.
int nukeiso_write_message(int fd, uint8_t kind, const void *_Nullable payload, size_t length);

/// Reads exactly `length` bytes, waiting at most until `deadline_ms` on the monotonic clock
/// (-1: no deadline). Returns 0, 1 at end of file, 2 when the deadline passed, or -errno.
int nukeiso_read_all(int fd, void *_Nonnull bytes, size_t length, int64_t deadline_ms);

/// Waits until `fd` is readable (or hung up) or `deadline_ms` passes on the monotonic clock:
/// 0 ready, 2 at the deadline, -errno.
int nukeiso_wait_readable(int fd, int64_t deadline_ms);

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

/// A new anonymous shared-memory file of `size` bytes (memfd_create), close-on-exec, zero-filled,
/// its size and its seals final (`F_SEAL_SHRINK`, `F_SEAL_GROW`, `F_SEAL_SEAL`); -errno on failure.
int nukeiso_memfd(size_t size);

/// Opens a pidfd of this process's parent, for ``nukeiso_watch_parent``; call it before the
/// sandbox, which refuses pidfd_open. Returns 0 or -errno.
int nukeiso_open_parent(void);
/// Asks the kernel to end this process with SIGKILL when its parent ends (`PR_SET_PDEATHSIG`);
/// ends it now when the parent is no longer `parent` (it died before the request). 0, or -errno.
int nukeiso_die_with_parent(pid_t parent);
/// Whether `path` is `/`, a home folder or a parent of one: never readable in the sandbox.
int nukeiso_is_home_or_parent(const char *_Nonnull path);

/// Starts a thread that ends this process as soon as its parent ends, so that a helper busy in a
/// decode does not outlive its host. Start it inside the sandbox, so that the thread is confined
/// too. Returns 0 or -errno.
int nukeiso_watch_parent(void);

/// Closes every file descriptor from `keep_from` on. Returns 0.
int nukeiso_close_inherited(int keep_from);

/// Maps `size` bytes of `fd` shared, for reading and writing (`populate`: with every page
/// allocated and mapped now); NULL on failure.
void *_Nullable nukeiso_map(int fd, size_t size, int populate);

/// Unmaps memory from `nukeiso_map`.
void nukeiso_unmap(void *_Nullable address, size_t size);

/// Closes `fd`.
void nukeiso_close(int fd);

/// Sets this process's limits for the next decode, soft and hard alike so that they cannot be
/// raised again: its address space (bytes, 0 = unchanged) and CPU time (`cpu_seconds` more than
/// used so far, and at most `cpu_ceiling_seconds` more for the rest of the helper's life; 0 =
/// unchanged; beyond the soft limit the kernel sends SIGXCPU, beyond the hard one SIGKILL). A
/// limit above the current hard limit gets the hard limit. Core dumps are turned off.
int nukeiso_set_limits(uint64_t address_space, uint64_t cpu_seconds, uint64_t cpu_ceiling_seconds);

/// What ``nukeiso_enter_sandbox`` is to do.
typedef struct nukeiso_sandbox_options {
    /// The identity a helper started as root takes (65534, nobody, by default).
    uint32_t uid;
    uint32_t gid;
    /// 0: do not use Landlock even where the kernel has it (files are then refused by seccomp).
    int32_t use_landlock;
    /// The files and directories readable under Landlock (fonts, their configuration and cache,
    /// locale data).
    const char *_Nullable const *_Nullable readable;
    size_t readable_count;
    /// Lowers the process's scheduling priority by this much first (0: unchanged), so that
    /// decodes in helpers yield the processor to the host's own work.
    int32_t niceness;
    /// RLIMIT_NPROC for the sandbox's identity once the helper has taken it (0: no cap): the
    /// threads every helper of that identity may run together. Not applied when the helper
    /// keeps the host's identity (the limit would count the host's own processes).
    int32_t thread_limit;
    /// RLIMIT_NPROC of one helper that keeps the host's identity (the host is not root), in a
    /// user namespace of its own where its threads are counted apart (0: no cap).
    int32_t helper_thread_limit;
} nukeiso_sandbox_options;

/// What ``nukeiso_enter_sandbox`` did.
typedef struct nukeiso_sandbox_report {
    int32_t seccomp;
    int32_t filter_length;
    int32_t files_by_landlock;
    int32_t landlock_abi;
    int32_t landlock_network;
    int32_t landlock_scopes;
    int32_t capabilities_dropped;
    int32_t changed_identity;
    uint32_t uid;
    uint32_t gid;
    int32_t threads;
    /// The threads the helper may run (RLIMIT_NPROC), 0 when not capped.
    int32_t thread_cap;
    /// 1: the cap counts this helper's threads alone (a user namespace of its own); 0: every
    /// helper of the sandbox's identity together.
    int32_t thread_cap_per_helper;
} nukeiso_sandbox_report;

/// Installs the sandbox in this process, in this order:
/// - capabilities: every set emptied (bounding, ambient, permitted, effective, inheritable);
///   when running as root, `options->uid`/`gid` with no supplementary groups;
/// - not dumpable (no other process of the same user may trace or read it), no new privileges;
/// - Landlock where the kernel has it and this process runs one thread (it cannot confine
///   threads already running): reading `options->readable` only, no TCP (ABI 4+), no abstract
///   Unix socket or signal outside the sandbox (ABI 6+);
/// - a seccomp-bpf allow-list on every thread: the calls a decode needs; opening files only
///   under Landlock (else EACCES); signals to itself only; any other call ends the process with
///   exit code 100 + the index of `nukeiso_blocked_call_name`, or 99 for a call without a name
///   there (its number is written to standard error).
/// Returns 0, or -errno when a step fails (the process must then not decode).
int nukeiso_enter_sandbox(const nukeiso_sandbox_options *_Nonnull options, nukeiso_sandbox_report *_Nonnull report);

/// The paths a sandboxed helper may read under Landlock: fonts, their configuration and cache,
/// time zones, iconv modules and locales; with `with_fontconfig`, also every font, cache and
/// configuration path fontconfig is configured with here (FONTCONFIG_FILE, an app's own font
/// folders), read by loading libfontconfig's configuration. Free with ``nukeiso_free_paths``.
char *_Nonnull *_Nullable nukeiso_readable_paths(int with_fontconfig, size_t *_Nonnull count);

/// Frees what ``nukeiso_readable_paths`` returned.
void nukeiso_free_paths(char *_Nonnull *_Nullable paths, size_t count);

/// The kernel's Landlock ABI version, 0 when it has none (or it is turned off).
int nukeiso_landlock_abi(void);

/// The name of refused call `index` ("socket", "execve"...), or NULL past the end.
const char *_Nullable nukeiso_blocked_call_name(int index);

/// The index of a refused call's name, -1 when it has none.
int nukeiso_blocked_call_index(const char *_Nonnull name);

#ifdef __cplusplus
}
#endif

#endif
