// Libraries loaded on first use (issue 48): a tool maps libcurl, libpq or the imaging and page
// stack only when a command needs them, so a `--version` or an `inspect` of a local file pays
// for none of them at start-up.
//
// How (the way of systemd's optional libraries, and of Implib.so): each layer's C target
// defines, for every function of a library the layer calls, a symbol of the function's own
// name that jumps through a slot (HVT_LOAD_ON_USE below). The Swift code calls libcurl's
// functions by their names and types from the library's own header, as before; the executable
// records no DT_NEEDED entry for the library, and an ELF note in `.note.dlopen` (the format
// systemd's and the FDO packaging spec's tools read) says which libraries it may load. The
// layer's Swift owner loads its library before its first call (`LoadOnUse.require`), which
// fills every slot or says which library, and which Debian package, is missing.
#ifndef HVT_LOAD_ON_USE_H
#define HVT_LOAD_ON_USE_H

#include <stddef.h>

/// One shared library and the functions the suite calls in it.
struct hvt_library {
    /// What dlopen is given: the soname the package ships ("libcurl.so.4").
    const char *soname;
    /// The Debian package that ships it ("libcurl4"), for the error that says what to install.
    const char *package;
    const char *const *names;
    void **const *slots;
    size_t count;
    /// Set, under the loader's lock and with release order, once every slot is filled; read
    /// with acquire order by the path that finds it loaded.
    void *handle;
};

/// Loads `library` unless it is loaded, and fills its slots. Returns 0; -1 when it cannot be
/// loaded (dlopen's message in `error`: missing, damaged, or a library it needs missing); -2
/// when it lacks a function the suite calls (a version older than the suite's). Safe to call
/// from any thread, any number of times.
int hvt_library_load(struct hvt_library *library, char *error, size_t error_size);

/// What every slot holds until its library is loaded: a call through it is a defect (a Swift
/// owner that did not load its library first), reported on standard error, exit 70
/// (EX_SOFTWARE), rather than a jump to nowhere.
void hvt_library_unloaded(void) __attribute__((visibility("hidden"), noreturn));

#if defined(__x86_64__)
#define HVT_JUMP_THROUGH(slot) "\tjmp *" slot "(%rip)\n"
#elif defined(__aarch64__)
#define HVT_JUMP_THROUGH(slot) "\tadrp x16, " slot "\n\tldr x16, [x16, :lo12:" slot "]\n\tbr x16\n"
#else
#error "load on use: a trampoline for this architecture is missing"
#endif

// One function: its slot, and a symbol of its name, hidden (the executable's own, never
// exported to the loaded library) in a section of its own (dropped by --gc-sections when unused).
#define HVT_TRAMPOLINE(name)                                                                      \
    __attribute__((visibility("hidden"))) void *hvt_slot_##name = (void *)hvt_library_unloaded; \
    __asm__(".pushsection .text.hvt_trampoline." #name ",\"ax\",%progbits\n"                       \
            ".globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" #name ":\n"       \
            HVT_JUMP_THROUGH("hvt_slot_" #name) ".size " #name ", .-" #name "\n.popsection\n");
#define HVT_FUNCTION_NAME(name) #name,
#define HVT_SLOT_ADDRESS(name) &hvt_slot_##name,

// The ELF note of a library loaded on use (the "FDO" note of type 0x407c0c0a, its description
// a JSON array): `readelf -n`, check_links.py and packaging tools read what a tool may load
// from it.
#define HVT_DLOPEN_NOTE_TYPE 0x407c0c0a
#define HVT_DLOPEN_NOTE(id, json)                                                              \
    __attribute__((used, section(".note.dlopen"), aligned(4))) static const struct {          \
        unsigned name_size, description_size, type;                                             \
        char name[4];                                                                           \
        char description[(sizeof(json) + 3) & ~3];                                              \
    } hvt_dlopen_note_##id = {4, (sizeof(json) + 3) & ~3, HVT_DLOPEN_NOTE_TYPE, "FDO", json};

/// A library loaded on use: `FUNCTIONS(X)` lists the functions the layer calls, `X(name)` each;
/// `feature` is the note's, one a library (packaging tools group notes by it).
/// Defines the trampolines, the note and `struct hvt_library *hvt_library_ID(void)`, which the
/// layer's Swift owner passes to `LoadOnUse.require`.
#define HVT_LOAD_ON_USE(id, soname, package, feature, description, FUNCTIONS)                    \
    FUNCTIONS(HVT_TRAMPOLINE)                                                                   \
    static const char *const hvt_names_##id[] = {FUNCTIONS(HVT_FUNCTION_NAME)};                 \
    static void **const hvt_slots_##id[] = {FUNCTIONS(HVT_SLOT_ADDRESS)};                       \
    HVT_DLOPEN_NOTE(id, "[{\"feature\":\"" feature "\",\"description\":\"" description          \
                        "\",\"priority\":\"recommended\",\"soname\":[\"" soname "\"]}]")        \
    static struct hvt_library hvt_library_value_##id = {                                        \
        soname, package, hvt_names_##id, hvt_slots_##id,                                        \
        sizeof(hvt_names_##id) / sizeof(hvt_names_##id[0]), NULL};                              \
    struct hvt_library *hvt_library_##id(void) { return &hvt_library_value_##id; }

#endif
