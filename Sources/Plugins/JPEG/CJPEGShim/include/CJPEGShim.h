#include <stddef.h>
int nukejpeg_placeholder(void);
