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

/// One function a shim resolves: its name, and the field of its table the address goes to.
typedef struct nuke_library_function {
    const char *_Nonnull name;
    void *_Nullable *_Nonnull address;
} nuke_library_function;

/// The `nuke_library_function` for the field `name` of the function table `table`, for a shim's
/// X-macro list: `const nuke_library_function functions[] = { LIST(MY_FUNCTION) };` with
/// `#define MY_FUNCTION(name) NUKE_LIBRARY_FUNCTION(table, name)`.
#define NUKE_LIBRARY_FUNCTION(table, name) {#name, (void **)&(table).name},

/// The one loader every shim uses: opens the first of `names` that loads (`nuke_library_open`)
/// and resolves each of the `count` `functions` into its field. Returns the library's handle, or
/// NULL with the dynamic loader's message in `error` when none loads or one function is missing.
void *_Nullable nuke_library_load(const char *_Nonnull const *_Nonnull names, const nuke_library_function *_Nonnull functions,
                                  size_t count, char *_Nonnull error, size_t capacity);

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
