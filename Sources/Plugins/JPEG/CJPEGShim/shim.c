#include "CJPEGShim.h"
int nukejpeg_placeholder(void) { return 0; }
