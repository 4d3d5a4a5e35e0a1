// The zbar functions VaultImaging's QRScanner calls (load_on_use.h).
#include "imaging_load.h"

#define ZBAR_FUNCTIONS(X) \
    X(zbar_image_create) X(zbar_image_destroy) X(zbar_image_first_symbol) X(zbar_image_scanner_create) \
    X(zbar_image_scanner_destroy) X(zbar_image_scanner_set_config) X(zbar_image_set_data) \
    X(zbar_image_set_format) X(zbar_image_set_size) X(zbar_scan_image) X(zbar_symbol_get_data) \
    X(zbar_symbol_get_data_length) X(zbar_symbol_get_type) X(zbar_symbol_next)

HVT_LOAD_ON_USE(zbar, "libzbar.so.0", "libzbar0", "qr-scan", "reading QR codes from pictures", ZBAR_FUNCTIONS)
