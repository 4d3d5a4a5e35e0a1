internal import CFileSystem
import Glibc
import VaultCore

/// A program the suite runs for itself (a profile's `credential_process`, the sheet's PDF
/// reader), without a shell: it gets exactly the environment given, its standard input fed from
/// bytes (or /dev/null), its output read through pipes at once and bounded, and none of the
/// tool's other descriptors. Foundation's `Process` did this before; its module brings ICU's
/// 34 MB into every tool. (A key command's output goes into protected memory, read with a
/// timeout: ``SecretCommand`` reads its own, started by ``spawn``.)
package struct ChildProcess {
    /// How it ended: its exit status, or the signal that killed it.
    package enum Termination: Equatable, Sendable {
        case exited(Int32)
        case killed(Int32)
        /// It ran past its deadline and was killed.
        case timedOut
    }

    package let termination: Termination
    /// Its standard output, at most the limit and one byte more (then it was killed).
    package let output: [UInt8]
    /// Its standard error, at most the limit and one byte more; empty when it was passed through.
    package let errors: [UInt8]

    /// Runs `path` (argv[0] is the path) with `arguments` and exactly `environment` (a child of
    /// the suite gets ``ChildEnvironment``'s). `input` is written to its standard input while
    /// its output is read (nil: /dev/null). Its output past `outputLimit` kills it (SIGKILL), and
    /// so does `timeout` seconds passing first (then it ended `.timedOut`); its standard error is
    /// kept up to `errorLimit`, the rest read and dropped, or is the tool's own when `errorLimit`
    /// is nil. Once it has exited, what is left in the pipes is read and no more is waited for:
    /// a program it left in the background holding them (`sleep 600 &`) does not hold the tool
    /// (issue 44). Throws only when it cannot be started (`errno`'s code).
    package static func run(_ path: String, arguments: [String], environment: [String: String], input: [UInt8]?,
                            outputLimit: Int, errorLimit: Int?, timeout: Double) throws -> ChildProcess {
        try ChildSignals.watch {
            try runWatched(path, arguments: arguments, environment: environment, input: input, outputLimit: outputLimit, errorLimit: errorLimit,
                           timeout: timeout)
        }
    }

    private static func runWatched(_ path: String, arguments: [String], environment: [String: String], input: [UInt8]?,
                                   outputLimit: Int, errorLimit: Int?, timeout: Double) throws -> ChildProcess {
        // Every end is closed once: here, or in the child's side below, or by drain (the input's).
        var open: Set<Int32> = []
        defer { open.forEach { close($0) } }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard hvt_pipe2(&ends, O_CLOEXEC) == 0 else { throw ChildProcessStartError(code: errno) }
            open.formUnion(ends)
            return (ends[0], ends[1])
        }
        let output = try makePipe()
        // Shared with the tool's, its standard error is read like a kept one, bounded, and
        // relayed when the tool's is JSON.
        let relaying = errorLimit == nil && ChildErrors.isRelaying
        let errorLimit = relaying ? ChildErrors.limit : errorLimit
        let errors = try errorLimit.map { _ in try makePipe() }
        let feed = try input.map { _ in try makePipe() }

        let (pid, spawned) = spawn([path] + arguments, environment: environment.map { "\($0.key)=\($0.value)" },
                                   searchingPath: false, input: feed?.read, output: output.write, errors: errors?.write)
        guard spawned == 0 else { throw ChildProcessStartError(code: spawned) }

        // Only this process's ends stay open: the reads see the end when the child is done.
        for end in [output.write, errors?.write, feed?.read].compactMap({ $0 }) {
            close(end)
            open.remove(end)
        }
        if let feed { open.remove(feed.write) }  // drain closes it
        var descriptors = [output.read], limits = [outputLimit]
        if let errors, let errorLimit { descriptors.append(errors.read); limits.append(errorLimit) }
        let drained = drain(descriptors, keeping: limits, feeding: input ?? [], into: feed?.write ?? -1, stoppingPastFirstLimit: true,
                            child: pid, deadline: monotonicSeconds() + timeout)
        var status: Int32 = 0
        if let reaped = drained.status {
            status = reaped
        } else {
            // Past its limit or its deadline: killed with what it started, then reaped (SIGKILL
            // cannot be caught).
            killWithDescendants(pid)
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        let termination: Termination = drained.timedOut ? .timedOut
            : status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .killed(status & 0x7f)
        let errorsRead = drained.kept.count > 1 ? drained.kept[1] : []
        if relaying {
            ChildErrors.deliver(errorsRead, withholding: drained.kept[0])
            return ChildProcess(termination: termination, output: drained.kept[0], errors: [])
        }
        return ChildProcess(termination: termination, output: drained.kept[0], errors: errorsRead)
    }

    /// Kills a child the tool gives up on and every process it started that still runs under it
    /// (`sleep 1000` in a key command's script was left running when only the child was
    /// killed: a hostile trial). The child stays in the tool's process group, so that a key
    /// command may still ask on the terminal; its descendants are found by their parents
    /// (/proc), stopped so that none forks meanwhile, found again until no new one appears,
    /// then killed. One that left the tree (a daemon, `setsid`) is its own.
    package static func killWithDescendants(_ pid: pid_t) {
        kill(pid, SIGSTOP)  // the child first: stopped, it forks no more
        var stopped: Set<pid_t> = []
        for _ in 0..<8 {
            let found = descendants(of: pid).subtracting(stopped)
            guard !found.isEmpty else { break }
            for process in found { kill(process, SIGSTOP) }
            stopped.formUnion(found)
        }
        kill(pid, SIGKILL)
        for process in stopped { kill(process, SIGKILL) }
    }

    /// The processes under `pid`, by the parents /proc gives.
    private static func descendants(of pid: pid_t) -> Set<pid_t> {
        guard let folder = opendir("/proc") else { return [] }
        defer { closedir(folder) }
        var children: [pid_t: [pid_t]] = [:]
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard let process = pid_t(name), let parent = parentProcess(process) else { continue }
            children[parent, default: []].append(process)
        }
        var found: Set<pid_t> = [], next = [pid]
        while let process = next.popLast() {
            for child in children[process] ?? [] where found.insert(child).inserted { next.append(child) }
        }
        return found
    }

    /// The parent of `process`: the field after the command's name, in parentheses that may
    /// hold anything, in /proc/PID/stat.
    private static func parentProcess(_ process: pid_t) -> pid_t? {
        let descriptor = open("/proc/\(process)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        guard count > 0, let nameEnd = buffer[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(nameEnd + 1)..<count].split(separator: UInt8(ascii: " "))
        return fields.count > 1 ? pid_t(String(decoding: fields[1], as: UTF8.self)) : nil
    }

    /// Starts `argv` as every child of the suite starts: standard input `input` (nil:
    /// /dev/null), standard output `output`, standard error `errors` (nil: the tool's), none of
    /// the tool's other descriptors, and the default disposition and no mask for every signal (the
    /// tool ignores SIGPIPE and may catch SIGTERM or block signals). `searchingPath` looks the
    /// program up in PATH, as a shell would. Returns its pid, or posix_spawn's error (then 0).
    package static func spawn(_ argv: [String], environment: [String], searchingPath: Bool,
                              input: Int32?, output: Int32, errors: Int32?) -> (pid: pid_t, error: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO)
        if let errors { posix_spawn_file_actions_adddup2(&actions, errors, STDERR_FILENO) }
        hvt_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArguments + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        let error = searchingPath
            ? posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
            : posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        return (error == 0 ? pid : 0, error)
    }

    /// What ``drain`` read, and how the child it watched ended.
    package struct Drained {
        /// Each descriptor's bytes, at most its limit and one byte more.
        package var kept: [[UInt8]]
        /// The child's wait status, when it was reaped here (nil: it still runs).
        package var status: Int32?
        /// The deadline passed first.
        package var timedOut = false
    }

    /// Reads every one of `descriptors` to its end at once (poll), keeping at most `keeping[i]`
    /// bytes of each, plus one to tell that there was more, and dropping the rest; meanwhile
    /// writes `input` into `inputDescriptor` and always closes it (made non-blocking here; -1:
    /// none).
    /// Read one after the other, a child that fills the pipe not being read (64 KiB) waits
    /// forever for the one that is (issue 37); kept whole, a hostile one fills memory. With
    /// `stoppingPastFirstLimit`, it stops as soon as the first passes its limit. With `child`,
    /// it stops once that child has exited and what it left in the pipes is read, whoever else
    /// holds them, and at `deadline` (``monotonicSeconds()``) at the latest (issue 44). The
    /// scratch buffer is zeroed: what passes through may be a credential.
    package static func drain(_ descriptors: [Int32], keeping limits: [Int], feeding input: [UInt8] = [], into inputDescriptor: Int32 = -1,
                              stoppingPastFirstLimit: Bool = false, child: pid_t? = nil, deadline: Double = .infinity) -> Drained {
        var drained = Drained(kept: zip(descriptors, limits).map { _, limit in
            var bytes = [UInt8]()
            bytes.reserveCapacity(min(limit + 1, 1 << 16))
            return bytes
        })
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var written = 0
        if inputDescriptor >= 0 {
            if input.isEmpty {
                close(inputDescriptor)
            } else {
                _ = fcntl(inputDescriptor, F_SETFL, fcntl(inputDescriptor, F_GETFL) | O_NONBLOCK)
                polled.append(pollfd(fd: inputDescriptor, events: Int16(POLLOUT), revents: 0))
            }
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        /// Reads what one descriptor has now; false at its end (or past the first's limit).
        func readOnce(_ index: Int) -> Bool {
            let count = buffer.withUnsafeMutableBytes { read(polled[index].fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { return true }
            guard count > 0 else { polled[index].fd = -1; return false }  // the end, or an error: nothing more comes
            drained.kept[index].append(contentsOf: buffer[..<min(count, max(0, limits[index] + 1 - drained.kept[index].count))])
            return !(stoppingPastFirstLimit && index == 0 && drained.kept[0].count > limits[0])
        }
        reading: while polled.prefix(descriptors.count).contains(where: { $0.fd >= 0 }) {
            // The tool is being ended: the child is left to its caller to kill (``ChildSignals``).
            if child != nil, ChildSignals.arrived { break }
            let left = deadline - monotonicSeconds()
            guard left > 0 else { drained.timedOut = true; break }
            // Without a child to watch, poll waits for the pipes alone; with one, it looks
            // every 20 ms whether the child has ended.
            let slice = child == nil ? (left.isFinite ? Int32(min(left, 3600) * 1000) + 1 : -1) : Int32(min(left * 1000, 20)) + 1
            let ready = poll(&polled, nfds_t(polled.count), slice)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if polled.count > descriptors.count, polled[descriptors.count].fd >= 0, polled[descriptors.count].revents != 0 {
                let (count, failure) = writeWithoutSIGPIPE(inputDescriptor, input[written...])
                if count > 0 { written += count }
                // Everything written, or the child stopped reading (EPIPE): no more input.
                if written == input.count || (count < 0 && failure != EINTR && failure != EAGAIN) {
                    close(inputDescriptor)
                    polled[descriptors.count].fd = -1
                }
            }
            for index in descriptors.indices where polled[index].fd >= 0 && polled[index].revents != 0 {
                if !readOnce(index), stoppingPastFirstLimit, index == 0, drained.kept[0].count > limits[0] { break reading }
            }
            if let child {
                var status: Int32 = 0
                guard waitpid(child, &status, WNOHANG) == child else { continue }
                drained.status = status
                // It has ended: what it wrote is in the pipes now; what is still open is held by
                // a program it left behind, which is not waited for.
                for index in descriptors.indices where polled[index].fd >= 0 {
                    _ = fcntl(polled[index].fd, F_SETFL, fcntl(polled[index].fd, F_GETFL) | O_NONBLOCK)
                    while polled[index].fd >= 0 {
                        let before = drained.kept[index].count
                        guard readOnce(index), drained.kept[index].count > before else { break }
                    }
                }
                break
            }
        }
        if let child, drained.status == nil, !drained.timedOut, !ChildSignals.arrived, !(stoppingPastFirstLimit && drained.kept[0].count > limits[0]) {
            // Every pipe ended before the child was seen to: it ends now, or soon; waited for
            // within the deadline.
            while drained.status == nil {
                var status: Int32 = 0
                let reaped = waitpid(child, &status, WNOHANG)
                if reaped == child { drained.status = status; break }
                if reaped < 0, errno != EINTR { break }
                guard monotonicSeconds() < deadline else { drained.timedOut = true; break }
                if ChildSignals.arrived { break }
                var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
                nanosleep(&pause, nil)
            }
        }
        if polled.count > descriptors.count, polled[descriptors.count].fd >= 0 { close(inputDescriptor) }
        return drained
    }

    /// Seconds on the monotonic clock, which no change of the wall clock moves.
    package static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// write(2) into a pipe whose reader may be gone, with SIGPIPE blocked on this thread and a
    /// pending one taken back: a child that exits before reading all its input is EPIPE here,
    /// not a signal that ends a process which has not ignored SIGPIPE (the tools ignore it, but
    /// a test runner or another host of the library need not; the suite's test run died so).
    /// Returns the count and `errno` as write left it.
    private static func writeWithoutSIGPIPE(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> (Int, Int32) {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let failure = errno
        if count < 0, failure == EPIPE {
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeSignal, nil, &now)
        }
        return (count, failure)
    }
}

/// A child process could not be started: `errno`'s code (no such program, not executable, no
/// memory or descriptors).
package struct ChildProcessStartError: Error {
    package let code: Int32
}
