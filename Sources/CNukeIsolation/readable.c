#define _GNU_SOURCE
#include "CNukeIsolation.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

// What text rendering and glib read besides fontconfig's own paths: time zones, iconv modules and
// locales. Read-only.
static const char *const fixed[] = {
    "/usr/share/fonts", "/usr/local/share/fonts", "/etc/fonts", "/var/cache/fontconfig", "/usr/share/fontconfig",
    "/usr/share/zoneinfo", "/usr/lib/x86_64-linux-gnu/gconv", "/usr/lib/aarch64-linux-gnu/gconv", "/usr/lib/locale",
    "/usr/share/locale",
};

struct paths {
    char **items;
    size_t count;
    size_t capacity;
};

/// Whether `path` is `/`, an account's home folder or a parent of one (root's included). A
/// fontconfig file in a home folder (~/.fonts.conf) names its folder for conf.d: the sandbox must
/// then leave out the folder, never open the home (and ~/.ssh with it) to a helper.
int nukeiso_is_home_or_parent(const char *path) {
    char resolved[PATH_MAX];
    const char *full = realpath(path, resolved) != NULL ? resolved : path;
    size_t length = strlen(full);
    while (length > 1 && full[length - 1] == '/') length--;
    if (length <= 1) return 1;
    const char *homes[] = {getenv("HOME"), "/root", "/home"};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++) {
        const char *home = homes[i];
        if (home == NULL || home[0] != '/') continue;
        if (strncmp(home, full, length) == 0 && (home[length] == 0 || home[length] == '/')) return 1;
    }
    int found = 0;
    setpwent();
    struct passwd *entry;
    while (!found && (entry = getpwent()) != NULL) {
        const char *home = entry->pw_dir;
        if (home == NULL || home[0] != '/' || home[1] == 0) continue;
        found = strncmp(home, full, length) == 0 && (home[length] == 0 || home[length] == '/');
    }
    endpwent();
    return found;
}

static void add(struct paths *paths, const char *path) {
    if (path == NULL || path[0] != '/') return;
    if (nukeiso_is_home_or_parent(path)) return;
    for (size_t i = 0; i < paths->count; i++) {
        if (strcmp(paths->items[i], path) == 0) return;
    }
    if (paths->count == paths->capacity) {
        size_t capacity = paths->capacity == 0 ? 32 : paths->capacity * 2;
        char **items = realloc(paths->items, capacity * sizeof(char *));
        if (items == NULL) return;
        paths->items = items;
        paths->capacity = capacity;
    }
    char *copy = strdup(path);
    if (copy != NULL) paths->items[paths->count++] = copy;
}

/// A path, where its symbolic links lead, and the folder holding it (a configuration file's
/// folder is listed when fontconfig reads `conf.d`).
static void add_with_target(struct paths *paths, const char *path, int with_folder) {
    add(paths, path);
    char resolved[PATH_MAX];
    if (realpath(path, resolved) != NULL) add(paths, resolved);
    if (with_folder) {
        char copy[PATH_MAX];
        strncpy(copy, path, sizeof copy - 1);
        copy[sizeof copy - 1] = 0;
        add(paths, dirname(copy));
        if (realpath(path, resolved) != NULL) add(paths, dirname(resolved));
    }
}

typedef void FcConfig;
typedef void FcStrList;

/// fontconfig's configured font, cache and configuration paths (FONTCONFIG_FILE and the app's own
/// <dir> elements included), read with the library the process would render text with.
static void add_fontconfig(struct paths *paths) {
    void *library = dlopen("libfontconfig.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    FcConfig *(*load)(void) = (FcConfig *(*)(void))dlsym(library, "FcInitLoadConfig");
    // The font folders (<dir> elements, subfolders included) and the configuration folders.
    FcStrList *(*fontDirs)(FcConfig *) = (FcStrList *(*)(FcConfig *))dlsym(library, "FcConfigGetFontDirs");
    FcStrList *(*configDirs)(FcConfig *) = (FcStrList *(*)(FcConfig *))dlsym(library, "FcConfigGetConfigDirs");
    FcStrList *(*cacheDirs)(const FcConfig *) = (FcStrList *(*)(const FcConfig *))dlsym(library, "FcConfigGetCacheDirs");
    FcStrList *(*files)(FcConfig *) = (FcStrList *(*)(FcConfig *))dlsym(library, "FcConfigGetConfigFiles");
    unsigned char *(*next)(FcStrList *) = (unsigned char *(*)(FcStrList *))dlsym(library, "FcStrListNext");
    void (*done)(FcStrList *) = (void (*)(FcStrList *))dlsym(library, "FcStrListDone");
    void (*destroy)(FcConfig *) = (void (*)(FcConfig *))dlsym(library, "FcConfigDestroy");
    if (load == NULL || fontDirs == NULL || configDirs == NULL || cacheDirs == NULL || files == NULL || next == NULL || done == NULL || destroy == NULL) return;
    FcConfig *config = load();
    if (config == NULL) return;
    FcStrList *lists[4] = {fontDirs(config), configDirs(config), cacheDirs(config), files(config)};
    for (int i = 0; i < 4; i++) {
        if (lists[i] == NULL) continue;
        unsigned char *path;
        while ((path = next(lists[i])) != NULL) add_with_target(paths, (const char *)path, i == 3);
        done(lists[i]);
    }
    destroy(config);
    // The library stays loaded: librsvg uses it.
}

char *_Nonnull *_Nullable nukeiso_readable_paths(int with_fontconfig, size_t *count) {
    struct paths paths = {NULL, 0, 0};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) add(&paths, fixed[i]);
    const char *file = getenv("FONTCONFIG_FILE");
    if (file != NULL) add_with_target(&paths, file, 1);
    const char *folder = getenv("FONTCONFIG_PATH");
    if (folder != NULL) add_with_target(&paths, folder, 0);
    if (with_fontconfig) add_fontconfig(&paths);
    *count = paths.count;
    return paths.items;
}

void nukeiso_free_paths(char *_Nonnull *_Nullable paths, size_t count) {
    if (paths == NULL) return;
    for (size_t i = 0; i < count; i++) free(paths[i]);
    free(paths);
}
