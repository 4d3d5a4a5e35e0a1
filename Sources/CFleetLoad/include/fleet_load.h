// zlib, loaded when a fleet run first reads an S3 Inventory report (its gzip-compressed CSV
// files): a `--version`, an `open` or any other command maps none of it (issue 48).
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_zlib(void);
