// CNukeShim: the shim convention (nuke_shim.h, header-only) and the first-use library loader.
#include "nuke_shim.h"
#include "nuke_library.h"

#include <dlfcn.h>
#include <stdio.h>

void *nuke_library_open(const char *const *names, char *error, size_t capacity) {
    error[0] = '\0';
    for (size_t i = 0; names[i] != NULL; i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) return handle;
        const char *message = dlerror();
        if (i == 0) snprintf(error, capacity, "%s", message != NULL ? message : names[i]);
    }
    return NULL;
}

void *nuke_library_symbol(void *handle, const char *symbol, char *error, size_t capacity) {
    void *address = dlsym(handle, symbol);
    if (address == NULL) snprintf(error, capacity, "the loaded library has no `%s`", symbol);
    return address;
}

void *nuke_library_load(const char *const *names, const nuke_library_function *functions, size_t count, char *error, size_t capacity) {
    void *handle = nuke_library_open(names, error, capacity);
    if (handle == NULL) return NULL;
    for (size_t i = 0; i < count; i++) {
        *functions[i].address = nuke_library_symbol(handle, functions[i].name, error, capacity);
        if (*functions[i].address == NULL) return NULL;
    }
    return handle;
}
