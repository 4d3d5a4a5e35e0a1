// The libcurl functions VaultStorage's HTTPClient calls (the shims in CCurl's shim.h call the
// variadic ones), each a trampoline until libcurl is loaded (load_on_use.h).
#include "storage_load.h"

#define CURL_FUNCTIONS(X) \
    X(curl_global_init) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_perform) \
    X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_slist_append) X(curl_slist_free_all)

HVT_LOAD_ON_USE(curl, "libcurl.so.4", "libcurl4", "s3", "HTTP for s3:// objects and cloud credential endpoints", CURL_FUNCTIONS)
