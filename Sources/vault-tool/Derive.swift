import ArgumentParser
import CLISupport
import VaultCore

struct Derive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract: "Show what a parent key derives: public key, household id, vault path, device subkeys.",
        discussion: """
        The vault key is a secret: it is shown only with --show-vault-key, and written on its own \
        (64 hex, for --vault-key-file) with --vault-key-out FILE, so a parent can give support \
        staff the vault key instead of the nsec.

        Examples:
          vault-tool derive --key-file parent.nsec
          vault-tool derive --key-file parent.nsec --device-id kitchen-ipad \\
            --device-id tv-room --json
          vault-tool derive --key-file parent.nsec --vault-key-out household.vaultkey
        """
    )

    @OptionGroup var key: ParentKeyOption

    @Option(name: .customLong("device-id"), help: ArgumentHelp("Also derive this device's subkey (repeatable).", valueName: "ID"))
    var deviceIDs: [String] = []

    @Flag(help: "Include the vault key (secret) in the output.")
    var showVaultKey = false

    @Option(name: .customLong("vault-key-out"), help: ArgumentHelp("Write the vault key alone to FILE (created 0600, never overwritten).", valueName: "FILE"))
    var vaultKeyOut: String?

    @Flag(help: "Print JSON instead of aligned text.")
    var json = false

    @OptionGroup var output: OutputOptions

    func run() throws {
        let report = output.declared(showVaultKey ? .secret : .text)
        let keyOutput = vaultKeyOut.map { DeclaredOutput("--vault-key-out", $0, kind: .secret, exclusive: true) }
        let files = try CommandFiles(reads: [key.declaredInput].compactMap { $0 }, writes: [report] + (keyOutput.map { [$0] } ?? []), force: output.force)
        let writer = files.writer()
        let key = try self.key.load(diagnostics)
        // Once the key is read: an id holding a piece of it (or of a key it gives) is refused.
        for id in deviceIDs { try VaultDevices.checkDerivedID(id) }
        let household = Household(parentPublicKey: key.publicKey)
        let devices = try deviceIDs.map { ($0, try Derivation.deviceSubkey(for: key, deviceID: $0).publicKey.hex) }
        let vaultKey = try Derivation.vaultKey(for: key)
        let vaultKeyHex = showVaultKey ? String(decoding: try vaultKey.hex().withUnsafeBytes { Array($0) }, as: UTF8.self) : nil

        if let keyOutput {
            let hex = try vaultKey.hex()
            let line = try SecretBytes(count: hex.count + 1) { buffer in
                hex.withUnsafeBytes { buffer.copyMemory(from: $0) }
                buffer[hex.count] = 0x0a
            }
            try writer.stage(keyOutput, line)
        }

        let text: String
        if json {
            var entries: [(key: String, value: JSONValue)] = [
                ("npub", .string(key.publicKey.npub)),
                ("pubkey", .string(key.publicKey.hex)),
                ("householdId", .string(household.id.hex)),
                ("vaultPath", .string(household.vaultPath)),
                ("devices", .array(devices.map { .object([("deviceId", .string($0.0)), ("subkeyPublicKey", .string($0.1))]) })),
            ]
            if let vaultKeyHex { entries.append(("vaultKey", .string(vaultKeyHex))) }
            // The vault key asked for is kept, to the output declared secret (reported() withholds it).
            text = String(decoding: showVaultKey ? JSONValue.object(entries).revealed() : JSONValue.object(entries).reported(), as: UTF8.self)
        } else {
            var table = TextTable()
            table.add("npub", key.publicKey.npub)
            table.add("pubkey", key.publicKey.hex)
            table.add("household id", household.id.hex)
            table.add("vault path", household.vaultPath)
            if showVaultKey { table.addSecret("vault key", hex: try vaultKey.hex()) }
            var devicesTable = TextTable()
            for (id, subkey) in devices { devicesTable.add(id, subkey) }
            text = table.render() + (devices.isEmpty ? "" : "devices (subkey public keys)\n" + devicesTable.render(indent: "  "))
        }
        try writer.write(report, Array(text.utf8))
    }
}
