import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
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
                try StandardStreams.writeOutput(entries.flatMap { entry in
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
            try StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}
