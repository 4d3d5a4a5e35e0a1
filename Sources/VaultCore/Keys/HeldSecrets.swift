import Synchronization

/// The secrets this run holds (a key read from a file or a command, a vault or secrets key
/// derived from it), known by their SHA-256 so that no text the suite records or names can be
/// one of them (issue 44: a parent key given as the public key of a grant was signed into the
/// household log). 64 hex digits look the same whether they are a public or a secret key; only
/// a run that holds the secret can tell, and it must.
package enum HeldSecrets {
    /// A run holds a few keys; a fleet run derives one vault key a household, and of those
    /// the last ``capacity`` are kept. The keys a person gave (read from a file, a command or a
    /// prompt) are pinned: however many are derived after them, they are never forgotten.
    static let capacity = 64

    private static let fingerprints = Mutex<HeldKeys>(HeldKeys())

    /// The keys held, by SHA-256, each with a quick hash (``quickHash(_:kind:)``) asked first:
    /// the text a check reads holds thousands of windows of 64 hex digits or 43 base64
    /// characters, each read as a key (a check of a household of 5,000 group members).
    private struct HeldKeys {
        var pinned: [[UInt8]] = [], fields: Set<[UInt8]> = [], recent: [[UInt8]] = []
        /// The first household's fields (``mayBeFirstHousehold(_:)``), beside the places of
        /// `fields`: a later household's are held as if the first had none (a trial: a first
        /// household of 56 fields or more left none for the next).
        var firstHouseholdFields: Set<[UInt8]> = []
        /// The quick hashes of `pinned`, `fields` and `firstHouseholdFields`, which are never
        /// forgotten; and of `recent`, in its order.
        var quick: Set<Int> = [], recentQuick: [Int] = []

        mutating func removeRecent(_ fingerprint: [UInt8]) {
            guard let index = recent.firstIndex(of: fingerprint) else { return }
            recent.remove(at: index)
            recentQuick.remove(at: index)
        }

        func mayHold(_ quickHash: Int) -> Bool { quick.contains(quickHash) || recentQuick.contains(quickHash) }
    }

    /// The fingerprints of every piece of a given key as it is written: ``hexPiece`` digits of
    /// its hex in a row, and ``bech32Piece`` characters of its `nsec1…` after the prefix. Most of a key is a
    /// secret still: a key command that said 50 of an nsec's 52 characters on its standard error
    /// was relayed, and the key found from them in eleven tries (a hostile trial). Only the keys
    /// a person gave (pinned, at most ``capacity``) are cut in pieces.
    private static let pieces = Mutex<HeldPieces>(HeldPieces())

    /// Each piece's fingerprint, and a quick hash of it (SipHash, seeded anew by each process)
    /// asked first: a window of text is hashed with SHA-256 only when its quick hash is one of
    /// a piece's (a check of a household of 5,000 group members hashed 750,000 windows, 2.6 s).
    private struct HeldPieces {
        var fingerprints: Set<PieceFingerprint> = []
        var quick: Set<Int> = []

        var isEmpty: Bool { fingerprints.isEmpty }

        mutating func insert(_ piece: ArraySlice<UInt8>, kind: UInt8) {
            fingerprints.insert(pieceFingerprint(piece, kind: kind))
            quick.insert(quickHash(piece, kind: kind))
        }

        func contains(_ piece: ArraySlice<UInt8>, kind: UInt8) -> Bool {
            quick.contains(quickHash(piece, kind: kind)) && fingerprints.contains(pieceFingerprint(piece, kind: kind))
        }

        mutating func formUnion(_ other: HeldPieces) {
            fingerprints.formUnion(other.fingerprints)
            quick.formUnion(other.quick)
        }
    }

    /// A quick, process-seeded hash of `bytes` and their kind: a filter before SHA-256.
    private static func quickHash(_ bytes: some Collection<UInt8>, kind: UInt8) -> Int {
        var hasher = Hasher()
        hasher.combine(kind)
        if bytes.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in bytes { hasher.combine(byte) }
        }
        return hasher.finalize()
    }

    /// 48 bits of hex, 50 of bech32: no public text of the run holds as many of a held key's
    /// by chance.
    static let hexPiece = 12, bech32Piece = 10
    /// Recovery words in a row (44 bits), as a hex piece is 48.
    static let wordPiece = 4
    /// 60 bits of base64: the app's device link carries the key so (`JSONEncoder`'s `Data`).
    static let base64Piece = 10
    /// No text shorter than this holds a piece (``wordPiece`` words are twelve letters at least).
    package static let shortestPiece = min(hexPiece, bech32Piece, base64Piece)

    /// Whether a later household's secret field would be kept with its pieces, in the places
    /// ``fieldCapacity`` gives (``registerVaultField(_:beyondCapacity:)``).
    package static var mayHoldVaultSecrets: Bool { fingerprints.withLock { $0.fields.count < fieldCapacity } }
    /// A vault's secret fields have places of their own, so that a fleet run's thousands of
    /// vaults never take those of the keys people give: its first vaults' are held. Each is a
    /// few kilobytes of pieces, cut when first asked, which a fleet run of small vaults would
    /// pay for thousands.
    static let fieldCapacity = 56
    /// The first household a run opens has places of its own for every field, up to a
    /// household of 1,023 children (a review: one of more than 50 held only its first
    /// children's keys), bounding what a hostile vault of many children makes a run hold.
    static let firstHouseholdCapacity = 1_024

    /// The first household whose field a run opened (``claimFirstHousehold(_:)``).
    private static let firstHousehold = Mutex<HouseholdID?>(nil)

    /// Whether `household` is, or may become, the first a run opened a field of: a single
    /// vault's command, a merge of two copies; not a fleet's later ones.
    package static func mayBeFirstHousehold(_ household: HouseholdID) -> Bool {
        firstHousehold.withLock { $0 == nil || $0 == household }
    }

    /// Makes `household` the first, once a field of it opened (a document of another key's
    /// household given to `seal` claims nothing).
    package static func claimFirstHousehold(_ household: HouseholdID) {
        firstHousehold.withLock { if $0 == nil { $0 = household } }
    }

    /// The households whose vault's secret fields this run holds: a log writer that has not
    /// opened the vault opens it for them (``HouseholdLog/appending(_:household:vault:revision:signer:at:auxiliaryRandom:)``).
    /// As bounded as the fields: a fleet run's millions of households are not remembered.
    private static let householdsHeld = Mutex<Set<HouseholdID>>([])
    package static func holdsSecretFields(of household: HouseholdID) -> Bool { householdsHeld.withLock { $0.contains(household) } }
    package static func heldSecretFields(of household: HouseholdID) {
        householdsHeld.withLock { if $0.count < fieldCapacity { $0.insert(household) } }
    }

    /// Remembers a secret field of a vault the run opened (a child's key, the wrap key) as a
    /// key a person gave is, with its pieces, in the places kept for fields (``fieldCapacity``).
    /// `beyondCapacity`: a field of the first household (``mayBeFirstHousehold(_:)``), held in
    /// places of its own.
    package static func registerVaultField(_ secret: UnsafeRawBufferPointer, beyondCapacity: Bool = false) {
        guard secret.count == 32 else { return }
        let fingerprint = SHA256.hash(secret), quick = quickHash(secret, kind: 0x4b)
        let isNew = fingerprints.withLock { held -> Bool in
            guard !held.pinned.contains(fingerprint), !held.fields.contains(fingerprint), !held.firstHouseholdFields.contains(fingerprint),
                  beyondCapacity ? held.firstHouseholdFields.count < firstHouseholdCapacity : held.fields.count < fieldCapacity else { return false }
            held.removeRecent(fingerprint)
            if beyondCapacity { held.firstHouseholdFields.insert(fingerprint) } else { held.fields.insert(fingerprint) }
            held.quick.insert(quick)
            return true
        }
        if isNew, let copy = try? SecretBytes(copying: secret) {
            registerWhenAsked { copy.withUnsafeBytes { registerPieces($0) } }
        }
    }

    /// Remembers a 32-byte secret; `pinned` for one a person gave.
    package static func register(_ secret: UnsafeRawBufferPointer, pinned: Bool = false) {
        guard secret.count == 32 else { return }
        let fingerprint = SHA256.hash(secret), quick = quickHash(secret, kind: 0x4b)
        let isNew = fingerprints.withLock { held -> Bool in
            guard !held.pinned.contains(fingerprint) else { return false }
            if pinned {
                // Past the places for pinned keys, a key stays among the recent ones.
                guard held.pinned.count < capacity else { return false }
                held.removeRecent(fingerprint)
                held.pinned.append(fingerprint)
                held.quick.insert(quick)
                return true
            }
            guard !held.recent.contains(fingerprint) else { return false }
            if held.recent.count == capacity {
                held.recent.removeFirst()
                held.recentQuick.removeFirst()
            }
            held.recent.append(fingerprint)
            held.recentQuick.append(quick)
            return false
        }
        // Its pieces are cut when text is first asked about (``match(in:)``), from a copy in
        // protected memory: most runs never ask, and the pieces (now with its recovery words)
        // are work at every start that reads a key (issue 48 counts each start).
        if pinned, isNew, let copy = try? SecretBytes(copying: secret) {
            registerWhenAsked { copy.withUnsafeBytes { registerPieces($0) } }
        }
    }

    /// Fingerprints each piece of the key's hex (lower case) and of its nsec's data characters.
    private static func registerPieces(_ secret: UnsafeRawBufferPointer) {
        var hex = [UInt8](repeating: 0, count: 64), raw = Array(secret)
        hex.withUnsafeMutableBytes { Hex.encode(secret, into: $0) }
        var nsec = NIP19.encode(prefix: NIP19.secretKeyPrefix, key: raw)
        defer { hex.zeroize(); raw.zeroize(); nsec.zeroize() }
        var found = HeldPieces()
        for start in 0...(hex.count - hexPiece) { found.insert(hex[start..<(start + hexPiece)], kind: 0x68) }
        // Every character after `nsec1`, its checksum's too (a trial: pieces reaching into the
        // checksum were relayed).
        let data = nsec[5...]
        for start in data.startIndex...(data.endIndex - bech32Piece) { found.insert(data[start..<(start + bech32Piece)], kind: 0x62) }
        // Its base64 (either alphabet: the pieces are of the characters' values), padding aside,
        // at each of the three places in a group of three bytes the key may start (a hostile
        // review: behind one or two other bytes, every character of it differs): of each, the
        // characters made of the key's bits alone.
        for shift in 0..<3 {
            var shifted = [UInt8](repeating: 0, count: shift) + raw
            var values = base64Values(of: shifted)
            defer { shifted.zeroize(); values.zeroize() }
            let first = (shift * 8 + 5) / 6, last = (shift + 32) * 8 / 6  // characters wholly of the key
            for start in first...(last - base64Piece) { found.insert(values[start..<(start + base64Piece)], kind: 0x36) }
        }
        // Its recovery words (BIP-39, as a sheet prints them, and as typed row by row across
        // the sheet's grid): a trial printed the key's 24 words on every share sheet, split
        // over its label, a holder's name and the app's name, each under the twelve words that
        // read as words alone. Each run of ``wordPiece`` words, by their list indexes.
        if let entropy = try? SecretBytes(count: 32, initialize: { $0.copyMemory(from: secret) }), var printed = try? BIP39.indexes(for: entropy) {
            var byRows = WordOrder.printedPlaces(typedAcrossRows: printed.count).map { printed[$0] }
            defer { for i in printed.indices { printed[i] = 0; byRows[i] = 0 } }
            for order in [printed, byRows] {
                var bytes = Self.wordBytes(order)
                defer { bytes.zeroize() }
                for start in stride(from: 0, through: bytes.count - 2 * wordPiece, by: 2) {
                    found.insert(bytes[start..<(start + 2 * wordPiece)], kind: 0x77)
                }
            }
        }
        pieces.withLock { $0.formUnion(found) }
    }

    /// Word indexes as two bytes each, the form a run of words is fingerprinted in.
    private static func wordBytes(_ indexes: [Int]) -> [UInt8] { indexes.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } }

    /// A piece's SHA-256 as four words: a set of them hashes 32 bytes in four steps, where a set
    /// of byte arrays hashed each byte (a third of a small `open`'s own work, callgrind).
    private struct PieceFingerprint: Hashable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        init(_ digest: [UInt8]) {
            words = digest.withUnsafeBytes { ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                                              $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
        }

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.words == rhs.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    private static func pieceFingerprint(_ piece: ArraySlice<UInt8>, kind: UInt8) -> PieceFingerprint {
        var bytes = [kind] + piece
        var digest = SHA256.hash(bytes)
        defer { bytes.zeroize(); digest.zeroize() }
        return PieceFingerprint(digest)
    }

    /// Work on keys a person gave, run the first time text is asked about (``match(in:)``): the
    /// vault and secrets keys a parent key gives, which are as secret as it, and every pinned
    /// key's pieces. Most runs never ask, and deriving both keys and cutting them in pieces at
    /// every start made a small `open` 7% slower (a debug build, hyperfine; issue 48 counts
    /// each start).
    private static let deferred = Mutex<[@Sendable () -> Void]>([])

    /// Runs `derive` before the first question about text (it registers what it derives).
    package static func registerWhenAsked(_ derive: @escaping @Sendable () -> Void) {
        deferred.withLock { $0.append(derive) }
    }

    /// Held while the deferred work runs: another thread asking about text meanwhile (a batch's
    /// workers) waits until it is done, and never reads the pieces half cut (a unit test saw a
    /// held key's words missed while another test's question was running the work).
    private static let deriving = Mutex<Void>(())

    /// Until none is left: a derivation registers the keys it gives, whose pieces are deferred
    /// work in turn.
    private static func deriveDeferred() {
        deriving.withLock { _ in
            while true {
                let pending = deferred.withLock { pending in
                    defer { pending = [] }
                    return pending
                }
                guard !pending.isEmpty else { return }
                for derive in pending { derive() }
            }
        }
    }

    /// Whether `secret` (32 bytes, a key read back from text) is one this run holds.
    private static func holds(_ secret: UnsafeRawBufferPointer) -> Bool {
        guard secret.count == 32 else { return false }
        let quick = quickHash(secret, kind: 0x4b)
        guard fingerprints.withLock({ $0.mayHold(quick) }) else { return false }
        let fingerprint = SHA256.hash(secret)
        return fingerprints.withLock { $0.pinned.contains(fingerprint) || $0.fields.contains(fingerprint) || $0.firstHouseholdFields.contains(fingerprint) || $0.recent.contains(fingerprint) }
    }

    private static var isEmpty: Bool { fingerprints.withLock { $0.pinned.isEmpty && $0.fields.isEmpty && $0.firstHouseholdFields.isEmpty && $0.recent.isEmpty } }

    /// Whether `text` holds a secret this run holds in any way it is written: as hex (any case,
    /// `0x`, split by spaces, colons, dashes, lines or invisible characters, full-width digits),
    /// as bech32 (an `nsec1…` with or without its prefix, any case or grouping) or as base64
    /// (either alphabet, as the app's device link carries it). The text is read in NFKC, and
    /// only its hex digits (or only its bech32, or base64, characters) are kept, in order:
    /// whatever stands between the pieces of a key, they are found.
    package static func appear(in text: some Collection<UInt8>) -> Bool { match(in: text) != nil }

    /// What of a key this run holds `text` holds: a whole one, or only a piece of one (so few
    /// bits that a hash of the text would confirm a guess), or nil.
    package enum Match { case key, piece }

    /// ``appear(in:)``, saying which.
    package static func match(in text: some Collection<UInt8>) -> Match? {
        deriveDeferred()
        guard !isEmpty else { return nil }
        var normalised = Array(text)
        defer { normalised.zeroize() }
        // NFKC leaves ASCII as it is: asked only of other text (most names, every key and id).
        if normalised.contains(where: { $0 >= 0x80 }), let folded = try? normalised.withUnsafeBytes(UnicodeNormalization.nfkc) {
            normalised.zeroize()
            normalised = folded
        }
        if hexAppears(in: normalised) || bech32Appears(in: normalised) || base64Appears(in: normalised) { return .key }
        return pieceAppears(in: normalised) ? .piece : nil
    }

    /// Whether ``hexPiece`` of the text's hex digits in a row (lower-cased, whatever stands
    /// between them), or ``bech32Piece`` of its bech32 characters, are a piece of a given key.
    private static func pieceAppears(in text: [UInt8]) -> Bool {
        let held = pieces.withLock { $0 }
        guard !held.isEmpty else { return false }
        var hex: [UInt8] = [], bech32: [UInt8] = [], base64: [UInt8] = []
        defer { hex.zeroize(); bech32.zeroize(); base64.zeroize() }
        for byte in text {
            let lower = (0x41...0x5a).contains(byte) ? byte | 0x20 : byte
            if Hex.value(lower) != nil { hex.append(lower) }
            if lower < 128, Bech32.reverseCharset[Int(lower)] >= 0 { bech32.append(lower) }
            if let value = base64Value(byte) { base64.append(value) }
        }
        func holdsPiece(_ characters: [UInt8], _ length: Int, kind: UInt8) -> Bool {
            guard characters.count >= length else { return false }
            return (0...(characters.count - length)).contains { held.contains(characters[$0..<($0 + length)], kind: kind) }
        }
        return holdsPiece(hex, hexPiece, kind: 0x68) || holdsPiece(bech32, bech32Piece, kind: 0x62) || holdsPiece(base64, base64Piece, kind: 0x36)
            || wordsAppear(in: text, held: held)
    }

    /// Whether ``wordPiece`` list words in a row, whatever stands between them (spaces, other
    /// words, numbers, lines), are a run of a held key's recovery words: words are runs of
    /// ASCII letters, a capital after a small letter beginning a new one (`AbandonAbility`),
    /// each a whole list word or its first four letters.
    private static func wordsAppear(in text: [UInt8], held: HeldPieces) -> Bool {
        var indexes: [Int] = [], token: [UInt8] = []
        defer { token.zeroize(); for i in indexes.indices { indexes[i] = 0 } }
        func endWord() {
            if !token.isEmpty, let index = BIP39.index(ofWord: token) { indexes.append(index) }
            token.zeroize()
            token.removeAll(keepingCapacity: true)
        }
        var afterSmallLetter = false
        for byte in text {
            let isUpper = (0x41...0x5a).contains(byte), isLower = (0x61...0x7a).contains(byte)
            defer { afterSmallLetter = isLower }
            guard isUpper || isLower else { endWord(); continue }
            if isUpper, afterSmallLetter { endWord() }
            token.append(byte | 0x20)
        }
        endWord()
        guard indexes.count >= wordPiece else { return false }
        var bytes = wordBytes(indexes)
        defer { bytes.zeroize() }
        return stride(from: 0, through: bytes.count - 2 * wordPiece, by: 2).contains { held.contains(bytes[$0..<($0 + 2 * wordPiece)], kind: 0x77) }
    }

    /// A base64 character's value, in the standard alphabet or the URL's (`-` and `_`).
    private static func base64Value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5a: byte - 0x41
        case 0x61...0x7a: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2b, 0x2d: 62
        case 0x2f, 0x5f: 63
        default: nil
        }
    }

    /// The 43 values of 32 bytes' base64, padding aside.
    private static func base64Values(of bytes: [UInt8]) -> [UInt8] {
        var values: [UInt8] = []
        var accumulator: UInt32 = 0, bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                values.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)) & 0x3f)
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { values.append(UInt8(truncatingIfNeeded: accumulator << UInt32(6 - bits)) & 0x3f) }
        return values
    }

    /// Every 43 base64 characters in a row of the text's base64 characters (either alphabet,
    /// whatever stands between them): the 256 bits of a key as `JSONEncoder` writes `Data`.
    private static func base64Appears(in text: [UInt8]) -> Bool {
        var values: [UInt8] = []
        values.reserveCapacity(text.count)
        defer { values.zeroize() }
        for byte in text { if let value = base64Value(byte) { values.append(value) } }
        return windowsHoldKey(values, bitsEach: 6)
    }

    /// Whether a run of `values` (`bitsEach` bits each) read from any place holds a key this
    /// run holds in its first 256 bits: bech32's words or base64's characters.
    private static func windowsHoldKey(_ values: [UInt8], bitsEach: Int) -> Bool {
        let length = (256 + bitsEach - 1) / bitsEach
        guard values.count >= length else { return false }
        var decoded = [UInt8](repeating: 0, count: 32)
        defer { decoded.zeroize() }
        for start in 0...(values.count - length) {
            var accumulator: UInt32 = 0, bits = 0, index = 0
            for value in values[start..<(start + length)] {
                accumulator = accumulator << UInt32(bitsEach) | UInt32(value)
                bits += bitsEach
                if bits >= 8, index < 32 {
                    bits -= 8
                    decoded[index] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    index += 1
                }
                accumulator &= (1 << UInt32(bits)) - 1
            }
            if decoded.withUnsafeBytes(holds) { return true }
        }
        return false
    }

    /// Every 64 hex digits in a row of the text's hex digits; and of its runs of 8 hex digits
    /// or more alone ("part 1: ‹32 digits› part 2: ‹32 digits›", where the words between add
    /// digits of their own to the first reading).
    private static func hexAppears(in text: [UInt8]) -> Bool {
        var all: [UInt8] = [], runs: [UInt8] = [], run: [UInt8] = []
        all.reserveCapacity(text.count)
        runs.reserveCapacity(text.count)
        run.reserveCapacity(text.count)
        defer { all.zeroize(); runs.zeroize(); run.zeroize() }
        for byte in text {
            if let digit = Hex.value(byte) {
                all.append(digit)
                run.append(digit)
            } else {
                if run.count >= 8 { runs += run }
                run.removeAll(keepingCapacity: true)
            }
        }
        if run.count >= 8 { runs += run }
        return windowsHold(all) || windowsHold(runs)
    }

    private static func windowsHold(_ digits: [UInt8]) -> Bool {
        guard digits.count >= 64 else { return false }
        var decoded = [UInt8](repeating: 0, count: 32)
        defer { decoded.zeroize() }
        for start in 0...(digits.count - 64) {
            for byte in 0..<32 { decoded[byte] = digits[start + 2 * byte] << 4 | digits[start + 2 * byte + 1] }
            if decoded.withUnsafeBytes(holds) { return true }
        }
        return false
    }

    /// Every 52 bech32 characters in a row of the text's bech32 characters (any case): the 256
    /// bits of a key as NIP-19 writes them after `nsec1`.
    private static func bech32Appears(in text: [UInt8]) -> Bool {
        var words: [UInt8] = []
        words.reserveCapacity(text.count)
        defer { words.zeroize() }
        for byte in text {
            let lower = (0x41...0x5a).contains(byte) ? byte | 0x20 : byte
            if lower < 128, Bech32.reverseCharset[Int(lower)] >= 0 { words.append(UInt8(Bech32.reverseCharset[Int(lower)])) }
        }
        return windowsHoldKey(words, bitsEach: 5)
    }
}
