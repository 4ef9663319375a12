// libheif's declarations (HEIC with libde265 and x265, AVIF with dav1d/aom). libheif is not
// linked: NukeHEIF's shim opens it on first use (CHEIFShim/shim.c).
#include <libheif/heif.h>
