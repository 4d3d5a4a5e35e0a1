// libsecp256k1 with its extrakeys (x-only keys) and schnorrsig (BIP-340) modules.
//
// Each shim below exists because Swift cannot reach the C directly:
// - SECP256K1_CONTEXT_NONE is a macro built from another macro; Swift 6 does not import it.
// - SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT is a brace initializer macro, which no Swift code
//   can expand; sign_custom (needed for BIP-340 messages that are not 32 bytes) takes it.
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

static inline unsigned int hvt_secp256k1_context_flags_none(void) {
    return SECP256K1_CONTEXT_NONE;
}

static inline secp256k1_schnorrsig_extraparams hvt_secp256k1_schnorrsig_extraparams(void *auxiliary_random_32) {
    secp256k1_schnorrsig_extraparams params = SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT;
    params.ndata = auxiliary_random_32;
    return params;
}
