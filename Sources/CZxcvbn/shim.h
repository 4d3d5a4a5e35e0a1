// zxcvbn-c (Debian's libzxcvbn): a port of Dropbox's zxcvbn password strength estimator, with
// its dictionaries compiled in. Imported whole; Debian builds it without USE_DICT_FILE, so
// ZxcvbnInit/ZxcvbnUnInit are function-like macros Swift cannot see, and need not call.
#include <stddef.h>
#include <zxcvbn.h>
