// zxcvbn-c, for how many guesses a new passphrase would take (load_on_use.h).
#include "paper_load.h"

#define ZXCVBN_FUNCTIONS(X) X(ZxcvbnMatch)
HVT_LOAD_ON_USE(zxcvbn, "libzxcvbn.so.0", "libzxcvbn0", "passphrase-strength", "judging a new passphrase", ZXCVBN_FUNCTIONS)
