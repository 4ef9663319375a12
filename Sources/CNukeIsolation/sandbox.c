#define _GNU_SOURCE
#include "CNukeIsolation.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

// The helper's sandbox, in the order it is entered (Docs/Isolation.md, "The sandbox"):
// 1. identity: capabilities dropped (bounding, ambient, permitted, effective, inheritable), and
//    when started as root an unprivileged uid and gid with no supplementary groups;
// 2. PR_SET_DUMPABLE 0 and PR_SET_NO_NEW_PRIVS;
// 3. Landlock: files (read-only fonts and locale data), TCP, and scopes (abstract Unix sockets,
//    signals) as far as the kernel's ABI goes;
// 4. a seccomp-bpf allow-list: every system call not on it is refused, most by ending the helper
//    with SIGSYS, which the host reports as `.sandboxViolation` naming the call.

// MARK: - Refused calls that end the helper, by name

// Exit code 100 + index: the host names the call in its `.sandboxViolation`. Any other call off
// the allow-list ends the helper with exit code 99.
static const struct { long number; const char *name; } refused[] = {
    {SYS_socket, "socket"}, {SYS_socketpair, "socketpair"}, {SYS_connect, "connect"}, {SYS_bind, "bind"},
    {SYS_listen, "listen"}, {SYS_accept, "accept"}, {SYS_accept4, "accept4"},
    {SYS_execve, "execve"}, {SYS_execveat, "execveat"},
#ifdef SYS_fork
    {SYS_fork, "fork"},
#endif
#ifdef SYS_vfork
    {SYS_vfork, "vfork"},
#endif
    {SYS_clone, "clone (a new process)"}, {SYS_ptrace, "ptrace"},
    {SYS_kill, "kill (another process)"}, {SYS_tgkill, "tgkill (another process)"}, {SYS_tkill, "tkill"},
    {SYS_rt_sigqueueinfo, "rt_sigqueueinfo"}, {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo"},
    {SYS_pidfd_send_signal, "pidfd_send_signal"}, {SYS_pidfd_getfd, "pidfd_getfd"}, {SYS_pidfd_open, "pidfd_open"},
    {SYS_process_vm_readv, "process_vm_readv"}, {SYS_process_vm_writev, "process_vm_writev"},
    {SYS_process_madvise, "process_madvise"}, {SYS_kcmp, "kcmp"},
    {SYS_io_uring_setup, "io_uring_setup"}, {SYS_io_uring_enter, "io_uring_enter"}, {SYS_io_uring_register, "io_uring_register"},
    {SYS_bpf, "bpf"}, {SYS_perf_event_open, "perf_event_open"}, {SYS_userfaultfd, "userfaultfd"},
    {SYS_unshare, "unshare"}, {SYS_setns, "setns"}, {SYS_mount, "mount"}, {SYS_umount2, "umount2"},
    {SYS_pivot_root, "pivot_root"}, {SYS_chroot, "chroot"}, {SYS_move_mount, "move_mount"}, {SYS_open_tree, "open_tree"},
    {SYS_fsopen, "fsopen"}, {SYS_fsconfig, "fsconfig"}, {SYS_fsmount, "fsmount"}, {SYS_fspick, "fspick"},
    {SYS_keyctl, "keyctl"}, {SYS_add_key, "add_key"}, {SYS_request_key, "request_key"},
    {SYS_init_module, "init_module"}, {SYS_finit_module, "finit_module"}, {SYS_delete_module, "delete_module"},
    {SYS_kexec_load, "kexec_load"}, {SYS_kexec_file_load, "kexec_file_load"}, {SYS_reboot, "reboot"},
    {SYS_sethostname, "sethostname"}, {SYS_setdomainname, "setdomainname"}, {SYS_swapon, "swapon"},
    {SYS_swapoff, "swapoff"}, {SYS_syslog, "syslog"}, {SYS_acct, "acct"}, {SYS_quotactl, "quotactl"},
    {SYS_setuid, "setuid"}, {SYS_setgid, "setgid"}, {SYS_setresuid, "setresuid"}, {SYS_setresgid, "setresgid"},
    {SYS_setreuid, "setreuid"}, {SYS_setregid, "setregid"}, {SYS_setgroups, "setgroups"}, {SYS_capset, "capset"},
    {SYS_personality, "personality"}, {SYS_name_to_handle_at, "name_to_handle_at"},
    {SYS_open_by_handle_at, "open_by_handle_at"}, {SYS_fanotify_init, "fanotify_init"},
    {SYS_settimeofday, "settimeofday"}, {SYS_clock_settime, "clock_settime"}, {SYS_clock_adjtime, "clock_adjtime"},
    {SYS_adjtimex, "adjtimex"}, {SYS_seccomp, "seccomp"},
    {SYS_landlock_create_ruleset, "landlock_create_ruleset"},
#ifdef SYS_memfd_secret
    {SYS_memfd_secret, "memfd_secret"},
#endif
    {SYS_prlimit64, "prlimit64 (another process)"}, {SYS_set_mempolicy, "set_mempolicy"}, {SYS_mbind, "mbind"},
    {SYS_migrate_pages, "migrate_pages"}, {SYS_move_pages, "move_pages"},
};
#define REFUSED_COUNT ((int)(sizeof refused / sizeof refused[0]))

const char *nukeiso_blocked_call_name(int index) {
    return index >= 0 && index < REFUSED_COUNT ? refused[index].name : NULL;
}

int nukeiso_blocked_call_index(const char *name) {
    for (int i = 0; i < REFUSED_COUNT; i++) {
        if (strcmp(refused[i].name, name) == 0) return i;
    }
    return -1;
}

static void write_number(int fd, const char *prefix, long value) {
    char text[96];
    size_t length = strlen(prefix);
    if (length > 64) length = 64;
    memcpy(text, prefix, length);
    char digits[24];
    int count = 0;
    unsigned long magnitude = value < 0 ? (unsigned long)(-value) : (unsigned long)value;
    do {
        digits[count++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude > 0 && count < 20);
    if (value < 0) text[length++] = '-';
    while (count > 0) text[length++] = digits[--count];
    text[length++] = '\n';
    ssize_t ignored = write(fd, text, length);
    (void)ignored;
}

static void on_sigsys(int signal, siginfo_t *info, void *context) {
    (void)signal;
    (void)context;
    for (int i = 0; i < REFUSED_COUNT; i++) {
        if (refused[i].number == info->si_syscall) _exit(100 + i);
    }
    write_number(2, "nuke-isolation: the sandbox refused system call ", info->si_syscall);
    _exit(99);
}

// MARK: - Identity

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

/// Drops every capability, and a root identity for `uid`/`gid`. 0, or -errno.
static int drop_identity(uint32_t uid, uint32_t gid, nukeiso_sandbox_report *report) {
    // The bounding set and the securebits need CAP_SETPCAP, so they go first.
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break;
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    }
    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
          SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    uid_t ruid, euid, suid;
    getresuid(&ruid, &euid, &suid);
    if (ruid == 0 || euid == 0 || suid == 0) {
        if (setgroups(0, NULL) != 0) return -errno;
        if (setresgid(gid, gid, gid) != 0) return -errno;
        if (setresuid(uid, uid, uid) != 0) return -errno;
        getresuid(&ruid, &euid, &suid);
        if (ruid != uid || euid != uid || suid != uid) return -EPERM;
        report->changed_identity = 1;
    }
    // Leaving root clears the permitted and effective sets; a non-root process may still hold
    // file or inherited capabilities, so every set is emptied explicitly.
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &header, none) != 0) return -errno;
    report->uid = (uint32_t)getuid();
    report->gid = (uint32_t)getgid();
    return 0;
}

// MARK: - Landlock

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define NUKE_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define NUKE_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define NUKE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define NUKE_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

/// `struct landlock_ruleset_attr` as of ABI 6 (Debian 12's headers know only its first field).
struct nuke_landlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

int nukeiso_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 1 ? 0 : (int)abi;
}

/// Files: reading `readable` only. Network (ABI 4+): no TCP bind or connect. Scopes (ABI 6+): no
/// abstract Unix socket or signal outside the helper. 0, or -errno.
static int enter_landlock(const char *const *readable, size_t count, nukeiso_sandbox_report *report) {
    int abi = nukeiso_landlock_abi();
    if (abi < 1) return -ENOSYS;
    struct nuke_landlock_ruleset_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
        LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |
        LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
        LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
        LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2) attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    size_t size = sizeof attributes.handled_access_fs;
    if (abi >= 4) {
        attributes.handled_access_net = NUKE_LANDLOCK_ACCESS_NET_BIND_TCP | NUKE_LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = offsetof(struct nuke_landlock_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attributes.scoped = NUKE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | NUKE_LANDLOCK_SCOPE_SIGNAL;
        size = sizeof attributes;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
    if (ruleset < 0) return -errno;
    for (size_t i = 0; i < count; i++) {
        int fd = open(readable[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct landlock_path_beneath_attr rule = {
            .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
            .parent_fd = fd,
        };
        // A file (a configuration file named on its own) takes only the rights a file has.
        struct stat info;
        if (fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) rule.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
        syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        close(fd);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        int error = errno;
        close(ruleset);
        return -error;
    }
    close(ruleset);
    report->landlock_abi = abi;
    report->landlock_network = abi >= 4;
    report->landlock_scopes = abi >= 6;
    return 0;
}

// MARK: - seccomp

#if defined(__x86_64__)
#define NUKE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NUKE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

// What a decode calls, and why (Docs/Isolation.md lists the same).
static const long allowed[] = {
    // Memory: malloc, the codecs' buffers, thread stacks, and mapping the pixel buffers the host
    // lends (the helper makes no shared memory of its own).
    // (mmap and mprotect below: never executable.)
    SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise, SYS_mincore, SYS_msync,
    // Threads (libheif, dav1d, librsvg's rayon pool) and their locks.
    SYS_futex, SYS_set_robust_list, SYS_rseq, SYS_set_tid_address, SYS_sched_yield, SYS_sched_getaffinity,
    SYS_sched_getparam, SYS_sched_getscheduler, SYS_sched_get_priority_max, SYS_sched_get_priority_min,
    SYS_exit, SYS_exit_group, SYS_restart_syscall,
    // Signals to itself (abort, raise), handlers, masks.
    SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_sigaltstack, SYS_rt_sigpending,
    SYS_rt_sigtimedwait,
    // The channel to the host (file descriptor 3): messages, and pixel memory sent with SCM_RIGHTS.
    SYS_read, SYS_readv, SYS_pread64, SYS_write, SYS_writev, SYS_pwrite64, SYS_sendto, SYS_sendmsg,
    SYS_recvfrom, SYS_recvmsg, SYS_getpeername, SYS_getsockname, SYS_ppoll, SYS_close, SYS_close_range,
    SYS_dup, SYS_dup3, SYS_lseek, SYS_fstat, SYS_newfstatat, SYS_statx, SYS_fstatfs, SYS_statfs,
    SYS_eventfd2, SYS_pipe2, SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_pwait, SYS_fadvise64, SYS_fsync, SYS_fdatasync,
    // Files, where Landlock confines them (fonts and their configuration, locale data); reading
    // links and asking for access are in `opening` below.
    SYS_getdents64, SYS_getcwd,
    // Facts about itself: time, ids, limits, usage, randomness.
    SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep, SYS_nanosleep, SYS_gettimeofday,
    SYS_getpid, SYS_gettid, SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
    SYS_getresuid, SYS_getresgid, SYS_getgroups, SYS_capget, SYS_getrlimit, SYS_getrusage, SYS_times,
    SYS_getrandom, SYS_uname, SYS_sysinfo, SYS_getpriority,
#ifdef SYS_poll
    SYS_poll, SYS_select, SYS_pipe, SYS_dup2, SYS_stat, SYS_lstat, SYS_time,
    SYS_epoll_wait, SYS_arch_prctl, SYS_getdents,
#endif
    SYS_pselect6,
};

// Opening files, reading links and asking for access: allowed under Landlock; without it,
// refused with EACCES (a library that looks for a file carries on without it), so that a helper
// without Landlock learns nothing of the host's paths (/proc/PID/cwd, exe, fd links; whether
// /etc/shadow exists).
static const long opening[] = {
#ifdef SYS_open
    SYS_open, SYS_readlink, SYS_access,
#endif
    SYS_readlinkat, SYS_faccessat, SYS_faccessat2,
    SYS_openat,
#ifdef SYS_openat2
    SYS_openat2,
#endif
};

// ioctl requests on the helper's own descriptors (isatty and non-blocking I/O); anything else
// fails with ENOTTY (TIOCSTI on an inherited terminal, for one).
static const uint32_t ioctls[] = {TCGETS, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX};
// fcntl commands; F_SETOWN, F_SETSIG and leases (signals to other processes) fail with EPERM.
// Taking a lock (F_SETLK and the like) is refused too: a helper holding one on a shared file
// could stall another process.
static const uint32_t fcntls[] = {F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD, F_DUPFD_CLOEXEC,
                                  F_ADD_SEALS, F_GET_SEALS, F_GETLK, F_OFD_GETLK, F_GETPIPE_SZ};
// prctl options; the others (PR_SET_DUMPABLE back to 1, among them) fail with EPERM.
static const uint32_t prctls[] = {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_GET_NO_NEW_PRIVS, PR_GET_SECUREBITS,
                                  PR_CAPBSET_READ, PR_GET_TIMERSLACK};

#define FILTER_CAPACITY 512

struct filter {
    struct sock_filter code[FILTER_CAPACITY];
    int count;
};

static void emit(struct filter *f, struct sock_filter instruction) {
    if (f->count < FILTER_CAPACITY) f->code[f->count] = instruction;
    f->count++;
}

#define LOAD(offset) emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset)))
#define RET(value) emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (value)))
#define JEQ(value, t, e) emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value), (t), (e)))
#define JSET(value, t, e) emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (value), (t), (e)))
#define NR offsetof(struct seccomp_data, nr)
#define ARG(i) offsetof(struct seccomp_data, args[i])
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/// `nr`: the low 32 bits of its argument `argument` must be one of `values`; else `otherwise`.
static void emit_argument_rule(struct filter *f, long nr, int argument, const uint32_t *values, int count, uint32_t otherwise) {
    // JEQ nr (else skip the block, with the number still loaded); LOAD arg; JEQ v -> allow, one
    // per value; RET otherwise; RET allow.
    JEQ((uint32_t)nr, 0, (uint8_t)(count + 3));
    LOAD(ARG(argument));
    for (int i = 0; i < count; i++) JEQ(values[i], (uint8_t)(count - i), 0);
    RET(otherwise);
    RET(SECCOMP_RET_ALLOW);
}

static int build_filter(struct filter *f, int files_by_landlock) {
    const uint32_t self = (uint32_t)getpid();
    f->count = 0;
    emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    JEQ(NUKE_AUDIT_ARCH, 1, 0);
    RET(SECCOMP_RET_KILL_PROCESS);
    LOAD(NR);
#if defined(__x86_64__)
    // x32 system calls (numbers with bit 30 set) never match the list below; end them at once.
    emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
    RET(SECCOMP_RET_KILL_PROCESS);
#endif
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        JEQ((uint32_t)allowed[i], 0, 1);
        RET(SECCOMP_RET_ALLOW);
    }
    // W^X: mmap and mprotect, but never with PROT_EXEC (code an attacker writes cannot be run;
    // the codecs' code was mapped before the sandbox).
    JEQ(SYS_mmap, 1, 0);
    JEQ(SYS_mprotect, 0, 4);
    LOAD(ARG(2));
    JSET(PROT_EXEC, 0, 1);
    RET(ERRNO(EPERM));
    RET(SECCOMP_RET_ALLOW);
    for (size_t i = 0; i < sizeof opening / sizeof opening[0]; i++) {
        JEQ((uint32_t)opening[i], 0, 1);
        RET(files_by_landlock ? SECCOMP_RET_ALLOW : ERRNO(EACCES));
    }
    // clone3's flags are behind a pointer, which seccomp cannot read: glibc falls back to clone.
    JEQ(SYS_clone3, 0, 1);
    RET(ERRNO(ENOSYS));
    // clone: threads only.
    JEQ(SYS_clone, 0, 4);
    LOAD(ARG(0));
    JSET(CLONE_THREAD, 0, 1);
    RET(SECCOMP_RET_ALLOW);
    RET(SECCOMP_RET_TRAP);
    // kill, tgkill and prlimit64: this process only (prlimit64 also as pid 0).
    const uint32_t itself[] = {self};
    emit_argument_rule(f, SYS_kill, 0, itself, 1, SECCOMP_RET_TRAP);
    emit_argument_rule(f, SYS_tgkill, 0, itself, 1, SECCOMP_RET_TRAP);
    const uint32_t itself_or_zero[] = {0, self};
    emit_argument_rule(f, SYS_prlimit64, 0, itself_or_zero, 2, SECCOMP_RET_TRAP);
    emit_argument_rule(f, SYS_ioctl, 1, ioctls, (int)(sizeof ioctls / sizeof ioctls[0]), ERRNO(ENOTTY));
    emit_argument_rule(f, SYS_fcntl, 1, fcntls, (int)(sizeof fcntls / sizeof fcntls[0]), ERRNO(EPERM));
    emit_argument_rule(f, SYS_prctl, 0, prctls, (int)(sizeof prctls / sizeof prctls[0]), ERRNO(EPERM));
    // Scheduling and memory policy of threads: refused without ending the helper (libraries try
    // them and carry on).
    const long quietly_refused[] = {SYS_memfd_create, SYS_ftruncate, SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam,
                                    SYS_setpriority, SYS_membarrier, SYS_get_robust_list, SYS_mlock, SYS_mlockall, SYS_munlock};
    for (size_t i = 0; i < sizeof quietly_refused / sizeof quietly_refused[0]; i++) {
        JEQ((uint32_t)quietly_refused[i], 0, 1);
        RET(ERRNO(EPERM));
    }
    // Changing files: refused as Landlock (or a read-only file system) would refuse it, so that
    // fontconfig, finding a font folder without a cache, carries on without writing one.
    const long writing[] = {
#ifdef SYS_chmod
        SYS_chmod, SYS_chown, SYS_lchown, SYS_mkdir, SYS_rmdir, SYS_unlink, SYS_rename, SYS_link, SYS_symlink,
        SYS_utime, SYS_utimes, SYS_futimesat, SYS_mknod, SYS_creat,
#endif
        SYS_fchmod, SYS_fchmodat, SYS_fchown, SYS_fchownat, SYS_mkdirat, SYS_unlinkat, SYS_renameat, SYS_renameat2,
        SYS_linkat, SYS_symlinkat, SYS_truncate, SYS_utimensat, SYS_mknodat,
        SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
    };
    for (size_t i = 0; i < sizeof writing / sizeof writing[0]; i++) {
        JEQ((uint32_t)writing[i], 0, 1);
        RET(ERRNO(EACCES));
    }
    // Locks on shared files (a helper holding one could stall another process): none to take.
    JEQ(SYS_flock, 0, 1);
    RET(ERRNO(ENOLCK));
    // File-change notifications: not there, as on a system without inotify.
    const long watching[] = {SYS_inotify_init1, SYS_inotify_add_watch, SYS_inotify_rm_watch, SYS_fanotify_mark};
    for (size_t i = 0; i < sizeof watching / sizeof watching[0]; i++) {
        JEQ((uint32_t)watching[i], 0, 1);
        RET(ERRNO(ENOSYS));
    }
    // Everything else.
    RET(SECCOMP_RET_TRAP);
    return f->count <= FILTER_CAPACITY ? 0 : -E2BIG;
}

static pid_t watched_parent;

int nukeiso_die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -errno;
    // The parent may have ended before the request took effect: then no signal will come.
    if (parent > 0 && getppid() != parent) _exit(0);
    return 0;
}

// MARK: - Entering

/// Writes `text` to the file at `path` (a /proc/self map). 0, or -errno.
static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t length = (ssize_t)strlen(text);
    int result = write(fd, text, (size_t)length) == length ? 0 : -errno;
    close(fd);
    return result;
}

/// Linux counts RLIMIT_NPROC per user namespace from 5.14 on; before, per user across the system.
static int counts_threads_per_namespace(void) {
    struct utsname name;
    int major = 0, minor = 0;
    if (uname(&name) != 0 || sscanf(name.release, "%d.%d", &major, &minor) != 2) return 0;
    return major > 5 || (major == 5 && minor >= 14);
}

/// A thread cap for a helper that keeps the host's (unprivileged) identity. RLIMIT_NPROC counts
/// every process and thread of a user, the host's own among them, so the helper first moves into a
/// user namespace of its own, where the kernel counts its threads apart (its uid and gid map to
/// themselves: files and the status read as before), and caps them there at `limit`. Needs one
/// thread (unshare refuses more) and user namespaces; the filter then refuses another. 0, or -errno.
static int cap_threads_in_namespace(int limit) {
    if (!counts_threads_per_namespace()) return -ENOSYS;
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER) != 0) return -errno;
    char map[64];
    int result = write_text("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    if (result == 0) result = write_text("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    if (result == 0) result = write_text("/proc/self/gid_map", map);
    if (result != 0) return result;
    struct rlimit threads = {(rlim_t)limit, (rlim_t)limit};
    return setrlimit(RLIMIT_NPROC, &threads) == 0 ? 0 : -errno;
}

int nukeiso_enter_sandbox(const nukeiso_sandbox_options *options, nukeiso_sandbox_report *report) {
    memset(report, 0, sizeof *report);
#ifndef NUKE_AUDIT_ARCH
    (void)options;
    return -ENOSYS;
#else
    if (options->niceness > 0) {
        errno = 0;
        int ignored = nice(options->niceness > 19 ? 19 : options->niceness);
        (void)ignored;
    }
    struct rlimit files = {256, 256};
    setrlimit(RLIMIT_NOFILE, &files);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    // Before the capabilities go: a new user namespace grants them anew, inside it, and
    // drop_identity then empties those too. Only where the helper will keep the host's identity.
    uid_t real, effective, saved;
    getresuid(&real, &effective, &saved);
    int keeps_identity = real != 0 && effective != 0 && saved != 0;
    if (options->helper_thread_limit > 0 && keeps_identity && nukeiso_thread_count() == 1
        && cap_threads_in_namespace(options->helper_thread_limit) == 0) {
        report->thread_cap = options->helper_thread_limit;
        report->thread_cap_per_helper = 1;
    }
    int dropped = drop_identity(options->uid, options->gid, report);
    if (dropped != 0) return dropped;
    // A change of identity clears the parent-death signal: ask for it again, before the filter
    // refuses prctl. The kernel ends the helper with its parent, whatever the helper's threads do.
    int dies_with_parent = nukeiso_die_with_parent(watched_parent);
    if (dies_with_parent != 0) return dies_with_parent;
    // A thread cap for the sandbox's identity: threads beyond it fail with EAGAIN (an attacker's
    // thousands of threads), enough for the codecs' own pools in every helper at once.
    if (options->thread_limit > 0 && report->changed_identity) {
        struct rlimit threads = {(rlim_t)options->thread_limit, (rlim_t)options->thread_limit};
        if (setrlimit(RLIMIT_NPROC, &threads) != 0) return -errno;
        report->thread_cap = options->thread_limit;
    }
    report->capabilities_dropped = 1;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -errno;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    // Landlock confines the calling thread and those it starts later, not threads already
    // running: with more than one thread, files stay closed by seccomp instead.
    int threads = nukeiso_thread_count();
    report->threads = threads;
    report->landlock_abi = nukeiso_landlock_abi();
    if (options->use_landlock && threads == 1) {
        report->files_by_landlock = enter_landlock(options->readable, options->readable_count, report) == 0;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) return -errno;
    static struct filter filter;
    if (build_filter(&filter, report->files_by_landlock) != 0) return -E2BIG;
    struct sock_fprog program = {(unsigned short)filter.count, filter.code};
    // TSYNC: every thread of the process gets the filter (libraries may have started threads
    // while warming up).
    long synced = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
    if (synced > 0) return -EBUSY;
    if (synced != 0 && (errno != EINVAL || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)) return -errno;
    report->seccomp = 1;
    report->filter_length = filter.count;
    return 0;
#endif
}

// MARK: - Descriptors

int nukeiso_close_inherited(int keep_from) {
    // Everything from `keep_from` on, whatever the limit on descriptors says.
    if (syscall(SYS_close_range, (unsigned)keep_from, ~0U, 0) == 0) return 0;
    struct rlimit limit;
    long maximum = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? (long)limit.rlim_cur : 65536;
    for (long fd = keep_from; fd < maximum; fd++) close((int)fd);
    return 0;
}

// MARK: - The parent

static int watched_pidfd = -1;

static void *watch_parent(void *unused) {
    (void)unused;
    // A pidfd becomes readable when the process ends (Linux 5.3+); without one, poll the parent pid.
    if (watched_pidfd >= 0) {
        struct pollfd entry = {watched_pidfd, POLLIN, 0};
        while (poll(&entry, 1, -1) < 0 && errno == EINTR) {}
        _exit(0);
    }
    while (getppid() == watched_parent) sleep(1);
    _exit(0);
}

int nukeiso_open_parent(void) {
    watched_parent = getppid();
    if (watched_parent <= 1) return -ESRCH;
    watched_pidfd = (int)syscall(SYS_pidfd_open, watched_parent, 0);
    return 0;
}

int nukeiso_watch_parent(void) {
    return nukeiso_start_thread(watch_parent, 64 * 1024);
}
