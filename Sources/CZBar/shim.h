// zbar, imported whole. zbar_fourcc() is a function-like macro Swift cannot import, so the one
// image format we use (8-bit gray, "Y800") gets an accessor.
#include <zbar.h>

static inline unsigned long hvt_zbar_format_gray8(void) {
    return zbar_fourcc('Y', '8', '0', '0');
}
