import ArgumentParser
import FoundationEssentials
import Glibc
import VaultCore

/// `-o FILE` and `--force`, shared by commands that write one output.
public struct OutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("Write to FILE (via a temporary file and a rename) instead of standard output.", valueName: "FILE"))
    public var output: String?

    @Flag(help: "Allow a secret or binary output to go to a terminal.")
    public var force = false

    public init() {}

    /// The output as the write path declares it.
    public func declared(_ kind: OutputKind, exclusive: Bool = false) -> DeclaredOutput {
        DeclaredOutput("-o", output, kind: kind, exclusive: exclusive)
    }

    /// The output as a restored secret key: created, never replacing a file.
    public var declaredRestoredKey: DeclaredOutput { .restoredKey("-o", output) }

    public var displayName: String { output.flatMap { $0 == "-" ? nil : $0 } ?? "standard output" }
}

/// Numbers from the command line are range-checked before use (issue 16): a clear error,
/// exit 2, instead of an overflow trap somewhere later.
public func requireRange<T: Comparable>(_ value: T, _ range: ClosedRange<T>, _ option: String) throws {
    guard range.contains(value) else {
        throw VaultError.optionOutOfRange(option, range, value)
    }
}

/// `--expect-revision N`'s value: a revision is 0 or more (a v1 vault counts as 0), and a
/// negative one is a usage error where it is read (a trial: `=-1` read as "someone else changed
/// it", exit 4). Every command that takes the option reads it through this.
public func expectedRevision(_ text: String) throws -> Int {
    guard let revision = Int(text), revision >= 0 else { throw ValidationError("--expect-revision takes a revision, 0 or more") }
    return revision
}

/// `--now`: the time a command records or checks against, injected for reproducible runs and
/// tests. Every command that reads the clock takes it this way.
public struct NowOption: ParsableArguments {
    @Option(help: ArgumentHelp("The time to use (RFC 3339, such as 2026-11-22T10:00:00Z) instead of the clock's; for reproducible output.", valueName: "TIME"))
    public var now: String?

    public init() {}

    public func validate() throws {
        if let now, Timestamp(rfc3339: now) == nil { throw ValidationError("--now takes an RFC 3339 time such as 2026-11-22T10:00:00Z") }
    }

    public var time: Timestamp { now.flatMap(Timestamp.init(rfc3339:)) ?? currentTime() }
}

/// `--now` for a command that records the time (a revocation's, a plan's, a link's expiry, the
/// latest an imported row may hold): the same option, which refuses a time more than a day
/// after the clock, since what the command wrote would read as coming from the future, which
/// the registry's own import refuses (issue 44: `revoke --now 9999-12-31T23:59:59Z` wrote rows
/// that `import` then refused). A type of its own, so a command that records says so by the
/// option it declares, and cannot forget the check. A usage error, as a malformed time is.
public struct RecordedNowOption: ParsableArguments {
    @OptionGroup public var now: NowOption

    public init() {}

    /// How far a recorded time may run ahead of the clock: as far as an import of what was
    /// recorded takes (a server's clock a little ahead), and no further.
    public static let aheadAllowed: Int64 = 86_400

    public func validate() throws {
        guard let text = now.now, let time = Timestamp(rfc3339: text) else { return }
        if time.seconds > currentTime().seconds + Self.aheadAllowed {
            throw ValidationError("--now \(text) is more than a day after the clock; a time this command records must not read as coming from the future")
        }
        // Before 1970 no record of the suite's can be: a household log's `created_at` counts
        // seconds from it, unsigned (NIP-01), and devices, links and registries are of this
        // century (a trial: `--now 0001-01-01T00:00:00Z` was recorded as a revocation's time).
        if time.seconds < 0 {
            throw ValidationError("--now \(text) is before 1970-01-01T00:00:00Z; a time this command records cannot be")
        }
    }

    public var time: Timestamp { now.time }

    /// Whether a time was given rather than read from the clock: only then can it be earlier
    /// than what the data already holds (a device's registration), which a command checks.
    public var isGiven: Bool { now.now != nil }
}

/// The clock, in whole seconds: the one place the executables read it.
public func currentTime() -> Timestamp {
    Timestamp(seconds: Int64(Date().timeIntervalSince1970.rounded(.down)))
}

/// A secret as one line of text (a key file's contents), in protected memory.
public func secretLine(_ secret: SecretBytes) throws -> SecretBytes {
    try SecretBytes(count: secret.count + 1) { buffer in
        secret.withUnsafeBytes { buffer.copyMemory(from: $0) }
        buffer[secret.count] = 0x0a
    }
}

/// The name of the user running the tool (the password database's, by effective uid), for a
/// record of who did something when they named no one; "uid N" where there is no entry (a
/// container's arbitrary uid).
public func loginName() -> String {
    if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
    return "uid \(geteuid())"
}
