#define _GNU_SOURCE
#include "CNukeIsolation.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

pid_t nukeiso_spawn(const char *path, char *const *argv, int stderr_fd, int *host_fd) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return -errno;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (stderr_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    // dup2 clears close-on-exec on the copy: the child keeps fd 3 and nothing else of ours.
    posix_spawn_file_actions_adddup2(&actions, fds[1], 3);

    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    size_t count = 0;
    while (environ[count] != NULL) count++;
    char **environment = calloc(count + 2, sizeof(char *));
    if (environment == NULL) {
        close(fds[0]);
        close(fds[1]);
        return -ENOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(environ[i], "SWIFT_BACKTRACE=", 16) != 0) environment[used++] = environ[i];
    }
    environment[used++] = "SWIFT_BACKTRACE=enable=no";
    environment[used] = NULL;

    pid_t pid = 0;
    int error = posix_spawn(&pid, path, &actions, &attributes, argv, environment);
    free(environment);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(fds[1]);
    if (error != 0) {
        close(fds[0]);
        return -error;
    }
    *host_fd = fds[0];
    return pid;
}

int nukeiso_socketpair(int *fds) {
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : -errno;
}

int nukeiso_thread_count(void) {
    FILE *file = fopen("/proc/self/stat", "r");
    if (file == NULL) return -1;
    char line[1024];
    size_t length = fread(line, 1, sizeof line - 1, file);
    fclose(file);
    line[length] = 0;
    // Field 20; the command name (field 2) may hold spaces and parentheses, so count after its last ')'.
    char *p = strrchr(line, ')');
    if (p == NULL) return -1;
    int field = 2;
    while (*p != 0 && field < 20) {
        if (*p == ' ') field++;
        p++;
    }
    return field == 20 ? atoi(p) : -1;
}

pid_t nukeiso_fork_helper(int helper_fd) {
    if (nukeiso_thread_count() != 1) {
        close(helper_fd);
        return -EDEADLK;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(helper_fd);
        return -error;
    }
    if (pid == 0) {
        // dup2 closes the zygote's socket on 3 and leaves the copy open across nothing else.
        if (helper_fd != 3) {
            if (dup2(helper_fd, 3) < 0) _exit(127);
            close(helper_fd);
        } else {
            fcntl(3, F_SETFD, 0);
        }
        return 0;
    }
    close(helper_fd);
    return pid;
}

int nukeiso_wait(pid_t pid, int block, nukeiso_exit *result) {
    int status = 0;
    pid_t done;
    do {
        done = waitpid(pid, &status, block ? 0 : WNOHANG);
    } while (done < 0 && errno == EINTR);
    if (done < 0) return -errno;
    if (done == 0) {
        result->kind = 0;
        result->value = 0;
    } else if (WIFSIGNALED(status)) {
        result->kind = 2;
        result->value = WTERMSIG(status);
    } else {
        result->kind = 1;
        result->value = WEXITSTATUS(status);
    }
    return 0;
}

int nukeiso_kill(pid_t pid, int signal) {
    return kill(pid, signal) == 0 ? 0 : -errno;
}

const char *nukeiso_signal_name(int signal) {
    switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal";
    }
}

int64_t nukeiso_rss(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *file = fopen(path, "r");
    if (file == NULL) return -1;
    long size = 0, resident = 0;
    int read = fscanf(file, "%ld %ld", &size, &resident);
    fclose(file);
    if (read != 2) return -1;
    return (int64_t)resident * sysconf(_SC_PAGESIZE);
}

int nukeiso_write_all(int fd, const void *bytes, size_t length) {
    const uint8_t *p = bytes;
    while (length > 0) {
        ssize_t n = send(fd, p, length, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = write(fd, p, length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

int64_t nukeiso_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Waits until `fd` is readable or the deadline passes: 0 ready, 2 deadline, -errno.
static int wait_readable(int fd, int64_t deadline_ms) {
    for (;;) {
        int timeout = -1;
        if (deadline_ms >= 0) {
            int64_t left = deadline_ms - nukeiso_now_ms();
            if (left <= 0) return 2;
            timeout = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, timeout);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (ready > 0) return 0;
    }
}

int nukeiso_read_all(int fd, void *bytes, size_t length, int64_t deadline_ms) {
    uint8_t *p = bytes;
    while (length > 0) {
        int ready = wait_readable(fd, deadline_ms);
        if (ready != 0) return ready;
        ssize_t n = read(fd, p, length);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -errno;
        }
        if (n == 0) return 1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

int nukeiso_send_fd(int socket, int fd) {
    char byte = 'F';
    struct iovec iov = {&byte, 1};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof control.buffer;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    for (;;) {
        ssize_t n = sendmsg(socket, &message, MSG_NOSIGNAL);
        if (n == 1) return 0;
        if (n < 0 && errno == EINTR) continue;
        return n < 0 ? -errno : -EIO;
    }
}

int nukeiso_idle_socket_is_broken(int fd) {
    struct pollfd entry = {fd, POLLIN, 0};
    int ready;
    do {
        ready = poll(&entry, 1, 0);
    } while (ready < 0 && errno == EINTR);
    return ready != 0;
}

int nukeiso_recv_fd(int socket, int64_t deadline_ms) {
    int ready = wait_readable(socket, deadline_ms);
    if (ready == 2) return -1001;
    if (ready != 0) return ready;
    char byte = 0;
    struct iovec iov = {&byte, 1};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof control.buffer;
    ssize_t n;
    do {
        n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    if (n == 0) return -1000;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    if (header == NULL || header->cmsg_type != SCM_RIGHTS || header->cmsg_len != CMSG_LEN(sizeof(int))) return -EPROTO;
    int fd = -1;
    memcpy(&fd, CMSG_DATA(header), sizeof(int));
    return fd;
}

int nukeiso_memfd(size_t size) {
    int fd = (int)syscall(SYS_memfd_create, "nuke-pixels", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -errno;
    if (ftruncate(fd, (off_t)(size == 0 ? 1 : size)) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    // The size is final: a host that maps the buffer can never be made to fault (SIGBUS) by a
    // helper shrinking it afterwards. Writing stays allowed, so the helper can reuse the buffer.
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int nukeiso_is_size_sealed(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW);
}

void *nukeiso_map(int fd, size_t size, int populate) {
    // Populating allocates and maps every page in one call, far cheaper than a fault per page
    // while the decoder writes.
    void *address = mmap(NULL, size == 0 ? 1 : size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    return address == MAP_FAILED ? NULL : address;
}

void nukeiso_unmap(void *address, size_t size) {
    if (address != NULL) munmap(address, size == 0 ? 1 : size);
}

void nukeiso_close(int fd) {
    if (fd >= 0) close(fd);
}

int nukeiso_set_limits(uint64_t address_space, uint64_t cpu_seconds) {
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    struct rlimit as;
    getrlimit(RLIMIT_AS, &as);
    as.rlim_cur = address_space == 0 ? as.rlim_max : (address_space < as.rlim_max ? address_space : as.rlim_max);
    if (setrlimit(RLIMIT_AS, &as) != 0) return -errno;
    struct rlimit cpu;
    getrlimit(RLIMIT_CPU, &cpu);
    if (cpu_seconds == 0) {
        cpu.rlim_cur = cpu.rlim_max;
    } else {
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        uint64_t used = (uint64_t)usage.ru_utime.tv_sec + (uint64_t)usage.ru_stime.tv_sec + 1;
        uint64_t limit = used + cpu_seconds;
        cpu.rlim_cur = limit < cpu.rlim_max ? limit : cpu.rlim_max;
    }
    if (setrlimit(RLIMIT_CPU, &cpu) != 0) return -errno;
    return 0;
}

// MARK: - The sandbox

// The calls that end the process, in the order of their exit codes (100 + index).
static const struct { long number; const char *name; } blocked[] = {
    {SYS_socket, "socket"}, {SYS_socketpair, "socketpair"}, {SYS_connect, "connect"}, {SYS_bind, "bind"},
    {SYS_listen, "listen"}, {SYS_accept, "accept"}, {SYS_accept4, "accept4"},
    {SYS_execve, "execve"}, {SYS_execveat, "execveat"},
#ifdef SYS_fork
    {SYS_fork, "fork"},
#endif
#ifdef SYS_vfork
    {SYS_vfork, "vfork"},
#endif
    {SYS_clone, "clone (a new process)"}, {SYS_ptrace, "ptrace"}, {SYS_kill, "kill (another process)"},
    {SYS_tgkill, "tgkill (another process)"}, {SYS_process_vm_writev, "process_vm_writev"},
};
#define BLOCKED_COUNT ((int)(sizeof blocked / sizeof blocked[0]))

const char *nukeiso_blocked_call_name(int index) {
    return index >= 0 && index < BLOCKED_COUNT ? blocked[index].name : NULL;
}

static void on_sigsys(int signal, siginfo_t *info, void *context) {
    (void)signal;
    (void)context;
    for (int i = 0; i < BLOCKED_COUNT; i++) {
        if (blocked[i].number == info->si_syscall) _exit(100 + i);
    }
    _exit(99);
}


// MARK: - Landlock: files

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

// What text rendering and glib read: fonts, their configuration and cache, time zones, iconv
// modules and locales. Read-only; nothing else in the file system can be opened.
static const char *const readable[] = {
    "/usr/share/fonts", "/usr/local/share/fonts", "/etc/fonts", "/var/cache/fontconfig", "/usr/share/fontconfig",
    "/usr/share/zoneinfo", "/usr/lib/x86_64-linux-gnu/gconv", "/usr/lib/aarch64-linux-gnu/gconv", "/usr/lib/locale",
    "/usr/share/locale",
};

/// Restricts the file system to reading `readable`; returns 0, or -errno when Landlock is missing.
static int enter_landlock(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) return -ENOSYS;
    uint64_t handled = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
        LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
        LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
        LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
        LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    struct landlock_ruleset_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.handled_access_fs = handled;
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0);
    if (ruleset < 0) return -errno;
    for (size_t i = 0; i < sizeof readable / sizeof readable[0]; i++) {
        int fd = open(readable[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct landlock_path_beneath_attr rule = {
            .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
            .parent_fd = fd,
        };
        syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        close(fd);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        int error = errno;
        close(ruleset);
        return -error;
    }
    close(ruleset);
    return 0;
}

int nukeiso_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 1 ? 0 : (int)abi;
}

#if defined(__x86_64__)
#define NUKE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NUKE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

int nukeiso_enter_sandbox(int *files_by_landlock) {
    *files_by_landlock = 0;
#ifndef NUKE_AUDIT_ARCH
    return -ENOSYS;
#else
    // Files: Landlock where the kernel has it (reading fonts and locale data only), else the
    // seccomp filter below refuses every open.
    int landlocked = enter_landlock() == 0;
    *files_by_landlock = landlocked;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) return -errno;

    const uint32_t pid = (uint32_t)getpid();
    struct sock_filter filter[128];
    int n = 0;
#define EMIT(stmt) (filter[n++] = (struct sock_filter)stmt)
#define ARCH offsetof(struct seccomp_data, arch)
#define NR offsetof(struct seccomp_data, nr)
#define ARG0 offsetof(struct seccomp_data, args[0])
    EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH));
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NUKE_AUDIT_ARCH, 1, 0));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR));
    // Files: opening fails, so a library that looks for a file carries on without it.
    const long files[] = {
#ifdef SYS_open
        SYS_open,
#endif
#ifdef SYS_creat
        SYS_creat,
#endif
        SYS_openat,
#ifdef SYS_openat2
        SYS_openat2,
#endif
        SYS_open_by_handle_at,
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0] && !landlocked; i++) {
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)files[i], 0, 1));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)));
    }
    // clone3 cannot be inspected: make glibc fall back to clone.
#ifdef SYS_clone3
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
    // clone: threads only (CLONE_THREAD in the flags, the first argument on x86-64 and arm64).
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0));
    EMIT(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
    // kill and tgkill: this process only (abort and raise signal it).
    const long signalling[] = {SYS_kill, SYS_tgkill};
    for (size_t i = 0; i < 2; i++) {
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)signalling[i], 0, 4));
        EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0));
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 0, 1));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
    }
    // Everything else on the list ends the process.
    for (int i = 0; i < BLOCKED_COUNT; i++) {
        if (blocked[i].number == SYS_clone || blocked[i].number == SYS_kill || blocked[i].number == SYS_tgkill) continue;
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)blocked[i].number, 0, 1));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
    }
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#undef EMIT
    struct sock_fprog program = {(unsigned short)n, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    // TSYNC: every thread of the process gets the filter, not only this one (libraries may have
    // started threads while warming up).
    long synced = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
    if (synced > 0) return -EBUSY;
    if (synced != 0 && (errno != EINVAL || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)) return -errno;
    return 0;
#endif
}

// MARK: - The parent

static pid_t watched_parent;

static void *watch_parent(void *unused) {
    (void)unused;
    // A pidfd becomes readable when the process ends (Linux 5.3+); without one, poll the parent pid.
    int pidfd = (int)syscall(SYS_pidfd_open, watched_parent, 0);
    if (pidfd >= 0) {
        struct pollfd entry = {pidfd, POLLIN, 0};
        while (poll(&entry, 1, -1) < 0 && errno == EINTR) {}
        _exit(0);
    }
    while (getppid() == watched_parent) sleep(1);
    _exit(0);
}

int nukeiso_watch_parent(void) {
    watched_parent = getppid();
    if (watched_parent <= 1) return -ESRCH;
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    int result = pthread_create(&thread, &attributes, watch_parent, NULL);
    pthread_attr_destroy(&attributes);
    return -result;
}
