import Foundation
import Testing
import VaultCore

/// Two copies of the testkit's v2 household changed apart: ours revokes the bedroom iPad (as
/// device-revoker does), theirs renames the kitchen iPad (as the app does: open, edit, seal);
/// theirs-too renames it differently and was seen later, so its name wins a conflict.
enum MergeFixtures {
    @Sendable static func prepare(_ workspace: Workspace) throws {
        func run(_ tool: String, _ arguments: [String]) throws {
            let result = try workspace.run(tool, arguments)
            guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": result.stderrText]) }
        }
        try run("device-revoker", ["vault", "--key-file", "keys/parent.nsec", "--vault", "testkit/ok-v2-household.vault", "--device", RevokerFixtures.bedroom,
                                   "--reason", "lost", "--now", "2026-11-22T10:00:00Z", "-o", "ours.vault"])
        try run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "--reveal-secrets", "-o", "base.json", "testkit/ok-v2-household.vault"])
        let base = String(decoding: try #require(workspace.contents("base.json")), as: UTF8.self)
        let seen = try #require(base.firstMatch(of: #/"deviceName": "Kitchen iPad",[^}]*"lastSeenAt": "([^"]*)"/#))
        for (name, kitchen, lastSeen) in [("theirs", "Kitchen iPad (hall)", String(seen.output.1)), ("theirs-too", "Hall iPad", "2026-11-23T08:00:00Z")] {
            let edited = base.replacingCharacters(in: seen.range, with: String(base[seen.range]).replacingOccurrences(of: String(seen.output.1), with: lastSeen))
                .replacingOccurrences(of: "\"Kitchen iPad\"", with: "\"\(kitchen)\"")
            try Data(edited.utf8).write(to: URL(fileURLWithPath: workspace.path("\(name).json")))
            try run("vault-tool", ["seal", "--key-file", "keys/parent.nsec", "-o", "\(name).vault", "\(name).json"])
        }
        // Issue 37: theirs-adds puts the bedroom iPad's subkey into the cousins' group while ours
        // revokes it; revoked-member is ours with the subkey put back into that group.
        try run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "--reveal-secrets", "-o", "ours.json", "ours.vault"])
        let revoked = String(decoding: try #require(workspace.contents("ours.json")), as: UTF8.self)
        for (name, json) in [("theirs-adds", base), ("revoked-member", revoked)] {
            let members = try #require(json.firstMatch(of: #/"mlsGroupId": "grp-cousins",[^\]]*?"memberPubkeys": \[/#))
            let added = json.replacingCharacters(in: members.range, with: json[members.range] + "\"\(bedroomSubkey)\", ")
            try Data(added.utf8).write(to: URL(fileURLWithPath: workspace.path("\(name).json")))
            try run("vault-tool", ["seal", "--key-file", "keys/parent.nsec", "-o", "\(name).vault", "\(name).json"])
        }
    }

    static let bedroomSubkey = "b7afc6cd2fea677773e4f7828f2ab090bdb5e0e9f2a4b916d5a530331ae89cc1"
}

/// `vault-tool` end to end: golden outputs, then file-safety behaviour.
@Suite struct VaultToolGoldenTests {
    static let cases: [GoldenCase] = [
        GoldenCase(tool: "vault-tool", name: "help", arguments: ["--help"]),
        GoldenCase(tool: "vault-tool", name: "open-help", arguments: ["open", "--help"]),
        GoldenCase(tool: "vault-tool", name: "derive-text", arguments: ["derive", "--key-file", "keys/parent.nsec", "--device-id", "first-ipad"]),
        GoldenCase(tool: "vault-tool", name: "derive-json", arguments: ["derive", "--key-file", "example/household.nsec", "--json",
                                                                        "--device-id", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--device-id", "tv-room"]),
        GoldenCase(tool: "vault-tool", name: "derive-stdin-vault-key", arguments: ["derive", "--key-file", "-", "--show-vault-key", "--json"], stdin: "keys/parent.nsec"),
        GoldenCase(tool: "vault-tool", name: "derive-npub-as-key", arguments: ["derive", "--key-file", "keys/parent.npub"]),
        GoldenCase(tool: "vault-tool", name: "inspect-header", arguments: ["inspect", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "inspect-summary", arguments: ["inspect", "--key-file", "keys/parent.nsec", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "inspect-json", arguments: ["inspect", "--vault-key-file", "keys/parent.vaultkey", "--json", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "inspect-stdin", arguments: ["inspect", "-"], stdin: "testkit/ok-minimal.vault"),
        GoldenCase(tool: "vault-tool", name: "open-sealed", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/ok-minimal.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-revealed", arguments: ["open", "--key-file", "keys/parent.nsec", "--reveal-secrets", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-revealed-with-vault-key", arguments: ["open", "--vault-key-file", "keys/parent.vaultkey", "--reveal-secrets", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-wrong-key", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/wrong-key.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-wrong-vault-key", arguments: ["open", "--vault-key-file", "keys/other.vaultkey", "testkit/ok-minimal.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-tampered", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/tampered-ciphertext.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-bad-magic", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/bad-magic.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-truncated", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/truncated-header.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-unknown-schema", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/unknown-schema.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-schema-mismatch", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/schema-header-mismatch.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-unknown-field", arguments: ["open", "--key-file", "keys/parent.nsec", "testkit/unknown-field.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-reveal-bad-child", arguments: ["open", "--key-file", "keys/parent.nsec", "--reveal-secrets", "testkit/child-nsec-wrong-key.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-missing-file", arguments: ["open", "--key-file", "keys/parent.nsec", "missing.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-no-key", arguments: ["open", "testkit/ok-minimal.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-both-keys", arguments: ["open", "--key-file", "keys/parent.nsec", "--vault-key-file", "keys/parent.vaultkey", "testkit/ok-minimal.vault"]),
        GoldenCase(tool: "vault-tool", name: "open-two-stdins", arguments: ["open", "--key-file", "-", "-"]),
        GoldenCase(tool: "vault-tool", name: "check-clean", arguments: ["check", "--key-file", "keys/parent.nsec", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "check-vault-key-only", arguments: ["check", "--vault-key-file", "keys/parent.vaultkey", "testkit/ok-household.vault"]),
        GoldenCase(tool: "vault-tool", name: "check-findings", arguments: ["check", "--key-file", "keys/parent.nsec", "testkit/check-findings.vault"]),
        GoldenCase(tool: "vault-tool", name: "check-findings-json", arguments: ["check", "--key-file", "keys/parent.nsec", "--json", "testkit/check-findings.vault"]),
        GoldenCase(tool: "vault-tool", name: "seal-other-parent", arguments: ["seal", "--key-file", "keys/parent.nsec", "-o", "out.vault", "example/household.json"]),
        GoldenCase(tool: "vault-tool", name: "seal-not-json", arguments: ["seal", "--key-file", "keys/parent.nsec", "-o", "out.vault", "keys/parent.npub"]),
        GoldenCase(tool: "vault-tool", name: "unknown-subcommand", arguments: ["unseal"]),
        // Every command that reads a vault or document reads it from standard input as `-`.
        GoldenCase(tool: "vault-tool", name: "open-stdin", arguments: ["open", "--key-file", "keys/parent.nsec", "-"], stdin: "testkit/ok-minimal.vault"),
        GoldenCase(tool: "vault-tool", name: "check-stdin", arguments: ["check", "--key-file", "keys/parent.nsec", "-"], stdin: "testkit/ok-household.vault"),
        GoldenCase(tool: "vault-tool", name: "seal-stdin", arguments: ["seal", "--key-file", "keys/parent.nsec", "-o", "out.vault", "-"],
                   stdin: "testkit/ok-household.revealed.json"),
        GoldenCase(tool: "vault-tool", name: "migrate-stdin", arguments: ["migrate", "--key-file", "keys/parent.nsec", "--to", "2", "--dry-run", "-"],
                   stdin: "testkit/ok-household.vault"),
        GoldenCase(tool: "vault-tool", name: "diff-stdin", arguments: ["diff", "--key-file", "keys/parent.nsec", "-", "testkit/ok-v2-household.vault"],
                   stdin: "testkit/ok-household.vault"),
        GoldenCase(tool: "vault-tool", name: "merge", arguments: ["merge", "--key-file", "keys/parent.nsec", "--base", "testkit/ok-v2-household.vault",
                   "--ours", "ours.vault", "--theirs", "theirs.vault", "-o", "merged.vault"], prepare: MergeFixtures.prepare),
        GoldenCase(tool: "vault-tool", name: "merge-json-stdin", arguments: ["merge", "--key-file", "keys/parent.nsec", "--base", "testkit/ok-v2-household.vault",
                   "--ours", "-", "--theirs", "theirs.vault", "-o", "merged.vault", "--json"], stdin: "ours.vault", prepare: MergeFixtures.prepare),
        GoldenCase(tool: "vault-tool", name: "merge-conflict", arguments: ["merge", "--key-file", "keys/parent.nsec", "--base", "testkit/ok-v2-household.vault",
                   "--ours", "theirs.vault", "--theirs", "theirs-too.vault", "-o", "merged.vault"], prepare: MergeFixtures.prepare),
        GoldenCase(tool: "vault-tool", name: "merge-revoked-device-added", arguments: ["merge", "--key-file", "keys/parent.nsec", "--base", "testkit/ok-v2-household.vault",
                   "--ours", "ours.vault", "--theirs", "theirs-adds.vault", "-o", "merged.vault"], prepare: MergeFixtures.prepare),
        GoldenCase(tool: "vault-tool", name: "merge-revoked-device-added-json", arguments: ["merge", "--key-file", "keys/parent.nsec", "--base", "testkit/ok-v2-household.vault",
                   "--ours", "theirs-adds.vault", "--theirs", "ours.vault", "-o", "merged.vault", "--json"], prepare: MergeFixtures.prepare),
        GoldenCase(tool: "vault-tool", name: "check-revoked-member", arguments: ["check", "--key-file", "keys/parent.nsec", "revoked-member.vault"],
                   prepare: MergeFixtures.prepare),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }
}

@Suite struct VaultToolBehaviourTests {
    @Test func keygenWritesAPrivateKeyFileOnceAndNamesItsPublicKey() throws {
        let workspace = try Workspace()
        let run = try workspace.run("vault-tool", ["keygen", "-o", "new.nsec"])
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty)
        #expect(try workspace.mode("new.nsec") == 0o600)
        let key = try #require(workspace.contents("new.nsec"))
        #expect(key.count == 64 && key.starts(with: Array("nsec1".utf8)) && key.last == 0x0a)

        let derived = try workspace.run("vault-tool", ["derive", "--key-file", "new.nsec", "--json"])
        let npub = try #require((try JSONSerialization.jsonObject(with: Data(derived.stdout)) as? [String: Any])?["npub"] as? String)
        #expect(run.stderrText == "public key: \(npub)\n")

        let again = try workspace.run("vault-tool", ["keygen", "-o", "new.nsec"])
        #expect(again.status == 4)
        #expect(again.stderrText.contains("holds a key, a secret the suite wrote or a picture or page that may hold one in a QR code (a sheet, shares, a code), or cannot be read to tell; such a file is never replaced"))
        #expect(workspace.contents("new.nsec") == key)
        #expect(try workspace.topLevelNames().filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func keygenMakesADifferentKeyEachTime() throws {
        let workspace = try Workspace()
        let first = try workspace.run("vault-tool", ["keygen"]), second = try workspace.run("vault-tool", ["keygen"])
        #expect(first.status == 0 && second.status == 0 && first.stdout != second.stdout)
    }

    @Test func sealOpenRoundTripWithModes() throws {
        let workspace = try Workspace()
        let sealed = try workspace.run("vault-tool", ["seal", "--key-file", "example/household.nsec", "-o", "household.vault", "example/household.json"])
        #expect(sealed.status == 0, "\(sealed.stderrText)")
        #expect(try workspace.mode("household.vault") & 0o077 != 0o077)  // a vault is not secret-moded
        let revealed = try workspace.run("vault-tool", ["open", "--key-file", "example/household.nsec", "--reveal-secrets", "-o", "revealed.json", "household.vault"])
        #expect(revealed.status == 0)
        #expect(try workspace.mode("revealed.json") == 0o600)
        let original = try JSONSerialization.jsonObject(with: Data(workspace.contents("example/household.json")!)) as? NSDictionary
        let roundTripped = try JSONSerialization.jsonObject(with: Data(workspace.contents("revealed.json")!)) as? NSDictionary
        #expect(original == roundTripped)

        let check = try workspace.run("vault-tool", ["check", "--key-file", "example/household.nsec", "household.vault"])
        #expect(check.status == 0 && check.stdoutText.hasSuffix("ok: every rule holds\n"))

        // Re-sealing the sealed JSON keeps every blob and opens again.
        let sealedJSON = try workspace.run("vault-tool", ["open", "--key-file", "example/household.nsec", "-o", "sealed.json", "household.vault"])
        #expect(sealedJSON.status == 0)
        let resealed = try workspace.run("vault-tool", ["seal", "--key-file", "example/household.nsec", "-o", "again.vault", "sealed.json"])
        #expect(resealed.status == 0)
        let reopened = try workspace.run("vault-tool", ["open", "--key-file", "example/household.nsec", "again.vault"])
        #expect(reopened.stdout == workspace.contents("sealed.json"))
    }

    @Test func refusesToOverwriteItsInput() throws {
        let workspace = try Workspace()
        let before = workspace.contents("testkit/ok-minimal.vault")
        let run = try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "-o", "testkit/ok-minimal.vault", "testkit/ok-minimal.vault"])
        #expect(run.status == 4)
        #expect(run.stderrText.contains("is the same file as vault 'testkit/ok-minimal.vault'; inputs are never overwritten"))
        #expect(workspace.contents("testkit/ok-minimal.vault") == before)
    }

    @Test func aFailedRunLeavesNoOutputAndAnExistingOutputUntouched() throws {
        let workspace = try Workspace()
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: workspace.path("kept.json")))
        let names = try workspace.topLevelNames()
        for vault in ["tampered-ciphertext", "bad-magic", "truncated-tag", "not-json"] {
            let fresh = try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "-o", "fresh.json", "testkit/\(vault).vault"])
            let kept = try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "-o", "kept.json", "testkit/\(vault).vault"])
            #expect(fresh.status != 0 && kept.status != 0)
        }
        #expect(try workspace.topLevelNames() == names)
        #expect(workspace.contents("kept.json") == Array("precious\n".utf8))
        let noFolder = try workspace.run("vault-tool", ["open", "--key-file", "keys/parent.nsec", "-o", "no/such/folder/out.json", "testkit/ok-minimal.vault"])
        #expect(noFolder.status == 1)
        #expect(noFolder.stderrText.hasPrefix("vault-tool: error: cannot write -o 'no/such/folder/out.json': its folder does not exist"))
    }

    @Test func warnsAboutAKeyFileOthersCanRead() throws {
        let workspace = try Workspace()
        chmod(workspace.path("keys/parent.nsec"), 0o644)
        let run = try workspace.run("vault-tool", ["derive", "--key-file", "keys/parent.nsec"])
        #expect(run.status == 0)
        #expect(run.stderrText == "vault-tool: warning: key file 'keys/parent.nsec' can be read by other users (mode 644); run: chmod 600 'keys/parent.nsec'\n")
    }

    /// Under a pseudo-terminal (util-linux `script`): secrets and binary output are refused on a
    /// terminal unless --force, and nothing waits silently on a terminal's standard input.
    @Test func terminalRules() throws {
        let workspace = try Workspace()
        let tool = Workspace.binaries.appendingPathComponent("vault-tool").path
        func onTerminal(_ command: String) throws -> ToolRun {
            try workspace.run("/usr/bin/script", ["-qec", "\(tool) \(command)", "/dev/null"])
        }
        let key = try onTerminal("keygen")
        #expect(key.status == 4 && key.stdoutText.contains("refusing to write a secret to a terminal") && !key.stdoutText.contains("nsec1"))
        let vault = try onTerminal("seal --key-file example/household.nsec example/household.json")
        #expect(vault.status == 4 && vault.stdoutText.contains("refusing to write binary data to a terminal"))
        let vaultKey = try onTerminal("derive --key-file keys/parent.nsec --show-vault-key")
        #expect(vaultKey.status == 4 && !vaultKey.stdoutText.contains(String(decoding: workspace.contents("keys/parent.vaultkey")!.prefix(64), as: UTF8.self)))
        let forced = try onTerminal("keygen --force")
        #expect(forced.status == 0 && forced.stdoutText.contains("nsec1"))
        let waiting = try onTerminal("inspect")
        #expect(waiting.status == 64 && waiting.stdoutText.contains("standard input, which is a terminal"))
        let summary = try onTerminal("inspect --key-file keys/parent.nsec testkit/ok-minimal.vault")
        #expect(summary.status == 0 && summary.stdoutText.contains("household id"))
    }
}

/// The binary's tamper sweep: it starts vault-tool hundreds of times, so scripts/test runs it
/// against the release tools (``Workspace/sweepBinaries``).
@Suite struct VaultToolTamperSweep {
    /// Single-bit flips of a valid fixture, through the real binary, in parallel chunks of 64
    /// bytes: exit 2 where a header field no longer parses, 3 otherwise, and never an output.
    /// Every bit of the header's fixed fields (bytes 0 to 9), then one bit of every third byte (its position turning
    /// with the byte, so every bit position is hit): the exhaustive sweep of every bit is the
    /// library's (``TestkitTests/everyBitFlipIsRejected``), in process; here the binary's
    /// exit codes and outputs are sampled, as each flip costs a process. `HVT_FULL_SWEEPS=1`
    /// flips every bit here too.
    @Test(arguments: stride(from: 0, to: 761, by: 64).map { $0..<min($0 + 64, 761) })
    func everyBitFlipFailsWithoutOutput(_ bytesToFlip: Range<Int>) throws {
        let workspace = try Workspace(sweep: true)
        let original = try #require(workspace.contents("testkit/ok-minimal.vault"))
        try #require(original.count == 761, "the chunking above assumes ok-minimal.vault's size")
        let names = try workspace.topLevelNames()
        for bit in SampledFlips.bits(of: bytesToFlip, wholeBytes: 0..<10) {
            var bytes = original
            bytes[bit / 8] ^= 1 << (bit % 8)
            try Data(bytes).write(to: URL(fileURLWithPath: workspace.path("flipped.vault")))
            let run = try workspace.run("vault-tool", ["open", "--vault-key-file", "keys/parent.vaultkey", "-o", "out.json", "flipped.vault"])
            // A header that still parses (byte 9 flipped to another schema version the suite
            // reads) fails authentication, as the header is the AEAD's associated data.
            let headerParses = bit / 8 >= 10 || (bit / 8 == 9 && VaultDocument.supportedVersions.contains(Int(bytes[9])))
            #expect(run.status == (headerParses ? 3 : 2), "bit \(bit): \(run.stderrText)")
            #expect(run.stdout.isEmpty)
        }
        #expect(try workspace.topLevelNames() == names.union(["flipped.vault"]))
    }
}
