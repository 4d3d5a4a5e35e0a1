import FoundationEssentials
import Glibc
import Synchronization
import VaultCore
import VaultFiles

/// What an output holds, which decides its file mode and whether a terminal may see it.
public enum OutputKind: Sendable {
    /// Text a person may read: 0666 less the umask, allowed on a terminal.
    case text
    /// Binary data (a vault): 0666 less the umask, refused on a terminal unless forced.
    case binary
    /// Key material: 0600, refused on a terminal unless forced.
    case secret

    var mode: mode_t { self == .secret ? 0o600 : AtomicFile.publicFileMode }
}

/// One output a command will write: a file, or standard output (no path, or `-`). The value
/// itself is the output's handle: a command stages and writes it by the value it declared
/// (``OutputWriter/stage(_:_:)-([UInt8])``), never by a label, so two outputs may share a label
/// and a label typed differently at the write cannot name another output.
public struct DeclaredOutput: Sendable {
    /// Which declaration this is: copies of one value are the one output, two values made
    /// alike are two.
    fileprivate let identity = Identity()
    /// How the user named it, for messages: "-o", "--ops", "--sheet".
    public let label: String
    public let path: String?
    public let kind: OutputKind
    /// Refuse a file that exists (keys are never overwritten).
    public var exclusive = false
    /// The file's folder may be made (`--out-dir`).
    public var createFolders = false
    /// The tool chose the file's name (under an output folder, a backup beside a vault): a
    /// symbolic link there was planted, not given, so it is refused rather than followed.
    public var namedByTool = false
    /// A copy of this file (a backup): it gets that file's permissions and owners
    /// (``FilePermissions``: a 0600 vault's backup is 0600, a 0660 one's 0660, whatever the umask).
    public var copiesModeOf: String?
    /// A household log written whole, where it was read or beside its vault: it replaces a
    /// file in the envelope's form, as a vault does.
    public var isHouseholdLog = false
    /// A database SQLite changes in place (a registry's `--db`), or one of its side files.
    public var isDatabase = false

    /// Whether the output may replace `stored`: each with its own kind only (a vault with a
    /// vault, a household log with a log: a trial's `seal -o k.log` put a vault over a signed
    /// log), or a backup with its copy; a database only SQLite changes, in place.
    func mayReplace(_ stored: OutputLocation.StoredData) -> Bool {
        switch stored {
        case .vault: (kind == .binary && !isHouseholdLog) || copiesModeOf != nil
        case .householdLog: isHouseholdLog || copiesModeOf != nil
        case .database: isDatabase
        }
    }

    public init(_ label: String, _ path: String?, kind: OutputKind, exclusive: Bool = false, createFolders: Bool = false, namedByTool: Bool = false) {
        self.label = label
        self.path = path == "-" ? nil : path
        self.kind = kind
        self.exclusive = exclusive
        self.createFolders = createFolders
        self.namedByTool = namedByTool
    }

    public var displayName: String { path ?? "standard output" }

    /// Whether `-` names standard output for this output: an option the user gave (`-o`, `--ops`),
    /// not a file the tool names itself or a database changed in place.
    public var mayBeStandardOutput = true

    /// How a refusal of this output's file names it (``FileSet/refusalName(_:)``).
    var refusalName: String { FileSet.refusalName(label) }

    /// The next step when the file named is not one that may be written (a folder, a FIFO);
    /// `-` is offered only when standard output is free (`derive -o - --vault-key-out -` is
    /// two outputs on one stream).
    func refusalHint(standardOutputTaken: Bool) -> String {
        guard label.hasPrefix("-"), !namedByTool else { return "name a regular file" }
        guard mayBeStandardOutput, !standardOutputTaken else { return "name a regular file for \(label)" }
        return "name a regular file for \(label), or give \(label) - for standard output"
    }

    /// A secret key restored from paper, words, shares or a code: always a new file, since the
    /// file at that name may be the family's current key (no --force: replacing it is a mv).
    public static func restoredKey(_ label: String, _ path: String?) -> DeclaredOutput {
        var output = DeclaredOutput(label, path, kind: .secret, exclusive: true)
        output.isRestoredKey = true
        return output
    }

    /// A key restored from paper, words, shares or a code (``restoredKey(_:_:)``): its refusal
    /// says why a key file is never replaced.
    public private(set) var isRestoredKey = false

    /// Whether anything (a file, a link, dangling or not, a folder, a FIFO) is at this output's
    /// name now (not asked of an object store's), for a command whose refusal of an existing
    /// output depends on what it finds to do.
    public var fileExistsNow: Bool {
        guard let path, !VaultLocation.isObject(path) else { return false }
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The refusal of this output because something is at its name.
    public var existsError: VaultError {
        if isRestoredKey { return VaultError.keyFileExists(path ?? "-") }
        return isHouseholdLog ? VaultError.householdLogExists(path ?? "-") : VaultError.alreadyExists(path ?? "-")
    }

    /// A number no other declaration in the process has.
    fileprivate struct Identity: Hashable, Sendable {
        private static let counter = Atomic<Int>(0)
        private let number = Identity.counter.add(1, ordering: .relaxed).newValue
    }
}

/// The one write path (issue 16, docs/conventions.md, "Nothing lost"): a command declares every file it reads
/// and writes here before it writes anything. Declaring checks the whole set: no output is an
/// input or another output (by path, link or hard link), no output is a FIFO, device or
/// folder, at most one output is standard output, and a secret or binary output goes to a
/// terminal only when forced. Only then does the command get an ``OutputWriter``; a dry run
/// never gets one.
public final class CommandFiles {
    private let outputs: [DeclaredOutput]
    private let locations: [DeclaredOutput.Identity: OutputLocation]
    /// Outputs in an object store: the object and its version when declared (nil: none).
    private let objects: [DeclaredOutput.Identity: (name: S3ObjectName, version: String?)]
    private let force: Bool

    /// Checks everything; throws the first refusal (exit 4) and touches no file. `force`: the
    /// command's `--force`, nil for a command that has none (its refusal then offers none: a
    /// trial's `code new --sheet -` was told to pass a flag it does not take).
    public init(reads inputs: [FileSet.Input], writes outputs: [DeclaredOutput], force: Bool? = nil) throws {
        self.outputs = outputs
        self.force = force ?? false
        // One input reads standard input: two would read one stream as two files, the second
        // getting what the first left (a trial: `--vault-key-file - --signer-key-file -` read
        // both keys as one, "should hold 64 hex characters"). At a terminal each share, word or
        // passphrase is asked for in turn (and a key is refused there, as ever).
        var fromStandardInput: [String] = []
        for input in inputs where input.path == "-" && !fromStandardInput.contains(input.label) { fromStandardInput.append(input.label) }
        if fromStandardInput.count > 1, !TerminalPrompt.inputIsTerminal {
            throw VaultError.standardInputTwice(fromStandardInput[0], fromStandardInput[1])
        }
        precondition(Set(outputs.map(\.identity)).count == outputs.count, "an output declared twice")  // a programming error, caught by every test of the command
        let standard = outputs.filter { $0.path == nil }
        if standard.count > 1 {
            throw VaultError.sameFile(output: "\(standard[1].label) (standard output)", other: "\(standard[0].label) (standard output)", otherIsInput: false)
        }
        // A key or a file written to standard output has it to itself: the command's report
        // goes to standard error (`device-link read -o -` printed its table before the nsec). A
        // text output there (`--json`, `--ops -`) is the report's own stream.
        if standard.contains(where: { $0.kind != .text }) { StandardStreams.outputClaimed.store(true, ordering: .relaxed) }
        // Never a shell redirection as the way out: it makes a file others can read.
        if let output = standard.first, output.kind != .text, StandardStreams.outputIsTerminal, !self.force {
            throw VaultError.outputToTerminal(secret: output.kind == .secret, option: output.label, forceOffered: force != nil)
        }
        // As minisign does: a secret redirected into a file that others may read is written (the
        // shell made the file already) but the person is told how to close it.
        if let output = standard.first, output.kind == .secret, let mode = StandardStreams.outputFileReadableByOthers {
            Diagnostics.ofThisTool.warning("standard output is a file others can read (mode \(String(mode, radix: 8))) and will hold a secret; run chmod 600 on it, or write with -o FILE next time")
        }
        objects = try Self.declareObjects(inputs: inputs, outputs: outputs.filter { $0.path.map(VaultLocation.isObject) ?? false })
        var locations: [DeclaredOutput.Identity: OutputLocation] = [:]
        var resolved: [(output: DeclaredOutput, location: OutputLocation)] = []
        for output in outputs {
            guard let path = output.path, !VaultLocation.isObject(path) else { continue }
            let location: OutputLocation
            do {
                location = try OutputLocation(path, createFolders: output.createFolders, followLink: !output.namedByTool, secret: output.kind == .secret,
                                              what: output.refusalName)
            } catch let error as VaultError where error.code == .unsafeOutput {
                throw error.withContext(hint: output.refusalHint(standardOutputTaken: !standard.isEmpty))
            }
            locations[output.identity] = location
            resolved.append((output, location))
        }
        // Aliases first, so that a refusal names both files; then what each output needs alone.
        try FileSet.check(inputs: inputs, outputs: resolved.map { ($0.output.label, $0.location) })
        // A file named that is standard output or error (`-o /dev/stdout`, a link to
        // /proc/self/fd/1, the very file the shell redirected them to): written through a
        // rename, it would leave the stream writing to a file no longer there, and whatever
        // went to the stream (the operations, a report) would be lost.
        for (descriptor, stream) in [(STDOUT_FILENO, "standard output"), (STDERR_FILENO, "standard error")] {
            guard let identity = FileIdentity.of(descriptor: descriptor) else { continue }
            if let (output, location) = resolved.first(where: { $0.location.exists && $0.location.identity == identity }) {
                throw VaultError.sameFile(output: "\(output.label) '\(location.path)'", other: stream, otherIsInput: false)
            }
        }
        for (output, location) in resolved {
            if location.folderIsMissing {
                throw VaultError.outputFolderMissing(output.label, location.path)
            }
            // A restore says why a key file is never replaced; any other output over a key says
            // that it holds one, exclusive or not.
            if output.isRestoredKey, location.exists { throw output.existsError }
            if location.holdsKey { throw VaultError.wouldReplaceKey(location.path) }
            if let stored = location.stored, !output.mayReplace(stored) { throw VaultError.wouldReplaceStore(output.label, location.path, stored.description) }
            if output.exclusive, location.exists { throw output.existsError }
        }
        self.locations = locations
    }

    /// Outputs in an object store obey the same rules (``FileSet/checkObjects(inputs:outputs:)``),
    /// and an exclusive one must not exist. Each one's current version is taken now, so the
    /// write replaces only that version, or the version the command read, and a change made
    /// meanwhile refuses it.
    private static func declareObjects(inputs: [FileSet.Input], outputs: [DeclaredOutput]) throws -> [DeclaredOutput.Identity: (name: S3ObjectName, version: String?)] {
        guard !outputs.isEmpty else { return [:] }
        let names = try FileSet.checkObjects(inputs: inputs, outputs: outputs.map { ($0.label, $0.path!, $0.kind == .secret) })
        var declared: [DeclaredOutput.Identity: (name: S3ObjectName, version: String?)] = [:]
        for (output, name) in zip(outputs, names) {
            guard let name else { continue }
            let version = try ObjectStores.shared(for: name).currentVersion(name)
            if output.exclusive, version != nil { throw output.existsError }
            declared[output.identity] = (name, version)
        }
        return declared
    }

    /// What the file of an output holds now (nil when there is none, or it is standard output),
    /// read through its opened folder, or from the object store.
    public func currentContents(_ output: DeclaredOutput, limit: Int = InputLimits.document) throws -> [UInt8]? {
        let (output, location) = declared(output)
        if let object = objects[output.identity] {
            return object.version == nil ? nil : try ObjectStores.shared(for: object.name).read(object.name, what: output.label, limit: limit)
        }
        return try location?.currentContents(limit: limit)
    }

    /// The object an output goes to, and how its write is conditioned: on the version this
    /// process read (in place), else the version found when it was declared, else creation.
    fileprivate func object(_ output: DeclaredOutput, exclusive: Bool) throws -> (name: S3ObjectName, condition: ObjectWriteCondition)? {
        guard let object = objects[output.identity] else { return nil }
        let store = try ObjectStores.shared(for: object.name)
        guard !exclusive, let version = store.versionRead(object.name) ?? object.version else { return (object.name, .creating) }
        return (object.name, .replacing(etag: version))
    }

    /// How an output is named in messages: its path, or "standard output".
    public func displayName(_ output: DeclaredOutput) -> String { declared(output).0.displayName }

    /// The writer for a command without a dry run.
    public func writer() -> OutputWriter { OutputWriter(self) }

    /// Refuses now an output that could not be written later: for a command that changes
    /// something elsewhere first (a registry's revoke commits its batch, then writes --ops), so
    /// that the change is not made when its output cannot be (a read-only folder or file
    /// system, a file another user owns in a sticky folder). Not part of the declaration: a dry
    /// run, or a run again that has nothing to write, writes nothing and is not refused.
    public func requireWritable(_ output: DeclaredOutput) throws {
        let (output, location) = declared(output)
        guard let location, let failure = location.writeFailure else { return }
        throw VaultError.outputNotWritable(output.label, location.path, errno: failure)
    }

    /// The writer, or nil in a dry run: a dry run cannot reach the write path at all.
    /// A dry run writes no output, so standard output is its report's again.
    public func writer(unlessDryRun dryRun: Bool) -> OutputWriter? {
        if dryRun { StandardStreams.outputClaimed.store(false, ordering: .relaxed) }
        return dryRun ? nil : OutputWriter(self)
    }

    /// What staging `bytes` at the declared `output` would refuse, asked without writing
    /// anything: the writer asks it of every output it stages (``OutputWriter/stage(_:_:)``), and a
    /// dry run given its output asks it of the vault its real run would write, so both refuse
    /// alike (a trial: a dry run passed a schema 2 vault bound to sit beside a schema 3 log).
    public func refuseStaging(_ output: DeclaredOutput, _ bytes: UnsafeRawBufferPointer) throws {
        try refuseOverMovedHousehold(output, bytes)
        let (output, location) = declared(output)
        // A vault older than schema 3 beside a household log is one every tool refuses as put
        // back over the vault the log records (``VaultLogFiles/refuseLog(_:besideVaultOf:)``):
        // an in-place downgrade wrote one with exit 0 (a hostile trial). Not written at all.
        // Beside the file written: a symbolic link's target (a trial: the link's own folder was
        // looked in, and a schema 2 vault was written through it beside its log).
        if output.copiesModeOf == nil, let path = location?.path,
           let version = LoggedVault.schemaVersion(Array(bytes.prefix(VaultEnvelope.headerByteCount))), version < 3 {
            let log = LoggedVault.logPath(besideVault: ResolvedPath(path)?.path ?? path)
            do {
                try VaultLogFiles.refuseLog(log, besideVaultOf: version)
            } catch {
                throw VaultError.olderVaultWrittenBesideLog(output.label, path, version: version, log: log)
            }
        }
        // A vault replaces a vault of its own household only: `seal -o their.vault` put one
        // household over another's, which may have been its only copy (a hostile trial). The
        // file there is read only when it is a vault, and only its header.
        // Its household is read from where every envelope keeps it, whatever its format or
        // suite (a trial: a vault of an unknown suite was replaced, its header unparsed).
        if output.copiesModeOf == nil, let location, location.stored == .vault, let new = try? VaultHeader(parsing: bytes),
           let current = try location.currentContents(limit: VaultEnvelope.headerByteCount, whole: false),
           let old = VaultHeader.household(inAnyHeader: current), old != new.householdID {
            throw VaultError.vaultOfAnotherHousehold(output.label, location.path, old)
        }
    }

    public func refuseStaging(_ output: DeclaredOutput, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try refuseStaging(output, $0) }
    }

    /// A vault never replaces the vault of a household that moved to a new key (its log beside
    /// it ends with the rotation): that file is a tombstone, and whatever schema the new bytes
    /// have, writing over it would bring the old household back under the old key.
    private func refuseOverMovedHousehold(_ output: DeclaredOutput, _ bytes: UnsafeRawBufferPointer) throws {
        let (output, _) = declared(output)
        // A secret output is never a vault: its bytes are not copied to look. The log beside
        // is looked at first (nothing there, the usual case, costs a stat), and the output's
        // current bytes read only then: not a second read of every file a command replaces.
        guard output.kind != .secret, output.copiesModeOf == nil, let path = output.path, LoggedVault.schemaVersion(Array(bytes.prefix(VaultEnvelope.headerByteCount))) != nil,
              let logBytes = try? InputFiles.readIfPresent(LoggedVault.logPath(besideVault: path), what: "household log"),
              let log = try? HouseholdLog(parsing: logBytes), log.endsWithRotation,
              let current = try currentContents(output), let version = LoggedVault.schemaVersion(current), version >= 3 else { return }
        throw VaultError.householdMoved()
    }

    fileprivate func isDeclared(_ output: DeclaredOutput) -> Bool { outputs.contains { $0.identity == output.identity } }

    /// The output as it was declared (a copy changed since is not what was checked), and its
    /// checked file.
    fileprivate func declared(_ output: DeclaredOutput) -> (DeclaredOutput, OutputLocation?) {
        guard let declared = outputs.first(where: { $0.identity == output.identity }) else {
            preconditionFailure("output \(output.label) was not declared")  // a programming error, caught by every test of the command
        }
        return (declared, locations[declared.identity])
    }
}

/// Stages a command's outputs (each written and flushed, nothing visible yet) and publishes
/// them together in the order they were staged, so a command orders its publications to never
/// leave the family worse off (docs/conventions.md, "Nothing lost").
public final class OutputWriter {
    private let files: CommandFiles
    private var staged: [(output: DeclaredOutput, file: StagedOutput?, standard: SecretBytes?, object: [UInt8]?)] = []

    fileprivate init(_ files: CommandFiles) { self.files = files }

    /// What was staged and never published (a later stage failed) is dropped with the folders
    /// made for it.
    deinit { for stage in staged { stage.file?.abandon() } }

    /// Writes `bytes` for the declared `output`, without publishing it.
    public func stage(_ output: DeclaredOutput, _ bytes: UnsafeRawBufferPointer) throws {
        // A schema 3 vault goes out only with the log whose last event names it (stageVault):
        // every change to one is signed by whoever made it. A backup is a copy, not a change.
        let declared = files.declared(output).0
        if declared.kind != .secret, declared.copiesModeOf == nil, let version = LoggedVault.schemaVersion(Array(bytes.prefix(VaultEnvelope.headerByteCount))), version >= 3 {
            throw VaultError.vaultWithoutItsLog()
        }
        try stageChecked(output, bytes)
    }

    private func stageChecked(_ output: DeclaredOutput, _ bytes: UnsafeRawBufferPointer) throws {
        try files.refuseStaging(output, bytes)
        let (output, location) = files.declared(output)
        if output.path.map(VaultLocation.isObject) ?? false {
            // Never a secret (refused when declared): an ordinary array may hold it.
            staged.append((output, nil, nil, Array(bytes)))
        } else if let location {
            staged.append((output, try StagedOutput(location, bytes: bytes, mode: output.kind.mode, holdsSecret: output.kind == .secret,
                                                    keeping: output.copiesModeOf.flatMap(FilePermissions.of)), nil, nil))
        } else {
            staged.append((output, nil, try SecretBytes(copying: bytes), nil))
        }
    }

    public func stage(_ output: DeclaredOutput, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try stage(output, $0) }
    }

    /// Stages a vault whose log, if it needs one, was checked by ``LoggedVault`` (``stageVault(_:_:log:)``).
    func stage(_ output: DeclaredOutput, vault: [UInt8]) throws {
        try vault.withUnsafeBytes { try stageChecked(output, $0) }
    }

    /// Whether the command declared this output.
    public func isDeclared(_ output: DeclaredOutput) -> Bool { files.isDeclared(output) }

    /// What the file of a declared output holds now (nil: nothing there, or standard output).
    public func currentContents(_ output: DeclaredOutput) throws -> [UInt8]? { try files.currentContents(output) }

    public func displayName(_ output: DeclaredOutput) -> String { files.displayName(output) }

    public func stage(_ output: DeclaredOutput, _ secret: SecretBytes) throws {
        try secret.withUnsafeBytes { try stage(output, $0) }
    }

    /// Publishes everything staged, in the order it was staged (each command orders its outputs
    /// so that a failure between two never leaves the family worse off). A failure stops there:
    /// what was not published is discarded, and the files published before it that are new
    /// (created, never replacing a file) are taken back, so that a closed pipe or a full disk on
    /// standard output, the one output that can still fail once staged, leaves nothing half
    /// done and the same command can be run again. Where an output replaces a file or writes
    /// an object, which cannot be taken back, standard output is published first.
    public func publish() throws {
        var pending = staged
        staged = []
        // Standard output, the one output that often fails once staged (a closed pipe, a full
        // disk), goes first where a later output cannot be taken back (a file it replaces, an
        // object): a failure there then leaves nothing published, whatever order the command
        // staged them in (a trial: `device add --in-place` with its operations on a full
        // standard output changed the vault and lost the operations).
        if pending.contains(where: { $0.object != nil || ($0.file?.location.exists ?? false) }) {
            pending = pending.filter { $0.standard != nil } + pending.filter { $0.standard == nil }
        }
        // A restored key goes out only with its report: what the person must compare (the
        // public key) never reached them when standard error failed (issue 44: `scan -o r.nsec
        // 2>/dev/full` wrote the key, exited 1, and the rerun refused the file it had left).
        if pending.contains(where: { $0.output.isRestoredKey }), StandardStreams.errorStreamFailed.load(ordering: .relaxed) {
            for unpublished in pending { unpublished.file?.abandon() }
            throw VaultError.restoreReportLost()
        }
        // A file this run read and now replaces must still be as read, for all of them before
        // any is published: a vault's log is not replaced for a vault that then cannot be.
        do {
            for output in pending { try output.file?.location.refuseChangedSinceRead() }
        } catch {
            for unpublished in pending { unpublished.file?.abandon() }
            throw error
        }
        for (index, (output, file, standard, object)) in pending.enumerated() {
            do {
                if let object, let target = try files.object(output, exclusive: output.exclusive) {
                    try ObjectStores.shared(for: target.name).write(target.name, object, condition: target.condition)
                } else if let file {
                    try file.publish(exclusive: output.exclusive)
                    RunPublications.record(file, refusesRerun: output.kind == .secret || output.exclusive)
                    continue
                } else if let standard {
                    try standard.withUnsafeBytes { try StandardStreams.write($0, to: STDOUT_FILENO) }
                }
                RunPublications.record(nil, refusesRerun: output.kind == .secret || output.exclusive)
            } catch {
                // What replaced a file, or went to a store or a stream, cannot be taken back:
                // an error that says nothing was written must then say what was (a vault
                // changed after its new log was named leaves that log one event ahead).
                let kept = pending[..<index].compactMap { published -> String? in
                    if let file = published.file { return file.isWithdrawable ? nil : FileNames.quoted(file.location.path) }
                    return published.standard != nil ? "standard output" : FileNames.quoted(files.displayName(published.output))
                }
                for published in pending[..<index] { published.file?.withdraw() }
                for unpublished in pending[index...] { unpublished.file?.abandon() }
                if let refused = error as? VaultError, refused.code == .changedSinceRead, !kept.isEmpty, let file {
                    throw VaultError.changedSinceRead(FileNames.quoted(file.location.path), afterWriting: kept)
                }
                throw error
            }
        }
    }

    /// Stages and publishes one output (with whatever was staged before it) from the pieces
    /// `produce` hands its argument, never holding it whole: what grows with a registry (a
    /// batch's operations). A file is staged piece by piece as any output is; standard output
    /// is written piece by piece when published; an object (one PUT) is gathered first. Only
    /// text is streamed: its first piece is checked as a whole output is, and a secret or a
    /// vault is never given in pieces.
    public func write(_ output: DeclaredOutput, streaming produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        let (output, location) = files.declared(output)
        precondition(output.kind == .text, "only text is streamed")  // a programming error, caught by every test of the command
        var first = true
        func checked(_ write: @escaping (UnsafeRawBufferPointer) throws -> Void) -> (UnsafeRawBufferPointer) throws -> Void {
            { piece in
                if first, !piece.isEmpty {
                    first = false
                    if LoggedVault.schemaVersion(Array(piece.prefix(VaultEnvelope.headerByteCount))) != nil { throw VaultError.vaultWithoutItsLog() }
                }
                try write(piece)
            }
        }
        if output.path.map(VaultLocation.isObject) ?? false {
            var bytes: [UInt8] = []
            try withoutActuallyEscaping({ (piece: UnsafeRawBufferPointer) in bytes.append(contentsOf: piece) }) { try produce(checked($0)) }
            return try write(output, bytes)
        }
        if let location {
            let file = try StagedOutput(location, mode: output.kind.mode, keeping: output.copiesModeOf.flatMap(FilePermissions.of)) { write in
                try withoutActuallyEscaping(write) { try produce(checked($0)) }
            }
            staged.append((output, file, nil, nil))
            return try publish()
        }
        // Standard output: what was staged before goes first, then the pieces as they come.
        try publish()
        RunPublications.record(nil, refusesRerun: false)
        try withoutActuallyEscaping({ (piece: UnsafeRawBufferPointer) in try StandardStreams.write(piece, to: STDOUT_FILENO) }) { try produce(checked($0)) }
    }

    /// Stages and publishes one output (with whatever was staged before it).
    public func write(_ output: DeclaredOutput, _ bytes: [UInt8]) throws {
        try stage(output, bytes)
        try publish()
    }

    public func write(_ output: DeclaredOutput, _ secret: SecretBytes) throws {
        try stage(output, secret)
        try publish()
    }
}

extension VaultError {
    /// A restore's report could not be written, so its key was not.
    static func restoreReportLost(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "standard error could not be written, so the restored key's report was lost; the key was not written", file: file, line: line)
    }

    /// An output whose folder does not exist and was not to be created.
    static func outputFolderMissing(_ label: String, _ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "cannot write \(label) '\(path)': its folder does not exist", file: file, line: line)
    }

    /// The output could not be written where it is (``OutputLocation/writeFailure``).
    static func outputNotWritable(_ label: String, _ path: String, errno code: Int32, file: String = #fileID, line: UInt = #line) -> VaultError {
        AtomicFile.ioError(errno: code, "cannot write \(label) \(FileNames.quoted(path)) there", file: file, line: line)
    }
}

/// What a run published, for a run whose report is lost: when standard error could not be
/// written, a run that published a secret as new files only (a key, shares, a sheet) takes them
/// back before it exits 1, as a restore does before it publishes (``OutputWriter/publish()``),
/// so that the same command run again works instead of refusing the file it left (a hostile
/// trial: `keygen -o k.nsec 2>/dev/full` exited 1 and left the key, which the rerun refused).
/// A run that replaced a file, wrote an object or standard output keeps everything: what it
/// replaced cannot come back.
enum RunPublications {
    private struct State {
        var files: [StagedOutput] = []
        var onlyNewFiles = true
        var refusesRerun = false
    }

    private static let state = Mutex<State>(State())

    /// `file` is nil for an output that cannot be taken back. `refusesRerun`: the same command
    /// would refuse the file it leaves (a secret is never replaced; an exclusive output, such
    /// as a rotation plan, must not exist): left behind with exit 1, it blocked the run again (a
    /// trial: `rotation-planner plan -o plan.json 2>/dev/full`).
    static func record(_ file: StagedOutput?, refusesRerun: Bool) {
        state.withLock { state in
            state.refusesRerun = state.refusesRerun || refusesRerun
            if let file, file.isWithdrawable { state.files.append(file) } else { state.onlyNewFiles = false }
        }
    }

    /// Takes back what the run published, when it published, as new files only, one that the
    /// same command run again would refuse.
    static func withdrawAfterLostReport() {
        let files = state.withLock { state -> [StagedOutput] in
            guard state.refusesRerun, state.onlyNewFiles else { return [] }
            defer { state.files = [] }
            return state.files
        }
        for file in files.reversed() { file.withdraw() }
    }
}
