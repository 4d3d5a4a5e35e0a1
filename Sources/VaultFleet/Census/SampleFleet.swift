import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

/// A made-up fleet for trials and benchmarks: `households` sample households
/// (``SampleHousehold``) written into a new or empty folder as `vaults/<household id>.vault`,
/// their parent keys as `keys/<household id>.nsec` (0600), and `manifest.jsonl` naming each
/// pair, as `migrate --manifest` reads it. Test data only: the keys sit in plain files beside
/// the vaults. Every file is created, never replaced, in groups made durable together.
public enum SampleFleet {
    public static let groupSize = 64

    /// Writes the fleet; `progress` gets the count written so far after each group.
    public static func write(households: Int, into path: String, version: Int, now: Timestamp,
                             random: some RandomSource = SystemRandom(), progress: ((Int) -> Void)? = nil) throws {
        try Migration.checkTarget(version)
        guard households > 0 else { throw VaultError.emptySampleFleet() }
        let root = try OutputFolder(path, create: true)
        guard try root.isEmptyOrMissing() else { throw VaultError.folderNotEmpty(path) }
        let vaults = try OutputFolder(path + "/vaults", create: true)
        let keys = try OutputFolder(path + "/keys", create: true, secret: true)
        let mode = AtomicFile.publicFileMode
        var manifest: [UInt8] = []
        var written = 0
        while written < households {
            var staged: [StagedOutput] = []
            for _ in 0..<min(groupSize, households - written) {
                let parent = try SecretKey.generate(using: random)
                let id = Household(parentPublicKey: parent.publicKey).id.hex
                let document = try SampleHousehold.document(parent: parent, version: version, now: now, random: random)
                let vault = try Vault.seal(document, with: parent, random: random)
                staged.append(try vault.withUnsafeBytes {
                    try StagedOutput(OutputLocation(path: "\(path)/vaults/\(id).vault", name: "\(id).vault", in: vaults), bytes: $0, mode: mode, flush: false)
                })
                // A schema 3 vault has its signed household log beside it from the start.
                if version >= 3 {
                    let log = try HouseholdLog(events: []).appending(
                        .init(.seal, summary: "sealed a sample household"), household: Household(parentPublicKey: parent.publicKey).id,
                        vault: vault, revision: document.revision ?? 0, signer: parent, at: now).bytes
                    staged.append(try log.withUnsafeBytes {
                        try StagedOutput(OutputLocation(path: "\(path)/vaults/\(id).log", name: "\(id).log", in: vaults), bytes: $0, mode: mode, flush: false)
                    })
                }
                let line = try parent.nsec()
                staged.append(try SecretBytes(count: line.count + 1) { buffer in
                    line.withUnsafeBytes { buffer.copyMemory(from: $0) }
                    buffer[line.count] = 0x0a
                }.withUnsafeBytes {
                    try StagedOutput(OutputLocation(path: "\(path)/keys/\(id).nsec", name: "\(id).nsec", in: keys), bytes: $0, mode: 0o600, flush: false, holdsSecret: true)
                })
                manifest += Array("{\"vault\": \"vaults/\(id).vault\", \"keyFile\": \"keys/\(id).nsec\"}\n".utf8)
            }
            try StagedOutput.publishTogether(staged, exclusive: true)
            written += staged.count / (version >= 3 ? 3 : 2)
            progress?(written)
        }
        try manifest.withUnsafeBytes {
            try StagedOutput(OutputLocation(path: "\(path)/manifest.jsonl", name: "manifest.jsonl", in: root), bytes: $0, mode: mode).publish(exclusive: true)
        }
    }
}

extension VaultError.Code {
    /// A folder that must be new or empty holds files.
    public static let folderNotEmpty = VaultError.Code(name: "folderNotEmpty", category: .refused)
}

extension VaultError {
    static func folderNotEmpty(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.folderNotEmpty, "the folder '\(path)' is not empty: sample data goes only into a new or empty folder",
                   hint: "name a new folder", file: file, line: line)
    }

    /// A sample fleet of no households.
    static func emptySampleFleet(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outOfRange, "a sample fleet has at least one household", file: file, line: line)
    }
}
