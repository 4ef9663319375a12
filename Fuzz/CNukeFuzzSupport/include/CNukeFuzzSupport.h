#ifndef CNUKEFUZZSUPPORT_H
#define CNUKEFUZZSUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver. Built with `-sanitize=fuzzer`, libFuzzer provides it; otherwise the weak
/// definition in this target runs the callback once on each file named on the command line
/// (replaying a corpus or the saved regressions).
int LLVMFuzzerRunDriver(int *_Nonnull argc, char *_Nullable *_Nonnull *_Nonnull argv,
                        int (*_Nonnull callback)(const uint8_t *_Nonnull data, size_t size));

/// Sends `length` bytes on `socket` in one `sendmsg`, without blocking, with `descriptors` (0–8)
/// descriptors attached (SCM_RIGHTS): /dev/null, a memfd, a pipe end and the socket, in turn, as
/// a compromised helper could send them. Returns 0, or -errno (-EAGAIN when not all was sent).
int nukefuzz_send_with_descriptors(int socket, const void *_Nonnull bytes, size_t length, int descriptors);
#endif
