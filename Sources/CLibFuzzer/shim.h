// libFuzzer's driver entry point. Header only: the symbol comes from the fuzzer runtime that
// `-sanitize=fuzzer` links, so only the FUZZING build of vault-fuzz may call it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
