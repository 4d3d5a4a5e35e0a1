// The picture libraries, loaded when a command first draws or reads a QR code or a picture:
// libqrencode, zbar, libpng, libjpeg.
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_qrencode(void);
struct hvt_library *_Nonnull hvt_library_zbar(void);
struct hvt_library *_Nonnull hvt_library_png(void);
struct hvt_library *_Nonnull hvt_library_jpeg(void);
