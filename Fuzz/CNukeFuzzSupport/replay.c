#include "CNukeFuzzSupport.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path, int (*callback)(const uint8_t *, size_t)) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) return 0;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    size_t read = fread(data, 1, size > 0 ? (size_t)size : 0, file);
    fclose(file);
    callback(data, read);
    free(data);
    return 1;
}

/// Without libFuzzer: replays every file (directories: every file inside) named in argv.
__attribute__((weak)) int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t)) {
    int count = 0;
    for (int i = 1; i < *argc; i++) {
        const char *path = (*argv)[i];
        if (path[0] == '-') continue;
        struct stat info;
        if (stat(path, &info) != 0) continue;
        if (S_ISDIR(info.st_mode)) {
            DIR *directory = opendir(path);
            struct dirent *entry;
            while (directory != NULL && (entry = readdir(directory)) != NULL) {
                if (entry->d_name[0] == '.') continue;
                char child[4096];
                snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
                count += replay_file(child, callback);
            }
            if (directory != NULL) closedir(directory);
        } else {
            count += replay_file(path, callback);
        }
    }
    fprintf(stderr, "NukeFuzz: replayed %d inputs (no libFuzzer linked)\n", count);
    return 0;
}
