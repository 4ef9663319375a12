#ifndef NUKE_ALLOCATION_COUNTER_H
#define NUKE_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Bytes allocated through malloc and friends (as `malloc_usable_size` counts them) and not yet
/// freed, by every library in the process.
int64_t nuke_allocated_now(void);

/// Starts a new peak at what is allocated now, and returns it.
int64_t nuke_allocated_reset_peak(void);

/// The most allocated at once since the last `nuke_allocated_reset_peak`.
int64_t nuke_allocated_peak(void);

#endif
