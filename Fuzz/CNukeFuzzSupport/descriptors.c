#define _GNU_SOURCE
#include "CNukeFuzzSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int nukefuzz_send_with_descriptors(int socket, const void *bytes, size_t length, int descriptors) {
    if (descriptors < 0) descriptors = 0;
    if (descriptors > 8) descriptors = 8;
    // Descriptors of every kind a helper holds: a file, shared memory, a pipe, the socket itself.
    int fds[8];
    int pipe_ends[2] = {-1, -1};
    int opened = 0;
    if (descriptors > 0 && pipe2(pipe_ends, O_CLOEXEC) != 0) return -errno;
    for (int i = 0; i < descriptors; i++) {
        int fd;
        switch (i % 4) {
            case 0: fd = open("/dev/null", O_RDONLY | O_CLOEXEC); break;
            case 1: fd = memfd_create("nukefuzz", MFD_CLOEXEC); break;
            case 2: fd = dup(pipe_ends[(i / 4) % 2]); break;
            default: fd = dup(socket); break;
        }
        if (fd < 0) break;
        fds[opened++] = fd;
    }
    char control[CMSG_SPACE(sizeof(int) * 8)];
    memset(control, 0, sizeof control);
    struct iovec iov = {(void *)bytes, length};
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    if (opened > 0) {
        message.msg_control = control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)opened);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)opened);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * (size_t)opened);
    }
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    int error = sent < 0 ? errno : 0;
    // The socket holds its own references to what was sent.
    for (int i = 0; i < opened; i++) close(fds[i]);
    if (pipe_ends[0] >= 0) close(pipe_ends[0]);
    if (pipe_ends[1] >= 0) close(pipe_ends[1]);
    if (error) return -error;
    return (size_t)sent == length ? 0 : -EAGAIN;
}
