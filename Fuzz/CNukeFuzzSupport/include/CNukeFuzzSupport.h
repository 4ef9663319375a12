#ifndef CNUKEFUZZSUPPORT_H
#define CNUKEFUZZSUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver. Built with `-sanitize=fuzzer`, libFuzzer provides it; otherwise the weak
/// definition in this target runs the callback once on each file named on the command line
/// (replaying a corpus or the saved regressions).
int LLVMFuzzerRunDriver(int *_Nonnull argc, char *_Nullable *_Nonnull *_Nonnull argv,
                        int (*_Nonnull callback)(const uint8_t *_Nonnull data, size_t size));
#endif
