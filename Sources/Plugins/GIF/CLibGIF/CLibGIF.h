// giflib ships no pkg-config file on Debian; its header is /usr/include/gif_lib.h.
#include <gif_lib.h>
