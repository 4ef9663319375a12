#define _GNU_SOURCE
#include "CNukeIsolationTestSupport.h"

extern char **environ;
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

void nuketest_segfault(void) {
    volatile int *pointer = NULL;
    *pointer = 1;
}

void nuketest_abort(void) {
    abort();
}

void nuketest_spin(void) {
    volatile unsigned long counter = 0;
    for (;;) counter++;
}

size_t nuketest_allocate_without_bound(void) {
    size_t total = 0;
    for (;;) {
        char *block = malloc(64 << 20);
        if (block == NULL) return total;
        memset(block, 1, 64 << 20);
        total += 64;
    }
}

int nuketest_open(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -errno;
    close(fd);
    return fd;
}

int nuketest_socket(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -errno;
    close(fd);
    return 0;
}

int nuketest_fork(void) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    return 0;
}

// MARK: - Attacks a compromised helper would try (the probe's)

#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

static void *idle_thread(void *unused) {
    (void)unused;
    for (;;) sleep(1000);
    return NULL;
}

static long result(long value) {
    return value < 0 ? -errno : value;
}

long nuketest_attack(const char *name, int host) {
    if (strcmp(name, "socket-inet") == 0) return result(socket(AF_INET, SOCK_STREAM, 0));
    if (strcmp(name, "socket-unix") == 0) return result(socket(AF_UNIX, SOCK_STREAM, 0));
    if (strcmp(name, "socketpair") == 0) {
        int fds[2];
        return result(socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
    }
    if (strcmp(name, "io_uring_setup") == 0) {
        struct io_uring_params params;
        memset(&params, 0, sizeof params);
        return result(syscall(SYS_io_uring_setup, 8, &params));
    }
    if (strcmp(name, "kill-host") == 0) return result(kill(host, 0));
    if (strcmp(name, "kill-parent") == 0) return result(kill(getppid(), 0));
    if (strcmp(name, "kill-group") == 0) return result(kill(0, 0));
    if (strcmp(name, "kill-everyone") == 0) return result(kill(-1, 0));
    if (strcmp(name, "tkill-host") == 0) return result(syscall(SYS_tkill, host, 0));
    if (strcmp(name, "tgkill-host") == 0) return result(syscall(SYS_tgkill, host, host, 0));
    if (strcmp(name, "rt_sigqueueinfo-host") == 0) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_code = SI_QUEUE;
        return result(syscall(SYS_rt_sigqueueinfo, host, 0, &info));
    }
    if (strcmp(name, "pidfd_open-host") == 0) return result(syscall(SYS_pidfd_open, host, 0));
    if (strcmp(name, "pidfd_send_signal") == 0) return result(syscall(SYS_pidfd_send_signal, 3, 0, NULL, 0));
    if (strcmp(name, "pidfd_getfd") == 0) return result(syscall(SYS_pidfd_getfd, 3, 0, 0));
    if (strcmp(name, "process_vm_readv-host") == 0) {
        char buffer[16];
        struct iovec local = {buffer, sizeof buffer};
        struct iovec remote = {(void *)0x400000, sizeof buffer};
        return result(syscall(SYS_process_vm_readv, host, &local, 1, &remote, 1, 0));
    }
    if (strcmp(name, "process_vm_writev-host") == 0) {
        char buffer[16] = {0};
        struct iovec local = {buffer, sizeof buffer};
        struct iovec remote = {(void *)0x400000, sizeof buffer};
        return result(syscall(SYS_process_vm_writev, host, &local, 1, &remote, 1, 0));
    }
    if (strcmp(name, "ptrace-host") == 0) return result(ptrace(PTRACE_ATTACH, host, NULL, NULL));
    if (strcmp(name, "prlimit-host") == 0) {
        struct rlimit old;
        return result(syscall(SYS_prlimit64, host, RLIMIT_NOFILE, NULL, &old));
    }
    if (strcmp(name, "bpf") == 0) {
        union bpf_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.map_type = BPF_MAP_TYPE_ARRAY;
        attr.key_size = 4;
        attr.value_size = 4;
        attr.max_entries = 1;
        return result(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr));
    }
    if (strcmp(name, "perf_event_open") == 0) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_CPU_CLOCK;
        return result(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }
    if (strcmp(name, "userfaultfd") == 0) return result(syscall(SYS_userfaultfd, 0));
    if (strcmp(name, "unshare-user") == 0) return result(unshare(CLONE_NEWUSER));
    if (strcmp(name, "setns") == 0) return result(setns(0, 0));
    if (strcmp(name, "mount") == 0) return result(mount("none", "/tmp", "tmpfs", 0, NULL));
    if (strcmp(name, "keyctl") == 0) return result(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
    if (strcmp(name, "init_module") == 0) return result(syscall(SYS_init_module, NULL, 0, ""));
    // Invalid magic numbers: were the call allowed, the kernel would refuse it with EINVAL after
    // its capability check, so success is impossible even when the filter lets it through.
    if (strcmp(name, "reboot") == 0) return result(syscall(SYS_reboot, 0, 0, 0, NULL));
    if (strcmp(name, "sethostname") == 0) return result(sethostname("nuke", 4));
    if (strcmp(name, "setuid-root") == 0) return result(setuid(0));
    if (strcmp(name, "chroot") == 0) return result(chroot("/"));
    if (strcmp(name, "execve") == 0) {
        char *argv[] = {"/bin/true", NULL};
        char *envp[] = {NULL};
        return result(execve("/bin/true", argv, envp));
    }
    if (strcmp(name, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        return result(pid);
    }
    if (strcmp(name, "open-passwd") == 0) return result(open("/etc/passwd", O_RDONLY));
    if (strcmp(name, "open-host-mem") == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", host);
        return result(open(path, O_RDONLY));
    }
    if (strcmp(name, "open-tmp-write") == 0) return result(open("/tmp/nuke-sandbox-probe", O_WRONLY | O_CREAT, 0600));
    if (strcmp(name, "fcntl-setown") == 0) return result(fcntl(3, F_SETOWN, host));
    if (strcmp(name, "ioctl-tiocsti") == 0) {
        char c = 'x';
        return result(ioctl(2, TIOCSTI, &c));
    }
    if (strcmp(name, "prctl-dumpable") == 0) return result(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
    if (strcmp(name, "capabilities") == 0) {
        // Allowed (1) when any capability is held.
        struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        if (syscall(SYS_capget, &header, data) != 0) return -errno;
        for (int i = 0; i < 2; i++) {
            if (data[i].effective || data[i].permitted || data[i].inheritable) return 1;
        }
        return -EPERM;
    }
    if (strcmp(name, "root") == 0) return getuid() == 0 || geteuid() == 0 ? 1 : -EPERM;
    // W^X: no mapping that is both writable and executable, and no page made executable later.
    if (strcmp(name, "mmap-rwx") == 0) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) return -errno;
        munmap(page, 4096);
        return 1;
    }
    if (strcmp(name, "mprotect-exec") == 0) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) return -errno;
        int changed = mprotect(page, 4096, PROT_READ | PROT_EXEC);
        int error = errno;
        munmap(page, 4096);
        return changed == 0 ? 1 : -error;
    }
    // The host's environment: the probe host runs with NUKE_TEST_SECRET set, as a service holds
    // its keys; reading environ needs no system call, so only an empty environment keeps it.
    if (strcmp(name, "environment-secret") == 0) {
        for (char **entry = environ; *entry != NULL; entry++) {
            if (strncmp(*entry, "NUKE_TEST_SECRET=", 17) == 0) return 1;
        }
        return -ENOENT;
    }
    // Threads without end: capped for the sandbox's identity (RLIMIT_NPROC), so fewer than a
    // thousand start.
    if (strcmp(name, "threads-1000") == 0) {
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 64 * 1024);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        int started = 0, error = 0;
        for (; started < 1000; started++) {
            pthread_t thread;
            error = pthread_create(&thread, &attributes, idle_thread, NULL);
            if (error != 0) break;
        }
        pthread_attr_destroy(&attributes);
        return started == 1000 ? 1 : -error;
    }
    // The host's paths without Landlock: its working folder through /proc, whether a file exists.
    if (strcmp(name, "readlink-host-cwd") == 0) {
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/%d/cwd", host);
        ssize_t length = readlink(link, target, sizeof target - 1);
        return length >= 0 ? 1 : -errno;
    }
    if (strcmp(name, "access-shadow") == 0) return result(access("/etc/shadow", F_OK));
    if (strcmp(name, "environment-home") == 0) return getenv("HOME") != NULL ? 1 : -ENOENT;
    if (strcmp(name, "inherited-descriptors") == 0) {
        // Allowed (the descriptor's number) when a descriptor other than standard input, output,
        // error and the channel is a file, a socket or a pipe the helper did not make.
        for (int fd = 4; fd < 1024; fd++) {
            struct stat info;
            if (fstat(fd, &info) != 0) continue;
            char link[64], target[256];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t length = readlink(link, target, sizeof target - 1);
            if (length < 0) continue;
            target[length] = 0;
            if (strncmp(target, "anon_inode:", 11) == 0 || strncmp(target, "/memfd:", 7) == 0) continue;
            return fd;
        }
        return -EBADF;
    }
    return -ENOSYS;
}

int nuketest_write_with_descriptors(int socket, const void *bytes, size_t length, int fd, int count) {
    if (count < 1) count = 1;
    if (count > 250) count = 250;
    size_t space = CMSG_SPACE(sizeof(int) * (size_t)count);
    char *control = calloc(1, space);
    if (!control) return -ENOMEM;
    struct iovec iov = {(void *)bytes, length};
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = space;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
    int *fds = (int *)CMSG_DATA(header);
    for (int i = 0; i < count; i++) fds[i] = fd;
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    free(control);
    if (sent < 0) return -errno;
    const char *rest = (const char *)bytes + sent;
    size_t left = length - (size_t)sent;
    while (left > 0) {
        ssize_t n = write(socket, rest, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -errno : -EIO;
        rest += n;
        left -= (size_t)n;
    }
    return 0;
}
