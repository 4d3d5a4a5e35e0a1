import Foundation
import Testing
import VaultCore

@Suite struct MigrationGoldenTests {
    static let cases: [GoldenCase] = [
        GoldenCase(tool: "vault-tool", name: "migrate-dry-run", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "--dry-run", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-dry-run-json", arguments: ["migrate", "--vault-key-file", "keys/parent.vaultkey", "--to", "1", "--dry-run", "--json", "--allow-lossy", "testkit/ok-v2-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-lossy-refused", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "1", "-o", "down.vault", "testkit/ok-v2-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-stale-revision", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "1", "--expect-revision", "6", "-o", "down.vault", "testkit/ok-v2-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-unknown-version", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "4", "-o", "x.vault", "testkit/ok-minimal.vault"]),
        GoldenCase(tool: "vault-tool", name: "diff-versions", arguments: ["diff", "--key-file", "keys/parent.nsec", "testkit/ok-household.vault", "testkit/ok-v2-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "diff-json", arguments: ["diff", "--key-file", "keys/parent.nsec", "--json", "testkit/ok-minimal.vault", "testkit/ok-household.vault"]),
        // Schema 3 (issue 45): what needs the parent key says so; what support runs with the vault key.
        GoldenCase(tool: "vault-tool", name: "migrate-to-3-with-vault-key", arguments: ["migrate", "--vault-key-file", "keys/parent.vaultkey", "--to", "3", "-o", "x.vault", "testkit/ok-v2-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-bucket-to-3", arguments: ["migrate", "bucket", "--source", "s3://fleet/vaults/", "--vault-key-dir", "keys", "--to", "3", "--in-place"]),
        GoldenCase(tool: "vault-tool", name: "migrate-3-to-2-keyless-child", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "-o", "x.vault", "testkit/ok-v3-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "migrate-3-to-2-with-vault-key", arguments: ["migrate", "--vault-key-file", "keys/parent.vaultkey", "--to", "2", "-o", "x.vault", "testkit/ok-v3-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-v3-revealed-with-vault-key", arguments: ["open", "--vault-key-file", "keys/parent.vaultkey", "--reveal-secrets", "testkit/ok-v3-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "check-v3-with-vault-key", arguments: ["check", "--vault-key-file", "keys/parent.vaultkey", "testkit/ok-v3-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "inspect-v3-with-vault-key", arguments: ["inspect", "--vault-key-file", "keys/parent.vaultkey", "testkit/ok-v3-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "census", arguments: ["census", "testkit"]),
        GoldenCase(tool: "vault-tool", name: "census-json", arguments: ["census", "--json", "testkit"]),
        GoldenCase(tool: "vault-tool", name: "manifest-bad-line", arguments: ["migrate", "--manifest", "bad.jsonl", "--to", "2", "--out-dir", "out"],
                   prepare: { try Data("{\"vault\": \"testkit/ok-minimal.vault\", \"keyFile\": \"keys/parent.nsec\"}\n{\"vault\": 5}\n".utf8).write(to: URL(fileURLWithPath: $0.path("bad.jsonl"))) }),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }
}

@Suite struct MigrationBehaviourTests {
    @Test func inPlaceKeepsABackupAndRefusesToClobberIt() throws {
        let workspace = try Workspace()
        let original = try #require(workspace.contents("testkit/ok-minimal.vault"))
        let run = try workspace.run("vault-tool", ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "--in-place", "testkit/ok-minimal.vault"])
        #expect(run.status == 0, "\(run.stderrText)")
        #expect(workspace.contents("testkit/ok-minimal.vault.bak") == original)
        #expect(try VaultFileBytes.schemaByte(workspace.contents("testkit/ok-minimal.vault")) == 2)
        let back = try workspace.run("vault-tool", ["migrate", "--key-file", "keys/parent.nsec", "--to", "1", "--in-place", "testkit/ok-minimal.vault"])
        #expect(back.status == 4 && back.stderrText.contains("already exists"))
        #expect(try VaultFileBytes.schemaByte(workspace.contents("testkit/ok-minimal.vault")) == 2)
    }

    @Test func skipFailedFinishesAFleetRunWithItsFailuresReported() throws {
        let workspace = try Workspace()
        let manifest = """
            {"vault": "testkit/ok-minimal.vault", "keyFile": "keys/parent.nsec"}
            {"vault": "testkit/tampered-tag.vault", "keyFile": "keys/parent.nsec"}

            """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: workspace.path("jobs.jsonl")))
        let strict = try workspace.run("vault-tool", ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "strict"])
        #expect(strict.status == 1 && strict.stderrText.contains("--skip-failed"), "\(strict.stderrText)")
        let lenient = try workspace.run("vault-tool", ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "lenient", "--skip-failed"])
        #expect(lenient.status == 0, "\(lenient.stderrText)")
        #expect(lenient.stderrText.contains("1 of 2 vaults failed and were skipped"))
        let statuses = lenient.stdoutText.split(separator: "\n").map { line in line.contains(#""status":"failed""#) ? "failed" : "other" }
        #expect(statuses.sorted() == ["failed", "other"])
        #expect(try VaultFileBytes.schemaByte(workspace.contents("lenient/ok-minimal.vault")) == 2)
    }

    @Test func sealRaisesTheRevision() throws {
        let workspace = try Workspace()
        let opened = try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "-o", "v2.json", "testkit/ok-v2-minimal.vault"])
        #expect(opened.status == 0 && String(decoding: workspace.contents("v2.json")!, as: UTF8.self).contains(#""revision": 1,"#))
        let sealed = try workspace.run("vault-tool", ["seal", "--key-file", "keys/parent.nsec", "-o", "again.vault", "v2.json"])
        #expect(sealed.status == 0 && sealed.stderrText == "sealed revision 2\n")
        #expect(try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "again.vault"]).stdoutText.contains(#""revision": 2,"#))
    }

    @Test func mergeOfTwoEditedCopies() throws {
        let workspace = try Workspace()
        let key = "keys/parent.nsec"
        #expect(try workspace.run("vault-tool", ["migrate", "--key-file", key, "--to", "2", "-o", "base.vault", "testkit/ok-household.vault"]).status == 0)
        // Ours revokes the bedroom iPad; theirs renames it: revoked, under the name it was
        // revoked under (a rename would free that name for a new device, which the same
        // revocation, run again, would revoke).
        for (name, edit) in [("ours", #""status": "active""#), ("theirs", #""deviceName": "Bedroom iPad""#)] {
            #expect(try workspace.run("vault-tool", ["open", "--key-file", key, "--reveal-secrets", "-o", "\(name).json", "base.vault"]).status == 0)
            var text = String(decoding: workspace.contents("\(name).json")!, as: UTF8.self)
            let device = text.range(of: "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F")!
            let field = text.range(of: edit, range: device.upperBound..<text.endIndex)!
            text.replaceSubrange(field, with: name == "ours" ? #""status": "revoked", "revokedAt": "2025-11-20T09:00:00Z""# : #""deviceName": "Guest iPad""#)
            try Data(text.utf8).write(to: URL(fileURLWithPath: workspace.path("\(name).json")))
            #expect(try workspace.run("vault-tool", ["seal", "--key-file", key, "-o", "\(name).vault", "\(name).json"]).status == 0)
        }
        let merged = try workspace.run("vault-tool", ["merge", "--key-file", key, "--base", "base.vault", "--ours", "ours.vault", "--theirs", "theirs.vault", "-o", "merged.vault", "--json"])
        #expect(merged.status == 0, "\(merged.stderrText)")
        // Ours revoked it by its status alone, leaving it in its group: the merge leaves its
        // subkey out of the group and says so (issue 37); and keeps its name, saying so: two
        // conflicts and no other.
        #expect(merged.stdoutText.components(separatedBy: #""field": "#).count == 3)
        #expect(merged.stdoutText.contains("a revoked device is in no group: its subkey is left out"))
        #expect(merged.stdoutText.contains("a revoked device keeps the name it was revoked under"))
        let summary = try workspace.run("vault-tool", ["inspect", "--key-file", key, "merged.vault"]).stdoutText
        #expect(!summary.contains("Guest iPad") && summary.contains("x  B3E9A410") && summary.contains("Bedroom iPad"))
        #expect(try workspace.run("vault-tool", ["check", "--key-file", key, "merged.vault"]).status == 0)
    }
}

/// Reads a vault file's schema version (header byte 9) without opening it.
enum VaultFileBytes {
    static func schemaByte(_ bytes: [UInt8]?) throws -> UInt8 { try #require(bytes)[9] }
}

/// The batch run killed and started again, many times, each time at a named moment (strace, as
/// Tests/Interop/test_faults.py kills), each resuming the one before: at the journal's first
/// write and sync, when a group of outputs is flushed (syncfs: written, not yet named), when the
/// first and the last output a worker names is linked under its temporary name (linkat) and
/// renamed (renameat), when the named group is flushed (fsync) before the journal records it. At
/// the end every job is done exactly once, every output opens and passes check, no input
/// changed, and no temporary or truncated file is left.
@Suite struct BatchMigrationKillTests {
    @Test func killedRunsFinishExactlyOnce() throws {
        let workspace = try Workspace()
        let jobCount = 240
        try FileManager.default.createDirectory(atPath: workspace.path("in"), withIntermediateDirectories: true)
        var manifest = ""
        var inputHashes: [String: [UInt8]] = [:]
        for index in 0..<jobCount {
            let source = ["ok-household", "ok-minimal", "ok-v2-minimal"][index % 3]
            let name = "in/vault-\(index).vault"
            try FileManager.default.copyItem(atPath: workspace.path("testkit/\(source).vault"), toPath: workspace.path(name))
            inputHashes[name] = SHA256.hash(workspace.contents(name)!)
            manifest += index % 2 == 0 ? "{\"vault\": \"\(name)\", \"keyFile\": \"keys/parent.nsec\"}\n" : "{\"vault\": \"\(name)\", \"vaultKeyFile\": \"keys/parent.vaultkey\"}\n"
        }
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: workspace.path("jobs.jsonl")))
        let arguments = ["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--jobs", "2"]

        let journal = "out.migrate-journal.sqlite"
        /// The jobs a run has left: whichever worker names the most outputs names at least half.
        func remaining() throws -> Int {
            guard FileManager.default.fileExists(atPath: workspace.path(journal)) else { return jobCount }
            let done = try workspace.run("/usr/bin/sqlite3", [journal, "SELECT count(*) FROM job WHERE state = 'done'"])
            return jobCount - (Int(done.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
        }
        /// The outputs a run will replace: named by a run killed before its journal recorded
        /// them. Every output is linked once (a new one to its name, one to replace to a
        /// temporary name), but only one to replace is renamed: a rename's moments count these.
        func toReplace() throws -> Int {
            let named = ((try? FileManager.default.contentsOfDirectory(atPath: workspace.path("out"))) ?? []).filter { $0.hasSuffix(".vault") && !$0.hasPrefix(".") }
            return named.count - (jobCount - (try remaining()))
        }
        let busiest: (Int) -> Int = { ($0 + 1) / 2 }
        let moments: [(syscalls: String, call: (Int) -> Int)] = [
            ("pwrite64", { _ in 1 }), ("fdatasync", { _ in 1 }), ("syncfs", { _ in 1 }), ("fsync", { _ in 1 }),
            ("linkat", { _ in 1 }), ("renameat", { _ in 1 }), ("linkat", { busiest($0) / 2 + 1 }), ("renameat", { busiest($0) / 2 + 1 }),
            ("linkat", busiest), ("renameat", busiest),
        ]
        for (syscalls, call) in moments {
            // A batch that a run happened to finish (the other worker went on) starts again, so
            // that every kill has work to fall in.
            if try remaining() == 0 {
                for name in ["out", journal, journal + "-journal", journal + "-wal", journal + "-shm"] { try? FileManager.default.removeItem(atPath: workspace.path(name)) }
            }
            // A rename's moment needs outputs to replace: a run killed once its first group is
            // named and flushed, before the journal records it, leaves some. Counted by the
            // outputs there, not by the jobs left: which worker takes which is the scheduler's
            // (a clean clone's run: "the kill at renameat 56 never came").
            if syscalls == "renameat" {
                for _ in 0..<3 {
                    guard try toReplace() == 0 else { break }
                    #expect(try workspace.runKilled("vault-tool", arguments, at: "fsync", call: 1), "the kill at fsync 1 never came")
                }
                #expect(try toReplace() > 0, "no run left an output to replace")
            }
            let at = call(syscalls == "renameat" ? try toReplace() : try remaining())
            #expect(try workspace.runKilled("vault-tool", arguments, at: syscalls, call: at), "the kill at \(syscalls) \(at) never came")
            // Whatever the moment, no output is ever a partial vault.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: workspace.path("out"))) ?? [] where name.hasSuffix(".vault") && !name.hasPrefix(".") {
                let opened = try Vault.open(#require(workspace.contents("out/\(name)")), with: .vaultKey(VaultKey(parsing: workspace.contents("keys/parent.vaultkey")!.withUnsafeBytes { try SecretBytes(copying: $0) }, what: "k")))
                #expect(opened.header.schemaVersion == 2)
            }
        }
        let final = try workspace.run("vault-tool", arguments)
        #expect(final.status == 0, "\(final.stderrText)")
        #expect(final.stdoutText.split(separator: "\n").count == jobCount)

        let access = VaultAccess.vaultKey(try VaultKey(parsing: workspace.contents("keys/parent.vaultkey")!.withUnsafeBytes { try SecretBytes(copying: $0) }, what: "k"))
        let outputs = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out"))
        #expect(outputs.filter { $0.hasPrefix(".hvt-") }.isEmpty)
        #expect(outputs.filter { $0.hasSuffix(".vault") }.count == jobCount)
        for index in 0..<jobCount {
            let opened = try Vault.open(#require(workspace.contents("out/vault-\(index).vault")), with: access)
            #expect(opened.document.version == 2)
            #expect(try VaultCheck.run(opened.document, access: access).isClean)
            #expect(SHA256.hash(workspace.contents("in/vault-\(index).vault")!) == inputHashes["in/vault-\(index).vault"])
        }
        let jobs = try workspace.run("/usr/bin/sqlite3", [journal, "SELECT state || ' ' || completions FROM job"])
        #expect(jobs.stdoutText.split(separator: "\n").map(String.init) == Array(repeating: "done 1", count: jobCount))
    }
}
