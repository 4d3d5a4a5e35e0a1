import Foundation
import Testing
import VaultCore
import VaultImaging

enum CodeFixtures {
    static let masterKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    static let household = "0a92686c7aa4ac0f39bf3a8c6cc4078ef7683ed020866e18320156f952336b4e"

    @Sendable static func prepare(_ workspace: Workspace) throws {
        try Data((masterKey + "\n").utf8).write(to: URL(fileURLWithPath: workspace.path("mk.hex")))
        chmod(workspace.path("mk.hex"), 0o600)
        for (tool, arguments) in [
            ("recovery-sheet", ["code", "new", "--master-key-file", "mk.hex", "--user-id", "emma@example.org", "-o", "blob.json", "--sheet", "code.png",
                                "--code-out", "words.txt", "--date", "2026-11-22"]),
            ("device-link", ["create", "--key-file", "keys/parent.nsec", "--vault-url", "https://minio.example/b/vaults/\(household).vault",
                             "--now", "2026-11-22T10:00:00Z", "-o", "link.png"]),
        ] {
            let run = try workspace.run(tool, arguments)
            guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": run.stderrText]) }
        }
        let pairing = PairingCode(shareURL: "https://www.icloud.com/share/0abc", parentDeviceID: "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                                  verificationToken: "5BD9F42C-8962-4CFA-AF4B-0FED5F34DF0A", sharedZoneID: "FamilyZone", timestamp: Timestamp(rfc3339: "2026-11-22T10:00:00Z")!)
        try Data(QRImage.render(QRCode(payload: pairing.jsonValue().serialized(pretty: false), level: .quartile), modulePixels: 6, dotsPerInch: 300).pngData())
            .write(to: URL(fileURLWithPath: workspace.path("pair.png")))
        try Data("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art\n".utf8)
            .write(to: URL(fileURLWithPath: workspace.path("wrong-words.txt")))
        chmod(workspace.path("wrong-words.txt"), 0o600)
    }
}

@Suite struct CodesGoldenTests {
    static func codes(_ name: String, _ arguments: [String]) -> GoldenCase {
        GoldenCase(tool: "recovery-sheet", name: name, arguments: arguments, prepare: CodeFixtures.prepare)
    }

    static func links(_ name: String, _ arguments: [String]) -> GoldenCase {
        GoldenCase(tool: "device-link", name: name, arguments: arguments, prepare: CodeFixtures.prepare)
    }

    static let cases: [GoldenCase] = [
        codes("code-help", ["code", "--help"]),
        codes("code-unwrap-words", ["code", "unwrap", "--blob", "blob.json", "--code-file", "words.txt"]),
        codes("code-unwrap-sheet", ["code", "unwrap", "--blob", "blob.json", "--sheet", "code.png"]),
        codes("code-unwrap-over-a-key", ["code", "unwrap", "--blob", "blob.json", "--sheet", "code.png", "-o", "mk.hex"]),
        codes("code-unwrap-wrong", ["code", "unwrap", "--blob", "blob.json", "--code-file", "wrong-words.txt", "-o", "mk.out"]),
        codes("code-rotate-one-sheet", ["code", "rotate", "--blob", "blob.json", "--sheet", "code.png", "-o", "new.json"]),
        codes("code-new-help", ["code", "new", "--help"]),
        codes("code-rotate-help", ["code", "rotate", "--help"]),
        codes("code-verify-sheet", ["code", "verify", "--blob", "blob.json", "--sheet", "code.png"]),
        codes("code-verify-wrong", ["code", "verify", "--blob", "blob.json", "--code-file", "wrong-words.txt"]),
        codes("code-new-unknown-language", ["code", "new", "--master-key-file", "mk.hex", "--user-id", "x", "--lang", "fr", "-o", "b.json", "--sheet", "s.png"]),
        codes("code-new-over-a-sheet", ["code", "new", "--master-key-file", "mk.hex", "--user-id", "x", "-o", "b.json", "--sheet", "code.png"]),
        codes("code-new-bad-key", ["code", "new", "--master-key-file", "keys/parent.nsec", "--user-id", "x", "-o", "b.json", "--sheet", "s.png"]),
        links("help", ["--help"]),
        links("link-read", ["read", "link.png", "--now", "2026-11-22T10:04:59Z"]),
        GoldenCase(tool: "device-link", name: "link-read-stdin", arguments: ["read", "-", "--now", "2026-11-22T10:04:59Z"], stdin: "link.png",
                   prepare: CodeFixtures.prepare),
        links("link-read-expired", ["read", "link.png", "--now", "2026-11-22T11:00:00Z", "-o", "x.nsec"]),
        // device-link links no object store (the link table test): an s3:// name is refused, typed.
        links("link-read-object", ["read", "s3://family-vaults/link.png"]),
        links("link-create-object-output", ["create", "--key-file", "keys/parent.nsec", "--vault-url", "https://minio.example/b/vaults/x.vault", "-o", "s3://family-vaults/l.png"]),
        links("link-create-wrong-url", ["create", "--key-file", "keys/parent.nsec", "--vault-url", "https://minio.example/b/vaults/other.vault", "-o", "l.png"]),
        links("pairing-read", ["pairing", "read", "pair.png", "--now", "2026-11-22T10:09:00Z"]),
        links("pairing-read-json", ["pairing", "read", "pair.png", "--now", "2026-11-22T10:00:30Z", "--json"]),
        links("pairing-read-too-old", ["pairing", "read", "pair.png", "--now", "2026-11-22T10:10:01Z"]),
        links("pairing-read-future", ["pairing", "read", "pair.png", "--now", "2026-11-22T09:58:00Z", "--max-age", "60"]),
        links("pairing-create-not-https", ["pairing", "create", "--share-url", "http://x/y", "--parent-device-id", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--shared-zone-id", "Z", "-o", "p.png"]),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }
}

@Suite struct CodesBehaviourTests {
    @Test func theCodeNeverReachesStdoutOrStderrAndRotationRetiresIt() throws {
        let workspace = try Workspace()
        try CodeFixtures.prepare(workspace)
        let words = String(decoding: workspace.contents("words.txt")!, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(words.split(separator: " ").count == 24)
        #expect(try workspace.mode("words.txt") == 0o600 && workspace.mode("code.png") == 0o600)
        let new = try workspace.run("recovery-sheet", ["code", "new", "--master-key-file", "mk.hex", "--user-id", "u", "-o", "b2.json", "--sheet", "c2.png"])
        #expect(new.status == 0 && new.stdout.isEmpty && !new.stderrText.contains("abandon"))
        let rotate = try workspace.run("recovery-sheet", ["code", "rotate", "--blob", "blob.json", "--sheet", "code.png", "-o", "rotated.json", "--sheet", "rotated.png"])
        #expect(rotate.status == 0, "\(rotate.stderrText)")
        #expect(!rotate.stdoutText.contains(words.prefix(10)) && !rotate.stderrText.contains(words.prefix(10)))
        #expect(try workspace.run("recovery-sheet", ["code", "unwrap", "--blob", "rotated.json", "--sheet", "code.png", "-o", "x.hex"]).status == 3)
        #expect(!FileManager.default.fileExists(atPath: workspace.path("x.hex")))
        let unwrapped = try workspace.run("recovery-sheet", ["code", "unwrap", "--blob", "rotated.json", "--sheet", "rotated.png", "-o", "back.hex"])
        #expect(unwrapped.status == 0 && workspace.contents("back.hex") == Array((CodeFixtures.masterKey + "\n").utf8))
    }
}
