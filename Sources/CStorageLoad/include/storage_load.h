// libcurl, loaded when a command first reaches an s3:// object or a credential endpoint.
#include "load_on_use.h"
struct hvt_library *_Nonnull hvt_library_curl(void);
