import Foundation
import Testing
@testable import VaultCore

/// The vault testkit (Tests/Fixtures/testkit): vaults sealed once by the independent Python
/// reference, each with a `.expect` file stating the outcome. See Tests/Fixtures/README.md.
struct TestkitFixture: CustomTestStringConvertible, Sendable {
    let name: String
    let fields: [String: String]

    var testDescription: String { name }
    var vault: [UInt8] { get throws { Array(try Data(contentsOf: Self.folder.appendingPathComponent(name + ".vault"))) } }

    static let folder = TestFiles.fixtures.appendingPathComponent("testkit")

    static func all() throws -> [TestkitFixture] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".expect") }.sorted().map { file in
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                fields[parts[0]] = parts[1]
            }
            return TestkitFixture(name: String(file.dropLast(".expect".count)), fields: fields)
        }
    }

    static func access(_ keyFile: String) throws -> VaultAccess {
        let contents = try SecretBytes.test(Array(Data(contentsOf: TestFiles.fixtures.appendingPathComponent("keys/" + keyFile))))
        return keyFile.hasSuffix(".vaultkey")
            ? .vaultKey(try VaultKey(parsing: contents, what: keyFile))
            : .parentKey(try SecretKey(parsing: contents, what: keyFile))
    }
}

@Suite struct TestkitTests {
    static let fixtures = (try? TestkitFixture.all()) ?? []

    @Test func testkitIsComplete() {
        #expect(Self.fixtures.count >= 20)
        let outcomes = Set(Self.fixtures.compactMap { $0.fields["open"] })
        for expected in ["ok", "keyMismatch", "authenticationFailed", "malformedEnvelope", "unsupportedVersion", "corruptVault", "malformedDocument"] {
            #expect(outcomes.contains(expected), "no fixture expects \(expected)")
        }
        #expect(Self.fixtures.contains { $0.name.hasPrefix("ok-v2") } && Self.fixtures.contains { $0.fields["downgrade"] == "refused" })
    }

    @Test(arguments: fixtures)
    func fixtureGivesItsStatedResult(_ fixture: TestkitFixture) throws {
        let access = try TestkitFixture.access(try #require(fixture.fields["key"]))
        let expected = try #require(fixture.fields["open"])
        let result = Result { try Vault.open(fixture.vault, with: access) }
        switch result {
        case .success(let opened):
            #expect(expected == "ok", "opened, but expected \(expected)")
            try checkReveal(fixture, opened: opened, access: access)
            try checkRules(fixture, opened: opened, access: access)
            try checkMigration(fixture, opened: opened, access: access)
        case .failure(let error as VaultError):
            #expect(error.code.name == expected, "\(error)")
        case .failure(let error):
            Issue.record("unexpected error \(error)")
        }
    }

    private func checkReveal(_ fixture: TestkitFixture, opened: OpenedVault, access: VaultAccess) throws {
        let reveal = Result { try opened.document.revealed(with: access) }
        if let expected = fixture.fields["reveal"] {
            guard case .failure(let error as VaultError) = reveal else {
                Issue.record("revealing should fail with \(expected)")
                return
            }
            #expect(error.code.name == expected)
        }
        if let revealedFile = fixture.fields["revealed"] {
            let expected = try JSONValue(parsing: Array(Data(contentsOf: TestkitFixture.folder.appendingPathComponent(revealedFile))))
            #expect(try reveal.get().jsonValue() == expected, "revealed JSON differs from \(revealedFile)")
        }
    }

    /// v1 fixtures go to v2 and back to equal values; v2 and v3 fixtures state whether a
    /// downgrade by one version is lossless (`downgrade: ok`) or refused.
    private func checkMigration(_ fixture: TestkitFixture, opened: OpenedVault, access: VaultAccess) throws {
        guard fixture.fields["reveal"] == nil, fixture.fields["check"] == "clean" else { return }
        let bytes = try fixture.vault
        if opened.document.version == 1 {
            let up = try VaultMigration.migrate(bytes, access: access, to: 2, logVerified: true)
            #expect(try Vault.open(up.bytes, with: access).document.version == 2)
            #expect(try VaultCheck.run(Vault.open(up.bytes, with: access).document, access: access).isClean)
            let down = try VaultMigration.migrate(up.bytes, access: access, to: 1, logVerified: true)
            let original = try opened.document.revealed(with: access).jsonValue()
            #expect(try Vault.open(down.bytes, with: access).document.revealed(with: access).jsonValue() == original)
        } else if let downgrade = fixture.fields["downgrade"] {
            let below = opened.document.version - 1
            let result = Result { try VaultMigration.migrate(bytes, access: access, to: below, logVerified: true) }
            if downgrade == "refused" {
                #expect(throws: VaultError(.lossyDowngrade, "")) { try result.get() }
                let lossy = try VaultMigration.migrate(bytes, access: access, to: below, allowLossy: true, logVerified: true)
                #expect(!lossy.report.losses.isEmpty)
            } else {
                #expect(try result.get().report.losses.isEmpty)
            }
        }
    }

    private func checkRules(_ fixture: TestkitFixture, opened: OpenedVault, access: VaultAccess) throws {
        guard let expected = fixture.fields["check"] else { return }
        let report = try VaultCheck.run(opened.document, access: access)
        let rules = Set(report.findings.map(\.rule.rawValue))
        #expect(rules == (expected == "clean" ? [] : Set(expected.split(separator: ",").map(String.init))))
    }

    /// Every single-bit flip of every valid fixture fails: a header field that no longer parses
    /// is invalid input; anything else fails authentication. Checked with both kinds of key.
    /// The quick tier flips every bit of the header and every seventh bit after it.
    @Test(arguments: fixtures.filter { $0.fields["open"] == "ok" && $0.fields["check"] == "clean" })
    func everyBitFlipIsRejected(_ fixture: TestkitFixture) throws {
        let original = try fixture.vault
        let parent = try TestkitFixture.access("parent.nsec")
        let vaultKey = try TestkitFixture.access("parent.vaultkey")
        for bit in 0..<(original.count * 8) where !TestTier.isQuick || bit < 80 || bit % 7 == 0 {
            var bytes = original
            bytes[bit / 8] ^= 1 << (bit % 8)
            for access in [parent, vaultKey] {
                do {
                    _ = try Vault.open(bytes, with: access)
                    Issue.record("bit \(bit) flipped and the vault still opened")
                } catch let error as VaultError {
                    // A header that still parses (byte 9 flipped to another schema version this
                    // build reads) fails authentication: the header is the AEAD's associated data.
                    let offset = bit / 8
                    let headerParses = offset >= 10 || (offset == 9 && VaultDocument.supportedVersions.contains(Int(bytes[9])))
                    let expected: VaultError.Category = headerParses ? .authentication : .invalidInput
                    #expect(error.code.category == expected, "bit \(bit): \(error)")
                }
            }
        }
    }
}
