// libjxl: the JPEG XL decoder and encoder (decode.h, encode.h). pkg-config: libjxl.
// The shim runs libjxl without a parallel runner (one thread), so libjxl_threads is not linked.
#include <jxl/decode.h>
#include <jxl/encode.h>
