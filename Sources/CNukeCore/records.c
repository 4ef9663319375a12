#include "CNukeCore.h"

// The linker defines these for any section whose name is a C identifier.
// They are weak so that an app linking no plugin still links: both are NULL.
extern const nukecore_codec_record __start_nuke_codecs[] __attribute__((weak));
extern const nukecore_codec_record __stop_nuke_codecs[] __attribute__((weak));

const nukecore_codec_record *nukecore_codec_records(size_t *count) {
    if (__start_nuke_codecs == NULL || __stop_nuke_codecs == NULL ||
        __stop_nuke_codecs <= __start_nuke_codecs) {
        *count = 0;
        return NULL;
    }
    *count = (size_t)(__stop_nuke_codecs - __start_nuke_codecs);
    return __start_nuke_codecs;
}
