#ifndef CNUKEISOLATIONTESTSUPPORT_H
#define CNUKEISOLATIONTESTSUPPORT_H
#include <stddef.h>

// Misbehaviour for NukeIsolation's tests, as a C library might misbehave on a hostile file.

/// Writes through a null pointer (SIGSEGV).
void nuketest_segfault(void);
/// Calls abort() (SIGABRT).
void nuketest_abort(void);
/// Spins forever.
void nuketest_spin(void);
/// Allocates and touches 64 MiB blocks until malloc fails; returns the MiB allocated.
size_t nuketest_allocate_without_bound(void);
/// Opens `path` for reading; returns the descriptor (closed again) or -errno.
int nuketest_open(const char *path);
/// Creates a TCP socket; returns 0 or -errno.
int nuketest_socket(void);
/// Starts /bin/true with fork; returns 0 or -errno.
int nuketest_fork(void);

/// One attack a compromised helper would try, by name ("socket-inet", "io_uring_setup",
/// "kill-host", "process_vm_readv-host", "open-passwd", "capabilities"...), against the host
/// process `host`. Returns what the call returned (the attack worked: a descriptor, 0, 1) or
/// -errno (it was refused); a call the sandbox refuses by ending the process does not return.
/// -ENOSYS for an unknown name.
long nuketest_attack(const char *name, int host);

/// Writes `length` bytes to `socket` with `count` (1–250) copies of descriptor `fd` attached
/// (SCM_RIGHTS) to the first of them, as a compromised helper would try to fill the host's
/// descriptor table. Returns 0 or -errno.
int nuketest_write_with_descriptors(int socket, const void *bytes, size_t length, int fd, int count);
#endif
