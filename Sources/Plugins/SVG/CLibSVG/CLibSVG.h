// librsvg, cairo and glib are not linked: NukeSVG's shim opens librsvg on first use
// (CSVGShim/shim.c). What it calls is declared in rsvg_abi.h, beside this header. zlib is linked
// for SVGZ.
#include <zlib.h>
#include "rsvg_abi.h"
