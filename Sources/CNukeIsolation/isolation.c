#define _GNU_SOURCE
#include "CNukeIsolation.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

// The variables a helper inherits, by name: fontconfig's, the locale's, the loader's path, and
// the codecs' own switches. Everything else stays with the host.
static const char *const inherited[] = {
    "FONTCONFIG_FILE", "FONTCONFIG_PATH", "FONTCONFIG_SYSROOT", "FC_DEBUG", "XDG_DATA_DIRS",
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_MESSAGES", "TZ", "LD_LIBRARY_PATH",
    "NUKE_PNG_IDAT", "NUKE_HEIF_HEVC_DECODER",
};

int nukeiso_helper_may_inherit(const char *entry) {
    const char *equals = strchr(entry, '=');
    if (equals == NULL) return 0;
    size_t length = (size_t)(equals - entry);
    for (size_t i = 0; i < sizeof inherited / sizeof inherited[0]; i++) {
        if (strlen(inherited[i]) == length && strncmp(entry, inherited[i], length) == 0) return 1;
    }
    return 0;
}

static pid_t spawn_now(const char *path, char *const *argv, int stderr_fd, int *host_fd) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return -errno;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    // Standard output is the host's (often its log): the helper gets /dev/null.
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (stderr_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    // dup2 clears close-on-exec on the copy: the child keeps fd 3 and nothing else of ours.
    posix_spawn_file_actions_adddup2(&actions, fds[1], 3);
    // Descriptors the host opened without close-on-exec (an input file, a log) stay here.
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);

    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    // An empty environment plus what the codecs and the loader need: the host's secrets (keys,
    // tokens, database URLs) never reach a process that untrusted bytes may take over. HOME is
    // not passed: fontconfig would read ~/.fonts.conf and the sandbox would have to open the home
    // folder for it.
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
        if (nukeiso_helper_may_inherit(environ[i])) environment[used++] = environ[i];
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

int nukeiso_start_thread(void *(*body)(void *), size_t stack_size) {
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, stack_size);
    int result = pthread_create(&thread, &attributes, body, NULL);
    pthread_attr_destroy(&attributes);
    return -result;
}

// Helpers and zygotes ask the kernel to end them when their parent ends (PR_SET_PDEATHSIG), and
// "parent" there means the thread that started them: a helper started from a Dispatch worker
// would be killed when that worker retires. So every start happens on one thread that lives as
// long as the process.
struct spawn_request {
    const char *path;
    char *const *argv;
    int stderr_fd;
    int *host_fd;
    pid_t result;
    int done;
    struct spawn_request *next;
};

static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawn_posted = PTHREAD_COND_INITIALIZER;
static pthread_cond_t spawn_finished = PTHREAD_COND_INITIALIZER;
static struct spawn_request *spawn_head, *spawn_tail;
static int spawner_state;  // 0: not started, 1: running, -errno: could not start

static void *spawner(void *unused) {
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&spawn_lock);
    for (;;) {
        while (spawn_head == NULL) pthread_cond_wait(&spawn_posted, &spawn_lock);
        struct spawn_request *request = spawn_head;
        spawn_head = request->next;
        if (spawn_head == NULL) spawn_tail = NULL;
        pthread_mutex_unlock(&spawn_lock);
        pid_t result = spawn_now(request->path, request->argv, request->stderr_fd, request->host_fd);
        pthread_mutex_lock(&spawn_lock);
        request->result = result;
        request->done = 1;
        pthread_cond_broadcast(&spawn_finished);
    }
    return NULL;
}

pid_t nukeiso_spawn(const char *path, char *const *argv, int stderr_fd, int *host_fd) {
    struct spawn_request request = {path, argv, stderr_fd, host_fd, 0, 0, NULL};
    pthread_mutex_lock(&spawn_lock);
    if (spawner_state == 0) {
        int error = nukeiso_start_thread(spawner, 256 * 1024);
        spawner_state = error == 0 ? 1 : error;
    }
    if (spawner_state < 0) {
        int error = spawner_state;
        pthread_mutex_unlock(&spawn_lock);
        return error;
    }
    if (spawn_tail != NULL) spawn_tail->next = &request; else spawn_head = &request;
    spawn_tail = &request;
    pthread_cond_signal(&spawn_posted);
    while (!request.done) pthread_cond_wait(&spawn_finished, &spawn_lock);
    pthread_mutex_unlock(&spawn_lock);
    return request.result;
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

int nukeiso_await_exit(pid_t pid, int timeout_ms) {
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) return errno == ESRCH ? 1 : -1;
    struct pollfd entry = {.fd = fd, .events = POLLIN};
    int64_t deadline = nukeiso_now_ms() + timeout_ms;
    int ready;
    for (;;) {
        int64_t left = deadline - nukeiso_now_ms();
        ready = poll(&entry, 1, left > 0 ? (int)left : 0);
        if (ready >= 0 || errno != EINTR) break;
    }
    close(fd);
    return ready > 0 ? 1 : ready == 0 ? 0 : -1;
#else
    (void)pid;
    (void)timeout_ms;
    return -1;
#endif
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

int nukeiso_write_message(int fd, uint8_t kind, const void *payload, size_t length) {
    if (length > UINT32_MAX) return -EMSGSIZE;
    uint8_t header[5] = {kind, (uint8_t)length, (uint8_t)(length >> 8), (uint8_t)(length >> 16), (uint8_t)(length >> 24)};
    // The header and the payload in one call, without copying the payload behind the header.
    struct iovec parts[2] = {{header, sizeof header}, {(void *)payload, length}};
    struct iovec *next = parts;
    int count = length > 0 ? 2 : 1;
    while (count > 0) {
        struct msghdr message = {0};
        message.msg_iov = next;
        message.msg_iovlen = (size_t)count;
        ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) n = writev(fd, next, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        size_t sent = (size_t)n;
        while (count > 0 && sent >= next->iov_len) {
            sent -= next->iov_len;
            next++;
            count--;
        }
        if (count > 0) {
            next->iov_base = (uint8_t *)next->iov_base + sent;
            next->iov_len -= sent;
        }
    }
    return 0;
}

int64_t nukeiso_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Waits until `fd` is readable or the deadline passes: 0 ready, 2 deadline, -errno.
int nukeiso_wait_readable(int fd, int64_t deadline_ms) {
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
        int ready = nukeiso_wait_readable(fd, deadline_ms);
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
    int ready = nukeiso_wait_readable(socket, deadline_ms);
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
    // The size is final, and so are the seals: a process the buffer is lent to can neither make
    // its owner fault (SIGBUS) by shrinking it nor seal the owner out of writing it.
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
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

int nukeiso_set_limits(uint64_t address_space, uint64_t cpu_seconds, uint64_t cpu_ceiling_seconds) {
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    // Soft and hard alike: a helper cannot raise its own hard limits again, so code running in
    // it cannot lift them either. A request above the current hard limit gets the hard limit.
    if (address_space != 0) {
        struct rlimit as;
        getrlimit(RLIMIT_AS, &as);
        rlim_t limit = as.rlim_max == RLIM_INFINITY || address_space < as.rlim_max ? (rlim_t)address_space : as.rlim_max;
        as.rlim_cur = limit;
        as.rlim_max = limit;
        if (setrlimit(RLIMIT_AS, &as) != 0) return -errno;
    }
    if (cpu_seconds != 0) {
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        uint64_t used = (uint64_t)usage.ru_utime.tv_sec + (uint64_t)usage.ru_stime.tv_sec + 1;
        struct rlimit cpu;
        getrlimit(RLIMIT_CPU, &cpu);
        rlim_t ceiling = (rlim_t)(used + (cpu_ceiling_seconds > cpu_seconds ? cpu_ceiling_seconds : cpu_seconds));
        if (cpu.rlim_max != RLIM_INFINITY && cpu.rlim_max < ceiling) ceiling = cpu.rlim_max;
        rlim_t soft = (rlim_t)(used + cpu_seconds);
        cpu.rlim_cur = soft < ceiling ? soft : ceiling;
        cpu.rlim_max = ceiling;
        if (setrlimit(RLIMIT_CPU, &cpu) != 0) return -errno;
    }
    return 0;
}
