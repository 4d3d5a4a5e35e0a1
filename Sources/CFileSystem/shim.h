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

// A child started by the suite (ChildProcess) gets none of the tool's descriptors but the three
// it is given: pipe2(2) makes its pipes close-on-exec at once, and
// posix_spawn_file_actions_addclosefrom_np closes the rest in the child. The actions are a
// posix_spawn_file_actions_t, whose type belongs to Swift's Glibc module: passed as a pointer.
extern int pipe2(int fds[2], int flags);
extern int posix_spawn_file_actions_addclosefrom_np(void *actions, int from);

static inline int hvt_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}

static inline int hvt_spawn_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
