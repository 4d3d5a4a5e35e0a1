// GNU libunistring (Debian's libunistring-dev): Unicode normalisation and case folding without ICU. No pkg-config
// file in Debian; the headers are in the default include path.
#include <stddef.h>
#include <stdint.h>
#include <unistr.h>
#include <uninorm.h>
#include <unicase.h>

// UNINORM_NFKC is the address of a library variable; Swift cannot take a C global's address.
static inline uninorm_t cunistring_nfkc(void) { return UNINORM_NFKC; }
