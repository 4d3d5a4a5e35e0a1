import Foundation
import Testing
@testable import VaultCore
@testable import VaultFleet
@testable import VaultRegistry

/// The batch manifest parser on its own (the fuzz target `manifest` runs the same function).
@Suite struct ManifestTests {
    static func parse(_ text: String) throws -> [BatchMigration.Job] {
        try BatchMigration.parseManifest(Array(text.utf8), manifestPath: "/batch/manifest.jsonl", outDir: "/batch/out")
    }

    @Test func jobsResolveAgainstTheManifestFolder() throws {
        let jobs = try Self.parse("""
            {"vault": "vaults/a.vault", "keyFile": "a.nsec"}

            {"vault": "/srv/b.vault", "vaultKeyFile": "/keys/b.vaultkey"}
            """)
        #expect(jobs.map(\.line) == [1, 3])
        #expect(jobs[0] == BatchMigration.Job(line: 1, vault: "/batch/vaults/a.vault", keyFile: "/batch/a.nsec", vaultKeyFile: nil, output: "/batch/out/a.vault"))
        #expect(jobs[1].output == "/batch/out/b.vault" && jobs[1].vaultKeyFile == "/keys/b.vaultkey")
    }

    @Test(arguments: ["..", ".", "/", "vaults/..", ""])
    func aVaultPathWithoutAFileNameIsRefused(_ vault: String) {
        // Its output would have been the output folder itself, or the folder above it.
        #expect(throws: VaultError.self) { try Self.parse("{\"vault\": \"\(vault)\", \"keyFile\": \"k\"}") }
    }

    /// Found by the fuzz target manifest: a slash followed by a combining mark is one Character,
    /// so Character-based path splitting missed it, and this line escaped the output folder.
    @Test func aSlashBeforeACombiningMarkStillSeparates() throws {
        let jobs = try Self.parse("{\"vault\": \"x/../\u{0619}y.vault\", \"keyFile\": \"k\"}")
        #expect(jobs[0].output == "/batch/out/\u{0619}y.vault")
        #expect(jobs[0].vault == "/batch/x/../\u{0619}y.vault")
    }

    @Test func twoJobsWritingOneOutputAreRefusedByLine() {
        let error = #expect(throws: VaultError.self) {
            try Self.parse("{\"vault\": \"a/x.vault\", \"keyFile\": \"k\"}\n{\"vault\": \"b/x.vault\", \"keyFile\": \"k\"}")
        }
        #expect(error?.reason.contains("lines 1 and 2") == true)
    }
}

/// The registry import's line parser on its own (the fuzz target `import`).
/// Where a batch keeps its journal when --journal names none.
@Suite struct JournalPathTests {
    @Test func besideTheOutputFolderUnlessNamed() throws {
        #expect(try BatchMigration.journalPath(named: "j.sqlite", outDir: "out") == "j.sqlite")
        #expect(try BatchMigration.journalPath(named: nil, outDir: "runs/migrated/") == "runs/migrated.migrate-journal.sqlite")
        for folder in [".", "..", "/", "a/.."] {
            #expect(throws: VaultError(.journalNeedsAName, "")) { try BatchMigration.journalPath(named: nil, outDir: folder) }
        }
        // Through a folder that does not exist: beside the folder the path resolves to.
        let resolved = try BatchMigration.journalPath(named: nil, outDir: "no-such-folder-\(UUID().uuidString)/../migrated")
        #expect(resolved.hasPrefix("/") && resolved.hasSuffix("/migrated.migrate-journal.sqlite") && !resolved.contains(".."))
    }

    @Test func anEarlierVersionsJournalIsResumedByName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/.migrate-journal.sqlite", contents: Data()))
        #expect(throws: VaultError(.earlierJournal, "")) { try BatchMigration.journalPath(named: nil, outDir: folder) }
    }
}

@Suite struct ImportLineTests {
    @Test func rowsHaveEveryColumnAndDefaults() throws {
        var rows: [[RegistryValue]] = []
        let count = try DeviceRegistry.forEachImportRow(.devices, in: (name: "d.jsonl", bytes: Array("""
            {"user_did": "u", "device_id": "d", "device_mls_did": "u#d", "signature_public_key": "00ff"}

            """.utf8)), now: Timestamp(seconds: 1_790_000_000)) { row in rows.append(row) }
        #expect(count == 1 && rows.count == 1 && rows[0].count == 11)
        #expect(rows[0][7] == .time("2026-09-21T14:13:20Z") && rows[0][8] == .bool(true))  // registered now, active
    }

    @Test func aBadLineNamesItsFileAndLine() {
        let error = #expect(throws: VaultError.self) {
            try DeviceRegistry.forEachImportRow(.members, in: (name: "m.jsonl", bytes: Array("\n{\"convo_id\": 1}".utf8)),
                                                now: Timestamp(seconds: 0)) { _ in }
        }
        #expect(error?.reason.hasPrefix("m.jsonl line 2:") == true)
    }
}
