import ArgumentParser
import CLISupport
import VaultCore
import VaultFiles
import VaultFleet
import VaultStorage

struct Census: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "census",
        abstract: "Count the vaults under a folder or bucket prefix by format, suite and schema version (no key needed).",
        discussion: """
        Reads only the first bytes of every file under DIR (a folder, or s3://BUCKET/PREFIX/ in \
        an object store, read with ranged requests, many at once), and \
        lists the files that are not vault envelopes, with the reason. A file with a vault's \
        header but shorter than the smallest vault (the header records no length) is counted \
        apart, as truncated. With --list, prints every \
        vault instead: its schema version, household id and path under DIR (with --json, one \
        JSON object a line), from which a migration manifest can be built.

        Examples:
          vault-tool census mirror/vaults
          vault-tool census s3://family-vaults/vaults/
          vault-tool census --json mirror/vaults > census.json
          vault-tool census --list --json mirror/vaults \\
            | jq -c 'select(.schemaVersion == 1) | {vault: ("mirror/vaults/" + .path),
            vaultKeyFile: ("keys/" + .householdId + ".vaultkey")}' > jobs.jsonl
        """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(help: "List every vault (schema version, household id, path) instead of counting.")
    var list = false

    @Argument(help: ArgumentHelp("The folder to count, or s3://BUCKET/PREFIX/.", valueName: "DIR"))
    var folder: String

    @OptionGroup var log: LogFormatOption

    func run() throws {
        log.apply()
        let showProgress = StandardStreams.errorIsTerminal && LogFormat.current == .text
        let census = try VaultCensus.take(at: folder, listing: list) { count in
            if showProgress { StandardStreams.writeError(Array("\r\(count) files read".utf8)) }
        }
        if showProgress { StandardStreams.writeError(Array("\r\u{1b}[K".utf8)) }
        if list {
            try StandardStreams.writeOutput(census.listed.flatMap { entry -> [UInt8] in
                json ? JSONValue.object([("path", .string(entry.path)), ("format", .int(Int(entry.kind.format))), ("suite", .int(Int(entry.kind.suite))),
                                         ("schemaVersion", .int(Int(entry.kind.schemaVersion))), ("householdId", .string(entry.household))])
                    .reported(pretty: false) + [0x0a]
                    : Array("\(entry.kind.schemaVersion)\t\(entry.household)\t\(entry.path.displaySafe)\n".utf8)
            })
            return
        }
        // An empty folder or prefix is counted (0 files), but is most likely a mistyped name.
        if census.files == 0 { diagnostics.warning("nothing to count under \(folder): no file or object there") }
        let kinds = census.counts.keys.sorted()
        let text: String
        if json {
            text = String(decoding: JSONValue.object([
                ("folder", .string(folder)),
                ("files", .int(census.files)),
                ("vaults", .int(census.vaults)),
                ("householdLogs", .int(census.householdLogs)),
                ("kinds", .array(kinds.map { kind in
                    .object([("format", .int(Int(kind.format))), ("suite", .int(Int(kind.suite))), ("schemaVersion", .int(Int(kind.schemaVersion))),
                             ("supported", .bool(kind.isSupported)), ("count", .int(census.counts[kind]!))])
                })),
                ("truncated", .array(census.truncated.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })),
                ("notVaults", .array(census.notVaults.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })),
            ]).reported(), as: UTF8.self)
        } else {
            var table = TextTable()
            table.add("format", "suite", "schema", "vaults", "")
            for kind in kinds {
                table.add("\(kind.format)", "\(kind.suite)", "\(kind.schemaVersion)", "\(census.counts[kind]!)", kind.isSupported ? "" : "not readable by this build")
            }
            var cut = TextTable()
            for entry in census.truncated { cut.add(entry.path, entry.reason) }
            var list = TextTable()
            for entry in census.notVaults { list.add(entry.path, entry.reason) }
            text = "\(census.files) files, \(census.vaults) vaults\(census.householdLogs > 0 ? ", \(census.householdLogs) household logs" : "") under \(folder)".displaySafe + "\n" + table.render()
                + (census.truncated.isEmpty ? "" : "\ntruncated vaults (\(census.truncated.count))\n" + cut.render(indent: "  "))
                + (census.notVaults.isEmpty ? "" : "\nnot vaults (\(census.notVaults.count))\n" + list.render(indent: "  "))
        }
        try StandardStreams.writeOutput(Array(text.utf8))
    }
}

extension VaultCensus {
    /// The census of a folder, or of every object under an `s3://BUCKET/PREFIX` (a prefix named
    /// without its final slash is taken as a folder: `s3://b/vaults` counts `vaults/…`).
    static func take(at location: String, listing: Bool, progress: ((Int) -> Void)?) throws -> VaultCensus {
        guard VaultLocation.isObject(location) else {
            return try take(of: location, listing: listing, progress: progress)
        }
        let prefix = try S3ObjectName.folder(parsing: location)
        return try take(of: prefix, store: ObjectStores.shared(as: ObjectStore.self, for: prefix), listing: listing, progress: progress)
    }
}
