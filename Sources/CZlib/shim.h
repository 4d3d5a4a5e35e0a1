// zlib, which inflates the gzip-compressed CSV files of an S3 Inventory report.
//
// Why the shim exists: inflateInit2 is a function-like macro (it passes zlib's version and the
// stream's size to inflateInit2_), which Swift does not import; 16 + MAX_WBITS asks for a gzip
// header and trailer (its CRC-32 and length are checked by zlib), MAX_WBITS being a macro too.
#include <zlib.h>

static inline int hvt_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 16 + MAX_WBITS);
}
