// libwebp: the decoder and encoder (libwebp), the demuxer (libwebpdemux) and the muxer and
// animation encoder (libwebpmux). pkg-config: libwebp, libwebpdemux, libwebpmux.
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>
#include <webp/mux.h>
