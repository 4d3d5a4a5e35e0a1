internal import CFileSystem
import Glibc
import VaultCore

/// What a tool does to itself before anything else (issue 44): no crash report and no core file, whatever
/// `ulimit -c` says, and not dumpable, so that neither a crash nor a signal that dumps core
/// (SIGQUIT, SIGABRT, SIGSEGV) leaves the keys, passwords and AWS secrets it holds in a file, and
/// no other process of the same user can attach to it or read its memory (as OpenSSH's ssh-agent,
/// `platform_disable_tracing`). Children start dumpable again (execve resets it), and set it
/// again themselves when they are the suite's (the PDF reader).
package enum ProcessHardening {
    /// Applies both; false when the system refused either, which the tool reports and stops on:
    /// a tool that cannot promise it stops before it reads a key.
    package static func apply() -> Bool {
        // The Swift runtime's backtracer catches these to print a crash report, with 16 bytes
        // of memory at each register's address, where a key may be; a signal that was not
        // meant as a crash (SIGQUIT) was even survived, the tool going on with what it had read.
        // Their default action ends the process, with no core (below).
        for crash in [SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP] { signal(crash, SIG_DFL) }
        // 1, not 0: the kernel ignores the limit when core_pattern pipes the core to a program
        // (apport, systemd-coredump), except that a limit of 1 stops it; and a file of at most
        // one byte is never written (an ELF core needs a page). Not dumpable makes the same
        // promise where fs.suid_dumpable is 0.
        // A hard limit of 0 already set (`ulimit -c 0`, systemd's LimitCORE=0) is kept: it is
        // as strong, and raising it to 1 is refused to an unprivileged process.
        var current = rlimit()
        let hard: rlim_t = getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &current) == 0 && current.rlim_max == 0 ? 0 : 1
        var noCore = rlimit(rlim_cur: hard, rlim_max: hard)
        let limited = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0
        return hvt_set_undumpable() == 0 && limited
    }
}

/// How a tool sets up its memory before anything else.
package enum ProcessTuning {
    /// Buffers up to a document's size (a 480 KB household read, opened and written out) come
    /// from the heap, whose freed pages are used again, not each from a mapping of its own that
    /// is faulted in page by page and unmapped when freed (glibc maps anything from 128 KiB):
    /// `open` of that household took 1,470 page faults, and takes 1,100 (`age -d`: 400).
    /// Nothing secret is kept longer by it: a secret lives in libsodium's guarded pages, its own
    /// mappings, and is zeroed as it is freed.
    package static func apply() {
        _ = hvt_heap_allocations_below(Int32(InputLimits.document))
    }
}
