// The libjpeg(-turbo) functions CImageCodecs calls (load_on_use.h).
#include "imaging_load.h"

#define JPEG_FUNCTIONS(X) \
    X(jpeg_CreateDecompress) X(jpeg_destroy_decompress) X(jpeg_finish_decompress) X(jpeg_has_multiple_scans) \
    X(jpeg_mem_src) X(jpeg_read_header) X(jpeg_read_scanlines) X(jpeg_start_decompress) X(jpeg_std_error)

HVT_LOAD_ON_USE(jpeg, "libjpeg.so.62", "libjpeg62-turbo", "jpeg", "reading JPEG pictures (phone photos of a sheet)", JPEG_FUNCTIONS)
