#include <stddef.h>
int nukepng_placeholder(void);
