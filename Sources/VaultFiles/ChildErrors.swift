import Glibc
import Synchronization
import VaultCore

/// Where the standard error of a child that shares the tool's goes (a key command, a profile's
/// `credential_process`): the tool's own, as it is, unless a relay is set (`--log-format json`,
/// issue 44: a child's lines passed through raw broke a container log of JSON Lines). Relayed,
/// it is written into an unnamed file, which never fills and blocks the child as a pipe would,
/// and read back when the child has ended: at most ``limit`` bytes, a line at a time.
package enum ChildErrors {
    /// The most of a child's standard error relayed.
    package static let limit = 64 << 10

    private static let sink = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Relays each line children write to standard error to `body` (nil: their standard error
    /// is the tool's again).
    package static func relay(_ body: (@Sendable (String) -> Void)?) { sink.withLock { $0 = body } }

    /// Whether children's standard error is relayed now.
    static var isRelaying: Bool { sink.withLock { $0 != nil } }

    /// A descriptor for a child's standard error when relaying (nil: the tool's own), for a child
    /// whose output is read in protected memory on its own (a key command): an unnamed file,
    /// which never fills and blocks the child as an unread pipe would, watched by
    /// ``isOverLimit(_:)`` while the child runs. Never the tool's own while relaying: where no
    /// folder takes an unnamed file (TMPDIR unusable), the child's lines go to /dev/null, and
    /// one event says so.
    static func capture() -> Int32? {
        guard isRelaying else { return nil }
        let folders = [getenv("TMPDIR").map { String(cString: $0) }, "/tmp", "/dev/shm", "/var/tmp"].compactMap { $0 }
        for folder in folders {
            let descriptor = open(folder, __O_TMPFILE | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return descriptor }
        }
        sink.withLock { $0 }?("(its standard error is not shown: no folder for a temporary file)")
        return open("/dev/null", O_WRONLY | O_CLOEXEC)
    }

    /// Whether a child has written more than a few times the limit into its captured standard
    /// error (`yes >&2`): then it is stopped, as one that prints too much is, before it fills
    /// the disk.
    static func isOverLimit(_ descriptor: Int32?) -> Bool {
        guard let descriptor else { return false }
        var info = stat()
        return fstat(descriptor, &info) == 0 && Int(info.st_size) > floodLimit
    }

    static var floodLimit: Int { 16 * limit }

    /// Relays what the child wrote into `descriptor`, and closes it.
    static func deliver(_ descriptor: Int32?) {
        guard let descriptor else { return }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return }
        deliver(Array(bytes[..<count]))
    }

    /// Relays `bytes`, a line at a time, at most ``limit`` of them.
    static func deliver(_ bytes: [UInt8]) {
        guard let body = sink.withLock({ $0 }) else { return }
        for line in bytes.prefix(limit).split(separator: 0x0a) where !line.isEmpty { body(String(decoding: line, as: UTF8.self)) }
    }
}
