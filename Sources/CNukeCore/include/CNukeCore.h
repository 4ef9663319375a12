#ifndef CNUKECORE_H
#define CNUKECORE_H
#include <stddef.h>

/// A codec record: a function that announces one codec to NukeCore.
/// Plugins place these in the `nuke_codecs` linker section.
typedef void (*nukecore_codec_record)(void);

/// Returns the records the linker gathered in the `nuke_codecs` section and
/// stores their number in `count` (0 and NULL when no plugin is linked).
const nukecore_codec_record *nukecore_codec_records(size_t *count);

#endif
