// librsvg, cairo and glib are linked by this module's map; the declarations NukeSVG's shim
// calls are in CSVGShim/rsvg_abi.h (their own headers need pkg-config's flags, see there).
#include <zlib.h>
