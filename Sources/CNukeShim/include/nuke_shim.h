#ifndef NUKE_SHIM_H
#define NUKE_SHIM_H

// The one convention every plugin's C shim follows (Docs/CShims.md).
//
// - Every function that can fail returns a `nuke_status`.
// - The library's own message, and its warnings, are kept in a `nuke_diagnostics` owned by the
//   C handle (or passed in by the caller for handle-less calls such as one-shot encoders).
// - Errors are classified by the library's error codes or by the shim's own checks, never by
//   matching the library's message text.
// - Every buffer the shim returns has exactly one free function, named `<prefix>_buffer_free`.
// - Pointers carry nullability annotations.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a shim call did. The numbering is part of the convention: NukePluginKit maps it to
/// `ImageCodecError.Code` (`ImageCodecError.Code(shimStatus:)`).
typedef enum nuke_status {
    /// Done.
    NUKE_STATUS_OK = 0,
    /// Incremental decoding: every byte given was consumed and more are needed.
    NUKE_STATUS_NEED_MORE = 1,
    /// The call stopped at an event the caller acts on (the header is ready, a scan, pass or
    /// frame is complete); call again to go on.
    NUKE_STATUS_PAUSED = 2,
    /// The input ended (the caller declared its end) before the image did.
    NUKE_STATUS_INCOMPLETE = 3,
    /// The data is malformed.
    NUKE_STATUS_CORRUPT = 4,
    /// The data uses a feature the library (as built) does not support.
    NUKE_STATUS_UNSUPPORTED = 5,
    /// A limit set by the caller was exceeded.
    NUKE_STATUS_LIMIT = 6,
    /// Out of memory, or a broken invariant: not the input's fault.
    NUKE_STATUS_INTERNAL = 7,
    /// The caller's cancellation check (`nuke_cancellation`) answered yes.
    NUKE_STATUS_CANCELLED = 8,
} nuke_status;

/// The caller's cancellation check, for shim calls that run long (a whole image, a frame, a
/// tile). The shim asks between rows, chunks or tiles and returns `NUKE_STATUS_CANCELLED`.
/// NukePluginKit makes one from an `ImageDecodingCancellation` (`withShimCancellation`).
typedef struct nuke_cancellation {
    /// Returns nonzero to stop; NULL never stops.
    int (*_Nullable is_cancelled)(void *_Nullable context);
    void *_Nullable context;
} nuke_cancellation;

/// Whether `cancellation` (which may be NULL) asks the call to stop.
static inline int nuke_is_cancelled(const nuke_cancellation *_Nullable cancellation) {
    return cancellation != NULL && cancellation->is_cancelled != NULL && cancellation->is_cancelled(cancellation->context);
}

/// The capacity of a diagnostics message, terminating NUL included.
#define NUKE_MESSAGE_CAPACITY 256

/// What the library said: the fatal error's message and its warnings.
///
/// Warnings are data a library tolerated (corrupt entropy data, a bad ancillary CRC): the
/// Swift side reports them, and a strict decode turns the first one into an error.
typedef struct nuke_diagnostics {
    /// The last error's message, or "".
    char message[NUKE_MESSAGE_CAPACITY];
    /// The first warning's message, or "".
    char first_warning[NUKE_MESSAGE_CAPACITY];
    /// How many warnings the library emitted.
    uint32_t warning_count;
} nuke_diagnostics;

/// Copies `text` (NULL reads as "unknown error") into `diagnostics->message`, truncating it.
static inline void nuke_diagnostics_set_message(nuke_diagnostics *_Nonnull diagnostics, const char *_Nullable text) {
    const char *source = text != NULL ? text : "unknown error";
    size_t i = 0;
    for (; i + 1 < NUKE_MESSAGE_CAPACITY && source[i] != '\0'; i++) diagnostics->message[i] = source[i];
    diagnostics->message[i] = '\0';
}

/// Counts a warning and keeps the first one's text.
static inline void nuke_diagnostics_add_warning(nuke_diagnostics *_Nonnull diagnostics, const char *_Nullable text) {
    if (diagnostics->warning_count++ > 0) return;
    const char *source = text != NULL ? text : "unknown warning";
    size_t i = 0;
    for (; i + 1 < NUKE_MESSAGE_CAPACITY && source[i] != '\0'; i++) diagnostics->first_warning[i] = source[i];
    diagnostics->first_warning[i] = '\0';
}

#ifdef __cplusplus
}
#endif

#endif
