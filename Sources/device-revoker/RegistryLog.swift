import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultRegistry

extension Registry {
    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "What was revoked, when, why, and by which selector; a batch's operations again.",
            discussion: """
            With --batch and --ops, writes that batch's mls.remove operations (JSON Lines) again, \
            exactly as revoke wrote them: they are kept in the registry with the batch. Each row \
            names the operator who ran its batch. With --verify, walks the chained log \
            (docs/device-registry.md, "The chained log"): every batch's record, its link to the \
            one before, its signature, and the digest of its rows; exit 3 naming the first \
            batch or row edited, deleted or inserted outside this tool.

            Examples:
              device-revoker registry log --db r.sqlite
              device-revoker registry log --db r.sqlite --batch TICKET-1234 \\
                --ops ops.jsonl
              device-revoker registry log --db r.sqlite --verify
              device-revoker registry log --db r.sqlite --verify --expect-head 3f5a… \\
                --require-signer npub1…
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("Only this batch.", valueName: "ID")) var batch: String?
        @Flag(help: "Print JSON Lines.") var json = false
        @Option(help: ArgumentHelp("With --batch: write the batch's operations (JSON Lines) to FILE.", valueName: "FILE")) var ops: String?
        @OptionGroup var now: NowOption
        @Flag(help: "Verify the chained log: every batch's record, link, signature, rows and operations.") var verify = false
        @Option(help: ArgumentHelp("With --verify: a head hash an earlier --verify printed, kept elsewhere, which must still be in the chain.", valueName: "HASH"))
        var expectHead: String?
        @Option(help: ArgumentHelp("With --verify: a key (npub1… or hex) that may sign batches; every batch must be signed by one of those given (repeatable).", valueName: "NPUB"))
        var requireSigner: [String] = []

        func validate() throws {
            if ops != nil, batch == nil { throw ValidationError("--ops needs --batch") }
            if verify, ops != nil || batch != nil { throw ValidationError("--verify checks the whole log: give it without --batch and --ops") }
            if !verify, expectHead != nil || !requireSigner.isEmpty { throw ValidationError("--expect-head and --require-signer go with --verify") }
        }

        func run() throws {
            if verify {
                _ = try CommandFiles(reads: database.asInput, writes: [])
                let signers = try requireSigner.map { try publicKeyOption("--require-signer", $0) }
                let expected = try expectHead.map { try hexIDOption("--expect-head", $0, minimum: 64) }
                let report = try database.open(.readOnly, refusingHiddenRows: true).verifyChain(expectHead: expected, signers: signers)
                if json {
                    try StandardStreams.writeOutput(JSONValue.object([
                        ("ok", .bool(true)), ("batches", .int(report.batches.count)), ("rowsChecked", .int(report.rowsChecked)),
                        ("rowsBeforeChain", .int(report.rowsBeforeChain)), ("head", report.headHash.map(JSONValue.string) ?? .null),
                    ]).reported())
                } else {
                    let before = report.rowsBeforeChain > 0 ? "; \(report.rowsBeforeChain) rows from before the chain began, covered as one" : ""
                    try StandardStreams.writeOutput(Array("ok: \(counted(report.batches.count, "batch")) chained, \(counted(report.rowsChecked, "row")) checked\(before); head \(report.headHash ?? "none")\n".utf8))
                }
                return
            }
            if let ops, let batch {
                let opsFile = DeclaredOutput("--ops", ops, kind: .text)
                let files = try CommandFiles(reads: database.asInput, writes: [opsFile])
                let registry = try database.open(.readOnly)
                try files.writer().write(opsFile, streaming: { sink in try registry.operations(batch: batch, to: { try JSONValue.escapingInvisibles($0, to: sink) }) })
                diagnostics.note("operations of batch \(batch) → \(files.displayName(opsFile))")
                return
            }
            let registry = try database.open(.readOnly)
            let entries = try registry.log(batch: batch)
            let operators = try registry.batchOperators()
            if json {
                try StandardStreams.writeOutput(entries.flatMap { entry in
                    JSONValue.object([("batchId", .string(entry.batchID)), ("revokedAt", .string(entry.revokedAt)), ("userDid", .string(entry.userDid)),
                                      ("deviceId", .string(entry.deviceID)), ("reason", entry.reason.map(JSONValue.string) ?? .null),
                                      ("selector", .string(entry.selector)), ("operator", operators[entry.batchID].map { .string($0.name) } ?? .null),
                                      ("signer", operators[entry.batchID]?.signer.map { .string($0) } ?? .null)]).reported(pretty: false) + [0x0a]
                })
                return
            }
            let now = now.time
            var table = TextTable()
            table.add("revoked", "", "batch", "by", "device", "reason", "selector")
            for entry in entries {
                let ago = Timestamp(rfc3339: entry.revokedAt).map { TimeSpan.relative($0, now: now) } ?? ""
                let by = operators[entry.batchID].map { $0.name + ($0.signer.map { " (\($0.prefix(12))…)" } ?? "") } ?? ""
                table.add(entry.revokedAt, ago, entry.batchID, by, "\(entry.userDid)#\(entry.deviceID)", entry.reason ?? "", entry.selector)
            }
            try StandardStreams.writeOutput(Array(table.render().utf8))
        }
    }
}
