import Testing
@testable import VaultCore

/// What counts as a key in text (issue 44), wherever it stands, and the quote of input that
/// withholds one.
@Suite struct KeyTextTests {
    static let nsec = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
    static let hex = String(repeating: "0b6419d7", count: 8)

    /// The key in groups of four joined by `_`, as a source file's literal may write it.
    static let underscored: String = stride(from: 0, to: 64, by: 4).map { String(Array(hex)[$0..<$0 + 4]) }.joined(separator: "_")

    static func holds(_ text: String) -> Bool { Array(text.utf8).withUnsafeBytes { KeyText.holdsKey($0) } }

    @Test(arguments: [
        nsec, nsec.uppercased(), "# the family key\n\(nsec)\n", "export NSEC=\(nsec)", "{\"nsec\": \"\(nsec)\"}",
        "parent:\n  key: \(nsec)\n", "nsec 1vl0 29mg pspe dva0 4g90 vltk h6fv h240", hex, "0x\(hex)", "0X\(hex.uppercased())",
        stride(from: 0, to: 64, by: 2).map { String(Array(hex)[$0..<$0 + 2]) }.joined(separator: ":"),
        "VAULT_KEY=\(hex)", "vault_key: 0x\(hex)", "  \"vaultKey\": \"\(hex)\",", "# key\n\(hex)\n", "vault key    \(hex)",
        "KEY=\(hex) # the parent's", "PARENT=\(hex)", "NOSTR_PRIVATE_KEY_HEX=\(hex)", "secret_key_hex: \(hex)", "nak event --sec \(hex) -c hi", "MNEMONIC=\"legal winner thank year wave sausage worth useful legal winner thank yellow\"", "mnemonic = \"legal winner thank year wave sausage worth useful legal winner thank yellow\"", "Seed phrase: legal winner thank year wave sausage worth useful legal winner thank yellow", "legal winner thank year wave sausage worth useful legal winner thank yellow  # wallet backup", "* legal\n* winner\n* thank\n* year\n* wave\n* sausage\n* worth\n* useful\n* legal\n* winner\n* thank\n* yellow\n", "#1 legal #2 winner #3 thank #4 year #5 wave #6 sausage #7 worth #8 useful #9 legal #10 winner #11 thank #12 yellow", "1:legal 2:winner 3:thank 4:year 5:wave 6:sausage 7:worth 8:useful 9:legal 10:winner 11:thank 12:yellow", "password=\(hex)", "signing_key=\(hex)", "identity_key: \(hex)", "{\"sk\": \"\(hex)\"}",
        "'\(hex)'", "- \(hex)", "\(hex) // parent", "\(hex);", stride(from: 0, to: 64, by: 4).map { String(Array(hex)[$0..<$0 + 4]) }.joined(separator: " "),
        "words: legal winner thank year wave sausage worth useful legal winner thank yellow",
        "legal-winner-thank-year-wave-sausage-worth-useful-legal-winner-thank-yellow", "{\"a\":1,\"key\":\"\(hex)\"}", "key = bytes.fromhex('\(hex)')", "\(hex)  # vault key",
        "legal winner thank year wave sausage worth useful legal winner thank yellow",
        "1. legal\n2. winner\n3. thank\n4. year\n5. wave\n6. sausage\n7. worth\n8. useful\n9. legal\n10. winner\n11. thank\n12. yellow\n",
        "legal winner thank year wave sausage worth useful legal winner thank yellow.",
        "My recovery words are legal winner thank year wave sausage worth useful legal winner thank yellow, keep them safe!",
        "Words: Legal, winner; thank year wave sausage worth useful legal winner thank yellow.",
        // A hostile trial's (issue 44): a label in another language, with a non-ASCII letter,
        // with "(hex)" or "#1" before its colon; a key saved by `jq .vaultKey > file`.
        "clave privada: \(hex)", "clave de la bóveda: \(hex)", "Schlüssel: \(hex)", "private key (hex): \(hex)", "key(hex): \(hex)",
        "key #1: \(hex)", "\"\(hex)\"\n", "mot de passe = \(hex)",
        // A second trial's: German compounds, Markdown's labels, an arrow, jq's array, "0x" quoted.
        "Tresorschlüssel: \(hex)", "Geheimschlüssel = \(hex)", "**Vault key:** \(hex)", "| vault key | \(hex) |", "- Private key – \(hex)",
        "Vault key (hex) → \(hex)", "[\"\(hex)\"]\n", "[\n  \"\(hex)\"\n]\n", "\"0x\(hex)\"",
        // A third trial's: whose key it is after the word, run-together labels, a plain dash.
        "Vault key (household): \(hex)", "vault key for household: \(hex)", "Key of the vault file: \(hex)", "Chiave del vault: \(hex)",
        "VAULTKEY=\(hex)", "householdkey = \(hex)", "Geheimnis: \(hex)", "Vault key - \(hex)",
        "Vault key for the Garcia family household, printed 2025-11-19 (keep safe): \(hex)",
        // A fourth trial's: a label that names nothing public is a key's, as the rule says.
        "foo: \(hex)", "nostr = \(hex)", "hex: \(hex)", "backup: 0x\(hex)", "| mine | \(hex) |",
        underscored,
    ])
    func aKeyInAnySpellingIsFound(_ text: String) {
        #expect(Self.holds(text))
        // Saved as UTF-16 too, either byte order, with or without its byte order mark (an
        // ASCII text: read without its zero bytes, a letter beyond ASCII is no longer UTF-8).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return }
        for encoded in [Self.utf16LittleEndianWithMark(text), Self.utf16BigEndian(text)] {
            #expect(encoded.withUnsafeBytes { KeyText.holdsKey($0) }, "UTF-16: \(text)")
        }
    }

    /// Hex in the layouts a hostile trial found replaced (issue 44): a group a line, "0x"
    /// before each group, a C array, a sentence.
    static let hexLayouts: [String] = [
        groups(of: 4, joinedBy: "\n"), groups(of: 8, joinedBy: "\n") + "\n", groups(of: 4, joinedBy: " ", prefix: "0x"),
        groups(of: 8, joinedBy: " ", prefix: "0X"), "{" + groups(of: 2, joinedBy: ", ", prefix: "0x") + "}",
        "unsigned char key[] = {" + groups(of: 2, joinedBy: ", ", prefix: "0x") + "};", "The key is " + groups(of: 8, joinedBy: " ") + ".",
        // Over lines under a label line, in groups or halves (a hostile trial: each was replaced;
        // two 32-digit ids on two lines, once passed as public, are now taken for a key too).
        "parent key:\n" + groups(of: 4, joinedBy: " ").split(separator: " ").chunked(4).joined(separator: "\n") + "\n",
        "notes\n" + String(hex.prefix(32)) + "\n" + String(hex.suffix(32)) + "\n", String(hex.prefix(32)) + "\n" + String(hex.suffix(32)) + "\n",
    ]

    @Test(arguments: hexLayouts)
    func aHexKeyInAnyLayoutIsFound(_ text: String) {
        #expect(Self.holds(text))
    }

    /// The test hex key in groups of `size` digits, each after `prefix`.
    static func groups(of size: Int, joinedBy separator: String, prefix: String = "") -> String {
        stride(from: 0, to: 64, by: size).map { prefix + String(Array(hex)[$0..<$0 + size]) }.joined(separator: separator)
    }

    @Test(arguments: [
        "", "hello", "pubkey \(hex)", "{\"id\":\"x\",\"sha256\":\"\(hex)\"}", "did:plc:abc#\(hex)", "nsec1 is how keys begin",
        String(repeating: "ab", count: 33), "Family key share 1 of 3", "legal winner thank year",
        "  \"subkeyPublicKey\": \"\(hex)\",", "  \"householdId\": \"\(hex)\",", "  \"pubkey\": \"\(hex)\"", "sha256: \(hex)", "\"vaultPath\": \"vaults/\(hex).vault\",", "{\"vault\":\"x\",\"household\":\"\(hex)\"}",
        "\"memberPubkeys\": [\n  \"\(hex)\",\n  \"\(hex)\"\n]", String(repeating: "stream\nendstream\nendobj\n", count: 8),
        "{\"op\":\"mls.add\",\"group\":\"g\",\"member\":\"\(hex)\",\"deviceId\":\"D\"}", "member: \(hex)", "successor \(hex)", "\(hex)  -", "parent \(hex)\nauthor A <a@b> 1 +0000", "  master_bedroom_tv  \(hex)", "  ParentPhone        \(hex)", "  keyboard  \(hex)",
        "{\"mlsGroupId\":\"g\",\"memberPubkeys\":[\"\(hex)\",\"\(hex)\"]}", "the quick brown fox jumps over the lazy dog and then some more words follow here.",
        "legal winner thank year wave sausage worth useful legal winner thank — kept for the game", "{\"pubkeys\":[\"\(hex)\"]}", "subkeys: [\(hex)]",
        "device '0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D' '0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D'", "0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D 0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D",
        Self.groups(of: 4, joinedBy: "\n") + "\nbeef\n", "ff00ff\n00ff00\nabcdef\n",
        "clave pública: \(hex)", "public key (hex): \(hex)", "key id: \(hex)", "\"\(hex)\",\n\"\(hex)\"\n",
        // An operations file's member whose DID ends in "Sk" before its '#', and labels of public values.
        "{\"op\":\"mls.remove\",\"convo\":\"c\",\"member\":\"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGtaSk#\(hex)\"}",
        "key package ref: \(hex)", "household id: \(hex)", "monkey pubkey: \(hex)",
        // A document's JSON: one list word as a member's value (`false`, a theme) on each of
        // twelve lines is no phrase (a household of twelve devices was taken for a key file).
        "[\n" + String(repeating: "  {\n    \"isPrimary\": false,\n    \"theme\": \"ocean\"\n  },\n", count: 14) + "]\n", "--key-file ../household.nsec \(hex).vault", "nsec \(hex).log", "chiave pubblica: \(hex)", "empreinte de la clé : \(hex)", "identifiant de clé: \(hex)", "| member | \(hex) |",
    ])
    func publicTextIsNot(_ text: String) {
        #expect(!Self.holds(text))
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return }
        #expect(!Self.utf16LittleEndianWithMark(text).withUnsafeBytes { KeyText.holdsKey($0) }, "UTF-16: \(text)")
    }

    static func utf16LittleEndianWithMark(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [0xff, 0xfe]
        for unit in text.utf16 { bytes += [UInt8(unit & 0xff), UInt8(unit >> 8)] }
        return bytes
    }

    static func utf16BigEndian(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in text.utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xff)] }
        return bytes
    }

    /// A piece of a key this run holds (12 hex digits, 10 of an nsec's characters), in any case
    /// and however split, is withheld from a quote and from a child's relayed standard error: a
    /// key command that said 50 of its nsec's 52 characters gave the key away (a hostile trial).
    /// A fresh random key, so that no other test's text holds a piece of it.
    @Test func aPieceOfAKeyThisRunHoldsIsWithheld() throws {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        let hex = Hex.encode(secret), nsec = String(decoding: NIP19.encode(prefix: "nsec", key: secret), as: UTF8.self)
        let data = Array(nsec.dropFirst(5).dropLast(6))
        // The checksum's characters are the key's too (a trial: pieces reaching into them passed).
        let withChecksum = Array(nsec.dropFirst(5))
        for piece in [String(Array(hex)[20..<32]), String(Array(hex)[3..<50]).uppercased(), String(data[7..<17]), String(data[0..<50]).uppercased(),
                      String(withChecksum[48..<58])] {
            for shown in ["loaded key \(piece)", "did:plc:x#\(piece)", piece.map(String.init).joined(separator: " ")] {
                #expect(HeldSecrets.appear(in: Array(shown.utf8)) && QuotedInput(shown).isWithheld, "\(shown)")
                // No hash of so few bits: it would confirm a guess.
                #expect(QuotedInput(shown).fingerprint == nil, "\(shown)")
            }
        }
        // Less than a piece, or another key's, is public text.
        #expect(!HeldSecrets.appear(in: Array(String(Array(hex)[20..<31]).utf8)) && !HeldSecrets.appear(in: Array(String(data[7..<16]).utf8)))
        #expect(!QuotedInput("loaded key from disk, all fine 2026-11-30 id 42").isWithheld)
    }

    /// Four of a held key's recovery words in a row are a piece of it (44 bits), whatever
    /// stands between them, in the printed order or typed row by row across the sheet's grid
    /// (a trial: the 24 words split over a share sheet's label, holder and app name); three,
    /// or four that are not in the key's order, are public text.
    @Test func fourOfAHeldKeysWordsInARowAreAPieceOfIt() throws {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        let phrase = try BIP39.phrase(for: secret.withUnsafeBytes { try SecretBytes(copying: $0) })
        let words = phrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.split(separator: " ").map(String.init)
        let byRows = WordOrder.printedPlaces(typedAcrossRows: 24).map { words[$0] }
        let spaced: String = words[5..<9].joined(separator: " ")
        let between: String = "Gran " + words[10..<14].joined(separator: " and ")
        let capitalised: String = words[0..<4].map { (word: String) -> String in word.capitalized }.joined()
        let prefixes: String = words[20..<24].map { (word: String) -> String in String(word.prefix(4)).uppercased() }.joined(separator: "\n")
        let rows: String = byRows[3..<7].joined(separator: ", ")
        for shown in [spaced, between, capitalised, prefixes, rows] {
            #expect(HeldSecrets.appear(in: Array(shown.utf8)), "\(shown)")
        }
        #expect(!HeldSecrets.appear(in: Array(words[5..<8].joined(separator: " ").utf8)))
        #expect(!HeldSecrets.appear(in: Array([words[9], words[8], words[7], words[6]].joined(separator: " ").utf8)))
    }

    @Test func aQuoteWithholdsASecretAndKeepsThePublic() {
        for secret in [Self.nsec, Self.hex, "3. legal", "abandon ability"] {
            let quoted = QuotedInput(secret)
            #expect(quoted.isWithheld && !quoted.description.contains(secret), "\(secret)")
            // A fingerprint tells whole secrets apart; a few words would be found again from it.
            #expect(quoted.fingerprint?.count == (secret.count > 20 ? 8 : nil), "\(secret)")
        }
        #expect(QuotedInput("did:plc:abc#ipad").description == "'did:plc:abc#ipad'")
        // 64 hex digits glued to what was typed are withheld (two hostile trials); a vault's
        // or a log's storage path is shown, as the messages about a vault must show it.
        for glued in ["did:plc:josh#\(Self.hex)", "x/\(Self.hex)", "\(Self.hex)g", "user@\(Self.hex)", "did:plc:josh#x/\(Self.hex)"] {
            #expect(QuotedInput(glued).isWithheld, "\(glued)")
        }
        // Typed in groups after a word (a hostile trial: quoted back whole), by any one mark,
        // groups of any one width; two UUIDs side by side, a date, a short id stay shown.
        for width in [2, 4, 8, 16] {
            let groups = stride(from: 0, to: 64, by: width).map { Array(Self.hex)[$0..<min($0 + width, 64)] }.map { String($0) }
            for mark in [" ", "-", ":", "_", ".", ",", "  ", " - ", "/", "|", ";", "\t", ", "] {
                for glued in ["ipad \(groups.joined(separator: mark))", "did:plc:josh#\(groups.joined(separator: mark))", "dev-\(groups.joined(separator: mark))x"] {
                    #expect(QuotedInput(glued).isWithheld, "\(glued)")
                }
            }
        }
        // (Two UUIDs without their dashes side by side are two halves of a key to this reading.)
        for shown in ["0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D 1A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D", "2026-11-30T10:00:00Z", "ipad d727 917d"] {
            #expect(!QuotedInput(shown).isWithheld, "\(shown)")
        }
        // Recovery words written together, whole or as their first four letters.
        for joined in ["abandonabilityableaboutaboveabsentabsorbabstractabsurdabuseaccessaccident",
                       "josh-abandonabilityableaboutaboveabsentabsorbabstractabsurdabuseaccessaccident", "abanabilableabouaboveabsentabsoabstabsuabusaccessacci"] {
            #expect(QuotedInput(joined).isWithheld, "\(joined)")
        }
        for word in ["kitchenwallet", "understanding", "abandonability"] { #expect(!QuotedInput(word).isWithheld, "\(word)") }
        // A vault's file name is the household id's 64 digits in one group; in groups, a key.
        let grouped = stride(from: 0, to: 64, by: 4).map { String(Array(Self.hex)[$0..<$0 + 4]) }.joined(separator: " ")
        for named in ["\(grouped).vault", "kitchen \(grouped).log"] { #expect(QuotedInput(named).isWithheld, "\(named)") }
        for path in ["vaults/\(Self.hex).vault", "\(Self.hex).vault", "s3://b/vaults/\(Self.hex).log"] {
            #expect(!QuotedInput(path).isWithheld, "\(path)")
        }
        #expect(throws: VaultError.self) { try RecordedText.checkFreeText("stolen \(Self.hex)", field: "the reason") }
        #expect(!QuotedInput("kitchen").isWithheld && !QuotedInput("vault-tool help").isWithheld)
        #expect(SecretRedaction.redacting("see 'vault-tool help'") == "see 'vault-tool help'")
        let twoIds = "device '0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D': revokedAt; device '0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D': reason"
        #expect(SecretRedaction.redacting(twoIds) == twoIds)
        let twoNames = "no device matches 'garage'; no device matches 'office'"
        #expect(SecretRedaction.redacting(twoNames) == twoNames)
        let pieces = SecretRedaction.redacting("unexpected arguments: 'nsec', '1vl0', '29mg', 'pspe', 'dva0', '4g90', 'vltk', 'h6fv', 'h240'")
        #expect(!pieces.contains("1vl0") && !pieces.contains("SHA-256"), "\(pieces)")
        #expect(!SecretRedaction.redacting("unexpected argument '\(Self.nsec)'").contains(Self.nsec))
        #expect(!SecretRedaction.redacting("the family's key '\(Self.hex)' is not hex").contains(Self.hex))
        #expect(QuotedInput(String(repeating: "x", count: 500)).shown?.count == 101)
        #expect(QuotedInput(Self.nsec) == QuotedInput(Self.nsec) && QuotedInput(Self.nsec) != QuotedInput(Self.hex))
    }

    /// A third hostile trial's spellings, quoted back or recorded for good: groups whose
    /// separators take turns or run to four spaces, base64 glued to other text, a key split by a
    /// line break; two UUIDs, a date and a 40-character token stay shown.
    @Test func groupsOfMixedMarksBase64AndLineBreaksAreKeysToo() {
        let groups = stride(from: 0, to: 64, by: 4).map { String(Array(Self.hex)[$0..<$0 + 4]) }
        let alternating = groups.enumerated().map { $0.offset == 0 ? $0.element : ($0.offset % 2 == 0 ? "-" : ":") + $0.element }.joined()
        let base64 = "C2QZ1wtkGdcLZBnXC2QZ1wtkGdcLZBnXC2QZ1wtkGdc="
        let split = String(Self.hex.prefix(32)) + "\n" + String(Self.hex.suffix(32))
        for secret in [alternating, groups.joined(separator: "    "), "renamed to \(alternating)", "/nope/\(base64)", "renamed to \(base64)",
                       "nodir-\(split)/x.vault", "x \(Self.hex.prefix(32))\r\(Self.hex.suffix(32))",
                       // A fourth trial's: padded base64 glued on both sides, hex split by what draws nothing.
                       "lost x\(base64)", "key=\(base64)tail", "\(base64).bak", "lost \(Self.hex.prefix(32))\u{2028}\(Self.hex.suffix(32))",
                       "lost \(Self.hex.prefix(32))\u{200B}\(Self.hex.suffix(32))", "lost \u{1b}[31m\(Self.hex.prefix(32))\u{1b}[0m\(Self.hex.suffix(32))"] {
            #expect(QuotedInput(secret).isWithheld, "\(secret)")
            #expect(throws: VaultError.self, "\(secret)") { try RecordedText.checkFreeText(secret, field: "the reason") }
        }
        for shown in ["0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D 1A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D", "2026-11-30T10:00:00Z",
                      "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12", "lost on the train, 0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D",
                      // A review's: paths and ids of 43 base64 characters that are no key.
                      "/srv/hvt/households/smith-family/2024/copies.vault", "devices/B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F/config.json",
                      "lost: devices/B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F/config", "/tmp/sqlite-8F3A2B1C-0D4E-4A5B-9C6D-7E8F9A0B1C2A/r.sqlite-journal",
                      "/tmp/sqlite-8F3A2B1C-0D4E-4A5B-9C6D-7E8F9A0B1C2A", "a=1 b=2 c=Kitchen", "\u{1b}[31mred\u{1b}[0m kitchen 2026"] {
            #expect(!QuotedInput(shown).isWithheld, "\(shown)")
            #expect(throws: Never.self, "\(shown)") { try RecordedText.checkFreeText(shown, field: "the reason") }
        }
    }

    /// A secret typed as several arguments (issue 44): each piece looks public, the run of them
    /// does not; options and ordinary arguments do not read as one.
    @Test func aSecretTypedInPiecesIsFoundAmongTheArguments() {
        let groups = stride(from: 0, to: Self.nsec.count, by: 4).map { String(Array(Self.nsec)[$0..<min($0 + 4, Self.nsec.count)]) }
        let hexGroups = stride(from: 0, to: 64, by: 8).map { String(Array(Self.hex)[$0..<$0 + 8]) }
        let words = "legal winner thank year wave sausage worth useful legal winner thank yellow".split(separator: " ").map(String.init)
        for secret in [["inspect"] + groups, ["inspect", "--json"] + hexGroups + ["--to", "2"], ["combine", "./legal"] + Array(words.dropFirst()),
                       ["inspect", "x", "winner", "thank", "year", "wave"], ["derive", "--key-file", "k", "nsec1"] + groups.dropFirst(2)] {
            #expect(SecretRedaction.argumentsHoldSecret(secret), "\(secret)")
        }
        for ordinary in [["inspect", "--json", "family.vault"], ["revoke", "--device", "garage", "--device", "office", "--reason", "lost"],
                         ["migrate", "--source", "s3://b/vaults/", "--to", "2", "--jobs", "4"], ["inspect", "--npub", "npub1" + String(repeating: "q", count: 58)],
                         ["path", "--household-id", Self.hex], ["combine", "a.png", "b.png", "c.png"], ["derive", "--device-id", "kitchen", "bedroom", "office"]] {
            #expect(!SecretRedaction.argumentsHoldSecret(ordinary), "\(ordinary)")
        }
    }

    @Test func sqlitesSideFilesAreKnownByTheirHeaders() {
        func isSide(_ bytes: [UInt8], _ suffix: String) -> Bool { SQLiteHeaders.isSideFile(bytes, size: bytes.count, suffix: suffix) }
        // A journal's header: its magic, page count, checksum seed, pages before, sector size (512), page size (4096).
        #expect(isSide([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7, 0, 0, 0, 1, 0x86, 0x4b, 0x7f, 0xf4, 0, 0, 0, 2, 0, 0, 2, 0, 0, 0, 0x10, 0]
                       + [UInt8](repeating: 0, count: 484) + [0, 0, 0, 1] + Array("a page holding a name like nsec1".utf8), "-journal"))
        #expect(isSide([UInt8](repeating: 0, count: 28), "-journal"))
        // A journal cut off before it was synced: its magic and count zeroed, its header's
        // checksum seed, page count, sector size (512) and page size (4096), then padding; and
        // such a journal with a page after it.
        let header: [UInt8] = [UInt8](repeating: 0, count: 12) + [0x86, 0x4b, 0x7f, 0xf4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0x10, 0]
        #expect(isSide(header + [UInt8](repeating: 0, count: 484), "-journal"))
        #expect(isSide(header + [UInt8](repeating: 0, count: 484) + [0, 0, 0, 2, 0x0d, 0, 0, 0, 1, 0x0f, 0xc0] + Array("Kitchen iPad".utf8), "-journal"))
        #expect(!isSide(header + Array((Self.nsec + "\n").utf8), "-journal"))
        #expect(!isSide(header + [UInt8](repeating: 0, count: 100) + Array((Self.nsec + "\n").utf8), "-journal"))
        #expect(!isSide(header + Array("my precious notes\n".utf8), "-journal"))
        #expect(isSide([0x37, 0x7f, 0x06, 0x82, 0, 0x2d, 0xe2, 0x18], "-wal"))
        // A journal SQLite keeps (PERSIST): its whole header zeroed, then old pages.
        #expect(isSide([UInt8](repeating: 0, count: 512) + [0, 0, 0, 2, 0x0d, 0, 0, 0, 1, 0x0f, 0xc0] + Array("Kitchen iPad".utf8), "-journal"))
        // The magic before a key or a note is no side file either.
        #expect(!isSide([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7] + Array((Self.nsec + "\n").utf8), "-journal"))
        #expect(!isSide([0x37, 0x7f, 0x06, 0x82] + Array((Self.nsec + "\n").utf8), "-wal"))
        #expect(!isSide([0x37, 0x7f, 0x06, 0x83] + Array("my precious notes\n".utf8), "-wal"))
        #expect(isSide([0x18, 0xe2, 0x2d, 0x00, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 32760), "-shm"))
        #expect(isSide([0x18, 0xe2, 0x2d, 0x00, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 4088), "-shm"))
        #expect(!isSide([0x18, 0xe2, 0x2d, 0x00] + Array((Self.nsec + "\n").utf8), "-shm"))
        #expect(isSide([UInt8](repeating: 0, count: 32768), "-shm"))
        #expect(Array("SQLite format 3\u{0}rest".utf8).withUnsafeBytes { SQLiteHeaders.isSQLiteFile($0) })
        #expect(!Array(Self.nsec.utf8).withUnsafeBytes { SQLiteHeaders.isSQLiteFile($0) })
        for suffix in ["-journal", "-wal", "-shm"] {
            #expect(!isSide(Array(Self.nsec.utf8), suffix))
            // Zeros before a key or a note are no side file (a hostile trial: SQLite overwrote
            // or deleted them).
            // (A journal of 512 zeros and then text is a retired one and its pages, whatever they
            // spell: a device named like a key must not lock the registry.)
            for zeros in [8, 28, 100] {
                #expect(!isSide([UInt8](repeating: 0, count: zeros) + Array((Self.nsec + "\n").utf8), suffix), "\(zeros) zeros + a key at \(suffix)")
            }
            #expect(!isSide([UInt8](repeating: 0, count: 8) + Array("my precious notes\n".utf8), suffix))
            #expect(!isSide([UInt8](repeating: 0, count: 28) + Array("my precious notes\n".utf8), suffix))
            #expect(!isSide([UInt8](repeating: 0, count: 512) + Array("dear diary\n".utf8) + [UInt8](repeating: 0, count: 3000), suffix))
            #expect(!isSide([UInt8](repeating: 0, count: 4096) + Array("dear diary\n".utf8), suffix))
        }
        #expect(!isSide([UInt8](repeating: 0, count: 8), "-wal"))
    }
}

extension Array {
    /// The elements `size` at a time, each group joined by a space.
    func chunked(_ size: Int) -> [String] where Element: StringProtocol {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)].joined(separator: " ") }
    }
}
