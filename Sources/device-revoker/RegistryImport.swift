import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles
import VaultRegistry

extension Registry {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Bulk-load devices and memberships from JSON Lines in one transaction.",
            discussion: """
            Keys are the column names; signature_public_key is hex, times RFC 3339 UTC, is_admin \
            and is_active booleans. A bad line names its line number and nothing is imported. \
            Refused (exit 2, by line and field): an id USER_DID#DEVICE_ID could not name (empty, \
            white space around it, a control character, '#' in a device id, a user DID starting \
            with '#'), and what cannot be true (a negative key_packages_available, revoked_at or \
            revocation_reason on an active device, last_seen or revoked_at before registered_at, \
            left_at before joined_at, a time more than a day after now).

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
        @OptionGroup var now: RecordedNowOption

        func validate() throws {
            guard devices != nil || members != nil else { throw ValidationError("give --devices, --members or both") }
            try requireOneStandardInput([devices, members])
        }

        func run() throws {
            let inputs = [devices.map { FileSet.Input("--devices", $0) }, members.map { FileSet.Input("--members", $0) }].compactMap { $0 }
            _ = try CommandFiles(reads: inputs, writes: database.asOutput)
            // A missing file is said before the registry is opened (libpq, a server).
            try devices.map { try InputFiles.requireReadable($0, what: "devices file") }
            try members.map { try InputFiles.requireReadable($0, what: "members file") }
            let registry = try database.open(.readWrite)
            func source(_ path: String, _ what: String) -> DeviceRegistry.LineSource {
                ("\(what) \(InputFiles.quotedName(path))", { try InputFiles.forEachLine(path, what: what, $0) })
            }
            // The report is written before the commit: one that is lost undoes the import.
            let counts = try registry.importRows(devices: devices.map { source($0, "devices file") },
                                                 members: members.map { source($0, "members file") }, now: now.time, upsert: upsert) { counts in
                guard json else { return }
                try StandardStreams.writeOutput(JSONValue.object([
                    ("db", .string(database.db)), ("devices", .int(counts.devices)), ("memberships", .int(counts.members)), ("upsert", .bool(upsert)),
                ]).reported())
            }
            diagnostics.note("\(upsert ? "imported or updated" : "imported") \(counted(counts.devices, "device")) and \(counted(counts.members, "membership")) into \(database.db)")
        }
    }
}
