// The page libraries, loaded when a command first lays out, writes or reads a sheet: cairo,
// Pango over cairo, GLib's objects, poppler's GLib interface; zxcvbn-c for a passphrase's
// strength; libcrypto for the recovery codes' AES-GCM.
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_cairo(void);
struct hvt_library *_Nonnull hvt_library_pango(void);
struct hvt_library *_Nonnull hvt_library_pangocairo(void);
struct hvt_library *_Nonnull hvt_library_glib(void);
struct hvt_library *_Nonnull hvt_library_gobject(void);
struct hvt_library *_Nonnull hvt_library_poppler(void);
struct hvt_library *_Nonnull hvt_library_zxcvbn(void);
struct hvt_library *_Nonnull hvt_library_crypto(void);
