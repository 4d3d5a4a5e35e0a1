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

// Extended attributes (sys/xattr.h, which Swift's Glibc module leaves out): the suite marks
// every secret file it writes, so that no later output replaces it however it is spelled
// (KeyHoldingFile, issue 44).
// Declared here as glibc declares them (ssize_t and size_t are long and unsigned long on every
// target Swift builds for): including the header would make this module own types, such as
// mode_t, that the Glibc module owns.
extern long fgetxattr(int fd, const char *name, void *value, unsigned long size);
extern int fsetxattr(int fd, const char *name, const void *value, unsigned long size, int flags);
extern int fremovexattr(int fd, const char *name);

static inline long hvt_get_attribute(int fd, const char *name, void *value, unsigned long size) {
    return fgetxattr(fd, name, value, size);
}

static inline int hvt_set_attribute(int fd, const char *name, const void *value, unsigned long size) {
    return fsetxattr(fd, name, value, size, 0);
}

static inline int hvt_remove_attribute(int fd, const char *name) {
    return fremovexattr(fd, name);
}

// prctl(2) is variadic, which Swift cannot call: the tools make themselves undumpable at start
// (as ssh-agent does), so that no core file and no other process of the same user reading their
// memory (ptrace, /proc/PID/mem) finds a key, a password or an AWS secret in it (issue 44).
// PR_SET_DUMPABLE is linux/prctl.h's 4.
extern int prctl(int option, ...);

static inline int hvt_set_undumpable(void) {
    return prctl(4, 0L, 0L, 0L, 0L);
}

// mallopt(3) with glibc's M_MMAP_THRESHOLD (malloc.h's -3), which Swift's Glibc module does not
// bring: allocations below `bytes` come from the heap (ProcessTuning).
extern int mallopt(int param, int value);

static inline int hvt_heap_allocations_below(int bytes) {
    return mallopt(-3, bytes);
}

#endif
