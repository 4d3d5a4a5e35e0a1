/// The two codes of a family key share that are text, not layout: the share code (the QR code
/// on a share sheet) and the public check code printed beside the check values. Reading them
/// is VaultCore's, so a tool that does not print sheets can still tell one from other codes
/// (``PrintedCode``).
public enum ShareCodes {
    /// The check code's prefix: "HVT-SHARE <set> <household>".
    static let checkCodePrefix = "HVT-SHARE"

    /// The share code: each word's number in the SLIP-0039 list as four digits, the compact
    /// form Standard SeedQR uses for BIP-39 (132 digits for a 256-bit secret), in protected
    /// memory. A numeric QR code.
    package static func shareCode(_ share: SLIP39Share) throws -> SecretBytes {
        var indexes = share.wordIndexes()
        defer { for i in indexes.indices { indexes[i] = 0 } }
        return try FourDigitCode.digits(indexes)
    }

    /// The share behind a share code; nil when `code` is not one (four digits a word, 20 to 33
    /// words' worth), so a caller can tell another QR code from a damaged share.
    static func share(fromCode code: SecretBytes, share number: Int = 1) throws -> SLIP39Share? {
        try code.withUnsafeBytes { try share(fromCode: $0, share: number) }
    }

    static func share(fromCode digits: UnsafeRawBufferPointer, share number: Int) throws -> SLIP39Share? {
        guard (SLIP39.minimumWords...SLIP39.maximumWords).contains(digits.count / 4), var indexes = FourDigitCode.indexes(digits) else { return nil }
        defer { for i in indexes.indices { indexes[i] = 0 } }
        guard indexes.allSatisfy({ $0 < 1024 }) else { return nil }  // word numbers run to 1023: some other numeric code
        return try SLIP39Share(wordIndexes: indexes, share: number)
    }

    /// The public check code printed beside the check values: the set number and the first 12
    /// hex digits of the household id. It says which family a sheet belongs to, nothing more.
    package static func checkCode(set: Int, household: Household) -> String {
        "\(checkCodePrefix) \(set) \(household.id.shortHex)"
    }

    /// ``parseCheckCode(_:)`` of a payload read from a picture: only a payload that starts as a
    /// check code does (a public code) becomes text.
    static func parseCheckCode(_ payload: UnsafeRawBufferPointer) -> (set: Int, household: String)? {
        guard payload.count < 64, payload.starts(with: (checkCodePrefix + " ").utf8) else { return nil }
        return parseCheckCode(String(decoding: payload, as: UTF8.self))
    }

    /// The set number and household prefix of a check code; nil when `text` is not one.
    static func parseCheckCode(_ text: String) -> (set: Int, household: String)? {
        let parts = text.split(separator: " ")
        guard parts.count == 3, parts[0] == checkCodePrefix, let set = Int(parts[1]), (0..<32768).contains(set),
              parts[2].count == 12, parts[2].allSatisfy(\.isHexDigit) else { return nil }
        return (set, String(parts[2]).lowercased())
    }

    /// A file of a share's typed words with the check code the sheet prints beside them (as
    /// `split --text` writes it, issue 44): the words without that line, and what the line
    /// says. The line is public; the words stay in protected memory. Nil check when no line is a
    /// check code.
    public static func splitCheckCode(_ typed: SecretBytes) throws -> (words: SecretBytes, check: (set: Int, household: String)?) {
        var check: (set: Int, household: String)?
        var length = 0
        let words = try SecretBytes(count: typed.count) { out in
            typed.withUnsafeBytes { text in
                var start = 0
                for index in 0...text.count where index == text.count || text[index] == 0x0a {
                    let line = UnsafeRawBufferPointer(rebasing: text[start..<index])
                    let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }
                    let isCheck = trimmed.count < 64 && trimmed.starts(with: (checkCodePrefix + " ").utf8)
                    if isCheck, let parsed = parseCheckCode(String(decoding: trimmed, as: UTF8.self).trimmingWhiteSpace()) {
                        check = parsed
                    } else if !isCheck {
                        for byte in line { out[length] = byte; length += 1 }
                        if index < text.count { out[length] = 0x0a; length += 1 }
                    }
                    start = index + 1
                }
            }
        }
        return (try words.slice(0..<length), check)
    }

    /// What the codes of one page say: the share of the first share code that reads (a damaged
    /// share code is thrown only when no other code on the page is a share), and the page's
    /// check code, if it has one. Nil share when no code is a share code.
    public static func read(payloads: [SecretBytes], share number: Int) throws -> (share: SLIP39Share?, check: (set: Int, household: String)?) {
        // One sheet a picture, its two codes of one set: a share code pasted beside another
        // set's check code was combined without a word, where `verify --share` refused it, and
        // of two share sheets in one picture one was used and the other dropped (a trial).
        let checks = payloads.compactMap { $0.withUnsafeBytes(parseCheckCode) }
        if Set(checks.map { "\($0.set) \($0.household)" }).count > 1 { throw ShareProblem.severalSheetsInOnePicture(share: number) }
        var damaged: Error?, found: SLIP39Share?
        for payload in payloads {
            do {
                guard let share = try share(fromCode: payload, share: number) else { continue }
                if let found, (found.identifier, found.groupIndex, found.memberIndex) != (share.identifier, share.groupIndex, share.memberIndex) || found.value != share.value {
                    throw ShareProblem.severalSheetsInOnePicture(share: number)
                }
                found = share
            } catch let problem as ShareProblem where problem == .severalSheetsInOnePicture(share: number) {
                throw problem
            } catch {
                damaged = damaged ?? error
            }
        }
        guard let found else {
            if let damaged { throw damaged }
            return (nil, checks.first)
        }
        // A check code of another set than the share code is left to the reader to judge
        // (``requireOneSet(check:share:number:)``): `verify --share` reports it as a mismatch.
        return (found, checks.first)
    }

    /// A share read with its sheet's check code, to combine: the two of one set, or parts of two
    /// sheets put together.
    public static func requireOneSet(check: (set: Int, household: String)?, share: SLIP39Share, number: Int) throws {
        if let check, check.set != share.identifier {
            throw ShareProblem.pictureMixesSheets(share: number, checkSet: check.set, codeSet: share.identifier)
        }
    }

    /// How a share sheet's check code compares with its share and the expected household.
    public enum CheckOutcome: Equatable, Sendable {
        case matches
        /// The check code names another set than the share code: two sheets' parts mixed.
        case otherSet(Int)
        /// The check code names another household (its 12-hex-digit prefix).
        case otherHousehold(String)
    }

    /// The rule a holder checks one sheet by: its check code names the share's set and the
    /// household expected (by the first 12 hex digits of its id).
    public static func compare(check: (set: Int, household: String), share: SLIP39Share, household: HouseholdID) -> CheckOutcome {
        guard check.set == share.identifier else { return .otherSet(check.set) }
        guard check.household == household.shortHex else { return .otherHousehold(check.household) }
        return .matches
    }
}

extension ShareCodes {
    /// What the shares' check codes say about the key they combined to (issue 37).
    public enum RestoredOutcome: Equatable, Sendable {
        /// Every check code names the restored key's household.
        case matches
        /// No share came with a check code (typed words, a file of words): nothing to compare.
        case noCheckCode
        /// A check code names another household (its 12-hex-digit prefix). SLIP-0039 combines
        /// shares under any passphrase, so a missing or wrong one restores another valid key.
        /// `agreeing`: every check code names that one household (else a check code line was
        /// changed, or sheets of two families were put together, whatever the passphrase).
        case otherHousehold(String, agreeing: Bool)
    }

    /// The rule `combine` and `verify --shares` check a restored key by: its household is the
    /// one every share sheet's public check code names.
    public static func check(restored household: HouseholdID, against checks: [(set: Int, household: String)]) -> RestoredOutcome {
        guard !checks.isEmpty else { return .noCheckCode }
        if let other = checks.first(where: { $0.household != household.shortHex }) {
            return .otherHousehold(other.household, agreeing: Set(checks.map(\.household)).count == 1)
        }
        return .matches
    }
}

extension VaultError {
    /// The shares combined, but to a key of another household than their sheets' check code
    /// names: the likely cause is the passphrase, missing or wrong.
    public static func sharesRestoreAnotherKey(named household: String, checkCodesAgree: Bool, passphraseGiven: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        let cause = !checkCodesAgree ? "the sheets' check codes do not all name one household (a check code line changed, or sheets of two families put together), so none can be trusted"
            : passphraseGiven ? "the passphrase is wrong (or a share or its check code line was changed)"
            : "the shares were split with a passphrase, and none was given, most likely (or a share or its check code line was changed)"
        return VaultError(.keyMismatch, "the shares combine to another key than their sheets' check code names (household \(household)…): \(cause)",
                          file: file, line: line)
    }
}
