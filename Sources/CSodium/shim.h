// libsodium, imported whole. No shims are needed: every size constant we use has a
// `crypto_*_bytes()` function, because Swift does not import function-like macros.
#include <sodium.h>
