#include "load_on_use.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// One lock for every library: loading is rare (once a library a process), and a fleet run's
// threads may reach the same library at once.
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

int hvt_library_load(struct hvt_library *library, char *error, size_t error_size) {
    // Loaded already: no lock. The owners ask before every use (each QR code, each HTTP
    // client, each cipher pass); the handle is published after the slots are filled.
    if (__atomic_load_n(&library->handle, __ATOMIC_ACQUIRE) != NULL) return 0;
    int status = 0;
    pthread_mutex_lock(&loading);
    if (library->handle == NULL) {
        // RTLD_NOW: a library whose own dependencies are missing fails here, not mid-command.
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            const char *reason = dlerror();
            snprintf(error, error_size, "%s", reason ? reason : "dlopen failed");
            status = -1;
        }
        for (size_t index = 0; status == 0 && index < library->count; index++) {
            (void)dlerror();
            void *function = dlsym(handle, library->names[index]);
            if (function == NULL) {
                snprintf(error, error_size, "%s has no function %s", library->soname, library->names[index]);
                status = -2;
            } else {
                *library->slots[index] = function;
            }
        }
        if (status == 0) {
            __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
        } else if (handle != NULL) {
            for (size_t index = 0; index < library->count; index++) *library->slots[index] = (void *)hvt_library_unloaded;
            dlclose(handle);
        }
    }
    pthread_mutex_unlock(&loading);
    return status;
}

void hvt_library_unloaded(void) {
    static const char message[] = "household-vault-tools: error: a library loaded on use was called before it was loaded (a defect: please report it)\n";
    (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
    _exit(70);
}
