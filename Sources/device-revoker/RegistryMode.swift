import ArgumentParser
import CLISupport
import Foundation
import VaultCore
import VaultRegistry

struct Registry: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A server device registry in SQLite or PostgreSQL: import, revoke in bulk, members, rejoin plans, the log.",
        discussion: """
        The schema is the Catbird seed's user_devices and members, with revocation state and an \
        append-only revocations log (docs/device-registry.md). --db is a SQLite file or the chat \
        app's PostgreSQL database, as a libpq URI or key=value string; the PG* environment \
        variables, ~/.pgpass and service files work as in psql. A password is never given in --db.

        Examples:
          device-revoker registry init --db registry.sqlite
          device-revoker registry import --db registry.sqlite \\
            --devices devices.jsonl --members members.jsonl
          device-revoker registry devices --db registry.sqlite --user did:plc:josh
          device-revoker registry revoke --db registry.sqlite \\
            --not-seen-since 2025-01-01 --dry-run
          PGPASSFILE=~/.pgpass device-revoker registry revoke \\
            --db postgresql://operator@db.internal/chat --user did:plc:josh --dry-run
          device-revoker registry log --db 'host=/run/postgresql dbname=chat'
        """,
        subcommands: [Init.self, Import.self, Devices.self, Revoke.self, Members.self, RejoinPlan.self, Log.self]
    )

    struct Database: ParsableArguments {
        @Option(help: ArgumentHelp(
            "The registry: a SQLite file, or a PostgreSQL connection (postgresql://… or key=value …) without its password.",
            valueName: "DB"))
        var db: String

        /// Where --db points; a password inside it is a usage error.
        var location: RegistryLocation {
            get throws {
                do {
                    return try RegistryLocation(parsing: db)
                } catch let error as VaultError where error.code == .passwordInConnection {
                    throw ValidationError("""
                        --db contains a password, which would sit in the shell history and in ps output; \
                        give it with PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file instead
                        """)
                } catch let error as VaultError where error.code == .badConnection {
                    throw ValidationError("--db: \(error.reason) (see https://www.postgresql.org/docs/current/libpq-connect.html)")
                }
            }
        }

        func validate() throws { _ = try location }

        func open(_ access: DeviceRegistry.Access) throws -> DeviceRegistry {
            do {
                return try DeviceRegistry(location: location, access: access)
            } catch let error as VaultError where error.code == .noRegistry {
                throw ToolError(.operational, error.reason, hint: "make one with 'device-revoker registry init --db \(db)'")
            } catch let error as VaultError where error.code == .notARegistry && (try? location) != .sqlite(path: db) {
                throw ToolError(.invalidInput, error.reason, hint: "make it one with 'device-revoker registry init --db \(db)'")
            } catch let error as VaultError where error.code == .cannotConnect {
                throw ToolError(.operational, error.reason,
                                hint: "check the server, and that the password is in PGPASSWORD, ~/.pgpass (PGPASSFILE) or a service file")
            }
        }

        private var sqlitePath: String? {
            if case .sqlite(let path) = try? location { path } else { nil }
        }

        /// SQLite's side files: no output may be one of them. A server database has none.
        var sideFiles: [FileSet.Input] {
            guard let path = sqlitePath else { return [] }
            return ["-journal", "-wal", "-shm"].map { FileSet.Input("the registry's \($0.dropFirst()) file", path + $0) }
        }

        /// The database as an input, for commands that only read it.
        var asInput: [FileSet.Input] { (sqlitePath.map { [FileSet.Input("--db", $0)] } ?? []) + sideFiles }

        /// The database as the output it is for commands that change it in place (a file only).
        var asOutput: [DeclaredOutput] { sqlitePath.map { [DeclaredOutput("--db", $0, kind: .text)] } ?? [] }
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a registry (or bring an existing one's schema up to date).",
            discussion: """
            Examples:
              device-revoker registry init --db registry.sqlite
            """
        )
        @OptionGroup var database: Database

        func run() throws {
            _ = try CommandFiles(reads: database.sideFiles, writes: database.asOutput)
            _ = try database.open(.create)
            diagnostics.note("registry ready: \(database.db)")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bulk-load devices and memberships from JSON Lines in one transaction.",
            discussion: """
            Keys are the column names; signature_public_key is hex, times RFC 3339 UTC, is_admin \
            and is_active booleans. A bad line names its line number and nothing is imported.

            Examples:
              device-revoker registry import --db registry.sqlite \\
                --devices devices.jsonl --members members.jsonl
              export-devices | device-revoker registry import --db registry.sqlite \\
                --devices - --upsert --json
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("user_devices rows.", valueName: "FILE")) var devices: String?
        @Option(help: ArgumentHelp("members rows.", valueName: "FILE")) var members: String?
        @Flag(help: "Update rows already there (names, keys, last seen, admin flags) instead of refusing; revocations are never undone.")
        var upsert = false
        @Flag(help: "Print the counts as JSON.") var json = false
        @OptionGroup var now: NowOption

        func validate() throws {
            guard devices != nil || members != nil else { throw ValidationError("give --devices, --members or both") }
            try requireOneStandardInput([devices, members])
        }

        func run() throws {
            let inputs = [devices.map { FileSet.Input("--devices", $0) }, members.map { FileSet.Input("--members", $0) }].compactMap { $0 }
            _ = try CommandFiles(reads: inputs + database.sideFiles, writes: database.asOutput)
            let registry = try database.open(.readWrite)
            func source(_ path: String, _ what: String) -> DeviceRegistry.LineSource {
                ("\(what) '\(InputFiles.displayName(path))'", { try InputFiles.forEachLine(path, what: what, $0) })
            }
            let counts = try registry.importRows(devices: devices.map { source($0, "devices file") },
                                                 members: members.map { source($0, "members file") }, now: now.time, upsert: upsert)
            if json {
                StandardStreams.writeOutput(JSONValue.object([
                    ("db", .string(database.db)), ("devices", .int(counts.devices)), ("memberships", .int(counts.members)), ("upsert", .bool(upsert)),
                ]).serialized())
            }
            diagnostics.note("\(upsert ? "imported or updated" : "imported") \(counted(counts.devices, "device")) and \(counted(counts.members, "membership")) into \(database.db)")
        }
    }

    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List devices: a user's, the active or revoked ones, those not seen since a date.",
            discussion: """
            Filters combine; with none, every device is listed. --match finds a device by part of \
            its id or name, as support hears it on the phone.

            Examples:
              device-revoker registry devices --db registry.sqlite --user did:plc:josh
              device-revoker registry devices --db registry.sqlite --active \\
                --not-seen-since 2025-01-01
              device-revoker registry devices --db registry.sqlite --match ipad --json
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("Only this user's devices.", valueName: "DID")) var user: String?
        @Flag(help: "Only active devices.") var active = false
        @Flag(help: "Only revoked devices.") var revoked = false
        @Option(help: ArgumentHelp("Only devices not seen since this date.", valueName: "DATE")) var notSeenSince: String?
        @Option(help: ArgumentHelp("Only devices whose id or name contains TEXT (any case).", valueName: "TEXT")) var match: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var now: NowOption

        func validate() throws {
            if active, revoked { throw ValidationError("choose --active or --revoked, not both") }
            if let notSeenSince { _ = try parseSince(notSeenSince) }
        }

        func run() throws {
            let filter = DeviceRegistry.DeviceFilter(user: user, state: active ? .active : revoked ? .revoked : .any,
                                                     notSeenSince: try notSeenSince.map(parseSince), search: match)
            let devices = try database.open(.readOnly).devices(matching: filter)
            if json {
                StandardStreams.writeOutput(JSONValue.array(devices.map { device in
                    func time(_ value: Timestamp?) -> JSONValue { value.map { .string($0.rfc3339) } ?? .null }
                    return .object([
                        ("userDid", .string(device.userDid)), ("deviceId", .string(device.deviceId)), ("deviceMlsDid", .string(device.deviceMlsDid)),
                        ("deviceName", device.deviceName.map(JSONValue.string) ?? .null), ("isActive", .bool(device.isActive)),
                        ("registeredAt", time(device.registeredAt)), ("lastSeenAt", time(device.lastSeenAt)), ("revokedAt", time(device.revokedAt)),
                        ("revocationReason", device.revocationReason.map(JSONValue.string) ?? .null),
                        ("openMemberships", .int(device.openMemberships)),
                    ])
                }).serialized())
                return
            }
            guard !devices.isEmpty else {
                diagnostics.note("no device matches")
                return
            }
            let now = now.time
            var table = TextTable()
            table.add("device", "name", "state", "last seen", "conversations")
            for device in devices {
                let state = device.revokedAt.map { "revoked \(TimeSpan.relative($0, now: now))" } ?? (device.isActive ? "active" : "revoked")
                let seen = device.lastSeenAt.map { TimeSpan.relative($0, now: now) } ?? "never (registered \(TimeSpan.relative(device.registeredAt, now: now)))"
                table.add("\(device.userDid)#\(device.deviceId)", device.deviceName ?? "", state, seen, "\(device.openMemberships)")
            }
            StandardStreams.writeOutput(Array(table.render().utf8))
            diagnostics.note(counted(devices.count, "device"))
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke devices in one transaction: inactive, memberships closed, one log row each.",
            discussion: """
            Refuses (exit 4), before changing anything, when a listed device, key or user is \
            not in the registry (each is named, by line, with the user's closest devices) unless \
            --allow-unmatched; when users would be left with no active device unless \
            --allow-users-without-device; when conversations would be left with no active admin \
            device unless --allow-conversations-without-admin. --force allows both of the last \
            two, never an unmatched entry. A second identical run changes nothing and says so.

            Examples:
              device-revoker registry revoke --db r.sqlite --device 'did:plc:josh#a1b2' \\
                --reason lost
              device-revoker registry revoke --db r.sqlite --devices-file stolen.txt \\
                --dry-run --json
              device-revoker registry revoke --db r.sqlite --user did:plc:josh --force
            """
        )
        @OptionGroup var database: Database
        @Option(name: .customLong("device"), help: ArgumentHelp("USER_DID#DEVICE_ID (repeatable).", valueName: "DID#DEVICE")) var devices: [String] = []
        @Option(help: ArgumentHelp("USER_DID#DEVICE_ID, one a line.", valueName: "FILE")) var devicesFile: String?
        @Option(help: ArgumentHelp("Every device of this user.", valueName: "DID")) var user: String?
        @Option(help: ArgumentHelp("Devices not seen since this date.", valueName: "DATE")) var notSeenSince: String?
        @Option(help: ArgumentHelp("Signature public keys (hex), one a line.", valueName: "FILE")) var signatureKeysFile: String?
        @Option(help: ArgumentHelp("Why; recorded on each device and in the log.", valueName: "TEXT")) var reason: String?
        @Flag(help: "Show the blast radius and write nothing.") var dryRun = false
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Revoke what was found even if some listed entries are not in the registry (each is reported).") var allowUnmatched = false
        @Flag(help: "Go ahead even if users are left with no active device.") var allowUsersWithoutDevice = false
        @Flag(help: "Go ahead even if conversations are left with no active admin device.") var allowConversationsWithoutAdmin = false
        @Flag(help: "Both of the above: users and conversations may be left without an active device or admin.") var force = false
        @Flag(help: "Spare each user's last active device (the one seen most recently): revoke stale devices without locking anyone out.")
        var keepLastDevice = false
        @Option(help: ArgumentHelp("Write the mls.remove operations (JSON Lines) to FILE.", valueName: "FILE")) var ops: String?
        @Option(help: ArgumentHelp("The batch id to log, such as a ticket number (default: a random UUID).", valueName: "ID")) var batchId: String?
        @OptionGroup var now: NowOption

        func validate() throws {
            let selectors = [!devices.isEmpty, devicesFile != nil, user != nil, notSeenSince != nil, signatureKeysFile != nil].filter { $0 }.count
            guard selectors == 1 else {
                throw ValidationError("choose the devices one way: --device, --devices-file, --user, --not-seen-since or --signature-keys-file")
            }
            if let notSeenSince { _ = try parseSince(notSeenSince) }
            // Sparing a device named on purpose (a stolen one) would leave it active.
            if keepLastDevice, notSeenSince == nil { throw ValidationError("--keep-last-device goes with --not-seen-since") }
        }

        var allowing: DeviceRegistry.Overrides {
            var allowing: DeviceRegistry.Overrides = force ? .guardRails : []
            if allowUnmatched { allowing.insert(.unmatched) }
            if allowUsersWithoutDevice { allowing.insert(.usersWithoutDevice) }
            if allowConversationsWithoutAdmin { allowing.insert(.conversationsWithoutAdmin) }
            return allowing
        }

        /// The selector, and how each listed entry is named in messages ("line 3", "--device 2").
        func selector() throws -> (DeviceRegistry.Selector, places: [String]) {
            func pairs(_ entries: [(place: String, text: String)]) throws -> [(user: String, device: String)] {
                try entries.map { place, entry in
                    guard let pair = DeviceRegistry.deviceReference(entry) else {
                        throw ToolError(.invalidInput, "\(place): \(quoted(entry)) is not USER_DID#DEVICE_ID".displaySafe,
                                        hint: entry.contains("#") ? nil : "to revoke every device of a user, give --user \(quoted(entry))".displaySafe)
                    }
                    return pair
                }
            }
            if let devicesFile {
                let entries = try readNumberedList(devicesFile, what: "devices file").map { ("devices file line \($0.line)", $0.text) }
                return (.devices(try pairs(entries)), entries.map(\.0))
            }
            if let user { return (.user(user), ["--user"]) }
            if let notSeenSince { return (.notSeenSince(try parseSince(notSeenSince)), []) }
            if let signatureKeysFile {
                let entries = try readNumberedList(signatureKeysFile, what: "signature keys file")
                return (.signatureKeys(try entries.map { entry in
                    guard let key = Hex.decode(entry.text), !key.isEmpty else {
                        throw ToolError(.invalidInput, "signature keys file line \(entry.line): \(quoted(entry.text)) is not hex".displaySafe)
                    }
                    return key
                }), entries.map { "signature keys file line \($0.line)" })
            }
            let entries = devices.enumerated().map { index, device in (devices.count == 1 ? "--device" : "--device \(index + 1)", device) }
            return (.devices(try pairs(entries)), entries.map(\.0))
        }

        /// One line per unmatched entry: where it was listed, and what the registry has near it.
        static func unmatchedLines(_ unmatched: [DeviceRegistry.Unmatched], places: [String], limit: Int = 20) -> String {
            guard !unmatched.isEmpty else { return "" }
            let lines = unmatched.prefix(limit).map { entry -> String in
                let place = places.indices.contains(entry.item - 1) ? places[entry.item - 1] : "entry \(entry.item)"
                let near = !entry.closest.isEmpty ? "; closest: " + entry.closest.joined(separator: ", ")
                    : entry.entry.contains("#") && !entry.userKnown ? "; no such user" : ""
                return "  \(place): \(quoted(entry.entry))\(near)".displaySafe + "\n"
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

        /// Names what a count stands for, so support can act on it; a long list is cut, and
        /// --json has it whole.
        static func listed(_ title: String, _ ids: [String], limit: Int = 20) -> String {
            guard !ids.isEmpty else { return "" }
            let more = ids.count > limit ? "  … and \(ids.count - limit) more (--json lists them all)\n" : ""
            return "\(title):\n" + ids.prefix(limit).map { "  \($0)".displaySafe + "\n" }.joined() + more
        }

        func run() throws {
            let lists = [devicesFile.map { FileSet.Input("--devices-file", $0) }, signatureKeysFile.map { FileSet.Input("--signature-keys-file", $0) }]
            let files = try CommandFiles(reads: lists.compactMap { $0 } + database.sideFiles,
                                         writes: database.asOutput + (ops.map { [DeclaredOutput("--ops", $0, kind: .text)] } ?? []))
            let (selector, places) = try selector()
            let registry = try database.open(dryRun ? .readOnly : .readWrite)
            let result = try registry.revoke(selector, reason: reason, now: now.time, dryRun: dryRun, allowing: allowing, collectOperations: false,
                                             keepLastDevice: keepLastDevice,
                                             batchID: batchId ?? UUID().uuidString.lowercased())
            let radius = result.radius
            if json {
                StandardStreams.writeOutput(JSONValue.object([
                    ("batchId", result.applied ? .string(result.batchID) : .null), ("applied", .bool(result.applied)), ("dryRun", .bool(dryRun)),
                    ("devices", .int(radius.devices)), ("users", .int(radius.users)), ("conversations", .int(radius.conversations)),
                    ("memberships", .int(radius.memberships)),
                    ("usersLeftWithoutDevice", .array(radius.usersLeftWithoutDevice.map(JSONValue.string))),
                    ("conversationsLeftWithoutAdmin", .array(radius.conversationsLeftWithoutAdmin.map(JSONValue.string))),
                    ("alreadyRevoked", .int(radius.alreadyRevoked)), ("notFound", .int(radius.notFound)),
                    ("unmatched", .array(radius.unmatched.map { entry in
                        .object([("where", .string(places.indices.contains(entry.item - 1) ? places[entry.item - 1] : "entry \(entry.item)")),
                                 ("entry", .string(entry.entry)), ("userKnown", .bool(entry.userKnown)),
                                 ("closest", .array(entry.closest.map(JSONValue.string)))])
                    })),
                    ("sparedLastDevices", .int(radius.sparedLastDevices)),
                    ("refusals", .array(result.refusals.map {
                        .object([("kind", .string($0.kind)), ("ids", .array($0.ids.map(JSONValue.string))), ("message", .string($0.reason))])
                    })),
                ]).serialized())
            } else {
                var table = TextTable()
                table.add("devices", "\(radius.devices)")
                table.add("users", "\(radius.users)")
                table.add("conversations", "\(radius.conversations)")
                table.add("memberships closed", "\(radius.memberships)")
                table.add("users left with no active device", "\(radius.usersLeftWithoutDevice.count)")
                table.add("conversations left with no active admin device", "\(radius.conversationsLeftWithoutAdmin.count)")
                table.add("already revoked (skipped)", "\(radius.alreadyRevoked)")
                table.add("not found", "\(radius.notFound)")
                if keepLastDevice { table.add("spared: each user's last device", "\(radius.sparedLastDevices)") }
                let head = !result.refusals.isEmpty && radius.devices == 0 ? "refused" : radius.devices == 0 ? "nothing to revoke" : !result.refusals.isEmpty ? (dryRun ? "dry run: refused, the real run would be too" : "refused")
                    : dryRun ? "dry run: would revoke" : result.applied ? "revoked (batch \(result.batchID))" : "refused"
                let lists = Self.unmatchedLines(radius.unmatched, places: places)
                    + Self.listed("users left with no active device", radius.usersLeftWithoutDevice)
                    + Self.listed("conversations left with no active admin device", radius.conversationsLeftWithoutAdmin)
                StandardStreams.writeOutput(Array((head + "\n" + table.render(indent: "  ") + lists).utf8))
            }
            if !result.refusals.isEmpty {
                throw ToolError(.refused, result.refusals.map(\.reason).joined(separator: "; ") + "; nothing was changed", hint: hint(for: result.refusals))
            }
            guard let writer = files.writer(unlessDryRun: dryRun) else {
                if ops != nil { diagnostics.note("dry run: --ops was not written") }
                return
            }
            guard result.applied, let ops else {
                if ops != nil { diagnostics.note("nothing was revoked, so --ops was not written") }
                return
            }
            // The operations are in the database, committed with the batch; the file is written
            // from there, and can be written again the same way if this fails.
            do {
                try writer.write("--ops", registry.operations(batch: result.batchID))
            } catch let error as VaultError {
                throw ToolError(.operational, "batch \(result.batchID) is committed, but its operations could not be written: \(error.reason)",
                                hint: "write them with: device-revoker registry log --db '\(database.db)' --batch \(result.batchID) --ops '\(ops)'")
            }
        }
    }

    struct Members: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The user-level view of a conversation: one row per user, device count, admin flag.",
            discussion: """
            Examples:
              device-revoker registry members --db registry.sqlite --convo family-chat
              device-revoker registry members --db registry.sqlite --convo family-chat \\
                --json
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("The conversation id.", valueName: "ID")) var convo: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let members = try database.open(.readOnly).members(conversation: convo)
            if json {
                StandardStreams.writeOutput(JSONValue.array(members.map {
                    .object([("userDid", .string($0.userDid)), ("deviceCount", .int($0.deviceCount)), ("deviceIds", .array($0.deviceIds.map(JSONValue.string))),
                             ("isAdmin", .bool($0.isAdmin)), ("joinedAt", .string($0.joinedAt))])
                }).serialized())
                return
            }
            var table = TextTable()
            table.add("user", "devices", "admin", "joined")
            for member in members { table.add(member.userDid, "\(member.deviceCount)", member.isAdmin ? "admin" : "", member.joinedAt) }
            StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }

    struct RejoinPlan: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rejoin-plan",
            abstract: "The conversations a newly registered device must be added to, as mls.add operations (JSON Lines).",
            discussion: """
            Examples:
              device-revoker registry rejoin-plan --db registry.sqlite \\
                --device 'did:plc:josh#c3d4'
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("The new device.", valueName: "DID#DEVICE")) var device: String

        func run() throws {
            guard let pair = DeviceRegistry.deviceReference(device) else { throw ValidationError("--device takes USER_DID#DEVICE_ID") }
            let plan = try database.open(.readOnly).rejoinPlan(user: pair.user, device: pair.device)
            StandardStreams.writeOutput(plan.operations.flatMap { $0.serialized(pretty: false) + [0x0a] })
            switch plan.emptyBecause {
            case nil: break
            case .alreadyEverywhere:
                diagnostics.note("nothing to rejoin: \(device) is already in every conversation of \(pair.user)")
            case .closedByRevocation(let batches, let conversations):
                diagnostics.note("nothing to rejoin: every membership of \(pair.user) was closed by revocation (batch\(batches.count == 1 ? "" : "es") \(batches.joined(separator: ", ")))")
                diagnostics.note("a revocation is never undone: an admin of each conversation must add this device again from the app: \(conversations.joined(separator: ", "))")
            case .userInNoConversation:
                diagnostics.note("nothing to rejoin: \(pair.user) is in no conversation, and no revocation closed one")
            }
        }
    }

    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What was revoked, when, why, and by which selector; a batch's operations again.",
            discussion: """
            With --batch and --ops, writes that batch's mls.remove operations (JSON Lines) again, \
            exactly as revoke wrote them: they are kept in the registry with the batch.

            Examples:
              device-revoker registry log --db r.sqlite
              device-revoker registry log --db r.sqlite --batch TICKET-1234 \\
                --ops ops.jsonl
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("Only this batch.", valueName: "ID")) var batch: String?
        @Flag(help: "Print JSON Lines.") var json = false
        @Option(help: ArgumentHelp("With --batch: write the batch's operations (JSON Lines) to FILE.", valueName: "FILE")) var ops: String?
        @OptionGroup var now: NowOption

        func validate() throws {
            if ops != nil, batch == nil { throw ValidationError("--ops needs --batch") }
        }

        func run() throws {
            if let ops, let batch {
                let files = try CommandFiles(reads: database.asInput, writes: [DeclaredOutput("--ops", ops, kind: .text)])
                let lines = try database.open(.readOnly).operations(batch: batch)
                try files.writer().write("--ops", lines)
                diagnostics.note("operations of batch \(batch) → \(files.displayName("--ops"))")
                return
            }
            let entries = try database.open(.readOnly).log(batch: batch)
            if json {
                StandardStreams.writeOutput(entries.flatMap { entry in
                    JSONValue.object([("batchId", .string(entry.batchID)), ("revokedAt", .string(entry.revokedAt)), ("userDid", .string(entry.userDid)),
                                      ("deviceId", .string(entry.deviceID)), ("reason", entry.reason.map(JSONValue.string) ?? .null),
                                      ("selector", .string(entry.selector))]).serialized(pretty: false) + [0x0a]
                })
                return
            }
            let now = now.time
            var table = TextTable()
            table.add("revoked", "", "batch", "device", "reason", "selector")
            for entry in entries {
                let ago = Timestamp(rfc3339: entry.revokedAt).map { TimeSpan.relative($0, now: now) } ?? ""
                table.add(entry.revokedAt, ago, entry.batchID, "\(entry.userDid)#\(entry.deviceID)", entry.reason ?? "", entry.selector)
            }
            StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}
