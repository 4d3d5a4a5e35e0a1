// File-system calls Swift cannot reach through Glibc: glibc declares them only under
// _GNU_SOURCE, which Swift's Glibc module is built without. The prototypes are glibc's own.
#ifndef HVT_FILE_SYSTEM_SHIM_H
#define HVT_FILE_SYSTEM_SHIM_H

// syncfs(2): flush every file of one file system at once. A batch stages many outputs and makes
// them durable with one call (and one journal commit of the file system) instead of one fsync
// each.
extern int syncfs(int fd);

static inline int hvt_syncfs(int fd) {
    return syncfs(fd);
}

#endif
