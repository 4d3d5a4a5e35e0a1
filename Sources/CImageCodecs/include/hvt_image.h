// PNG and JPEG coding for 8-bit grayscale pages.
//
// Why a C shim: libpng and libjpeg report errors by longjmp() out of a callback, and Swift
// code cannot be the target of a setjmp(). Each function here owns its setjmp, turns a library
// error into a return code and a message, and hands back plain buffers.
//
// Every function returns 0 on success, and on failure -1 with a NUL-terminated message in
// `error`, or HVT_IMAGE_TOO_LARGE (with `width` and `height` set) when the header declares more
// than `max_pixels` pixels: checked before any pixel memory is allocated. Buffers handed back
// are malloc'd: release them with hvt_free().
#ifndef HVT_IMAGE_H
#define HVT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/// The largest width or height decoded (libpng's own sanity limit); the real bound is the
/// caller's pixel count, so a long thin image is judged by its size like any other.
#define HVT_IMAGE_MAX_SIDE 1000000

/// The status for an image whose header declares more pixels than the caller allows.
#define HVT_IMAGE_TOO_LARGE -2
// A JPEG whose decoding would cost more than allowed: more than `max_scans` scans, or more than
// `max_coefficient_bytes` of coefficient buffers (a progressive JPEG keeps every coefficient of
// the image until its last scan). `error` says which. The memory check is made before decoding.
#define HVT_IMAGE_TOO_COSTLY -3

/// Encodes `width` x `height` 8-bit gray pixels as a PNG with a pHYs chunk (pixels per metre,
/// the same on both axes) so the page prints at its true size.
int hvt_png_encode_gray8(const uint8_t *pixels, uint32_t width, uint32_t height,
                         uint32_t pixels_per_metre, uint8_t **out, size_t *out_size,
                         char *error, size_t error_size);

/// Decodes any PNG (palette, RGB, alpha, 16-bit) into 8-bit gray. `pixels_per_metre` is 0 when
/// the file has no pHYs chunk in metres.
int hvt_png_decode_gray8(const uint8_t *data, size_t size, uint64_t max_pixels, uint8_t **pixels,
                         uint32_t *width, uint32_t *height, uint32_t *pixels_per_metre,
                         char *error, size_t error_size);

/// Decodes a JPEG (baseline or progressive, any colour space) into 8-bit gray.
int hvt_jpeg_decode_gray8(const uint8_t *data, size_t size, uint64_t max_pixels, uint64_t max_coefficient_bytes, int max_scans,
                          uint8_t **pixels, uint32_t *width, uint32_t *height, char *error, size_t error_size);

void hvt_free(void *pointer);

#endif
