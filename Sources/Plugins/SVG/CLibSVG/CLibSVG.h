// librsvg, cairo and glib are not linked: NukeSVG's shim opens librsvg on first use
// (CSVGShim/shim.c) and declares what it calls in CSVGShim/rsvg_abi.h. zlib is linked for SVGZ.
#include <zlib.h>
