// OpenSSL's libcrypto (Debian's libssl-dev): AES-256-GCM through EVP, for the recovery codes.
#include <openssl/evp.h>
