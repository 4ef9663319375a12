#include "CPNGShim.h"
int nukepng_placeholder(void) { return 0; }
