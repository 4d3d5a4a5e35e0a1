import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles
import VaultRegistry

extension Registry {
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke devices in one transaction: inactive, memberships closed, one log row each.",
            discussion: """
            Refuses (exit 4), changing nothing, when a listed device, key or user is \
            not in the registry (each is named, by line, with the user's closest devices) unless \
            --allow-unmatched; when users would be left with no active device unless \
            --allow-users-without-device; when conversations would be left with no active admin \
            device unless --allow-conversations-without-admin; when the batch would revoke more \
            than --max-share of the registry's active devices (default 10%) unless \
            --expect-revocations gives its exact count, as the dry run reports it (any other \
            count is refused). --force allows all but an unmatched entry or an unexpected count. \
            A --not-seen-since after now is a usage error (64); a list file with no entry is \
            invalid input (2). A real run lists every device it revoked (with --ops -, on \
            standard error). A second identical run changes nothing and says so.

            Examples:
              device-revoker registry revoke --db r.sqlite --device 'did:plc:josh#a1b2' \\
                --reason lost
              device-revoker registry revoke --db r.sqlite --devices-file stolen.txt \\
                --dry-run --json
              device-revoker registry revoke --db r.sqlite --user did:plc:josh --force
              device-revoker registry revoke --db r.sqlite --not-seen-since 2025-01-01 \\
                --keep-last-device --dry-run
              device-revoker registry revoke --db r.sqlite --not-seen-since 2025-01-01 \\
                --keep-last-device --expect-revocations 1532
              device-revoker registry revoke --db devices.sqlite --name 'iPad' \\
                --user 0f9c2d1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f --reason 'not recognised'
            """
        )
        @OptionGroup var database: Database
        @Option(name: .customLong("device"), help: ArgumentHelp("USER_DID#DEVICE_ID (repeatable).", valueName: "DID#DEVICE")) var devices: [String] = []
        @Option(help: ArgumentHelp("USER_DID#DEVICE_ID, one a line.", valueName: "FILE")) var devicesFile: String?
        @Option(help: ArgumentHelp("Every device of this user (a DID, or Family Medical's user UUID); with --name, one of them.", valueName: "USER"))
        var user: String?
        @Option(help: ArgumentHelp("With --user: the device with this name, as 'registry devices' lists it (refused when an active device shares it with another).",
                                   valueName: "NAME"))
        var name: String?
        @Option(help: ArgumentHelp("Devices not seen since this date.", valueName: "DATE")) var notSeenSince: String?
        @Option(help: ArgumentHelp("Signature public keys (hex), one a line.", valueName: "FILE")) var signatureKeysFile: String?
        @Option(help: ArgumentHelp("Why; recorded on each device and in the log.", valueName: "TEXT")) var reason: String?
        @Flag(help: "Show the blast radius and write nothing.") var dryRun = false
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Revoke what was found even if some listed entries are not in the registry (each is reported).") var allowUnmatched = false
        @Flag(help: "Go ahead even if users are left with no active device.") var allowUsersWithoutDevice = false
        @Flag(help: "Go ahead even if conversations are left with no active admin device.") var allowConversationsWithoutAdmin = false
        @Flag(help: "Every guard rail: users and conversations may be left without an active device or admin, and the batch may exceed --max-share.")
        var force = false
        @Option(help: ArgumentHelp("The number of devices this batch revokes, as the dry run reports it: allows a batch over --max-share, and refuses any other count.",
                                   valueName: "N"))
        var expectRevocations: Int?
        @Option(help: ArgumentHelp("The largest share of the registry's active devices one batch may revoke without --expect-revocations (default 10; 0 to 100, such as 2.5).",
                                   valueName: "PERCENT"))
        var maxShare: String?
        @Flag(help: "Spare each user's last active device (the one seen most recently): revoke stale devices without locking anyone out.")
        var keepLastDevice = false
        @Option(help: ArgumentHelp("Write the mls.remove operations (JSON Lines) to FILE.", valueName: "FILE")) var ops: String?
        @Option(help: ArgumentHelp("The batch id to log, such as a ticket number (default: a random UUID).", valueName: "ID")) var batchId: String?
        @OptionGroup var now: RecordedNowOption
        @Option(name: .customLong("operator"), help: ArgumentHelp("Who runs the batch, as the chained log records it (default: your login name).", valueName: "NAME"))
        var operatorName: String?
        @OptionGroup var signer: SignerKeyOptions

        func validate() throws {
            let selectors = [!devices.isEmpty, devicesFile != nil, user != nil, notSeenSince != nil, signatureKeysFile != nil].filter { $0 }.count
            guard selectors == 1 else {
                throw ValidationError("choose the devices one way: --device, --devices-file, --user, --not-seen-since or --signature-keys-file")
            }
            if let notSeenSince { _ = try registryCutoff(notSeenSince, now: now.time) }
            if let expectRevocations, expectRevocations < 0 { throw ValidationError("--expect-revocations takes a count, 0 or more") }
            _ = try sizeLimit
            // The report and the operations would be mixed in one stream.
            if json, ops == "-" { throw ValidationError("--json and --ops - would both write to standard output; give --ops a FILE") }
            // Sparing a device named on purpose (a stolen one) would leave it active.
            if keepLastDevice, notSeenSince == nil { throw ValidationError("--keep-last-device goes with --not-seen-since") }
            if name != nil, user == nil { throw ValidationError("--name finds a device among a user's: give --user too") }
            // Said before anything is read (the run checks both again where it records them).
            if let operatorName, let problem = RecordedText.nameProblem(operatorName) {
                throw ValidationError("--operator \(problem): it names who ran the batch in the chained log (default: your login name)")
            }
            if let batchId, let problem = RecordedText.nameProblem(batchId) {
                throw ValidationError("--batch-id \(problem): it names the batch in the chained log (default: a random UUID)")
            }
        }

        var sizeLimit: DeviceRegistry.SizeLimit {
            get throws {
                guard let maxShare else { return DeviceRegistry.SizeLimit(expected: expectRevocations) }
                guard let limit = DeviceRegistry.Share(percent: maxShare) else {
                    throw ValidationError("--max-share takes a percentage from 0 to 100, such as 10 or 2.5")
                }
                return DeviceRegistry.SizeLimit(limit: limit, expected: expectRevocations)
            }
        }

        var allowing: DeviceRegistry.Overrides {
            var allowing: DeviceRegistry.Overrides = force ? .guardRails : []
            if allowUnmatched { allowing.insert(.unmatched) }
            if allowUsersWithoutDevice { allowing.insert(.usersWithoutDevice) }
            if allowConversationsWithoutAdmin { allowing.insert(.conversationsWithoutAdmin) }
            return allowing
        }

        /// The selector, and how each listed entry is named in messages ("line 3", "--device 2")
        /// by its place in the list. A devices file is read while the selection is made, never
        /// held whole.
        func selector() throws -> (DeviceRegistry.Selector, place: @Sendable (Int) -> String) {
            if let devicesFile {
                return (.deviceList(DevicesFile(path: devicesFile)), { "devices file line \($0)" })
            }
            if let user {
                if let problem = DeviceRegistry.idProblem(user, as: .user) {
                    throw VaultError.notADeviceReference("--user \(quoted(user)) is not a user DID the registry can hold: it \(problem)".displaySafe)
                }
                return (.user(user), { _ in "--user" })
            }
            if let notSeenSince { return (.notSeenSince(try registryCutoff(notSeenSince, now: now.time)), { "entry \($0)" }) }
            if let signatureKeysFile {
                let entries = try listEntries(signatureKeysFile, what: "signature keys file")
                let lines = entries.map(\.line)
                return (.signatureKeys(try entries.map { entry in
                    guard let key = Hex.decode(entry.text), !key.isEmpty else {
                        throw VaultError.notADeviceReference("signature keys file line \(entry.line): \(quoted(entry.text)) is not hex".displaySafe)
                    }
                    return key
                }), { lines.indices.contains($0 - 1) ? "signature keys file line \(lines[$0 - 1])" : "entry \($0)" })
            }
            let count = devices.count
            let pairs = try devices.enumerated().map { index, device in try Self.devicePair(device, place: count == 1 ? "--device" : "--device \(index + 1)") }
            return (.devices(pairs), { count == 1 ? "--device" : "--device \($0)" })
        }

        /// The device an entry names, `USER_DID#DEVICE_ID`; an entry that names none is refused
        /// with its place and what is wrong (quoted only as ``QuotedInput`` allows).
        static func devicePair(_ entry: String, place: String) throws -> (user: String, device: String) {
            guard let pair = DeviceRegistry.deviceReference(entry) else {
                let problem = DeviceRegistry.deviceReferenceProblem(entry) ?? "it cannot be read"
                throw VaultError.notADeviceReference("\(place): \(quoted(entry)) is not USER_DID#DEVICE_ID: \(problem)".displaySafe,
                                                     hint: entry.contains("#") || QuotedInput(entry).isWithheld ? nil
                                                         : RegistrySchema.isUUID(entry)
                                                         ? "give a device as USER_ID#DEVICE_ID (every device of a user is --user USER_ID); this lists them: device-revoker registry devices --match \(ShellWord.quoted(entry))".displaySafe
                                                         : "to revoke every device of a user, give --user \(ShellWord.quoted(entry))".displaySafe)
            }
            return pair
        }

        /// A devices file, read a line at a time as the revocation loads it: a list as long as
        /// the registry is never held whole. One with no entry (only blank lines and comments)
        /// is an error, not a batch already done: an export that came out empty must not read
        /// as "nothing to do".
        struct DevicesFile: DeviceRegistry.DeviceList {
            let path: String

            func forEach(_ entry: (Int, String, String) throws -> Void) throws {
                var entries = 0
                func use(_ number: Int, _ text: String) throws {
                    let pair = try Revoke.devicePair(text, place: "devices file line \(number)")
                    do {
                        try entry(number, pair.user, pair.device)
                    } catch let error as VaultError where error.code == .notARegistryID {
                        // An id of the wrong form for this registry (not a UUID in Family
                        // Medical's) is found as the entry is loaded: said with its line.
                        throw error.withContext(prefix: "devices file line \(number): ")
                    }
                }
                // Entries that are list words wait for the end of the list (at most eleven):
                // twelve are recovery words or a share, refused whole before the first is quoted
                // back as "not USER_DID#DEVICE_ID" (``ListFile/holdsRecoveryWords(_:)``).
                var waiting: [(Int, String)] = [], run = ListFile.WordRun()
                try InputFiles.forEachLine(path, what: "devices file") { number, line in
                    guard let text = ListFile.entry(line) else { return }
                    entries += 1
                    switch run.add(text) {
                    case .recoveryWords: throw VaultError.listHoldsRecoveryWords("devices file", path)
                    case .listWords: waiting.append((number, text))
                    case .other: try use(number, text)
                    }
                }
                for (number, text) in waiting { try use(number, text) }
                guard entries > 0 else { throw VaultError.emptyList("devices file", path) }
            }
        }

        /// A list file's entries; one with none (only blank lines and comments) is an error, not
        /// a batch already done: an export that came out empty must not read as "nothing to do".
        func listEntries(_ path: String, what: String) throws -> [(line: Int, text: String)] {
            let entries = try readNumberedList(path, what: what)
            guard !entries.isEmpty else {
                throw VaultError.emptyList(what, path)
            }
            return entries
        }

        /// One line per unmatched entry: where it was listed, and what the registry has near it.
        static func unmatchedLines(_ unmatched: [DeviceRegistry.Unmatched], place: (Int) -> String, limit: Int = 20) -> String {
            guard !unmatched.isEmpty else { return "" }
            let lines = unmatched.prefix(limit).map { entry -> String in
                let place = place(entry.item)
                let near = !entry.closest.isEmpty ? "; closest: " + entry.closest.joined(separator: ", ")
                    : (entry.entry.shown?.contains("#") ?? false) && !entry.userKnown ? "; no such user" : ""
                return "  \(place): \(entry.entry)\(near)".displaySafe + "\n"
            }
            let more = unmatched.count > limit ? "  … and \(unmatched.count - limit) more (--json lists them all)\n" : ""
            return "not found:\n" + lines.joined() + more
        }

        /// The options that go past the refusals, in one sentence; stale devices are the case
        /// --keep-last-device is for, so it is offered first.
        func hint(for refusals: [DeviceRegistry.Refusal]) -> String {
            var parts: [String] = []
            var options: [String] = []
            for refusal in refusals {
                switch refusal {
                case .unmatched: parts.append("correct the entries listed under 'not found', or pass --allow-unmatched to revoke the others")
                case .wouldLeaveUsersWithoutDevice: options.append("--allow-users-without-device")
                case .wouldLeaveConversationsWithoutAdmin: options.append("--allow-conversations-without-admin")
                case .tooLarge(let devices, _, _):
                    parts.append("check the selection first (--dry-run --json lists its devices); if \(Self.all(devices)) meant, pass --expect-revocations \(devices) (or raise --max-share, or --force)")
                case .unexpectedCount(_, let devices):
                    parts.append("check the selection (--dry-run --json lists its devices); if \(Self.all(devices)) meant, pass --expect-revocations \(devices)")
                }
            }
            if !options.isEmpty {
                let allow = options.joined(separator: " and ") + (options.count == 2 ? " (together: --force)" : " (or --force)")
                parts.append(notSeenSince != nil && !keepLastDevice && options.contains("--allow-users-without-device")
                    ? "pass --keep-last-device to spare each user's last device, or look at the blast radius and pass \(allow) if it is intended"
                    : "look at the blast radius, then pass \(allow) if it is intended")
            }
            return parts.joined(separator: "; ")
        }

        /// "all 3 are", "the 1 is": the subject of a hint about a batch's devices.
        static func all(_ devices: Int) -> String { devices == 1 ? "the 1 is" : "all \(devices) are" }

        /// Names what a count stands for, so support can act on it; a long list is cut, and
        /// --json has it whole.
        static func listed(_ title: String, _ ids: [String], limit: Int = 20) -> String {
            guard !ids.isEmpty else { return "" }
            let more = ids.count > limit ? "  … and \(ids.count - limit) more (--json lists them all)\n" : ""
            return "\(title):\n" + ids.prefix(limit).map { "  \($0)".displaySafe + "\n" }.joined() + more
        }

        /// The report as JSON: the blast radius, the size guard's numbers, the batch's devices
        /// (revoked when `applied`, else what the run would revoke) and the refusals. The
        /// devices are read from the registry as they are written: as many as the registry is
        /// large, they are never all in memory.
        func writeJSONReport(_ result: DeviceRegistry.RevocationResult, registry: DeviceRegistry, place: (Int) -> String, limit: DeviceRegistry.SizeLimit,
                             to emit: ([UInt8]) throws -> Void) throws {
            let radius = result.radius
            try JSONValue.writeReport([
                ("batchId", result.applied ? .string(result.batchID) : .null), ("applied", .bool(result.applied)), ("dryRun", .bool(dryRun)),
                ("devices", .int(radius.devices)), ("users", .int(radius.users)), ("conversations", .int(radius.conversations)),
                ("memberships", .int(radius.memberships)),
                ("usersLeftWithoutDevice", .array(radius.usersLeftWithoutDevice.map(JSONValue.string))),
                ("conversationsLeftWithoutAdmin", .array(radius.conversationsLeftWithoutAdmin.map(JSONValue.string))),
                // The batches that revoked them, the last first (Catbird's, whose operations a
                // rerun may have lost): what the note on standard error names, for scripts too.
                ("alreadyRevoked", .int(radius.alreadyRevoked)), ("alreadyRevokedBy", .array(radius.revokedEarlierBy.map(JSONValue.string))),
                ("notFound", .int(radius.notFound)),
                ("unmatched", .array(radius.unmatched.map { entry in
                    .object([("where", .string(place(entry.item))),
                             ("entry", .string(entry.entry.reported)), ("userKnown", .bool(entry.userKnown)),
                             ("closest", .array(entry.closest.map(JSONValue.string)))])
                })),
                ("sparedLastDevices", .int(radius.sparedLastDevices)),
                ("activeDevices", .int(radius.activeDevices)), ("maxShare", .string(limit.limit.text)),
                ("overMaxShare", .bool(limit.limit.isExceeded(by: radius.devices, of: radius.activeDevices))),
                ("expectedRevocations", limit.expected.map(JSONValue.int) ?? .null),
                ("batchDevices", .null),
                ("refusals", .array(result.refusals.map {
                    .object([("kind", .string($0.kind)), ("ids", .array($0.ids.map(JSONValue.string))), ("message", .string($0.reason))])
                })),
            ], streaming: "batchDevices", elements: { element in
                try registry.forEachBatchDevice(of: result) { try element(.object([("userDid", .string($0.user)), ("deviceId", .string($0.device))])) }
            }, to: emit)
        }

        /// The report in words: the outcome, the blast radius, then every device of the batch
        /// when it was revoked (or, in a dry run, would be), read from the registry as it is
        /// written, and what a refusal is about.
        func writeTextReport(_ result: DeviceRegistry.RevocationResult, registry: DeviceRegistry, place: (Int) -> String, limit: DeviceRegistry.SizeLimit,
                             to emit: ([UInt8]) throws -> Void) throws {
            let radius = result.radius
            // A registry without conversations (Family Medical's) has none to count.
            let conversations = registry.schema == .catbird
            var table = TextTable()
            table.add("devices", "\(radius.devices)")
            table.add("users", "\(radius.users)")
            if conversations {
                table.add("conversations", "\(radius.conversations)")
                table.add("memberships closed", "\(radius.memberships)")
            }
            table.add("users left with no active device", "\(radius.usersLeftWithoutDevice.count)")
            if conversations { table.add("conversations left with no active admin device", "\(radius.conversationsLeftWithoutAdmin.count)") }
            table.add("already revoked (skipped)", "\(radius.alreadyRevoked)")
            table.add("not found", "\(radius.notFound)")
            if keepLastDevice { table.add("spared: each user's last device", "\(radius.sparedLastDevices)") }
            if radius.devices > 0 {
                let share = DeviceRegistry.Share(radius.devices, of: radius.activeDevices)
                // Said even when an override lets the batch through, so a dry run shows it.
                let over = limit.limit.isExceeded(by: radius.devices, of: radius.activeDevices)
                table.add("share of the \(radius.activeDevices) active devices", "\(share.text) (\(over ? "over the \(limit.limit.text) limit" : "limit \(limit.limit.text)"))")
            }
            let refused = !result.refusals.isEmpty
            // A dry run says so first, whatever it found: its head must not read as a real run's.
            let head = refused ? (dryRun ? "dry run: refused, the real run would be too" : "refused")
                : radius.devices == 0 ? (dryRun ? "dry run: nothing to revoke" : "nothing to revoke")
                : dryRun ? "dry run: would revoke" : result.applied ? "revoked (batch \(result.batchID))" : "refused"
            // The head names the batch id as given (--batch-id): escaped like every other cell.
            try emit(Array((head.displaySafe + "\n" + table.render(indent: "  ")).utf8))
            // A refusal lists its batch too, as its JSON does: what support is asked to approve or
            // correct is the devices, not only their count.
            if radius.devices > 0 {
                var lines = Array("\(result.applied ? "revoked" : "would revoke"):\n".utf8)
                try registry.forEachBatchDevice(of: result) { device in
                    lines.append(contentsOf: ("  \(device.text)".displaySafe + "\n").utf8)
                    if lines.count >= 1 << 16 {
                        try emit(lines)
                        lines.removeAll(keepingCapacity: true)
                    }
                }
                try emit(lines)
            }
            try emit(Array((Self.unmatchedLines(radius.unmatched, place: place)
                + Self.listed("users left with no active device", radius.usersLeftWithoutDevice)
                + Self.listed("conversations left with no active admin device", radius.conversationsLeftWithoutAdmin)).utf8))
        }

        /// The refusal a run ends with, saying when its report could not be written.
        func refusal(_ result: DeviceRegistry.RevocationResult, reportLost: String? = nil) -> VaultError {
            let lost = reportLost.map { "; the report could not be written: \($0)" } ?? ""
            return VaultError.revocationRefused(result.refusals.map(\.reason).joined(separator: "; ") + "; nothing was changed" + lost, hint: hint(for: result.refusals))
        }

        func run() throws {
            let lists = [devicesFile.map { FileSet.Input("--devices-file", $0) }, signatureKeysFile.map { FileSet.Input("--signature-keys-file", $0) }]
            let opsFile = ops.map { DeclaredOutput("--ops", $0, kind: .text) }
            let files = try CommandFiles(reads: lists.compactMap { $0 } + signer.declaredInputs,
                                         writes: database.asOutput + (opsFile.map { [$0] } ?? []))
            let (given, placeGiven) = try selector()
            let sizeLimit = try sizeLimit
            // The list is read as the registry streams it, and the signer's key once the list's
            // lines are checked: a missing file of either is said before the registry is reached.
            try devicesFile.map { try InputFiles.requireReadable($0, what: "devices file") }
            try signer.signerKeyFile.map { try InputFiles.requireReadable($0, what: "signer key file") }
            let registry = try database.open(dryRun ? .readOnly : .readWrite, refusingHiddenRows: dryRun)
            // What refuses every writer (its guards, the app's rules, row-level security): a dry
            // run still measures, then ends as the real run would (a trial: exit 0 and a JSON
            // report with no refusal, where the real run was refused).
            let writersRefusal = dryRun ? try registry.refusalOfWriters() : nil
            let privilegesMissing = dryRun && writersRefusal == nil ? try registry.privilegesMissingForRevoking() : []
            // A name is looked up among the user's devices, and revoked by its ids.
            let named = try name.map { try registry.devices(named: $0, user: user ?? "") }
            let place = named == nil ? placeGiven : { _ in "--name" }
            // A devices file is read now: a line that names no device is refused before anything
            // else is asked (the signer's key command) or refused.
            let prepared = try named.map { try registry.prepare(named: $0, user: user ?? "") } ?? registry.prepare(given)
            if ops != nil, registry.schema != .catbird { throw VaultError.notInSchema("MLS operations to write (--ops)", registry.schema, registry: database.db) }
            // Who runs it, recorded in the batch's record of the chained log (and signed by their
            // key). A dry run reads the key too: one the real run refuses (a missing file, a FIFO,
            // the vault key) fails the dry run alike, which approves only what would be made.
            let runBy = RegistryOperator(name: operatorName ?? loginName(), signer: try signer.load(diagnostics))
            let result = try registry.revoke(prepared, reason: reason, now: now.time, nowGiven: now.isGiven, dryRun: dryRun, allowing: allowing, collectOperations: false,
                                             keepLastDevice: keepLastDevice, sizeLimit: sizeLimit,
                                             batchID: batchId ?? UUID().uuidString.lowercased(), by: runBy,
                                             // The batch is committed before --ops is written: an --ops that cannot be written
                                             // there (a read-only folder, another user's file in a sticky folder) stops it first.
                                             beforeCommitting: { if let opsFile { try files.requireWritable(opsFile) } })
            let later = result.recordedAfterTime
            if later.devices + later.memberships > 0 {
                let what = [later.devices > 0 ? "\(later.devices) of its devices registered" : nil,
                            later.memberships > 0 ? "\(later.memberships) of their open memberships began" : nil].compactMap { $0 }.joined(separator: " and ")
                diagnostics.warning("--now \(now.now.now ?? "") is earlier than when \(what) after it: \(result.applied ? "the revocation records" : "the revocation would record") a time before them, which 'registry import' refuses in such rows")
            }
            // The operations first, once the batch is committed: they are what the app must apply,
            // so a report that cannot be written afterwards (a closed pipe, a full disk) loses
            // nothing that cannot be had again. They are in the database, committed with the
            // batch; the file is written from there, and can be written again the same way.
            if !dryRun, result.applied, let ops, let opsFile {
                do {
                    try files.writer().write(opsFile, streaming: { sink in try registry.operations(batch: result.batchID, to: { try JSONValue.escapingInvisibles($0, to: sink) }) })
                } catch let error as VaultError {
                    throw error.withContext(prefix: "batch \(result.batchID) is committed, but its operations could not be written: ",
                                            hint: "write them with: device-revoker registry log \(ShellWord.option("--db", database.db, quoted: true)) \(ShellWord.option("--batch", result.batchID)) \(ShellWord.option("--ops", ops, quoted: true))")
                }
            }
            // Standard output carries the operations with --ops -: the report is then the
            // human summary, on standard error.
            let emit: ([UInt8]) throws -> Void = ops == "-" ? { StandardStreams.writeError($0) } : { try StandardStreams.writeOutput($0) }
            do {
                if json {
                    try writeJSONReport(result, registry: registry, place: place, limit: sizeLimit, to: emit)
                } else {
                    try writeTextReport(result, registry: registry, place: place, limit: sizeLimit, to: emit)
                }
            } catch let error as VaultError where result.applied && !dryRun {
                let operations = ops.map { " and its operations are in \($0 == "-" ? "standard output" : $0)" } ?? ""
                throw error.withContext(prefix: "batch \(result.batchID) is committed\(operations), but its report could not be written: ",
                                        hint: "see the batch with: device-revoker registry log \(ShellWord.option("--db", database.db, quoted: true)) \(ShellWord.option("--batch", result.batchID))")
            } catch let error as VaultError where !result.refusals.isEmpty {
                // The refusal is the outcome (exit 4), said on standard error whether or not the
                // report got out: a closed pipe must not turn a guard rail into an I/O failure.
                throw refusal(result, reportLost: error.reason)
            }
            if !result.refusals.isEmpty { throw refusal(result) }
            if dryRun {
                if ops != nil { diagnostics.note("dry run: --ops was not written") }
                // A role that may only read previews for one that may write (docs/device-registry.md,
                // "Role setup"): said, not refused.
                if !privilegesMissing.isEmpty {
                    diagnostics.warning("dry run: the role connecting lacks \(privilegesMissing.joined(separator: ", ")): the real run as this role would be refused (exit 78), nothing changed; run it as a role granted what docs/device-registry.md lists under \"Role setup\"")
                }
                if let writersRefusal { throw writersRefusal.withContext(prefix: "dry run: the real run would be refused: ") }
            } else if !result.applied, let opsFile {
                // The same ticket run again after its batch was committed (its operations lost
                // to a full disk, a kill): the batch's stored operations are written again, so the
                // rerun completes what the first run began (a trial: it exited 0 with no file).
                if let batchId, result.radius.devices == 0 {
                    do {
                        try files.writer().write(opsFile, streaming: { sink in try registry.operations(batch: batchId, to: { try JSONValue.escapingInvisibles($0, to: sink) }) })
                        diagnostics.note("batch \(batchId) was committed by an earlier run; its operations → \(files.displayName(opsFile))")
                        return
                    } catch let error as VaultError where error.code == .notInRegistry {}
                }
                // Without --batch-id, the batch that revoked the selection is named, and how to
                // write its operations, should a run of it have been cut off before it could.
                if batchId == nil, let last = result.radius.revokedEarlierBy.first {
                    // Several batches may each have revoked some of them: each is named, the last first.
                    // Each id quoted: one may hold ", " (a trial).
                    let others = result.radius.revokedEarlierBy.count > 1 ? ", others by \(result.radius.revokedEarlierBy.dropFirst().map(ShellWord.quoted).joined(separator: ", "))" : ""
                    diagnostics.note("nothing was revoked, so --ops was not written; the devices selected were revoked earlier, the last of them by batch \(ShellWord.quoted(last))\(others): "
                                     + "if a run was cut off before writing its operations, write a batch's with: device-revoker registry log "
                                     + "\(ShellWord.option("--db", database.db, quoted: true)) \(ShellWord.option("--batch", last)) \(ShellWord.option("--ops", ops ?? "FILE", quoted: true))")
                    return
                }
                diagnostics.note("nothing was revoked, so --ops was not written")
            }
        }
    }
}
