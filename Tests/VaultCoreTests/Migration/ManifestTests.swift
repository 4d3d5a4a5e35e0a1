import Foundation
import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultFleet
@testable import VaultRegistry
import VaultSQLite
import VaultStorage

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

/// One rule for an output named by two manifest lines (``ManifestOutputs``), through each of
/// its users: a folder batch's manifest parsed whole and staged a line at a time, and a bucket
/// batch's. Seeded manifests with one output repeated at random lines: every user refuses the
/// second line, naming both lines and the output, in the same words.
@Suite struct ManifestOutputTwiceTests {
    func reason(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let error as VaultError where error.code == .malformedDocument { return error.reason } catch { return "\(error)" }
    }

    @Test func everyBatchRefusesTheSecondLineNamingAnOutput() throws {
        let random = SeededRandom(seed: 39)
        // Never contacted: a manifest's plan refuses its lines before it asks the store anything.
        let store = try ObjectStore(S3Configuration.load(environment: [
            "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1", "HOME": "/nonexistent",
        ]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for round in 0..<40 {
            let count = 2 + Int(random.next() % 30)
            let first = Int(random.next() % UInt64(count - 1))
            let second = first + 1 + Int(random.next() % UInt64(count - 1 - first))
            // Line numbers count from 1; blank lines between jobs keep their numbers apart.
            var lines: [String] = [], numbers: [Int] = []
            for index in 0..<count {
                if random.next() % 4 == 0 { lines.append("") }
                let name = index == second ? "v\(first).vault" : "v\(index).vault"
                lines.append("{\"vault\": \"PLACE\(index % 3)/\(name)\", \"keyFile\": \"k\"}")
                numbers.append(lines.count)
            }
            let text = lines.joined(separator: "\n")
            let expected = { (output: String) in "manifest lines \(numbers[first]) and \(numbers[second]) would both write '\(output)'" }

            let files = text.replacingOccurrences(of: "PLACE", with: "d")
            let manifest = folder + "/m\(round).jsonl"
            try Data(files.utf8).write(to: URL(fileURLWithPath: manifest))
            let output = "\(folder)/out/v\(first).vault"
            #expect(reason { _ = try BatchMigration.parseManifest(Array(files.utf8), manifestPath: manifest, outDir: folder + "/out") } == expected(output))
            #expect(reason { _ = try ManifestStaging(manifestPath: manifest, outDir: folder + "/out") } == expected(output))

            let objects = text.replacingOccurrences(of: "PLACE", with: "s3://bucket/p")
            let destination = try S3ObjectName.folder(parsing: "s3://bucket/out/")
            #expect(reason {
                _ = try BucketMigration.plan(.manifest(bytes: Array(objects.utf8), path: manifest), destination: .prefix(destination), shard: nil, store: store)
            } == expected("s3://bucket/out/v\(first).vault"))
        }
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

/// A journal that cannot be opened as one leaves nothing this run made (issue 44's "a tool
/// removes only what it made"): not the file, its side files, or the folders made for it; and
/// nothing it did not make.
@Suite struct MigrationJournalRefusalTests {
    static let broken = SQLiteMigrations([("1", "CREATE TABLE run (id INTEGER); THIS IS NOT SQL")])

    @Test func aJournalMadeByThisRunIsRemovedWithItsFoldersWhenItCannotBeOpened() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Refused once it was made and opened (its folders made, the file made, SQLite at work):
        // not before, as a journal in a missing folder was.
        let error = #expect(throws: VaultError.self) {
            try MigrationJournal(path: folder + "/j/deep/run.sqlite", migrations: Self.broken, tables: ["run"], writeAheadLog: true)
        }
        #expect(error?.reason.contains("cannot use the journal") == true, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
    }

    @Test func aFileThisRunDidNotMakeIsLeftAsItWas() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let other = SQLiteMigrations([("1", "CREATE TABLE registry_rows (id INTEGER)")])
        do { _ = try MigrationJournal(path: folder + "/other.sqlite", migrations: other, tables: ["registry_rows"]) }
        let before = try Data(contentsOf: URL(fileURLWithPath: folder + "/other.sqlite"))
        #expect(throws: VaultError.self) { try MigrationJournal(path: folder + "/other.sqlite", migrations: Self.broken, tables: ["run"]) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/other.sqlite")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["other.sqlite"])
    }
}
