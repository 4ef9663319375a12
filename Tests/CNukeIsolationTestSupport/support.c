#include "CNukeIsolationTestSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
