// libheif (HEIC with libde265 and x265, AVIF with dav1d/aom). pkg-config: libheif.
#include <libheif/heif.h>
