import ArgumentParser
import CLISupport
import VaultCore

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a vault file: its header, and with a key a summary of the household.",
        discussion: """
        Without a key only the header is read (format, suite, schema version, household id, \
        vault path, sizes). With --key-file or --vault-key-file it also lists the parent, \
        children, devices (* primary, x revoked) and groups. Secrets are never shown.

        Examples:
          vault-tool inspect household.vault
          vault-tool inspect --key-file parent.nsec household.vault
          vault-tool inspect --vault-key-file household.vaultkey --json \\
            household.vault
        """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var vault: VaultInputOptions

    func run() throws {
        // The key first, as every command that opens a vault reads it: a message about the
        // vault then withholds that key wherever it is quoted (a trial: a vault's name holding
        // the key was printed, the key not yet read).
        let access = try vault.access.load(diagnostics)
        let bytes = try vault.readVault(reading: .showing)
        let envelope = try VaultEnvelope(parsing: bytes)
        let document = try access.map { try Vault.open(bytes, with: $0).document }
        let summary = VaultSummary(name: InputFiles.displayName(vault.input), byteCount: bytes.count, envelope: envelope, document: document)
        let text = json ? String(decoding: summary.jsonValue().reported(), as: UTF8.self) : summary.text()
        try StandardStreams.writeOutput(Array(text.utf8))
    }
}

/// What `inspect` shows. Secret fields appear only as "sealed"/"revealed", never as bytes.
struct VaultSummary {
    let name: String
    let byteCount: Int
    let envelope: VaultEnvelope
    let document: VaultDocument?

    var header: VaultHeader { envelope.header }

    func text() -> String {
        var table = TextTable()
        table.add("vault", "\(name) (\(byteCount) bytes)")
        table.add("format", "MTVAULT envelope format \(header.format)")
        table.add("suite", "\(header.suite) (HKDF-SHA256 vault key, XChaCha20-Poly1305-IETF)")
        table.add("schema version", "\(header.schemaVersion)")
        table.add("household id", header.householdID.hex)
        table.add("vault path", header.householdID.vaultPath)
        table.add("ciphertext", "\(envelope.ciphertext.count) bytes (including the 16-byte tag)")
        guard let document else { return table.render() }

        table.add("parent", document.parentPubkey.npub)
        // The revision is what --expect-revision takes; a v1 vault has none and counts as 0.
        table.add("revision", document.revision.map { "\($0)" } ?? "none (schema v1; counts as 0)")
        table.add("created", document.createdAt.rfc3339)
        table.add("updated", document.updatedAt.rfc3339)
        table.add("wrap key", "sealed, redacted")
        var text = table.render()

        text += "\nchildren (\(document.childProfiles.count))\n"
        var children = TextTable()
        for child in document.childProfiles {
            children.add(child.profileId, child.name, "theme \(child.theme)", child.npub?.npub ?? "no key of its own",
                         counted(child.mlsGroupIds.count, "group"), child.avatarData == nil ? "" : "avatar \(child.avatarData!.count) bytes")
        }
        text += children.render(indent: "  ")

        let active = document.devices.filter { $0.status == .active }.count
        text += "\ndevices (\(document.devices.count), \(active) active)\n"
        var devices = TextTable()
        for device in document.devices {
            let mark = device.status == .revoked ? "x" : device.isPrimary ? "*" : "-"
            let role = device.status == .revoked ? "revoked" : device.isPrimary ? "primary" : "active"
            let revoked = device.status == .revoked ? [device.revokedAt.map { "revoked \($0.rfc3339)" }, device.revocationReason.map { "(\($0))" }]
                .compactMap { $0 }.joined(separator: " ") : ""
            devices.add(mark, device.deviceId, device.deviceName, role, "last seen \(device.lastSeenAt.rfc3339)", revoked)
        }
        text += devices.render(indent: "  ")

        text += "\ngroups (\(document.groupMemberships.count))\n"
        var groups = TextTable()
        for group in document.groupMemberships {
            groups.add(group.mlsGroupId, group.groupName, counted(group.memberPubkeys.count, "member"),
                       group.childProfileId.map { "child \($0)" } ?? "")
        }
        text += groups.render(indent: "  ")
        return text
    }

    func jsonValue() -> JSONValue {
        var entries: [(key: String, value: JSONValue)] = [
            ("file", .string(name)),
            ("size", .int(byteCount)),
            ("format", .int(Int(header.format))),
            ("suite", .int(Int(header.suite))),
            ("schemaVersion", .int(Int(header.schemaVersion))),
            ("householdId", .string(header.householdID.hex)),
            ("vaultPath", .string(header.householdID.vaultPath)),
            ("ciphertextBytes", .int(envelope.ciphertext.count)),
        ]
        guard let document else { return .object(entries) }
        entries.append(("document", .object([
            ("parent", .object([("npub", .string(document.parentPubkey.npub)), ("pubkey", .string(document.parentPubkey.hex))])),
            ("revision", document.revision.map { .int($0) } ?? .null),
            ("createdAt", .string(document.createdAt.rfc3339)),
            ("updatedAt", .string(document.updatedAt.rfc3339)),
            ("children", .array(document.childProfiles.map { child in
                .object([
                    ("profileId", .string(child.profileId)), ("name", .string(child.name)), ("theme", .string(child.theme)),
                    ("npub", child.npub.map { .string($0.npub) } ?? .null), ("groupCount", .int(child.mlsGroupIds.count)),
                    ("hasAvatar", .bool(child.avatarData != nil)),
                ])
            })),
            ("devices", .array(document.devices.map { device in
                .object([
                    ("deviceId", .string(device.deviceId)), ("deviceName", .string(device.deviceName)),
                    ("isPrimary", .bool(device.isPrimary)), ("status", .string(device.status.rawValue)),
                    ("addedAt", .string(device.addedAt.rfc3339)), ("lastSeenAt", .string(device.lastSeenAt.rfc3339)),
                    ("revokedAt", device.revokedAt.map { .string($0.rfc3339) } ?? .null),
                    ("revocationReason", device.revocationReason.map(JSONValue.string) ?? .null),
                ])
            })),
            ("groups", .array(document.groupMemberships.map { group in
                var fields: [(key: String, value: JSONValue)] = [
                    ("mlsGroupId", .string(group.mlsGroupId)), ("groupName", .string(group.groupName)),
                    ("memberCount", .int(group.memberPubkeys.count)),
                ]
                if let child = group.childProfileId { fields.append(("childProfileId", .string(child))) }
                return .object(fields)
            })),
        ])))
        return .object(entries)
    }

}
