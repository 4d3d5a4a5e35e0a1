// The zlib functions VaultFleet's GzipReader calls (inflateInit2_ through CZlib's shim, as the
// macro inflateInit2 expands), each a trampoline until libz is loaded (load_on_use.h).
#include "fleet_load.h"

#define ZLIB_FUNCTIONS(X) X(inflateInit2_) X(inflate) X(inflateEnd) X(inflateReset)

HVT_LOAD_ON_USE(zlib, "libz.so.1", "zlib1g", "inventory", "gzip for the CSV files of S3 Inventory reports", ZLIB_FUNCTIONS)
