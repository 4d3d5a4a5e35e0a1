/// Text read from an input that a message, a report or a refusal quotes back (a list file's
/// line, a value read from a file or a server): quoted whole when it is public, and never shown
/// when it holds a key, recovery words or a share in any spelling the suite reads
/// (``KeyText``), or is nothing but list words (a words file's line): then only where it was
/// and a fingerprint that tells two such lines apart are said (issue 44: a parent key given as
/// the devices file was printed whole in the refusal). Every quote of input goes through this
/// type, so a command written tomorrow cannot quote a secret by forgetting a check; escaping for
/// the terminal is still the renderer's (Diagnostics), over the whole message.
public struct QuotedInput: CustomStringConvertible, Sendable, Hashable {
    /// The text as it may be shown (at most ``maximumCharacters``, then "…"); nil when it is
    /// withheld.
    public let shown: String?
    /// When withheld and the text is a whole key, recovery words or a share: the first eight
    /// hex digits of its SHA-256, which tell two such lines apart without revealing either. Nil
    /// for anything less (a line of a few list words, one piece of a key): so short a text
    /// is found again from eight digits of its hash by trying every word or group.
    public let fingerprint: String?

    /// How much of a long input is quoted: a 5 MB line must not become a 5 MB error.
    public static let maximumCharacters = 100

    public init(_ text: String) {
        var bytes = Array(text.utf8)
        defer { bytes.zeroize() }
        // Recovery words however joined (`_`, `.`): twelve or more are a whole phrase; six or
        // more making half the text, most of one (ten words and a fragment of the next).
        let runs = bytes.withUnsafeBytes { KeyText.listWordRuns($0) }
        let mostlyWords = runs.words * 2 >= runs.runs
        // A key this run holds, or a piece of one, in any spelling (``HeldSecrets``): a devices
        // file's line holding most of the parent's nsec was quoted back as an unknown id.
        // As it reads too, without what draws nothing: a key split by a line break in a file's
        // name was quoted whole (a trial: 32 hex digits, a line break, 32 more).
        let whole = (runs.words >= 12 && mostlyWords) || KeyText.holdsKeyOrHexRun(readingThrough: bytes) || KeyText.holdsBech32Key(reading: text)
        let held = HeldSecrets.match(in: bytes)
        if whole || held != nil || (runs.words >= 6 && mostlyWords) || bytes.withUnsafeBytes({ KeyText.isListWordsOnly($0) }) {
            shown = nil
            // A piece of a held key is 48 bits or so: its hash would confirm a guess (a trial).
            fingerprint = whole && held != .piece ? Hex.encode(Array(SHA256.hash(bytes).prefix(4))) : nil
        } else {
            shown = text.count > Self.maximumCharacters ? String(text.prefix(Self.maximumCharacters)) + "…" : text
            fingerprint = nil
        }
    }

    /// Whether it is withheld as a secret.
    public var isWithheld: Bool { shown == nil }

    /// `'text'`, or what stands for a withheld one.
    public var description: String {
        if let shown { return "'\(shown)'" }
        guard let fingerprint else { return "(not shown: it reads as part of a key, recovery words or a share)" }
        return "(not shown: it reads as a key, recovery words or a share; SHA-256 \(fingerprint)…)"
    }

    /// As a JSON report gives it: the text, or what stands for it.
    public var reported: String { shown ?? description }
}

extension QuotedInput: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) { self.init(text) }
}

/// The last door before a message leaves the tool (issue 44): whatever a message quotes between
/// single quotes that reads as a secret (``QuotedInput``), and any word in it that is an
/// `nsec1…` or `ncryptsec1…`, is replaced by what stands for it. For the messages no factory
/// wrote: swift-argument-parser's, which quote the argument whole ("unexpected argument
/// 'nsec1…'"), and any error that quotes a value without ``QuotedInput``.
public enum SecretRedaction {
    public static func redacting(_ message: String) -> String {
        guard message.utf8.contains(0x27) || message.utf8.count >= 20 else { return message }
        // Quoted segments: what stands between two single quotes. An apostrophe between two
        // letters ("the family's key") quotes nothing.
        let characters = Array(message)
        var pieces: [(text: String, quoted: Bool)] = [("", false)]
        var inQuote = false
        for (index, character) in characters.enumerated() {
            let apostrophe = character == "'" && index > 0 && index + 1 < characters.count
                && characters[index - 1].isLetter && characters[index + 1].isLetter
            if character == "'", !apostrophe {
                inQuote.toggle()
                pieces.append(("", inQuote))
            } else {
                pieces[pieces.count - 1].text.append(character)
            }
        }
        if inQuote { pieces[pieces.count - 1] = ("'" + pieces[pieces.count - 1].text, false) }
        // Each quote alone, and all of them together: argument-parser quotes each word of a
        // secret typed on the command line apart ("unexpected arguments: 'abandon', 'ability',
        // …", "'nsec', '1vl0', …").
        let quotes = pieces.filter(\.quoted).map(\.text)
        // Together they must hold a whole key, twelve words or a share: two names that are list
        // words (`--device garage --device office`) are shown as they were typed.
        var joinedBytes = Array(quotes.joined(separator: " ").utf8)
        defer { joinedBytes.zeroize() }
        let together = quotes.count > 1 && joinedBytes.withUnsafeBytes { KeyText.holdsKey($0) }
        var joined = ""
        for piece in pieces {
            guard piece.quoted else { joined += piece.text; continue }
            let input = QuotedInput(piece.text)
            if together {
                // Pieces that only together hold a secret: none gets a fingerprint, and each is
                // said briefly (a key in sixteen groups is sixteen of them).
                joined += "(not shown)"
            } else if input.isWithheld {
                joined += input.description
            } else if !piece.text.hasPrefix("-"), commandLineWithSecret.contains(where: { !$0.isEmpty && piece.text.contains($0) }) {
                // A piece of what the command line holds; the error's hint says why. An option's
                // spelling is none, as ``commandLineWithSecret`` leaves options out (a trial:
                // "Did you mean (not shown)?" for '--vault', which holds the subcommand `vault`).
                joined += "(not shown)"
            } else {
                joined += "'\(piece.text)'"
            }
        }
        // What another library quotes between double quotes (libpq's `could not translate host
        // name "…"`, `definition of service "…"`): a whole secret there is withheld too. Only a
        // whole one: a few list words there are ordinary text ("family phone", a reason).
        if joined.utf8.contains(0x22) {
            var rebuilt = "", quote = "", inside = false
            for character in joined {
                guard character == "\"" else {
                    if inside { quote.append(character) } else { rebuilt.append(character) }
                    continue
                }
                if inside {
                    let input = QuotedInput(quote)
                    rebuilt += input.fingerprint != nil ? input.description : "\"\(quote)\""
                    quote = ""
                }
                inside.toggle()
            }
            // A quote left open is no quote: as it was.
            joined = inside ? rebuilt + "\"" + quote : rebuilt
        }
        // Words that are a bech32 key, quoted or not.
        let words = joined.split(separator: " ", omittingEmptySubsequences: false)
        if words.contains(where: { KeyText.holdsBech32Key(reading: String($0)) }) {
            joined = words.map { KeyText.holdsBech32Key(reading: String($0)) ? QuotedInput(String($0)).description : String($0) }.joined(separator: " ")
        }
        return joined
    }

    /// This run's arguments when, alone or any run of them side by side, they hold a secret
    /// (a key typed in groups, one group taken as a path and the rest "unexpected"); else none.
    /// Any quote of one of them is then withheld, wherever a message quotes it: the pieces of a
    /// key are each public-looking, and no message can tell which piece it quotes.
    public static var commandLineHoldsSecret: Bool { !commandLineWithSecret.isEmpty }

    /// Options are left out (`--json`, `--log-format`): a piece of a key does not begin with a
    /// dash, and an option that holds a whole key is withheld by itself.
    static let commandLineWithSecret: [String] = {
        let arguments = Array(CommandLine.arguments.dropFirst())
        return argumentsHoldSecret(arguments) ? arguments.filter { !$0.hasPrefix("-") } : []
    }()

    /// Whether any run of two to 64 side-by-side `arguments` (a key's characters, one per
    /// argument at worst) holds a key, words or a share (``KeyText``), joined by spaces; or
    /// four side by side are list words (recovery words typed after a first one taken as a
    /// path: eleven of twelve would leave one to guess among 2,048; three device names typed
    /// for one `--device` are not taken for words).
    package static func argumentsHoldSecret(_ arguments: [String]) -> Bool {
        let considered = arguments.prefix(maximumArgumentsSearched)
        var listWordsInARow = 0
        for argument in considered {
            let isWord = Array(argument.utf8).withUnsafeBytes { KeyText.isOneListWord($0) }
            listWordsInARow = isWord ? listWordsInARow + 1 : 0
            if listWordsInARow >= 4 { return true }
        }
        for start in considered.indices {
            var text: [UInt8] = []
            text.reserveCapacity(considered[start...].prefix(64).reduce(0) { $0 + $1.utf8.count + 1 })
            defer { text.zeroize() }
            // Two arguments at least: one alone that reads as a key is withheld by itself, and
            // a 64-digit id given alone (`--household-id <hex>`) is not taken for one.
            for (count, argument) in considered[start...].prefix(64).enumerated() {
                if !text.isEmpty { text.append(0x20) }
                text.append(contentsOf: argument.utf8)
                if count > 0, text.withUnsafeBytes({ KeyText.holdsKey($0) }) { return true }
            }
        }
        return false
    }

    /// A bound on the search above (64 runs of each start), for a command line of thousands
    /// of arguments (`xargs`).
    static let maximumArgumentsSearched = 256
}
