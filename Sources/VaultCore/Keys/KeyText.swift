/// What counts as a key in text (docs/conventions.md, "Nothing lost" and "Secrets"), wherever it
/// stands in it (issue 44: a comment line before it, `export NSEC=…`, JSON around it):
/// - an `nsec1…` or `ncryptsec1…` (grouped or not, any case) anywhere;
/// - 64 hex characters (a parent, vault or master key) alone on a line but for a comment, after
///   a bare label that names nothing public (`foo: …`), or whose nearest word before them names
///   a secret (`VAULT_KEY=…`, `"vaultKey": "…",`, `vault key  …`), never a public value
///   (`"pubkey": …`, `householdId`, a list of member keys), with or without `0x`, split by `:`,
///   `-`, `_` or a space or not;
/// - 32 bytes in base64 (the app's own spelling of a key's `Data`) alone on a line or after a
///   label that names a secret (`"nsec":"…="`);
/// - 12 or more words all from BIP-39's or SLIP-0039's lists (recovery words, a share), whole
///   or as their first four letters, numbered or not, on lines that hold nothing else.
/// The rule over bytes, for a file an output would replace (VaultFiles' `KeyHoldingFile`) and
/// for text an error would quote (``QuotedInput``).
package enum KeyText {
    /// Whether `text` holds a key; compared in place (`text` may be protected memory), every
    /// copy made in protected memory.
    package static func holdsKey(_ text: UnsafeRawBufferPointer) -> Bool {
        // Keys are printed and typed in groups of four ("nsec 1qyz …", "nsec-1qyz-…"): compared
        // without spaces or dashes.
        holdsKeyAsWritten(text) || holdsKeyInUTF16(text)
    }

    private static func holdsKeyAsWritten(_ text: UnsafeRawBufferPointer) -> Bool {
        holdsBech32Key(text) || anyLine(text, isHexKey) || hexKeyAcrossLines(text) || allListWords(text) || isQuotedHexAlone(text)
            || anyLine(text) { isBase64Key($0) }
    }

    /// A line that holds a key in base64 (32 bytes: 43 characters and one `=`, or none), as the
    /// app's Swift code writes a key's `Data` (`device-link create --encoding app`:
    /// `"nsec":"eP9G…\/KT8…="`, JSON's `\/` or `\u002f` for `/`), standard or URL-safe: alone
    /// on the line but for quotes, a list's bullet or number and a comma, or after a label that
    /// names a secret. A run that is one case of letters only is a word, not random bytes.
    /// `anywhere`: glued to other text too (`/nope/eP9G…=`, `renamed to eP9G…=`), for what an
    /// input quotes back or a record keeps (``holdsKeyOrHexRun(_:)``; a hostile trial).
    private static func isBase64Key(_ bytes: UnsafeRawBufferPointer, anywhere: Bool = false) -> Bool {
        func isBase64(_ byte: UInt8) -> Bool { isWordCharacter(byte) || byte == 0x2b || byte == 0x2f || byte == 0x2d }
        // JSON's escapes of `/` and `+` (`\/`, `\u002f`, `\u002b`): how long one is at `at`, or 0.
        func escape(at at: Int) -> Int {
            guard bytes[at] == 0x5c, at + 1 < bytes.count else { return 0 }
            if bytes[at + 1] == 0x2f { return 2 }
            guard at + 5 < bytes.count, bytes[at + 1] == 0x75, bytes[at + 2] == 0x30, bytes[at + 3] == 0x30, bytes[at + 4] == 0x32,
                  [0x62, 0x42, 0x66, 0x46].contains(bytes[at + 5]) else { return 0 }
            return 6
        }
        // What may stand before a key alone on its line: quotes, a list's bullet or number
        // (`- `, `1. `); found once a line, where the first other byte is.
        let aloneBeforeEnd = bytes.firstIndex { !([0x20, 0x09, 0x22, 0x27, 0x2d, 0x2a, 0x2e, 0x29].contains($0) || (0x30...0x39).contains($0)) } ?? bytes.count
        var index = 0
        while index < bytes.count {
            // Glued, a run may also begin after a path's `/` (`/nope/eP9G…=`), which base64 uses too.
            guard isBase64(bytes[index]) || escape(at: index) > 0,
                  index == 0 || !(isBase64(bytes[index - 1]) || bytes[index - 1] == 0x5c) || anywhere && bytes[index - 1] == 0x2f else { index += 1; continue }
            let runStart = index
            var end = index, characters = 0, last: UInt8 = 0, traits = Base64Traits()
            while end < bytes.count, characters <= 44 {
                let escaped = escape(at: end)
                if escaped > 0 { end += escaped; characters += 1; last = 0x2f; traits.add(0x2f); continue }
                guard isBase64(bytes[end]) else { break }
                let byte = bytes[end]
                traits.add(byte)
                characters += 1
                last = byte
                end += 1
            }
            var padded = false
            if end < bytes.count, bytes[end] == 0x3d, characters == 43 { end += 1; padded = true }
            let bounded = end == bytes.count || !(isBase64(bytes[end]) || bytes[end] == 0x3d)
            // The 43rd character of 32 bytes holds their last 4 bits and two zero bits.
            if characters == 43, bounded, base64LastOf32Bytes.contains(last), traits.lower && traits.upper || (traits.lower || traits.upper) && traits.notLetter {
                let before = UnsafeRawBufferPointer(rebasing: bytes[..<runStart]), after = UnsafeRawBufferPointer(rebasing: bytes[end...])
                let aloneAfter = after.allSatisfy { [0x20, 0x09, 0x0d, 0x22, 0x27, 0x2c, 0x3b].contains($0) }
                // Glued to other text, only a key as the app's Swift code writes `Data`, padded
                // with `=` (``Base64Traits/isKeyLike``). Unpadded, 43 characters glued are too
                // common a name: `sqlite-‹UUID›`, a folder a test made, was withheld from an
                // error a quarter of the time (CI). (Glued, only that: a path's part is no line
                // of its own, where a run alone is a key.)
                if anywhere ? padded && traits.isKeyLike : runStart <= aloneBeforeEnd && aloneAfter || (labelVerdict(before) ?? nearestWordNamesASecret(before)) { return true }
            }
            index = anywhere ? index + 1 : max(end, index + 1)
        }
        return false
    }

    /// The characters that can end 32 bytes in base64: their last 4 bits, then two zero bits.
    private static let base64LastOf32Bytes = Set("AEIMQUYcgkosw048".utf8)

    /// Text an input quotes back or a record keeps may hold a key glued to an id
    /// (`did:plc:josh#<64 hex>`, `x/<64 hex>`, `<64 hex>g`), where no file would: any 48 or more
    /// hex digits in a row count (``minimumHexRun``), whatever is around them, but a vault's or a household log's
    /// file name (`vaults/<household id>.vault`, a storage path, which the messages about a vault
    /// must show). For ``QuotedInput`` and ``RecordedText`` only: a file of public keys (an
    /// operations file, a report) is no key file.
    package static func holdsKeyOrHexRun(_ text: UnsafeRawBufferPointer) -> Bool {
        holdsKey(text) || holdsHexRun(text) || anyLine(text) { isBase64Key($0, anywhere: true) } || holdsPaddedBase64Key(text)
            // A path's part too (`nope/eP9G…=/x.json`): base64's own `/` runs on into the next part.
            || text.contains(0x2f) && text.split(separator: 0x2f).contains { isBase64Key(UnsafeRawBufferPointer(rebasing: $0), anywhere: true) }
    }

    /// ``holdsKeyOrHexRun(_:)`` of the text as it reads, and, when it holds what draws nothing
    /// (a control character, a line or paragraph separator, a zero-width space, a terminal's
    /// escape sequence `ESC [ … m`), of the text without it: 32 hex digits, U+2028 and 32 more
    /// were quoted back and recorded for good (hostile trials). For ``QuotedInput`` and
    /// ``RecordedText``, which keep it in protected memory only as long as they ask.
    package static func holdsKeyOrHexRun(readingThrough bytes: [UInt8]) -> Bool {
        if bytes.withUnsafeBytes({ holdsKeyOrHexRun($0) }) { return true }
        var visible = withoutWhatDrawsNothing(bytes)
        defer { visible.zeroize() }
        return visible.count != bytes.count && visible.withUnsafeBytes { holdsKeyOrHexRun($0) }
    }

    /// `bytes` (UTF-8) without controls, separators, invisible characters and the escape
    /// sequences a terminal reads (`ESC [` parameters and one final letter).
    private static func withoutWhatDrawsNothing(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 < 0x20 || $0 >= 0x7f }) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        // Decoded in place, no String made of it: the text may hold a secret.
        var input = bytes.makeIterator(), decoder = UTF8()
        var inEscape = false, afterEscape = false
        while case .scalarValue(let scalar) = decoder.decode(&input) {
            if afterEscape {
                afterEscape = false
                if scalar == "[" { inEscape = true; continue }
            }
            if inEscape {
                if (0x40...0x7e).contains(scalar.value) { inEscape = false }
                continue
            }
            if scalar == "\u{1b}" { afterEscape = true; continue }
            if !scalar.isControlOrInvisible { UTF8.encode(scalar) { out.append($0) } }
        }
        return out
    }

    /// A key in base64 padded as the app's Swift code writes `Data` (43 characters and `=`)
    /// glued to text on either side (`lost x‹key›=`, `key=‹key›=tail`): found from each `=`
    /// looking back, held to what 32 random bytes look like (both cases, a digit, one alphabet's
    /// marks, a last character that ends 32 bytes). A hostile trial recorded such a reason.
    private static func holdsPaddedBase64Key(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count > 43 else { return false }
        for index in 43..<text.count where text[index] == 0x3d {
            let run = text[(index - 43)..<index]
            guard let last = run.last, base64LastOf32Bytes.contains(last),
                  run.allSatisfy({ isWordCharacter($0) || $0 == 0x2b || $0 == 0x2f || $0 == 0x2d }) else { continue }
            var traits = Base64Traits()
            for byte in run { traits.add(byte) }
            if traits.isKeyLike { return true }
        }
        return false
    }

    /// What a run of base64 holds, to tell 32 random bytes from a name: the one rule of a key
    /// glued to other text, for the run read with JSON's escapes (``isBase64Key(_:anywhere:)``)
    /// and found back from its `=` (``holdsPaddedBase64Key(_:)``).
    private struct Base64Traits {
        var lower = false, upper = false, decimal = false, standardMark = false, urlMark = false
        /// A digit or a mark: neither case of letter.
        var notLetter = false

        mutating func add(_ byte: UInt8) {
            if (0x61...0x7a).contains(byte) { lower = true } else if (0x41...0x5a).contains(byte) { upper = true } else { notLetter = true }
            if (0x30...0x39).contains(byte) { decimal = true } else if byte == 0x2b || byte == 0x2f { standardMark = true } else if byte == 0x2d || byte == 0x5f { urlMark = true }
        }

        /// Both cases and a digit (all but one key in 1,400) and one alphabet's marks.
        var isKeyLike: Bool { lower && upper && decimal && !(standardMark && urlMark) }
    }

    /// Most of a key is a secret still: 63 of its 64 digits quoted back left one digit to
    /// guess (a hostile trial). 48 digits (192 bits) in a row count; ids people quote (UUIDs,
    /// 32 digits without their dashes; a commit's 40) stay shown.
    static let minimumHexRun = 48

    /// A run may be typed in groups too (`ipad d727 917d …`, `dev-f817-53fd-…`, `d727 - 917d`,
    /// `d727/917d`, `d727:917d-…`): groups of one width of two digits or more (the last may be
    /// shorter), split by separators of at most four marks or spaces each; hostile trials found
    /// such groups quoted back whole after a word, and recorded for good with separators that
    /// took turns (`:` and `-`) or four spaces. Two UUIDs side by side are groups of several
    /// widths, and 32 digits each. A vault's or a log's file name is the household id's 64 digits
    /// in one group; grouped, it is a key still.
    private static func holdsHexRun(_ text: UnsafeRawBufferPointer) -> Bool {
        func isMark(_ byte: UInt8) -> Bool {
            byte == 0x09 || byte == 0x5f || ((0x20...0x7e).contains(byte) && !isWordCharacter(byte))
        }
        var index = 0
        while index < text.count {
            guard isHexDigit(text[index]) else { index += 1; continue }
            var digits = 0, width = 0, groups = 0, end = index, restart: Int?
            while true {
                let groupStart = end
                while end < text.count, isHexDigit(text[end]) { end += 1 }
                let group = end - groupStart
                if width == 0 {
                    width = group
                } else if group > width {
                    // Another run begins with this group.
                    restart = groupStart
                    end = groupStart
                    break
                }
                digits += group
                groups += 1
                guard group == width, width >= 2 else { break }
                var next = end
                while next < text.count, next - end < 4, isMark(text[next]) { next += 1 }
                guard next > end, next < text.count, isHexDigit(text[next]) else { break }
                end = next
            }
            let named = groups == 1 && (names(".vault", at: end, in: text) || names(".log", at: end, in: text))
            if digits >= minimumHexRun, !named { return true }
            index = restart ?? max(end, index + 1)
        }
        return false
    }

    private static func names(_ suffix: StaticString, at index: Int, in text: UnsafeRawBufferPointer) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount)
        return index + bytes.count <= text.count && zip(text[index..<index + bytes.count], bytes).allSatisfy { $0 | 0x20 == $1 }
    }

    /// A file that is nothing but one JSON string of 64 hex digits, maybe after `0x`, maybe the
    /// one element of an array (`jq .vaultKey > file`, `jq '[.vaultKey]'` save a key so): a
    /// key, though a quoted hex among others is a public key.
    private static func isQuotedHexAlone(_ text: UnsafeRawBufferPointer) -> Bool {
        let blank: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d]
        var body = text[...]
        func trim() {
            while let first = body.first, blank.contains(first) { body = body.dropFirst() }
            while let last = body.last, blank.contains(last) { body = body.dropLast() }
        }
        trim()
        if body.first == 0x5b, body.last == 0x5d {
            body = body.dropFirst().dropLast()
            trim()
        }
        guard body.first == 0x22, body.last == 0x22, body.count >= 2 else { return false }
        body = body.dropFirst().dropLast()
        if body.count == 66, body.first == 0x30, body.dropFirst().first.map({ $0 | 0x20 == 0x78 }) == true { body = body.dropFirst(2) }
        return body.count == 64 && body.allSatisfy(isHexDigit)
    }

    /// 64 hex digits written over lines (`fold -w8`, groups of four four to a line, two halves):
    /// consecutive lines that hold nothing but hex digits (in groups or not), at most 32 each,
    /// all as many as the first (the last may have fewer), 64 digits in all, wherever the lines
    /// stand (under a label line too). Two halves of 32 are taken for a key: a file of two
    /// 32-digit ids is refused as one, which only asks for it to be moved first.
    private static func hexKeyAcrossLines(_ text: UnsafeRawBufferPointer) -> Bool {
        var digits = 0, width = 0, lines = 0, shortSeen = false
        var lineStart = 0
        for index in 0...text.count where index == text.count || text[index] == 0x0a {
            var line = UnsafeRawBufferPointer(rebasing: text[lineStart..<index])
            lineStart = index + 1
            while let last = line.last, last == 0x0d || last == 0x20 || last == 0x09 { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            while let first = line.first, first == 0x20 || first == 0x09 { line = UnsafeRawBufferPointer(rebasing: line.dropFirst()) }
            // A line of hex digits, in groups or not (`94f2 bde2 8112 547e`, a half of 32): its
            // digits count (a hostile trial: such lines under a label line were no key).
            let count = line.reduce(0) { $0 + (isHexDigit($1) ? 1 : 0) }
            let isGroup = (1...32).contains(count) && line.allSatisfy { isHexDigit($0) || $0 == 0x20 || $0 == 0x09 }
            if isGroup, lines > 0, !shortSeen, count <= width {
                shortSeen = count < width
                digits += count
                lines += 1
            } else {
                // The block before ends here: a key when it held 64 digits exactly.
                if lines > 1, digits == 64 { return true }
                (digits, width, lines, shortSeen) = isGroup ? (count, count, 1, false) : (0, 0, 0, false)
            }
            if index == text.count, lines > 1, digits == 64 { return true }
        }
        return false
    }

    /// A text saved as UTF-16 (Windows' Notepad, PowerShell's `>`) holds its ASCII characters
    /// with a zero byte beside each: read again without the zero bytes, in protected memory.
    private static func holdsKeyInUTF16(_ text: UnsafeRawBufferPointer) -> Bool {
        let zeros = text.reduce(0) { $0 + ($1 == 0 ? 1 : 0) }
        guard text.count >= 8, zeros * 3 >= text.count else { return false }
        // Without its byte order mark, which would otherwise stand on the first line.
        let mark = (text[0] == 0xff && text[1] == 0xfe) || (text[0] == 0xfe && text[1] == 0xff)
        let body = UnsafeRawBufferPointer(rebasing: text[(mark ? 2 : 0)...])
        let narrowed = try? SecretBytes(count: body.count - zeros) { target in
            var next = 0
            for byte in body where byte != 0 {
                target[next] = byte
                next += 1
            }
        }
        return narrowed?.withUnsafeBytes { holdsKeyAsWritten($0) } ?? false
    }

    /// Whether `text` holds an `nsec1…` or `ncryptsec1…` (or most of one), any case, grouped
    /// or not: a key wherever it stands, whatever surrounds it. Read in place, byte by byte,
    /// nothing copied (an output's first 64 KiB are read so before each replace).
    package static func holdsBech32Key(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < text.count {
            defer { index += 1 }
            guard text[index] | 0x20 == 0x6e else { continue }  // "n"
            guard let after = afterFolded(nsecPrefix, in: text, at: index) ?? afterFolded(ncryptsecPrefix, in: text, at: index) else { continue }
            // At least 20 of bech32's data characters: a key, or most of one (a typo does not
            // make it public).
            var data = 0, next = after
            while next < text.count, data < 20 {
                let byte = text[next]
                next += 1
                if isJoiner(byte) { continue }
                guard Bech32.isDataCharacter(byte | 0x20) else { break }
                data += 1
            }
            if data >= 20 { return true }
        }
        return false
    }

    /// ``holdsBech32Key(_:)`` of text as a person reads it: as written, or, past ASCII, in NFKC
    /// (`ｎｓｅｃ１…` in full-width letters is the key to whoever copies it: a trial). The one
    /// test of the renderer and of every report.
    package static func holdsBech32Key(reading text: String) -> Bool {
        if text.utf8.withContiguousStorageIfAvailable({ holdsBech32Key(UnsafeRawBufferPointer($0)) }) ?? Array(text.utf8).withUnsafeBytes(holdsBech32Key) {
            return true
        }
        guard text.utf8.contains(where: { $0 >= 0x80 }) else { return false }
        var folded = (try? Array(text.utf8).withUnsafeBytes(UnicodeNormalization.nfkc)) ?? []
        defer { folded.zeroize() }
        return folded.withUnsafeBytes(holdsBech32Key)
    }

    private static let nsecPrefix = Array("nsec1".utf8), ncryptsecPrefix = Array("ncryptsec1".utf8)

    /// Where `word` ends when it is spelled at `start`, any case, spaces and dashes between its
    /// letters allowed ("nsec 1qyz", "nsec-1qyz"); nil when it is not.
    private static func afterFolded(_ word: [UInt8], in text: UnsafeRawBufferPointer, at start: Int) -> Int? {
        var index = start, matched = 0
        while matched < word.count {
            guard index < text.count else { return nil }
            let byte = text[index]
            index += 1
            if matched > 0, isJoiner(byte) { continue }
            guard byte | 0x20 == word[matched] || (byte == word[matched]) else { return nil }
            matched += 1
        }
        return index
    }

    /// A words file's line ("3. abandon", "abandon ability"): text an error must not quote even
    /// when it is shorter than a whole key. Whole words only, and a number or two words at
    /// least: a single word ('kitchen', a device's name) is a name.
    package static func isListWordsOnly(_ text: UnsafeRawBufferPointer) -> Bool {
        var words = 0, numbered = false, other = false
        forEachToken(text) { token in
            if token.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x29 || $0 == 0x3a }) {
                numbered = numbered || token.contains { (0x30...0x39).contains($0) }
                return
            }
            if let whole = pack(token), listWords.contains(whole) { words += 1 } else { other = true }
        }
        return words > 0 && !other && (numbered || words >= 2)
    }

    /// The list words among `text`'s runs of ASCII letters, whatever joins them (`_`, `.`, `/`,
    /// digits) or stands among them (a part of a word), and how many runs there are: for a
    /// quote, where recovery words joined by `_` or ten of them and a fragment are a secret
    /// though no word reader would take them whole.
    package static func listWordRuns(_ text: UnsafeRawBufferPointer) -> (words: Int, runs: Int) {
        var words = 0, runs = 0, start: Int?
        for index in 0...text.count {
            if index < text.count, (0x61...0x7a).contains(text[index] | 0x20) {
                if start == nil { start = index }
                continue
            }
            guard let first = start else { continue }
            start = nil
            let run = UnsafeRawBufferPointer(rebasing: text[first..<index])
            if isListWord(run) {
                words += 1
                runs += 1
            } else if let joined = listWordsJoined(run) {
                words += joined
                runs += joined
            } else {
                runs += 1
            }
        }
        return (words, runs)
    }

    /// How many list words `run` is when it is nothing but list words written together
    /// (`abandonabilityable…`, a hostile trial's device name that was quoted back whole), each
    /// whole or as its first four letters; nil for any other text. The fewest such words are
    /// counted: a long word of prose that happens to split into two or three is not a phrase.
    private static func listWordsJoined(_ run: UnsafeRawBufferPointer) -> Int? {
        guard run.count > 8 else { return nil }
        // fewest[i]: the fewest list words that make the run's first i letters.
        var fewest = [Int](repeating: Int.max, count: run.count + 1)
        fewest[0] = 0
        for end in 1...run.count {
            for length in 3...8 where length <= end && fewest[end - length] != Int.max {
                if isListWord(UnsafeRawBufferPointer(rebasing: run[(end - length)..<end])) { fewest[end] = min(fewest[end], fewest[end - length] + 1) }
            }
        }
        return fewest[run.count] == Int.max ? nil : fewest[run.count]
    }

    /// Whether `text` is one list word, whole or its first four letters, quotes and a trailing
    /// comma or full stop aside: a word of recovery words typed one per argument.
    package static func isOneListWord(_ text: UnsafeRawBufferPointer) -> Bool {
        var word = trimmingQuotes(text)
        if word.last == 0x2e { word = UnsafeRawBufferPointer(rebasing: word.dropLast()) }
        return isListWord(word)
    }

    /// Calls `body` with each line of `text` (without its line break) until it says yes.
    private static func anyLine(_ text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var start = 0
        for index in 0...text.count where index == text.count || text[index] == 0x0a || text[index] == 0x0d {
            if index > start, body(UnsafeRawBufferPointer(rebasing: text[start..<index])) { return true }
            start = index + 1
        }
        return false
    }

    /// A line that holds a hex key: 64 hex digits (after an optional `0x`, pairs maybe split by
    /// one kind of `:`, `-` or a space) that stand alone on the line but for quotes, a list's dash
    /// and a comment, or whose nearest word before them names a secret (`VAULT_KEY=…`, `"vaultKey": "…"`, `vault key
    /// …`, `key = bytes.fromhex('…')`), never a public one (`"pubkey": …`, `householdId`).
    private static func isHexKey(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count {
            // A run begins at a word's start: the `ec` of `--sec` is no group of a key after it.
            guard isHexDigit(bytes[index]), index == 0 || !isWordCharacter(bytes[index - 1]) else { index += 1; continue }
            // A run of hex digits, pairs maybe split by ':', '-', '_' or one space (a key typed in
            // groups), an "0x" before it.
            let runStart = index
            if index + 1 < bytes.count, bytes[index] == 0x30, bytes[index + 1] | 0x20 == 0x78 { index += 2 }
            // One separator throughout, as a key typed in groups has: two ids side by side
            // (`<uuid> <uuid>`, 32 digits each) are not one key of 64. Never past 65 digits, so
            // that a run read again from its next group costs no more than a key's length.
            var end = index, digits = 0, separator: [UInt8]?, firstGroupEnd: Int?
            while end < bytes.count, digits <= 64 {
                if isHexDigit(bytes[end]) {
                    digits += 1
                    end += 1
                    continue
                }
                // Between groups: ':', '-', '_', a space, ',' or ', ' (a C array), each group
                // maybe after its own "0x" (`0x78ff 0x4617 …`, `{0x78, 0xff, …}`).
                guard digits % 2 == 0, digits > 0 else { break }
                var next = end, kind: [UInt8] = []
                if [0x3a, 0x2d, 0x5f, 0x20, 0x2c].contains(bytes[next]) { kind.append(bytes[next]); next += 1 }
                if kind == [0x2c], next < bytes.count, bytes[next] == 0x20 { kind.append(0x20); next += 1 }
                if next + 1 < bytes.count, bytes[next] == 0x30, bytes[next + 1] | 0x20 == 0x78 { kind += [0x30, 0x78]; next += 2 }
                guard !kind.isEmpty, next < bytes.count, isHexDigit(bytes[next]), separator == nil || separator == kind else { break }
                separator = kind
                if firstGroupEnd == nil { firstGroupEnd = end }
                end = next
            }
            let bounded = end == bytes.count || !isWordCharacter(bytes[end])
            // A vault's or a household log's file name (`<household id>.vault`) is no key, even
            // after a word that names one (`--key-file parent.nsec <id>.vault` on a command line).
            if digits == 64, bounded, names(".vault", at: end, in: bytes) || names(".log", at: end, in: bytes) {
                index = end
                continue
            }
            if digits == 64, bounded {
                let before = UnsafeRawBufferPointer(rebasing: bytes[..<runStart]), after = UnsafeRawBufferPointer(rebasing: bytes[end...])
                // Alone on its line as a key file holds it: no word before it or after it but a
                // comment (`# …`, `// …`), only quotes, a list's dash before it or a final `;`
                // after it (a dash after it is `sha256sum`'s name for standard input).
                // Quoted in JSON (`"…"`, a group's member keys) it is one public key among others.
                // A word before it ends the question at once (most lines of a long one have one).
                let alone = !before.contains(where: isWordCharacter) && !before.contains(0x22) && {
                    let code = UnsafeRawBufferPointer(rebasing: after.prefix(while: { $0 != 0x23 && $0 != 0x2f }))
                    return !code.contains(0x22) && !code.contains(where: isWordCharacter) && !code.contains(0x2c) && !code.contains(0x2d)
                }()
                if alone || (labelVerdict(before) ?? nearestWordNamesASecret(before)) { return true }
                index = end
                continue
            }
            // Not a key from here: read again from the next group (`ff <key>`), or past the run.
            if digits != 64, let firstGroupEnd { index = firstGroupEnd + 1; continue }
            index = max(end, index + 1)
        }
        return false
    }

    private static func isAssigning(_ byte: UInt8) -> Bool {
        switch byte {
        // space, tab, = : " ' ( [ ] { , > . (not `#` or `)`: `did:key:z6Mk…Sk#<64 hex>`, a member in
        // an operations file, is no label; `key #1: …` and `key (hex): …` are read whole by
        // ``labelVerdict(_:)``)
        case 0x20, 0x09, 0x3d, 0x3a, 0x22, 0x27, 0x28, 0x5b, 0x5d, 0x7b, 0x2c, 0x3e, 0x2e: true
        default: false
        }
    }

    /// What a line `LABEL: <hex>` or `LABEL = <hex>` says of its value, its label read whole
    /// from the line's start, whatever the words' order or language: public when a word names
    /// something public (`public key (hex): …`, `key id: …`), secret when one names a secret
    /// (`clave de la bóveda: …`, `Schlüssel: …`, `private key (hex): …`) or, bare, it names
    /// neither (`foo: …`); nil when the line is not of that form (JSON, a sentence) or its label
    /// is quoted, for the nearest word to decide (``nearestWordNamesASecret(_:)``).
    private static func labelVerdict(_ before: UnsafeRawBufferPointer) -> Bool? {
        // Markdown's emphasis and table cells around a label (`**Vault key:**`, `| key |`), and
        // an arrow or a dash after it (`Vault key (hex) → …`, `- Private key – …`).
        // A label is short: a long line of labelled values is read a value at a time, in time
        // that grows with the line, not with its square.
        guard before.count <= 256 else { return nil }
        let decoration: Set<UInt8> = [0x20, 0x09, 0x22, 0x27, 0x2a, 0x7c, 0x5f]
        var end = before.count
        while end > 0, decoration.contains(before[end - 1]) { end -= 1 }
        var marker = 0
        if end > 0, before[end - 1] == 0x3a || before[end - 1] == 0x3d { marker = 1 }
        if marker == 0, end < before.count, before[end..<before.count].contains(0x7c) { marker = -1 }  // a table cell: `| vault key | …`
        // … and a dash after a space (`Vault key - …`).
        for arrow in [[0xe2, 0x86, 0x92], [0xe2, 0x80, 0x93], [0xe2, 0x80, 0x94], [0x2d, 0x3e], [0x20, 0x2d]] as [[UInt8]] where marker == 0 {
            if end >= arrow.count, Array(before[(end - arrow.count)..<end]) == arrow { marker = arrow.count }
        }
        guard marker != 0 else { return nil }
        var label = before[..<(end - max(marker, 0))]
        while let first = label.first, decoration.contains(first) || first == 0x2d || first == 0x23 { label = label.dropFirst() }
        while let last = label.last, decoration.contains(last) { label = label.dropLast() }
        guard !label.contains(0x22), !label.contains(0x2f), !label.contains(0x7b), label.count <= 200 else { return nil }
        let words = label.split(whereSeparator: { !isLabelCharacter($0) || $0 == 0x5f }).map { String(decoding: $0, as: UTF8.self).lowercased() }
        // Whose key it is (`Vault key (household):`, `Key of the vault file:`) says nothing of
        // it; an identifier (`household id:`, `key id:`) is public.
        if words.contains(where: { publicWords.contains($0) || labelPublicWords.contains($0) }) || (words.last.map(labelPublicLastWords.contains) ?? false) {
            return false
        }
        if words.contains(where: { word in
            secretWords.contains(word) || labelSecretWords.contains(word) || labelSecretParts.contains { word.hasSuffix($0) }
                || (word.hasSuffix("key") && !word.hasSuffix("pubkey") && !word.hasSuffix("publickey"))  // `VAULTKEY=`, `householdkey =`
        }) {
            return true
        }
        // A bare label (`foo: …`, `nostr = …`, `hex: …`) that names nothing public is a key's, as
        // the rule says (docs/conventions.md); a quoted one is a JSON or YAML member (`"to":
        // …`, the suite's own reports), and a table's date (`| 2026-11-29 | …`) is no label:
        // for the nearest word to decide.
        let quoted = before[..<end].contains(0x22) || before[..<end].contains(0x27)
        guard !quoted, words.contains(where: { $0.contains(where: \.isLetter) }) else { return nil }
        // Each word as an identifier too (`householdId = …`), public by either rule (`household:`).
        let parts = label.split(whereSeparator: { !isLabelCharacter($0) && $0 != 0x5f }).flatMap(identifierWords)
        let lastIsAnIdentifiers = parts.last.map { labelPublicLastWords.contains($0) || publicLastWords.contains($0) } ?? false
        return !(parts.contains { publicWords.contains($0) || labelPublicWords.contains($0) } || lastIsAnIdentifiers)
    }

    /// Endings of compound words that name a secret (`Tresorschlüssel`, `Geheimschlüssel`).
    private static let labelSecretParts = ["schlüssel", "schluessel", "passwort", "kennwort"]

    /// Words that name a secret in the languages the sheets are printed in and their
    /// neighbours', for a label read whole (``labelVerdict(_:)``).
    private static let labelSecretWords: Set<String> = [
        "clave", "llave", "privada", "privado", "secreta", "secreto", "contraseña", "semilla",  // es
        "schlüssel", "privat", "privater", "geheim", "geheimer", "geheimnis", "passwort", "kennwort",  // de
        "clé", "cle", "privée", "privee", "secrète", "secrete", "passe",  // fr
        "chiave", "privata", "segreta", "chave", "senha",  // it, pt
    ]

    /// The last words that make a label an identifier's.
    private static let labelPublicLastWords: Set<String> = ["id", "ids", "identifier", "path", "commit", "object", "uuid", "etag"]

    /// A label's letters: ASCII ones and digits, and any byte of a UTF-8 letter beyond ASCII.
    private static func isLabelCharacter(_ byte: UInt8) -> Bool { isWordCharacter(byte) || byte >= 0x80 }

    /// Words that make a labelled value public whatever else the label says.
    private static let labelPublicWords: Set<String> = ["pública", "publica", "público", "publico", "öffentlich", "öffentlicher", "publique",
                                                        "pubblica", "pubblico", "identificador", "identifiant", "huella", "empreinte",
                                                        "package", "packages", "ref", "reference", "member", "members"]

    /// Whether the last word of `before` that says something of a value (not `bytes`,
    /// `fromhex`) names a secret.
    private static func nearestWordNamesASecret(_ before: UnsafeRawBufferPointer) -> Bool {
        var end = before.count
        var assigned = false
        while end > 0 {
            // Between a label and its value only what assigns, quotes or calls (`bytes.fromhex(`):
            // a `/` makes the digits part of a path (`vaults/<id>.vault`), not a labelled value.
            while end > 0, !isWordCharacter(before[end - 1]) {
                guard isAssigning(before[end - 1]) else { return false }
                if before[end - 1] == 0x3d || before[end - 1] == 0x3a { assigned = true }
                end -= 1
            }
            var start = end
            while start > 0, isWordCharacter(before[start - 1]) { start -= 1 }
            guard start < end else { return false }
            let word = Array(before[start..<end])
            if !transparentWords.contains(String(decoding: word, as: UTF8.self).lowercased()) { return namesASecret(word[...], assigned: assigned) }
            end = start
        }
        return false
    }

    /// Words between a label and its value that say nothing of it: `bytes.fromhex('…')`,
    /// `0x…`, `hex:…`.
    /// (`key is …`, `unsigned char key[] = {0x…}`)
    private static let transparentWords: Set<String> = ["bytes", "fromhex", "hex", "unhexlify", "x", "b", "0x", "string", "str", "is", "was", "char", "uint8_t"]

    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x7a).contains(byte | 0x20) || byte == 0x5f
    }

    /// A label before 64 hex digits that says they are secret (`VAULT_KEY`, `"vaultKey"`,
    /// `signing_key`, `password`, `sk`, `--sec`, `NOSTR_PRIVATE_KEY_HEX`) and not public
    /// (`pubkey`, `subkeyPublicKey`, `memberPubkeys`, `householdId`, `sha256`), as the suite's
    /// own JSON and reports label them. Read as whole words (`subkeyPublicKey` is subkey, public,
    /// key), so `keyboard`, `signing` or `identity` is not taken for `key`, `sig` or `id`, and a
    /// plural (`keys`, `memberKeys`) names a list of public keys. A word that names a role, not a
    /// key (`parent`, `master`, `token`), counts only when it is assigned (`PARENT=…`): `derive`
    /// lists devices (`master_bedroom_tv  <subkey>`) by their ids. A label that says neither
    /// (`member`, `group`) is not a key's: the suite's operations files name members so.
    private static func namesASecret(_ label: ArraySlice<UInt8>, assigned: Bool) -> Bool {
        let words = identifierWords(label)
        let secret = words.contains { word in
            secretWords.contains(word) || (assigned && roleWords.contains(word)) || secretParts.contains { word.contains($0) }
        }
        return secret && !words.contains(where: publicWords.contains) && !(words.last.map(publicLastWords.contains) ?? false)
    }

    /// The words of an identifier, split at `_`, `-`, `.` and where camel case starts one
    /// (`subkeyPublicKey` is subkey, public, key), in lower case.
    private static func identifierWords(_ label: some Collection<UInt8>) -> [String] {
        var words: [String] = [], word = ""
        for byte in label {
            let upper = (0x41...0x5a).contains(byte)
            if byte == 0x5f || byte == 0x2d || byte == 0x2e || (upper && !word.isEmpty && !(word.last!.isUppercase)) {
                if !word.isEmpty { words.append(word.lowercased()) }
                word = ""
                if byte == 0x5f || byte == 0x2d || byte == 0x2e { continue }
            }
            word.append(Character(UnicodeScalar(byte)))
        }
        if !word.isEmpty { words.append(word.lowercased()) }
        return words
    }

    // The words of a label, made once: an operations file holds thousands of labelled keys.
    private static let publicWords: Set<String> = ["pub", "pubkey", "pubkeys", "npub", "public", "hash", "sha", "sha256", "digest",
                                                   "fingerprint", "checksum", "sig", "signature", "etag"]
    private static let publicLastWords: Set<String> = ["id", "ids", "household", "vault", "path", "object", "file", "commit"]
    private static let secretWords: Set<String> = ["key", "secret", "seed", "priv", "private", "privkey", "seckey", "nsec", "sk", "sec",
                                                   "password", "passphrase", "passwd", "pass", "mnemonic"]
    private static let secretParts = ["secret", "passw", "privkey", "seckey", "nsec"]
    private static let roleWords: Set<String> = ["parent", "master", "token"]

    /// Calls `body` with each token of `text` (runs of bytes between separators).
    private static func forEachToken(_ text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start: Int?
        for index in 0...text.count {
            if index < text.count, !isSeparator(text[index]) {
                if start == nil { start = index }
                continue
            }
            if let first = start { body(UnsafeRawBufferPointer(rebasing: text[first..<index])) }
            start = nil
        }
    }

    /// What may stand between the letters of a bech32 key's prefix or data and still leave it a
    /// key to whoever reads it: a separator, or any ASCII mark (`nsec_1…`, `nsec.1…`, a path's
    /// `nsec1/…`; a hostile trial found those printed where `nsec-1…` was withheld).
    private static func isJoiner(_ byte: UInt8) -> Bool {
        if isSeparator(byte) { return true }
        guard (0x21...0x7e).contains(byte) else { return false }
        let isLetter = (0x61...0x7a).contains(byte | 0x20), isDigit = (0x30...0x39).contains(byte)
        return !isLetter && !isDigit
    }

    /// White space, a comma, and any byte of a non-ASCII character (a no-break space, a byte
    /// order mark): list words and keys are ASCII, so such a byte only ever separates them.
    private static func isSeparator(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c, 0x2c: true
        default: byte >= 0x80
        }
    }

    /// Twelve or more list words, read as the word readers read them: whole or by their first
    /// four letters or more, numbers ("1.", "12)", "#1", "01-") aside, and only on lines that
    /// hold nothing else but a label before them (`words:`, `Seed phrase:`,
    /// `MNEMONIC="…"`), a bullet (`*`, `-`) or a comment after them (`# backup`), so a sheet's
    /// title typed above a share ("Family key share 1 of 3") is passed over.
    /// Twelve list words in a row anywhere on a line count too, whatever else the line holds
    /// ("my words are legal winner … yellow, keep them safe"): no prose has twelve in a row.
    private static func allListWords(_ text: UnsafeRawBufferPointer) -> Bool {
        var words = 0, lineWords = 0, lineHasOther = false, inComment = false, inARow = 0, lineIsJSONMember = false
        var start: Int?
        for index in 0...text.count {
            let byte: UInt8? = index < text.count ? text[index] : nil
            if let byte, !isSeparator(byte) {
                if start == nil { start = index }
                continue
            }
            if let first = start, !inComment {
                start = nil
                var token = UnsafeRawBufferPointer(rebasing: text[first..<index])
                if token.first == 0x23 || (token.count >= 2 && token[0] == 0x2f && token[1] == 0x2f) {
                    // `#1` numbers a word; any other `#` or `//` begins a comment.
                    if token.count > 1, token.dropFirst().allSatisfy({ (0x30...0x39).contains($0) }) { token = UnsafeRawBufferPointer(rebasing: token[token.count...]) } else { inComment = true }
                }
                // A label before the words ends at its `:` or `=` (`phrase:`, `MNEMONIC="legal`),
                // and all that came before it on the line was the label too, list words
                // included (`Seed phrase:`). Digits before it (`2:winner`) number a word instead.
                if let mark = token.lastIndex(where: { $0 == 0x3a || $0 == 0x3d }),
                   mark == 0 || !token[..<mark].allSatisfy({ (0x30...0x39).contains($0) }) {
                    lineHasOther = false
                    lineWords = 0
                    // A JSON member's name (`"isPrimary":`): its value is one value, and one
                    // list word there (`false`, `"ocean"`) is a document's field, not a word of
                    // a phrase (a household of twelve devices read as twelve recovery words).
                    lineIsJSONMember = mark >= 2 && token[0] == 0x22 && token[mark - 1] == 0x22
                    token = UnsafeRawBufferPointer(rebasing: token[(mark + 1)...])
                }
                if !inComment {
                    for part in token.split(separator: 0x2d) where !part.isEmpty {
                        var word = trimmingQuotes(UnsafeRawBufferPointer(rebasing: part))
                        // A number joined to its word (`2:winner`, `3.thank`, `4)year`).
                        if let mark = word.firstIndex(where: { $0 == 0x3a || $0 == 0x2e || $0 == 0x29 }), mark > 0, mark + 1 < word.count,
                           word[..<mark].allSatisfy({ (0x30...0x39).contains($0) }) {
                            word = UnsafeRawBufferPointer(rebasing: word[(mark + 1)...])
                        }
                        if word.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x29 || $0 == 0x2a || $0 == 0x3e || $0 == 0x7c }) { continue }
                        // The sentence's end after the last word (`yellow.`).
                        if word.count > 1, [0x2e, 0x3b, 0x21, 0x3f].contains(word[word.count - 1]) { word = UnsafeRawBufferPointer(rebasing: word.dropLast()) }
                        if isListWord(word) {
                            lineWords += 1
                            inARow += 1
                            if inARow >= 12 { return true }
                        } else {
                            lineHasOther = true
                            inARow = 0
                        }
                    }
                }
            }
            start = nil
            if byte == nil || byte == 0x0a || byte == 0x0d {
                if !lineHasOther, !(lineIsJSONMember && lineWords < 2) { words += lineWords }
                inARow = 0
                lineWords = 0
                lineHasOther = false
                lineIsJSONMember = false
                inComment = false
            }
        }
        return words >= 12
    }

    /// A token without the quotes and brackets around it (`"abandon",` in JSON).
    private static func trimmingQuotes(_ token: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let around: (UInt8) -> Bool = { $0 == 0x22 || $0 == 0x27 || $0 == 0x5b || $0 == 0x5d || $0 == 0x7b || $0 == 0x7d }
        var start = 0, end = token.count
        while start < end, around(token[start]) { start += 1 }
        while end > start, around(token[end - 1]) || token[end - 1] == 0x2c { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: token[start..<end])
    }

    /// A list word whole, or as its first four letters (how sheets tell a person they may type
    /// it); not a longer word that only begins like one (`stream`, `endobj` in a PDF).
    private static func isListWord(_ token: UnsafeRawBufferPointer) -> Bool {
        guard let packed = pack(token) else { return false }
        return listWords.contains(packed) || (token.count == 4 && listPrefixes.contains(packed))
    }

    /// A token of at most eight ASCII letters, lower-cased, in one number: list words are
    /// three to eight letters, so a token is compared without copying it out of protected memory.
    private static func pack(_ token: UnsafeRawBufferPointer) -> UInt64? {
        guard (1...8).contains(token.count) else { return nil }
        var packed: UInt64 = UInt64(token.count)
        for byte in token {
            let lower = byte | 0x20
            guard (0x61...0x7a).contains(lower) else { return nil }
            packed = packed << 8 | UInt64(lower)
        }
        return packed
    }

    private static let listWords: Set<UInt64> = Set((BIP39.englishWords + SLIP39.words).compactMap { word in
        Array(word.utf8).withUnsafeBytes { pack($0) }
    })

    /// The first four letters of every list word (each list's words are told apart by them).
    private static let listPrefixes: Set<UInt64> = Set((BIP39.englishWords + SLIP39.words).compactMap { word in
        Array(word.utf8.prefix(4)).withUnsafeBytes { pack($0) }
    })

    private static func isHexDigit(_ char: UInt8) -> Bool {
        (0x30...0x39).contains(char) || (0x61...0x66).contains(char | 0x20)
    }
}
