// Little CMS 2 (liblcms2-dev on Debian: /usr/include/lcms2.h, pkg-config lcms2).
#include <lcms2.h>
