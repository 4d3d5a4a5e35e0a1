import Foundation
import Testing
import VaultCore
import VaultImaging

/// Test pictures made in the scratch workspace: what a scanner might be handed.
enum ScanPictures {
    static func qr(_ payload: String, scale: Int = 6) throws -> GrayImage {
        let code = try QRCode(payload: Array(payload.utf8), level: .quartile)
        var image = GrayImage(width: (code.size + 8) * scale, height: (code.size + 8) * scale)
        for y in 0..<code.size { for x in 0..<code.size where code.isDark(x: x, y: y) {
            image.fill(x: (x + 4) * scale, y: (y + 4) * scale, width: scale, height: scale, value: 0)
        } }
        return image
    }

    static func write(_ image: GrayImage, _ name: String, in workspace: Workspace) throws {
        try Data(image.pngData()).write(to: URL(fileURLWithPath: workspace.path(name)))
    }

    static func nsec(_ workspace: Workspace, _ key: String) -> String {
        String(decoding: workspace.contents("keys/\(key).nsec")!, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A 64×48 grey JPEG (Pillow, quality 60): a phone photo that missed the code.
    static let blankPhoto = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//wAALCAAwAEABAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/AOsooooooooooooooooooooooooooooooooooooooooooooooor/2Q=="

    /// blank.png, blank-photo.jpg, not-a-key.png, two-codes.png, a plain and an encrypted sheet of the parent key,
    /// and word files, all in the workspace.
    @Sendable static func prepare(_ workspace: Workspace) throws {
        try write(GrayImage(width: 300, height: 300), "blank.png", in: workspace)
        try Data(base64Encoded: blankPhoto)!.write(to: URL(fileURLWithPath: workspace.path("blank-photo.jpg")))
        try write(qr("https://example.com/not-a-key"), "not-a-key.png", in: workspace)
        let first = try qr(nsec(workspace, "parent")), second = try qr(nsec(workspace, "other"))
        var both = GrayImage(width: first.width + second.width, height: max(first.height, second.height))
        for y in 0..<first.height { for x in 0..<first.width { both.pixels[y * both.width + x] = first.pixels[y * first.width + x] } }
        for y in 0..<second.height { for x in 0..<second.width { both.pixels[y * both.width + first.width + x] = second.pixels[y * second.width + x] } }
        try write(both, "two-codes.png", in: workspace)
        try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: workspace.path("pass.txt")))
        try Data("wrong horse\n".utf8).write(to: URL(fileURLWithPath: workspace.path("wrong-pass.txt")))
        for (name, arguments) in [
            ("parent-sheet.png", [String]()),
            ("parent-encrypted.png", ["--passphrase-file", "pass.txt", "--log-n", "8"]),
        ] {
            let run = try workspace.run("recovery-sheet", ["generate", "--key-file", "keys/parent.nsec", "--dpi", "150", "--date", "2026-11-22", "-o", name] + arguments)
            guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": run.stderrText]) }
        }
        let words = try workspace.run("recovery-sheet", ["words", "--key-file", "keys/parent.nsec"]).stdoutText
        let list = words.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try Data(words.utf8).write(to: URL(fileURLWithPath: workspace.path("words.txt")))
        let messy = list.enumerated().map { "\($0.offset + 1). \($0.element.uppercased().prefix(4))" }.joined(separator: "\n")
        try Data(messy.utf8).write(to: URL(fileURLWithPath: workspace.path("words-messy.txt")))
        var typo = list
        typo[4] = "zebraa"
        try Data(typo.joined(separator: " ").utf8).write(to: URL(fileURLWithPath: workspace.path("words-typo.txt")))
        var swapped = list
        swapped.swapAt(0, 1)
        try Data(swapped.joined(separator: " ").utf8).write(to: URL(fileURLWithPath: workspace.path("words-swapped.txt")))
        try Data("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about".utf8)
            .write(to: URL(fileURLWithPath: workspace.path("words-12.txt")))
        // The key as printed, in groups of four, with an o typed for a 0.
        let parentKey = nsec(workspace, "parent")
        let zero = parentKey.indices.dropFirst(5).first { parentKey[$0] == "0" }!
        var keyTypo = parentKey
        keyTypo.replaceSubrange(zero...zero, with: "o")
        let grouped = stride(from: 0, to: keyTypo.count, by: 4).map { String(keyTypo.dropFirst($0).prefix(4)) }.joined(separator: " ")
        try Data((grouped + "\n").utf8).write(to: URL(fileURLWithPath: workspace.path("key-typo.txt")))
        for secret in ["key-typo.txt", "pass.txt", "wrong-pass.txt", "words.txt", "words-messy.txt", "words-typo.txt", "words-swapped.txt", "words-12.txt"] {
            chmod(workspace.path(secret), 0o600)
        }
    }
}

@Suite struct RecoverySheetGoldenTests {
    static func sheetCase(_ name: String, _ arguments: [String], stdin: String? = nil) -> GoldenCase {
        GoldenCase(tool: "recovery-sheet", name: name, arguments: arguments, stdin: stdin, prepare: ScanPictures.prepare)
    }

    static let cases: [GoldenCase] = [
        sheetCase("help", ["--help"]),
        sheetCase("generate-help", ["generate", "--help"]),
        sheetCase("words", ["words", "--key-file", "keys/parent.nsec"]),
        sheetCase("words-decode", ["words", "--decode", "words.txt"]),
        sheetCase("words-decode-messy", ["words", "--decode", "-"], stdin: "words-messy.txt"),
        sheetCase("words-decode-typo", ["words", "--decode", "words-typo.txt"]),
        sheetCase("words-decode-swapped", ["words", "--decode", "words-swapped.txt"]),
        sheetCase("words-decode-12", ["words", "--decode", "words-12.txt"]),
        sheetCase("words-decode-npub", ["words", "--decode", "words.txt", "--npub", "npub1fa0nx3zd2rjgs9udxskshkz2h00q0nmade0z3gnz0j0fr6as4uaqq9j3f5"]),
        sheetCase("words-decode-npub-mismatch", ["words", "--decode", "words.txt", "--npub", "npub1afpujznc5dt4vhqlns6mxvufer0y3g0mvfx90m0jp6nhehfd9tks2vdexd", "-o", "out.nsec"]),
        sheetCase("words-decode-vault", ["words", "--decode", "words.txt", "--vault", "testkit/ok-household.vault"]),
        sheetCase("words-decode-key-typo", ["words", "--decode", "-"], stdin: "key-typo.txt"),
        sheetCase("scan", ["scan", "parent-sheet.png"]),
        sheetCase("scan-vault-mismatch", ["scan", "parent-sheet.png", "--vault", "testkit/wrong-key.vault", "-o", "out.nsec"]),
        sheetCase("combine-help", ["combine", "--help"]),
        sheetCase("words-help", ["words", "--help"]),
        sheetCase("scan-encrypted", ["scan", "parent-encrypted.png", "--passphrase-file", "pass.txt"]),
        sheetCase("scan-encrypted-no-passphrase", ["scan", "parent-encrypted.png"]),
        sheetCase("scan-encrypted-wrong-passphrase", ["scan", "parent-encrypted.png", "--passphrase-file", "wrong-pass.txt"]),
        sheetCase("scan-blank", ["scan", "blank.png"]),
        sheetCase("scan-blank-photo", ["scan", "blank-photo.jpg"]),
        sheetCase("scan-two-codes", ["scan", "two-codes.png"]),
        sheetCase("scan-not-a-key", ["scan", "not-a-key.png"]),
        sheetCase("scan-not-an-image", ["scan", "keys/parent.npub"]),
        sheetCase("scan-over-a-key", ["scan", "parent-sheet.png", "-o", "keys/other.nsec"]),
        sheetCase("scan-over-a-key-through-a-missing-folder", ["scan", "parent-sheet.png", "-o", "new/../keys/other.nsec"]),
        sheetCase("words-decode-over-a-key", ["words", "--decode", "words.txt", "-o", "keys/other.nsec"]),
        sheetCase("scan-stdin-json", ["scan", "-", "-o", "restored.nsec", "--json"], stdin: "parent-sheet.png"),
        sheetCase("scan-json-to-stdout", ["scan", "parent-sheet.png", "--json"]),
        sheetCase("verify-vault", ["verify", "parent-sheet.png", "--vault", "testkit/ok-household.vault"]),
        sheetCase("verify-other-vault", ["verify", "parent-sheet.png", "--vault", "testkit/wrong-key.vault"]),
        sheetCase("verify-npub", ["verify", "parent-encrypted.png", "--passphrase-file", "pass.txt", "--npub", "npub1fa0nx3zd2rjgs9udxskshkz2h00q0nmade0z3gnz0j0fr6as4uaqq9j3f5"]),
        sheetCase("verify-key-file-mismatch", ["verify", "parent-sheet.png", "--key-file", "keys/other.nsec"]),
        sheetCase("verify-two-expectations", ["verify", "parent-sheet.png", "--key-file", "keys/other.nsec", "--npub", "npub1x"]),
        sheetCase("verify-vault-json", ["verify", "parent-sheet.png", "--vault", "testkit/ok-household.vault", "--json"]),
        sheetCase("verify-mismatch-json", ["verify", "parent-sheet.png", "--key-file", "keys/other.nsec", "--json"]),
        sheetCase("verify-stdin", ["verify", "-", "--key-file", "keys/parent.nsec"], stdin: "parent-sheet.png"),
        sheetCase("generate-bad-date", ["generate", "--key-file", "keys/parent.nsec", "--date", "22/11/2026", "-o", "x.png"]),
        sheetCase("generate-unknown-language", ["generate", "--key-file", "keys/parent.nsec", "--lang", "fr", "-o", "x.png"]),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }

    /// `generate` compared by what a printer sees: the decoded pixels (hashed), the size and the
    /// resolution recorded in pHYs, not the compressed bytes.
    @Test(arguments: [
        ("a4-en", ["--paper", "a4", "--lang", "en"]),
        ("letter-es", ["--paper", "letter", "--lang", "es", "--label", "Familia García-Núñez"]),
        ("a4-en-150dpi-label", ["--dpi", "150", "--label", "Garcia family"]),
    ])
    func generatedPixels(_ name: String, _ arguments: [String]) throws {
        let workspace = try Workspace()
        let run = try workspace.run("recovery-sheet", ["generate", "--key-file", "example/household.nsec", "--date", "2026-11-22", "-o", "sheet.png"] + arguments)
        #expect(run.status == 0, "\(run.stderrText)")
        #expect(try workspace.mode("sheet.png") == 0o600)
        let image = try GrayImage(decoding: #require(workspace.contents("sheet.png")))
        let summary = "\(image.width)x\(image.height) pixels, \(image.dotsPerInch) dpi, sha256 \(Hex.encode(SHA256.hash(image.pixels)))\n"
        try Golden.compare(tool: "recovery-sheet", name: "generate-\(name)", [("pixels", Array(summary.utf8)), ("stderr", run.stderr)])
    }
}

@Suite struct RecoverySheetBehaviourTests {
    @Test func scanRoundTripsTheKeyFile() throws {
        let workspace = try Workspace()
        try ScanPictures.prepare(workspace)
        let run = try workspace.run("recovery-sheet", ["scan", "parent-sheet.png", "-o", "restored.nsec"])
        #expect(run.status == 0)
        #expect(workspace.contents("restored.nsec") == workspace.contents("keys/parent.nsec"))
        #expect(try workspace.mode("restored.nsec") == 0o600)
        let decoded = try workspace.run("recovery-sheet", ["words", "--decode", "words-messy.txt", "-o", "from-words.nsec"])
        #expect(decoded.status == 0)
        #expect(workspace.contents("from-words.nsec") == workspace.contents("keys/parent.nsec"))
    }

    @Test func failedScansWriteNothing() throws {
        let workspace = try Workspace()
        try ScanPictures.prepare(workspace)
        let names = try workspace.topLevelNames()
        for picture in ["blank.png", "two-codes.png", "not-a-key.png", "parent-encrypted.png"] {
            #expect(try workspace.run("recovery-sheet", ["scan", picture, "-o", "out.nsec"]).status != 0)
        }
        #expect(try workspace.topLevelNames() == names)
    }

    @Test func sheetsAreSecretsOnATerminal() throws {
        let workspace = try Workspace()
        let tool = Workspace.binaries.appendingPathComponent("recovery-sheet").path
        let run = try workspace.run("/usr/bin/script", ["-qec", "\(tool) generate --key-file keys/parent.nsec --format png", "/dev/null"])
        #expect(run.status == 4 && run.stdoutText.contains("refusing to write a secret to a terminal"))
        let words = try workspace.run("/usr/bin/script", ["-qec", "\(tool) words --key-file keys/parent.nsec", "/dev/null"])
        #expect(words.status == 4)
    }
}
