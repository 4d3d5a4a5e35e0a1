import Foundation
import Testing
import VaultCore

enum RevokerFixtures {
    static let kitchen = "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", bedroom = "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F", old = "0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D"

    /// The household's vault key in a file, as support staff are given it.
    @Sendable static func vaultKeyFile(_ workspace: Workspace) throws {
        let run = try workspace.run("vault-tool", ["derive", "--key-file", "keys/parent.nsec", "--vault-key-out", "keys/vault.key"])
        guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": run.stderrText]) }
    }

    @Sendable static func registry(_ workspace: Workspace) throws {
        let devices = """
            {"user_did": "did:plc:josh", "device_id": "a1b2", "device_mls_did": "did:plc:josh#a1b2", "device_name": "Josh's iPhone", "signature_public_key": "0102", "last_seen": "2025-01-01T00:00:00Z", "registered_at": "2024-01-01T00:00:00Z"}
            {"user_did": "did:plc:josh", "device_id": "c3d4", "device_mls_did": "did:plc:josh#c3d4", "signature_public_key": "0304", "key_packages_available": 1, "last_seen": "2025-11-01T00:00:00Z", "registered_at": "2024-01-01T00:00:00Z"}
            {"user_did": "did:plc:alice", "device_id": "e5f6", "device_mls_did": "did:plc:alice#e5f6", "signature_public_key": "0506", "registered_at": "2024-01-01T00:00:00Z"}

            """
        let members = """
            {"convo_id": "alpha", "member_mls_did": "did:plc:josh#a1b2", "user_did": "did:plc:josh", "device_id": "a1b2", "joined_at": "2024-02-01T00:00:00Z", "is_admin": true}
            {"convo_id": "alpha", "member_mls_did": "did:plc:josh#c3d4", "user_did": "did:plc:josh", "device_id": "c3d4", "joined_at": "2024-02-01T00:00:00Z", "is_admin": true}
            {"convo_id": "alpha", "member_mls_did": "did:plc:alice#e5f6", "user_did": "did:plc:alice", "device_id": "e5f6", "joined_at": "2024-02-01T00:00:00Z"}
            {"convo_id": "beta", "member_mls_did": "did:plc:josh#a1b2", "user_did": "did:plc:josh", "device_id": "a1b2", "joined_at": "2024-02-01T00:00:00Z"}

            """
        try Data(devices.utf8).write(to: URL(fileURLWithPath: workspace.path("devices.jsonl")))
        try Data(members.utf8).write(to: URL(fileURLWithPath: workspace.path("members.jsonl")))
        let newDevice = #"{"user_did": "did:plc:bob", "device_id": "b0b0", "device_mls_did": "did:plc:bob#b0b0", "signature_public_key": "0b0b"}"#
        try Data((newDevice + "\n{\"user_did\": 7}\n").utf8).write(to: URL(fileURLWithPath: workspace.path("bad.jsonl")))
        try Data((newDevice + "\n").utf8).write(to: URL(fileURLWithPath: workspace.path("bob.jsonl")))
        // Two mistyped stolen devices among a good one: a swap within a known user's id, an unknown user.
        try Data("# stolen on the 3rd\ndid:plc:josh#a1b2\n\ndid:plc:josh#3cd4\ndid:plc:nobdoy#e5f6\n".utf8)
            .write(to: URL(fileURLWithPath: workspace.path("stolen.txt")))
        try Data("did:plc:josh#a1b2\ndid:plc:josh\n".utf8).write(to: URL(fileURLWithPath: workspace.path("no-device.txt")))
        try Data("# the export of the 3rd\n\n   \n".utf8).write(to: URL(fileURLWithPath: workspace.path("empty.txt")))
        // A device id the selector would read as user "did:plc:josh#a1b2" and device "x": another user's.
        let hostile = #"{"user_did": "did:plc:josh", "device_id": "a1b2#x", "device_mls_did": "did:plc:josh#a1b2#x", "signature_public_key": "0909"}"#
        try Data((newDevice + "\n" + hostile + "\n").utf8).write(to: URL(fileURLWithPath: workspace.path("hostile.jsonl")))
        for arguments in [["registry", "init", "--db", "r.sqlite"], ["registry", "import", "--db", "r.sqlite", "--devices", "devices.jsonl", "--members", "members.jsonl"]] {
            guard try workspace.run("device-revoker", arguments).status == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    /// Alice's user in Family Medical's registry (seed 002).
    static let alice = "0f9c2d1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f"

    /// Family Medical's registry (seed 002) in r.sqlite: Alice's iPhone and two iPads, Bob's Mac.
    @Sendable static func familyMedical(_ workspace: Workspace) throws {
        let devices = [
            ("6f1c2b7e-0d4a-4c55-9e1b-2a7f3c9d8e01", alice, "Alice's iPhone", "iPhone 15 Pro", "2026-11-22T09:58:00Z"),
            ("9a7d3c21-5b2e-4f61-8c3d-7e2a1b9f0c44", alice, "iPad", "iPad Air", "2026-11-19T10:00:00Z"),
            ("9a7d3c21-5b2e-4f61-8c3d-7e2a1b9f0c45", alice, "iPad", nil, "2025-03-01T00:00:00Z"),
            ("c0ffee00-1111-4222-8333-444455556666", "1b2c3d4e-5f60-4718-9a0b-1c2d3e4f5a6b", "Bob's Mac", "MacBook Air", "2025-01-10T00:00:00Z"),
        ].map { id, user, name, type, seen in
            #"{"device_id": "\#(id)", "user_id": "\#(user)", "device_name": "\#(name)", "device_type": \#(type.map { "\"\($0)\"" } ?? "null"), "first_seen_at": "2025-01-01T00:00:00Z", "last_seen_at": "\#(seen)"}"#
        }.joined(separator: "\n") + "\n"
        try Data(devices.utf8).write(to: URL(fileURLWithPath: workspace.path("medical.jsonl")))
        try Data(#"{"device_id": "not-a-uuid", "user_id": "\#(alice)", "device_name": "x"}"#.utf8 + [0x0a]).write(to: URL(fileURLWithPath: workspace.path("bad-medical.jsonl")))
        for arguments in [["registry", "init", "--db", "r.sqlite", "--schema", "family-medical"],
                          ["registry", "import", "--db", "r.sqlite", "--devices", "medical.jsonl", "--now", "2026-11-22T10:00:00Z"]] {
            guard try workspace.run("device-revoker", arguments).status == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    /// The registry after batch TICKET-1234 revoked Josh's iPhone.
    @Sendable static func registryWithBatch(_ workspace: Workspace) throws {
        try registry(workspace)
        let revoke = ["registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--reason", "lost", "--batch-id", "TICKET-1234",
                      "--expect-revocations", "1", "--now", "2026-11-20T09:00:00Z", "--operator", "sam"]
        guard try workspace.run("device-revoker", revoke).status == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Josh's devices all revoked (batch TICKET-9), then a new device of his registered.
    @Sendable static func registryWithUserRevoked(_ workspace: Workspace) throws {
        try registry(workspace)
        let newDevice = #"{"user_did": "did:plc:josh", "device_id": "f00d", "device_mls_did": "did:plc:josh#f00d", "signature_public_key": "f00d"}"#
        try Data((newDevice + "\n").utf8).write(to: URL(fileURLWithPath: workspace.path("new.jsonl")))
        for arguments in [["registry", "revoke", "--db", "r.sqlite", "--user", "did:plc:josh", "--force", "--batch-id", "TICKET-9"],
                          ["registry", "import", "--db", "r.sqlite", "--devices", "new.jsonl", "--now", "2026-11-22T10:00:00Z"]] {
            guard try workspace.run("device-revoker", arguments).status == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
    }
}

@Suite struct DeviceRevokerGoldenTests {
    static func vault(_ name: String, _ arguments: [String], prepare: (@Sendable (Workspace) throws -> Void)? = nil) -> GoldenCase {
        GoldenCase(tool: "device-revoker", name: name, arguments: ["vault", "--key-file", "keys/parent.nsec", "--vault", "testkit/ok-v2-household.vault", "--now", "2026-11-22T10:00:00Z"] + arguments,
                   prepare: prepare)
    }

    static func registry(_ name: String, _ arguments: [String], stdin: String? = nil) -> GoldenCase {
        GoldenCase(tool: "device-revoker", name: name, arguments: ["registry"] + arguments, stdin: stdin, prepare: RevokerFixtures.registry)
    }

    static let cases: [GoldenCase] = [
        GoldenCase(tool: "device-revoker", name: "help", arguments: ["--help"]),
        vault("vault-dry-run", ["--device", RevokerFixtures.bedroom, "--dry-run"]),
        vault("vault-dry-run-json", ["--not-seen-since", "2025-11-19", "--promote", RevokerFixtures.kitchen, "--dry-run", "--json"]),
        vault("vault-primary-without-promote", ["--device", RevokerFixtures.kitchen, "-o", "out.vault"]),
        vault("vault-every-device", ["--not-seen-since", "2026-11-01", "-o", "out.vault"]),
        vault("vault-all-except-unknown", ["--all-except", "nobody", "--ignore-unknown", "--allow-empty", "-o", "out.vault"]),
        vault("vault-unknown-device", ["--device", "no-such-device", "-o", "out.vault"]),
        vault("vault-by-name", ["--device", "bedroom IPAD", "--reason", "lost", "-o", "out.vault"]),
        vault("vault-by-id-prefix", ["--device", "b3e9a4", "--dry-run"]),
        vault("vault-by-part-of-a-name", ["--device", "bedroom", "--dry-run"]),
        vault("vault-by-part-of-a-name-real-run", ["--device", "room", "-o", "out.vault"]),
        vault("vault-by-name-any-spacing-json", ["--device", "  BEDROOM \t ipad ", "-o", "out.vault", "--json"]),
        vault("vault-not-seen-since-future", ["--not-seen-since", "2026-12-01", "--allow-empty", "-o", "out.vault"]),
        vault("vault-empty-devices-file", ["--devices-file", "none.txt", "-o", "out.vault"], prepare: { workspace in
            try Data("# nobody today\n\n".utf8).write(to: URL(fileURLWithPath: workspace.path("none.txt")))
        }),
        vault("vault-all-except-part-of-a-name", ["--all-except", "kitchen", "--allow-empty", "-o", "out.vault"]),
        vault("vault-part-of-many-names", ["--device", "ipad", "--dry-run"]),
        vault("vault-promote-by-name", ["--device", RevokerFixtures.kitchen, "--promote", "bedroom ipad", "--dry-run"]),
        vault("vault-ignore-unknown-nothing-matched", ["--device", "bedrom", "--ignore-unknown", "-o", "out.vault"]),
        vault("vault-mistyped-device", ["--device", "kitchn", "-o", "out.vault"]),
        vault("vault-dry-run-refused", ["--device", RevokerFixtures.kitchen, "--dry-run"]),
        GoldenCase(tool: "device-revoker", name: "vault-key-given-as-key-file", arguments: ["vault", "--key-file", "keys/vault.key", "--vault",
                   "testkit/ok-v2-household.vault", "--device", RevokerFixtures.bedroom, "--dry-run"], prepare: RevokerFixtures.vaultKeyFile),
        vault("vault-already-revoked", ["--device", RevokerFixtures.old, "-o", "out.vault"]),
        vault("vault-stale-revision", ["--device", RevokerFixtures.bedroom, "--expect-revision", "3", "-o", "out.vault"]),
        vault("vault-two-selectors", ["--device", RevokerFixtures.bedroom, "--all-except", RevokerFixtures.kitchen, "-o", "out.vault"]),
        GoldenCase(tool: "device-revoker", name: "vault-stdin", arguments: ["vault", "--key-file", "keys/parent.nsec", "--vault", "-",
                   "--now", "2026-11-22T10:00:00Z", "--device", RevokerFixtures.bedroom, "--dry-run"], stdin: "testkit/ok-v2-household.vault"),
        registry("registry-members", ["members", "--db", "r.sqlite", "--convo", "alpha"]),
        registry("registry-members-unknown-conversation", ["members", "--db", "r.sqlite", "--convo", "nope"]),
        GoldenCase(tool: "device-revoker", name: "registry-revoke-batch-id-taken", arguments: ["registry", "revoke", "--db", "r.sqlite", "--device",
                   "did:plc:josh#c3d4", "--batch-id", "TICKET-1234", "--force", "--dry-run"], prepare: RevokerFixtures.registryWithBatch),
        registry("registry-members-json", ["members", "--db", "r.sqlite", "--convo", "alpha", "--json"]),
        registry("registry-revoke-refused", ["revoke", "--db", "r.sqlite", "--not-seen-since", "2025-06-01", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-dry-run-json", ["revoke", "--db", "r.sqlite", "--user", "did:plc:josh", "--dry-run", "--json"]),
        registry("registry-revoke-one", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--reason", "lost", "--ops", "-", "--batch-id", "TICKET-1234",
                                         "--expect-revocations", "1", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-one-json", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--batch-id", "TICKET-1234",
                                              "--expect-revocations", "1", "--json", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-over-the-share", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-over-the-share-dry-run", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--max-share", "33.33",
                                                            "--dry-run", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-unexpected-count", ["revoke", "--db", "r.sqlite", "--not-seen-since", "2025-06-01", "--expect-revocations", "1",
                                                      "--force", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-future-cutoff", ["revoke", "--db", "r.sqlite", "--not-seen-since", "2205-01-01", "--keep-last-device",
                                                   "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-empty-devices-file", ["revoke", "--db", "r.sqlite", "--devices-file", "empty.txt"]),
        registry("registry-revoke-device-id-with-hash", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh#"]),
        registry("registry-import-hostile-id", ["import", "--db", "r.sqlite", "--devices", "hostile.jsonl"]),
        registry("registry-revoke-unknown", ["revoke", "--db", "r.sqlite", "--device", "did:plc:nobody#x", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-unmatched-lines", ["revoke", "--db", "r.sqlite", "--devices-file", "stolen.txt", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-unmatched-lines-json", ["revoke", "--db", "r.sqlite", "--devices-file", "stolen.txt", "--dry-run", "--json"]),
        registry("registry-revoke-unmatched-allowed", ["revoke", "--db", "r.sqlite", "--devices-file", "stolen.txt", "--allow-unmatched",
                                                       "--expect-revocations", "1", "--batch-id", "TICKET-9", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-revoke-line-without-device", ["revoke", "--db", "r.sqlite", "--devices-file", "no-device.txt"]),
        registry("registry-revoke-device-without-id", ["revoke", "--db", "r.sqlite", "--device", "did:plc:josh"]),
        registry("registry-revoke-only-users-allowed", ["revoke", "--db", "r.sqlite", "--user", "did:plc:josh", "--allow-users-without-device", "--dry-run"]),
        registry("registry-rejoin-plan", ["rejoin-plan", "--db", "r.sqlite", "--device", "did:plc:josh#c3d4"]),
        registry("registry-import-bad-line", ["import", "--db", "r.sqlite", "--devices", "bad.jsonl"]),
        registry("registry-missing-db", ["log", "--db", "missing.sqlite"]),
        GoldenCase(tool: "device-revoker", name: "registry-init", arguments: ["registry", "init", "--db", "new.sqlite"]),
        registry("registry-init-again", ["init", "--db", "r.sqlite"]),
        registry("registry-import-stdin", ["import", "--db", "r.sqlite", "--devices", "-", "--now", "2026-11-22T10:00:00Z"],
                 stdin: "bob.jsonl"),
        registry("registry-import-again", ["import", "--db", "r.sqlite", "--devices", "devices.jsonl"]),
        registry("registry-import-upsert", ["import", "--db", "r.sqlite", "--devices", "devices.jsonl", "--upsert", "--json"]),
        registry("registry-devices", ["devices", "--db", "r.sqlite", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-devices-by-user-json", ["devices", "--db", "r.sqlite", "--user", "did:plc:josh", "--json"]),
        registry("registry-devices-stale", ["devices", "--db", "r.sqlite", "--active", "--not-seen-since", "2025-06-01", "--now", "2026-11-22T10:00:00Z"]),
        registry("registry-devices-none", ["devices", "--db", "r.sqlite", "--match", "android"]),
        GoldenCase(tool: "device-revoker", name: "registry-devices-revoked", arguments: ["registry", "devices", "--db", "r.sqlite", "--revoked",
                   "--now", "2026-11-22T10:00:00Z"], prepare: RevokerFixtures.registryWithBatch),
        registry("registry-revoke-dry-run-refused", ["revoke", "--db", "r.sqlite", "--user", "did:plc:josh", "--dry-run"]),
        GoldenCase(tool: "device-revoker", name: "registry-log", arguments: ["registry", "log", "--db", "r.sqlite", "--now", "2026-11-22T10:00:00Z"],
                   prepare: RevokerFixtures.registryWithBatch),
        GoldenCase(tool: "device-revoker", name: "registry-log-json", arguments: ["registry", "log", "--db", "r.sqlite", "--json"],
                   prepare: RevokerFixtures.registryWithBatch),
        GoldenCase(tool: "device-revoker", name: "registry-log-ops-again", arguments: ["registry", "log", "--db", "r.sqlite", "--batch", "TICKET-1234",
                   "--ops", "-"], prepare: RevokerFixtures.registryWithBatch),
        GoldenCase(tool: "device-revoker", name: "registry-log-verify", arguments: ["registry", "log", "--db", "r.sqlite", "--verify"],
                   prepare: RevokerFixtures.registryWithBatch),
        GoldenCase(tool: "device-revoker", name: "registry-log-unknown-batch", arguments: ["registry", "log", "--db", "r.sqlite", "--batch", "TICKET-0"],
                   prepare: RevokerFixtures.registryWithBatch),
        GoldenCase(tool: "device-revoker", name: "registry-rejoin-plan-after-revocation", arguments: ["registry", "rejoin-plan", "--db", "r.sqlite",
                   "--device", "did:plc:josh#f00d"], prepare: RevokerFixtures.registryWithUserRevoked),
        registry("registry-rejoin-plan-nothing-to-do", ["rejoin-plan", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2"]),
        // Family Medical's device table (seed 002, issue 47).
        GoldenCase(tool: "device-revoker", name: "registry-fm-init", arguments: ["registry", "init", "--db", "new.sqlite", "--schema", "family-medical"]),
        medical("registry-fm-init-other-schema", ["init", "--db", "r.sqlite", "--schema", "catbird"]),
        medical("registry-fm-devices", ["devices", "--db", "r.sqlite", "--now", "2026-11-22T10:00:00Z"]),
        medical("registry-fm-devices-json", ["devices", "--db", "r.sqlite", "--user", RevokerFixtures.alice.uppercased(), "--json"]),
        medical("registry-fm-revoke-by-name", ["revoke", "--db", "r.sqlite", "--user", RevokerFixtures.alice, "--name", "alice's iphone",
                                               "--reason", "not recognised", "--batch-id", "FM-1", "--expect-revocations", "1", "--now", "2026-11-22T10:00:00Z"]),
        medical("registry-fm-revoke-ambiguous-name", ["revoke", "--db", "r.sqlite", "--user", RevokerFixtures.alice, "--name", "iPad", "--force"]),
        medical("registry-fm-revoke-unknown-name", ["revoke", "--db", "r.sqlite", "--user", RevokerFixtures.alice, "--name", "Watch", "--force"]),
        medical("registry-fm-revoke-stale-dry-run", ["revoke", "--db", "r.sqlite", "--not-seen-since", "2025-06-01", "--keep-last-device", "--dry-run",
                                                     "--now", "2026-11-22T10:00:00Z"]),
        medical("registry-fm-revoke-not-a-uuid", ["revoke", "--db", "r.sqlite", "--device", "\(RevokerFixtures.alice)#ipad", "--force"]),
        medical("registry-fm-revoke-ops", ["revoke", "--db", "r.sqlite", "--user", RevokerFixtures.alice, "--force", "--ops", "ops.jsonl"]),
        medical("registry-fm-members", ["members", "--db", "r.sqlite", "--convo", "alpha"]),
        medical("registry-fm-import-bad-line", ["import", "--db", "r.sqlite", "--devices", "bad-medical.jsonl"]),
    ]

    static func medical(_ name: String, _ arguments: [String]) -> GoldenCase {
        GoldenCase(tool: "device-revoker", name: name, arguments: ["registry"] + arguments, prepare: RevokerFixtures.familyMedical)
    }

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }

    /// Registry cases that are about files, not registries: PostgreSQL has no missing file.
    static let sqliteOnly: Set<String> = ["registry-missing-db"]

    /// Every registry case again with the registry in PostgreSQL: the same outputs, byte for
    /// byte, once the connection string is named as the file was (issue 13).
    @Test(.needsServers, arguments: cases.filter { $0.name.hasPrefix("registry") && !sqliteOnly.contains($0.name) })
    func goldenOnPostgres(_ golden: GoldenCase) throws {
        try Golden.check(golden, databases: ["r.sqlite": try PostgresTestServer.createDatabase(),
                                             "new.sqlite": try PostgresTestServer.createDatabase()])
    }
}

@Suite struct DeviceRevokerBehaviourTests {
    @Test func vaultRevocationWritesAVerifiedVaultAndOps() throws {
        let workspace = try Workspace()
        let run = try workspace.run("device-revoker", ["vault", "--key-file", "keys/parent.nsec", "--vault", "testkit/ok-v2-household.vault", "--device", RevokerFixtures.bedroom,
                                                       "--reason", "left on a bus", "--now", "2026-11-22T10:00:00Z", "-o", "out.vault", "--ops", "ops.jsonl"])
        #expect(run.status == 0, "\(run.stderrText)")
        // The run names the device it revoked (issue 37).
        #expect(run.stderrText.hasPrefix("revoked 1 device, 1 group removal, revision 8:\n  \(RevokerFixtures.bedroom)  Bedroom iPad    last seen 2025-11-18T21:15:30.25Z\nnext step if the device was lost or stolen"))
        #expect(run.stderrText.contains("rotation-planner plan --mode compromise --vault out.vault --key-file keys/parent.nsec"))
        #expect(try workspace.run("vault-tool", ["check", "--key-file", "keys/parent.nsec", "out.vault"]).status == 0)
        let inspect = try workspace.run("vault-tool", ["inspect", "--key-file", "keys/parent.nsec", "out.vault"]).stdoutText
        #expect(inspect.contains("x  \(RevokerFixtures.bedroom)"))
        #expect(String(decoding: workspace.contents("ops.jsonl")!, as: UTF8.self).hasPrefix(#"{"op":"mls.remove","group":"grp-maya-friends""#))
        // Guard rails write nothing.
        for arguments in DeviceRevokerGoldenTests.cases.filter({ ["vault-primary-without-promote", "vault-every-device", "vault-unknown-device", "vault-stale-revision",
                  "vault-by-part-of-a-name-real-run", "vault-not-seen-since-future", "vault-all-except-part-of-a-name", "vault-all-except-unknown"].contains($0.name) }).map(\.arguments) {
            let refused = try workspace.run("device-revoker", arguments.map { $0 == "out.vault" ? "refused.vault" : $0 })
            #expect(refused.status == 4, "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: workspace.path("refused.vault")))
        }
    }

    @Test func registryRevokeIsIdempotentAndLogged() throws {
        let workspace = try Workspace()
        try RevokerFixtures.registry(workspace)
        let arguments = ["registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:josh#a1b2", "--expect-revocations", "1", "--now", "2026-11-22T10:00:00Z"]
        #expect(try workspace.run("device-revoker", arguments).stdoutText.hasPrefix("revoked (batch "))
        let again = try workspace.run("device-revoker", arguments)
        #expect(again.status == 0 && again.stdoutText.hasPrefix("nothing to revoke") && again.stdoutText.contains("already revoked (skipped)                       1"))
        let log = try workspace.run("device-revoker", ["registry", "log", "--db", "r.sqlite", "--json"]).stdoutText
        #expect(log.split(separator: "\n").count == 1 && log.contains(#""deviceId":"a1b2""#))
    }

    /// SIGKILL in the middle of a large revocation, at named system calls (strace): its first
    /// write to the database, its last, and writes spread between them, then its report, which
    /// comes after the commit. The registry is each time entirely before or entirely after the
    /// batch, and intact: before at the first write, after at the report, and once after, after
    /// for every later kill.
    @Test func killedRevocationIsAllOrNothing() throws {
        let workspace = try Workspace()
        #expect(try workspace.run("device-revoker", ["registry", "init", "--db", "base.sqlite"]).status == 0)
        let generate = """
            PRAGMA journal_mode = DELETE;
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 59999)
            INSERT INTO user_devices (user_did, device_id, device_mls_did, signature_public_key, last_seen, registered_at)
            SELECT 'u' || (i / 5), 'd' || i, 'u' || (i / 5) || '#d' || i, randomblob(32),
                   strftime('%Y-%m-%dT%H:%M:%SZ', '2026-01-01', '-' || ((i * 7919) % 1000) || ' days'), '2022-01-01T00:00:00Z' FROM n;
            WITH RECURSIVE n(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM n WHERE j < 299999),
            picked(convo, k, device) AS (SELECT j / 10, j % 10, ((j / 10) * 10 + (j % 10) * 10007) % 60000 FROM n)
            INSERT INTO members (convo_id, member_mls_did, user_did, device_id, joined_at, is_admin)
            SELECT 'c' || convo, 'u' || (device / 5) || '#d' || device, 'u' || (device / 5), 'd' || device, '2024-01-01T00:00:00Z', k = 0 FROM picked;
            PRAGMA journal_mode = WAL;
            """
        try Data(generate.utf8).write(to: URL(fileURLWithPath: workspace.path("generate.sql")))
        #expect(try workspace.run("/usr/bin/sqlite3", ["base.sqlite", ".read generate.sql"]).status == 0)
        func count(_ sql: String) throws -> Int { Int(try workspace.run("/usr/bin/sqlite3", ["r.sqlite", sql]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        func freshRegistry() throws {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: workspace.path("r.sqlite" + suffix)) }
            try FileManager.default.copyItem(atPath: workspace.path("base.sqlite"), toPath: workspace.path("r.sqlite"))
        }
        let arguments = ["registry", "revoke", "--db", "r.sqlite", "--not-seen-since", "2023-06-01", "--force", "--reason", "kill test"]
        try freshRegistry()
        let writes = try workspace.calls(of: "pwrite64", "device-revoker", arguments)
        #expect(writes >= 3, "a revocation of 60,000 devices made \(writes) writes")

        var committed: [Bool] = []
        let moments = Set([1, writes / 4, writes / 2, 3 * writes / 4, writes]).filter { $0 >= 1 }.sorted().map { ("pwrite64", $0) } + [("write", 1)]
        for (syscall, call) in moments {
            try freshRegistry()
            #expect(try workspace.runKilled("device-revoker", arguments, at: syscall, call: call), "the kill at \(syscall) \(call) never came")
            #expect(try workspace.run("/usr/bin/sqlite3", ["r.sqlite", "PRAGMA integrity_check"]).stdoutText == "ok\n")
            let logged = try count("SELECT count(*) FROM revocations")
            let inactive = try count("SELECT count(*) FROM user_devices WHERE is_active = 0")
            let left = try count("SELECT count(*) FROM members WHERE left_at IS NOT NULL")
            let selected = try count("SELECT count(*) FROM user_devices WHERE coalesce(last_seen, registered_at) < '2023-06-01T00:00:00Z'")
            if logged == 0 {
                #expect(inactive == 0 && left == 0, "killed at \(syscall) \(call)")
            } else {
                #expect(logged == selected && inactive == selected && left > 0, "killed at \(syscall) \(call)")
            }
            committed.append(logged != 0)
        }
        #expect(committed.first == false && committed.last == true, "committed after the kills at \(moments): \(committed)")
        #expect(!zip(committed, committed.dropFirst()).contains { $0 && !$1 }, "committed after the kills at \(moments): \(committed)")
    }
}
