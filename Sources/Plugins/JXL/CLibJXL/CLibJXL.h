// libjxl: the JPEG XL decoder and encoder (decode.h, encode.h). Not linked: the shim opens
// libjxl.so.0.7 on first use (Docs/CShims.md); it runs without a parallel runner (one thread), so
// libjxl_threads is not used.
#include <jxl/decode.h>
#include <jxl/encode.h>
