// Counts what the whole process allocates by defining malloc, free and their relatives in the
// executable: the dynamic linker binds every shared library's calls (libjpeg, libpng, giflib,
// libwebp, libheif and its codecs, librsvg, glib, cairo, the Swift runtime) to these, which
// forward to glibc's own entry points (__libc_malloc and friends). glibc only. Under
// AddressSanitizer (whose runtime owns malloc) nothing is defined and the counts stay 0.
#include "CAllocationCounter.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define NUKE_COUNT_ALLOCATIONS 0
#else
#define NUKE_COUNT_ALLOCATIONS 1
#endif

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic int64_t allocated = 0;
static _Atomic int64_t peak = 0;

#if NUKE_COUNT_ALLOCATIONS

static void count_in(void *pointer) {
    if (pointer == NULL) return;
    int64_t size = (int64_t)malloc_usable_size(pointer);
    int64_t now = atomic_fetch_add(&allocated, size) + size;
    int64_t seen = atomic_load(&peak);
    while (now > seen && !atomic_compare_exchange_weak(&peak, &seen, now)) {}
}

static void count_out(void *pointer) {
    if (pointer != NULL) atomic_fetch_sub(&allocated, (int64_t)malloc_usable_size(pointer));
}

void *malloc(size_t size) {
    void *pointer = __libc_malloc(size);
    count_in(pointer);
    return pointer;
}

void *calloc(size_t count, size_t size) {
    void *pointer = __libc_calloc(count, size);
    count_in(pointer);
    return pointer;
}

void *realloc(void *pointer, size_t size) {
    int64_t before = pointer != NULL ? (int64_t)malloc_usable_size(pointer) : 0;
    void *moved = __libc_realloc(pointer, size);
    if (moved == NULL && size != 0) return NULL;   // the old block is untouched
    atomic_fetch_sub(&allocated, before);
    count_in(moved);
    return moved;
}

void free(void *pointer) {
    count_out(pointer);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    void *pointer = __libc_memalign(alignment, size);
    count_in(pointer);
    return pointer;
}

void *aligned_alloc(size_t alignment, size_t size) {
    return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *out = pointer;
    return 0;
}

#endif

int64_t nuke_allocated_now(void) { return atomic_load(&allocated); }

int64_t nuke_allocated_reset_peak(void) {
    int64_t now = atomic_load(&allocated);
    atomic_store(&peak, now);
    return now;
}

int64_t nuke_allocated_peak(void) { return atomic_load(&peak); }
