// The libpng functions CImageCodecs calls (load_on_use.h).
#include "imaging_load.h"

#define PNG_FUNCTIONS(X) \
    X(png_create_info_struct) X(png_create_read_struct) X(png_create_write_struct) X(png_destroy_read_struct) \
    X(png_destroy_write_struct) X(png_error) X(png_get_bit_depth) X(png_get_color_type) X(png_get_error_ptr) \
    X(png_get_image_height) X(png_get_image_width) X(png_get_io_ptr) X(png_get_pHYs) X(png_get_rowbytes) \
    X(png_get_valid) X(png_longjmp) X(png_read_image) X(png_read_info) X(png_read_update_info) X(png_set_IHDR) \
    X(png_set_background) X(png_set_compression_strategy) X(png_set_expand_gray_1_2_4_to_8) X(png_set_filter) \
    X(png_set_interlace_handling) X(png_set_longjmp_fn) X(png_set_pHYs) X(png_set_palette_to_rgb) \
    X(png_set_read_fn) X(png_set_rgb_to_gray_fixed) X(png_set_strip_16) X(png_set_tRNS_to_alpha) \
    X(png_set_user_limits) X(png_set_write_fn) X(png_sig_cmp) X(png_write_end) X(png_write_info) X(png_write_row)

HVT_LOAD_ON_USE(png, "libpng16.so.16", "libpng16-16", "png", "writing and reading PNG pictures", PNG_FUNCTIONS)
