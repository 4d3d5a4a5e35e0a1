// libcurl, the HTTP client of the object store (issue 15), imported whole.
//
// Why each shim exists: curl_easy_setopt and curl_easy_getinfo are C variadic functions, which
// Swift cannot call, so each argument type gets a typed wrapper; CURL_GLOBAL_DEFAULT is a macro
// built from other macros, which Swift does not import.
#include <curl/curl.h>

static inline CURLcode hvt_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hvt_curl_set_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hvt_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hvt_curl_set_write_function(CURL *handle, CURLoption option,
                                                   size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, function);
}

static inline CURLcode hvt_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

static inline CURLcode hvt_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}
