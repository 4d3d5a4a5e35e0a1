#include "hvt_image.h"

#include <png.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void set_error(char *error, size_t error_size, const char *text) {
    if (error_size > 0) {
        snprintf(error, error_size, "%s", text);
    }
}

void hvt_free(void *pointer) { free(pointer); }

/* ---- PNG ---------------------------------------------------------------------------------- */

struct png_error_context {
    char *error;
    size_t error_size;
};

static void png_error_callback(png_structp png, png_const_charp message) {
    struct png_error_context *context = png_get_error_ptr(png);
    set_error(context->error, context->error_size, message);
    png_longjmp(png, 1);
}

static void png_warning_callback(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

struct growing_buffer {
    uint8_t *bytes;
    size_t size;
    size_t capacity;
    int failed;
};

static void png_write_callback(png_structp png, png_bytep data, png_size_t length) {
    struct growing_buffer *buffer = png_get_io_ptr(png);
    if (buffer->size + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 65536;
        while (capacity < buffer->size + length) capacity *= 2;
        uint8_t *bytes = realloc(buffer->bytes, capacity);
        if (bytes == NULL) {
            buffer->failed = 1;
            png_error(png, "out of memory while encoding the PNG");
        }
        buffer->bytes = bytes;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->size, data, length);
    buffer->size += length;
}

static void png_flush_callback(png_structp png) { (void)png; }

int hvt_png_encode_gray8(const uint8_t *pixels, uint32_t width, uint32_t height,
                         uint32_t pixels_per_metre, uint8_t **out, size_t *out_size,
                         char *error, size_t error_size) {
    struct png_error_context context = {error, error_size};
    struct growing_buffer buffer = {NULL, 0, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, png_error_callback, png_warning_callback);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_write_struct(&png, &info);
        set_error(error, error_size, "libpng could not start");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(buffer.bytes);
        return -1;
    }
    png_set_write_fn(png, &buffer, png_write_callback, png_flush_callback);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_pHYs(png, info, pixels_per_metre, pixels_per_metre, PNG_RESOLUTION_METER);
    // A sheet is mostly long runs of white: without row filters and with run-length deflate,
    // encoding costs a fifth of libpng's defaults (adaptive filters, deflate level 6) for a
    // file about as small. scripts/bench's callgrind profile showed encoding at 78% of a sheet.
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_compression_strategy(png, Z_RLE);
    png_write_info(png, info);
    for (uint32_t row = 0; row < height; row++) {
        png_write_row(png, pixels + (size_t)row * width);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *out = buffer.bytes;
    *out_size = buffer.size;
    return 0;
}

struct reading_buffer {
    const uint8_t *bytes;
    size_t size;
    size_t offset;
};

static void png_read_callback(png_structp png, png_bytep data, png_size_t length) {
    struct reading_buffer *buffer = png_get_io_ptr(png);
    if (length > buffer->size - buffer->offset) {
        png_error(png, "the PNG is truncated");
    }
    memcpy(data, buffer->bytes + buffer->offset, length);
    buffer->offset += length;
}

int hvt_png_decode_gray8(const uint8_t *data, size_t size, uint64_t max_pixels, uint8_t **pixels,
                         uint32_t *width, uint32_t *height, uint32_t *pixels_per_metre,
                         char *error, size_t error_size) {
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) {
        set_error(error, error_size, "not a PNG file");
        return -1;
    }
    // IHDR is always the first chunk (PNG spec, 5.6): its size is judged from there, before
    // libpng reads further, so even a file cut short after its header is refused for its size.
    if (size >= 24 && memcmp(data + 12, "IHDR", 4) == 0) {
        uint32_t w = (uint32_t)data[16] << 24 | (uint32_t)data[17] << 16 | (uint32_t)data[18] << 8 | data[19];
        uint32_t h = (uint32_t)data[20] << 24 | (uint32_t)data[21] << 16 | (uint32_t)data[22] << 8 | data[23];
        if ((uint64_t)w * h > max_pixels) {
            *width = w;
            *height = h;
            return HVT_IMAGE_TOO_LARGE;
        }
    }
    struct png_error_context context = {error, error_size};
    struct reading_buffer buffer = {data, size, 0};
    // Both are freed if libpng jumps back with an error: rows too, which a damaged image's
    // longjmp out of png_read_image once leaked (found by the fuzz target qr).
    uint8_t *volatile image = NULL;
    png_bytep *volatile rows = NULL;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, png_error_callback, png_warning_callback);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        set_error(error, error_size, "libpng could not start");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        free(image);
        return -1;
    }
    png_set_user_limits(png, HVT_IMAGE_MAX_SIDE, HVT_IMAGE_MAX_SIDE);
    png_set_read_fn(png, &buffer, png_read_callback);
    png_read_info(png, info);

    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if ((uint64_t)w * h > max_pixels) {
        *width = w;
        *height = h;
        png_destroy_read_struct(&png, &info, NULL);
        return HVT_IMAGE_TOO_LARGE;
    }
    int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_strip_16(png);
    if (color & PNG_COLOR_MASK_COLOR || color == PNG_COLOR_TYPE_PALETTE) {
        png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    }
    // Transparent pixels are composed over white paper.
    png_color_16 white = {0, 255, 255, 255, 255};
    png_set_background(png, &white, PNG_BACKGROUND_GAMMA_SCREEN, 0, 1.0);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != w) {
        png_error(png, "the PNG could not be converted to 8-bit gray");
    }

    image = malloc((size_t)w * h);
    rows = image ? malloc(sizeof(png_bytep) * h) : NULL;
    if (rows == NULL) {
        png_error(png, "out of memory while decoding the PNG");
    }
    for (png_uint_32 row = 0; row < h; row++) rows[row] = image + (size_t)row * w;
    png_read_image(png, rows);
    free(rows);
    rows = NULL;

    png_uint_32 res_x = 0, res_y = 0;
    int unit = 0;
    *pixels_per_metre = (png_get_pHYs(png, info, &res_x, &res_y, &unit) && unit == PNG_RESOLUTION_METER) ? res_x : 0;
    png_destroy_read_struct(&png, &info, NULL);
    *pixels = image;
    *width = w;
    *height = h;
    return 0;
}

/* ---- JPEG --------------------------------------------------------------------------------- */

struct jpeg_error_context {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char *error;
    size_t error_size;
};

/* longjmp's value: the status setjmp's second return hands back (a local changed between setjmp
 * and longjmp would be indeterminate after the jump). */
enum { JPEG_JUMP_ERROR = 1, JPEG_JUMP_TOO_COSTLY = 2 };

/* Counts scans as libjpeg reads them (djpeg's -maxscans does the same): a progressive JPEG may
 * hold thousands of tiny scans, each costing a pass over the whole image. */
struct jpeg_scan_limit {
    struct jpeg_progress_mgr manager;
    int max_scans;
};

static void jpeg_scan_limit_callback(j_common_ptr info) {
    struct jpeg_scan_limit *limit = (struct jpeg_scan_limit *)info->progress;
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    if (info->is_decompressor && decompress->input_scan_number > limit->max_scans) {
        struct jpeg_error_context *context = (struct jpeg_error_context *)info->err;
        snprintf(context->error, context->error_size, "it has more than %d scans", limit->max_scans);
        longjmp(context->jump, JPEG_JUMP_TOO_COSTLY);
    }
}

static void jpeg_error_exit_callback(j_common_ptr info) {
    struct jpeg_error_context *context = (struct jpeg_error_context *)info->err;
    char message[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, message);
    set_error(context->error, context->error_size, message);
    longjmp(context->jump, JPEG_JUMP_ERROR);
}

static void jpeg_quiet_output(j_common_ptr info) { (void)info; }

int hvt_jpeg_decode_gray8(const uint8_t *data, size_t size, uint64_t max_pixels, uint64_t max_coefficient_bytes, int max_scans,
                          uint8_t **pixels, uint32_t *width, uint32_t *height, char *error, size_t error_size) {
    struct jpeg_decompress_struct info;
    struct jpeg_error_context context;
    struct jpeg_scan_limit limit;
    uint8_t *volatile image = NULL;
    info.err = jpeg_std_error(&context.manager);
    context.manager.error_exit = jpeg_error_exit_callback;
    context.manager.output_message = jpeg_quiet_output;
    context.error = error;
    context.error_size = error_size;
    /* setjmp as a switch's whole controlling expression: one of the uses C allows. */
    switch (setjmp(context.jump)) {
    case 0:
        break;
    case JPEG_JUMP_TOO_COSTLY:
        jpeg_destroy_decompress(&info);
        free(image);
        return HVT_IMAGE_TOO_COSTLY;
    default:
        jpeg_destroy_decompress(&info);
        free(image);
        return -1;
    }
    jpeg_create_decompress(&info);
    limit.manager.progress_monitor = jpeg_scan_limit_callback;
    limit.max_scans = max_scans;
    info.progress = &limit.manager;
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if ((uint64_t)info.image_width * info.image_height > max_pixels) {
        *width = info.image_width;
        *height = info.image_height;
        jpeg_destroy_decompress(&info);
        return HVT_IMAGE_TOO_LARGE;
    }
    /* A multi-scan JPEG keeps every component's coefficients (64 of 2 bytes a block) until its
     * last scan; the header's sizes say how much before any of it is allocated. libjpeg's own
     * cap backs this up: past it, it fails rather than allocate. */
    if (info.progressive_mode || jpeg_has_multiple_scans(&info)) {
        uint64_t coefficients = 0;
        for (int index = 0; index < info.num_components; index++) {
            jpeg_component_info *component = &info.comp_info[index];
            coefficients += (uint64_t)component->width_in_blocks * component->height_in_blocks * DCTSIZE2 * sizeof(JCOEF);
        }
        if (coefficients > max_coefficient_bytes) {
            snprintf(error, error_size, "decoding it would take %llu MiB, more than the %llu MiB a file of its size may take",
                     (unsigned long long)(coefficients >> 20), (unsigned long long)(max_coefficient_bytes >> 20));
            jpeg_destroy_decompress(&info);
            return HVT_IMAGE_TOO_COSTLY;
        }
    }
    info.mem->max_memory_to_use = (long)(max_coefficient_bytes + max_pixels * 4);
    info.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&info);
    image = malloc((size_t)info.output_width * info.output_height);
    if (image == NULL) {
        set_error(error, error_size, "out of memory while decoding the JPEG");
        jpeg_destroy_decompress(&info);
        return -1;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = image + (size_t)info.output_scanline * info.output_width;
        jpeg_read_scanlines(&info, &row, 1);
    }
    *width = info.output_width;
    *height = info.output_height;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    *pixels = image;
    return 0;
}
