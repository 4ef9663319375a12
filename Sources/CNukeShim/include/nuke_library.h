#ifndef NUKE_LIBRARY_H
#define NUKE_LIBRARY_H

// Loading a codec library the first time it is used (Docs/CShims.md, "Libraries loaded on first use").
//
// A shim whose library is costly to load opens it with `dlopen` on first use instead of linking
// it, so a process that never decodes the format never pays for it. The shim keeps a table of
// the functions it calls, filled once (`pthread_once`) with `nuke_library_symbol`.

#include <stddef.h>
#include "nuke_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opens the first of `names` (a NULL-terminated list of file names for `dlopen`) that loads, with
/// `RTLD_NOW | RTLD_LOCAL`. Returns NULL when none does, with the dynamic loader's message for the
/// first name in `error`.
void *_Nullable nuke_library_open(const char *_Nonnull const *_Nonnull names, char *_Nonnull error, size_t capacity);

/// The address of `symbol` in the library `handle` (or in the libraries it depends on), or NULL
/// with a message naming the symbol in `error`.
void *_Nullable nuke_library_symbol(void *_Nonnull handle, const char *_Nonnull symbol, char *_Nonnull error, size_t capacity);

/// A field of a shim's function table: a pointer of the declared function's own type.
#define NUKE_LIBRARY_FIELD(name) __typeof__(name) *_Nullable name;

/// The status of a shim's first-use load, for `nuke_diagnostics`: OK, or UNSUPPORTED with the
/// loader's message (the library is not installed, or lacks a function the shim calls).
static inline nuke_status nuke_library_status(int loaded, const char *_Nonnull error, nuke_diagnostics *_Nullable diagnostics) {
    if (loaded) return NUKE_STATUS_OK;
    if (diagnostics != NULL) nuke_diagnostics_set_message(diagnostics, error);
    return NUKE_STATUS_UNSUPPORTED;
}

#ifdef __cplusplus
}
#endif

#endif
