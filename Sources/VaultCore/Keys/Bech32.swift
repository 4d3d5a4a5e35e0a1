/// Bech32 (BIP-173), the encoding of Nostr's `npub`/`nsec` (NIP-19).
///
/// Decoding works on raw ASCII bytes so a secret key can be decoded straight from a protected
/// buffer. Error reasons never quote the input: it may be a secret.
enum Bech32 {
    /// BIP-173's limit on a whole string; NIP-19 lifts it for its longer TLV entities.
    static let standardLengthLimit = 90

    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    static let reverseCharset: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, char) in charset.enumerated() { table[Int(char)] = Int8(index) }
        return table
    }()
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    enum Failure: Error, Equatable {
        case tooLong, characterOutOfRange(position: Int), mixedCase, noSeparator, emptyHumanReadablePart,
             checksumTooShort, invalidDataCharacter(position: Int), badChecksum, badPadding

        var reason: String {
            switch self {
            case .tooLong: "is longer than bech32 allows"
            case .characterOutOfRange(let position): "has a space, a control character or one past ASCII at position \(position + 1), which no bech32 text holds"
            case .mixedCase: "mixes upper- and lowercase letters"
            case .noSeparator: "has no '1' separator"
            case .emptyHumanReadablePart: "has no prefix before its '1' separator"
            case .checksumTooShort: "is too short to hold a bech32 checksum"
            case .invalidDataCharacter(let position): "has a character that is not in the bech32 alphabet at position \(position + 1)"
            case .badChecksum: "has a bad checksum (a character was mistyped, swapped or lost)"
            case .badPadding: "has invalid padding bits"
            }
        }
    }

    /// Splits and verifies a bech32 string. Returns the lowercase human-readable part and the
    /// 5-bit data words (checksum removed). The caller zeroes `words` when they are secret.
    static func decode(_ chars: UnsafeRawBufferPointer, lengthLimit: Int? = standardLengthLimit) throws(Failure) -> (hrp: String, words: [UInt8]) {
        if let lengthLimit, chars.count > lengthLimit { throw .tooLong }
        var hasLower = false, hasUpper = false
        var separator: Int?
        for (position, char) in chars.enumerated() {
            guard (33...126).contains(char) else { throw .characterOutOfRange(position: position) }
            if (0x61...0x7a).contains(char) { hasLower = true }
            if (0x41...0x5a).contains(char) { hasUpper = true }
            if char == 0x31 { separator = position }
        }
        if hasLower && hasUpper { throw .mixedCase }
        guard let separator else { throw .noSeparator }
        guard separator > 0 else { throw .emptyHumanReadablePart }
        guard separator + 7 <= chars.count else { throw .checksumTooShort }

        let hrp = chars[..<separator].map(lowercased)
        var words = [UInt8]()
        words.reserveCapacity(chars.count - separator - 1)
        for position in (separator + 1)..<chars.count {
            let value = reverseCharset[Int(lowercased(chars[position]))]
            guard value >= 0 else {
                words.zeroize()
                throw .invalidDataCharacter(position: position)
            }
            words.append(UInt8(value))
        }
        guard polymod(hrpExpanded(hrp) + words) == 1 else {
            words.zeroize()
            throw .badChecksum
        }
        words.removeLast(6)
        return (String(decoding: hrp, as: UTF8.self), words)
    }

    /// Encodes 5-bit `words` under `hrp` (lowercase) with a bech32 checksum, as ASCII bytes.
    static func encode(hrp: String, words: [UInt8]) -> [UInt8] {
        let hrpBytes = Array(hrp.utf8)
        let checksumInput = hrpExpanded(hrpBytes) + words + [UInt8](repeating: 0, count: 6)
        let mod = polymod(checksumInput) ^ 1
        var out = hrpBytes + [0x31]
        out.reserveCapacity(hrpBytes.count + 1 + words.count + 6)
        for word in words { out.append(charset[Int(word)]) }
        for index in 0..<6 { out.append(charset[Int((mod >> (5 * (5 - UInt32(index)))) & 31)]) }
        return out
    }

    /// Regroups bits (8→5 to encode, 5→8 to decode). Decoding refuses leftover bits that are
    /// not zero or amount to a whole group, as BIP-173's reference does.
    static func convertBits(_ input: [UInt8], from: Int, to: Int, pad: Bool) throws(Failure) -> [UInt8] {
        var accumulator = 0, bits = 0
        let maxValue = (1 << to) - 1
        var out = [UInt8]()
        out.reserveCapacity(input.count * from / to + 1)
        for value in input {
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> bits) & maxValue))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << (to - bits)) & maxValue)) }
        } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
            out.zeroize()
            throw .badPadding
        }
        accumulator = 0
        return out
    }

    /// Whether `char` (lowercase ASCII) is a data character of bech32's alphabet.
    static func isDataCharacter(_ char: UInt8) -> Bool { char < 128 && reverseCharset[Int(char)] >= 0 }

    /// The data places (from 0, after the separator) where changing one character makes
    /// `hrp1data` pass its checksum: a typed key's one typo, found by trying each character
    /// everywhere. Bech32 detects any four errors, so at most one place can fit one change.
    /// `data` is lowercase ASCII in the alphabet; the trials are zeroed.
    static func oneCharacterCorrections(hrp: [UInt8], data: UnsafeRawBufferPointer) -> [Int] {
        var values = data.map { UInt8(max(reverseCharset[Int($0)], 0)) }
        defer { values.zeroize() }
        let expanded = hrpExpanded(hrp)
        var found: [Int] = []
        for position in values.indices {
            let original = values[position]
            for value in UInt8(0)..<32 where value != original {
                values[position] = value
                if polymod(expanded + values) == 1 { found.append(position) }
            }
            values[position] = original
        }
        return found
    }

    private static func lowercased(_ char: UInt8) -> UInt8 {
        (0x41...0x5a).contains(char) ? char + 0x20 : char
    }

    private static func hrpExpanded(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for index in 0..<5 where (top >> index) & 1 == 1 {
                checksum ^= generator[index]
            }
        }
        return checksum
    }
}
