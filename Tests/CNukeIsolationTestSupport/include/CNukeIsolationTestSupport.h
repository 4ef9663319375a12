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
#endif
