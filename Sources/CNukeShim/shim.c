// CNukeShim is header-only (nuke_shim.h); SwiftPM needs one source file in a C target.
#include "nuke_shim.h"
