// The libqrencode functions VaultImaging's QRCode calls (load_on_use.h).
#include "imaging_load.h"

#define QRENCODE_FUNCTIONS(X) X(QRcode_encodeData) X(QRcode_encodeString) X(QRcode_free)

HVT_LOAD_ON_USE(qrencode, "libqrencode.so.4", "libqrencode4", "qr-encode", "drawing QR codes", QRENCODE_FUNCTIONS)
