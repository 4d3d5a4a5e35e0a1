// libcrypto's EVP, for the Family Medical recovery codes' AES-256-GCM (load_on_use.h).
#include "paper_load.h"

#define CRYPTO_FUNCTIONS(X) \
    X(EVP_CIPHER_CTX_ctrl) X(EVP_CIPHER_CTX_free) X(EVP_CIPHER_CTX_new) X(EVP_DecryptFinal_ex) X(EVP_DecryptInit_ex) \
    X(EVP_DecryptUpdate) X(EVP_EncryptFinal_ex) X(EVP_EncryptInit_ex) X(EVP_EncryptUpdate) X(EVP_aes_256_gcm)
HVT_LOAD_ON_USE(crypto, "libcrypto.so.3", "libssl3", "recovery-codes", "the recovery codes' AES-256-GCM", CRYPTO_FUNCTIONS)
