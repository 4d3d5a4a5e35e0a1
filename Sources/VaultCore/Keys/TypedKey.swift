/// A key a person typed from a sheet, as printed there: `nsec1…` or `ncryptsec1…` in groups of
/// four characters (issue 37). Typed text is forgiven its spaces, line breaks and case; what
/// still does not decode is pointed at by its printed group, so the person looks at one group
/// of the sheet instead of 63 characters.
public enum TypedKey {
    /// How the sheet groups a typed key: four characters a group, counted from its first.
    static let groupLength = 4
    /// An `nsec1…` key's length, as printed: 16 groups, the last of three characters.
    static let nsecLength = 63

    /// The typed text as the key it starts as (white space removed, ASCII letters lowercased),
    /// in protected memory; nil when it is not a typed key (words, say).
    public static func normalized(_ typed: SecretBytes) throws -> SecretBytes? {
        var kept: [UInt8] = []
        defer { kept.zeroize() }
        typed.withUnsafeBytes { bytes in
            kept.reserveCapacity(bytes.count)  // no regrowth: no partial copies left in freed memory
            for byte in bytes where ![0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c].contains(byte) {
                kept.append((0x41...0x5a).contains(byte) ? byte | 0x20 : byte)
            }
        }
        guard kept.startsWithFolded("nsec1") || kept.startsWithFolded("ncryptsec1") else { return nil }
        return try SecretBytes(consuming: &kept)
    }

    /// Why a normalized typed key does not decode, pointing at the character and its printed
    /// group: a character bech32 never uses (with the one it is likely mistaken for), a
    /// character missing or extra, or the one place the checksum points to. Nil when none of
    /// these can be told. Only the position and the typed, invalid character are named, never
    /// a character of the key.
    public static func problem(_ key: SecretBytes) -> VaultError? {
        key.withUnsafeBytes { chars -> VaultError? in
            let prefix = Array((chars.startsWithFolded("nsec1") ? "nsec1" : "ncryptsec1").utf8)
            guard chars.starts(with: prefix) else { return nil }
            let data = UnsafeRawBufferPointer(rebasing: chars[prefix.count...])
            for (offset, char) in data.enumerated() where !Bech32.isDataCharacter(char) {
                return VaultError.typedKeyCharacterNotUsed(place(prefix.count + offset), typed: char, likely: likelyMeant[char])
            }
            if prefix.count == 5, chars.count != nsecLength {
                return VaultError.typedKeyLength(chars.count, expected: nsecLength)
            }
            let places = Bech32.oneCharacterCorrections(hrp: Array(prefix.dropLast()), data: data)
            guard places.count == 1 else { return nil }
            return VaultError.typedKeyChecksumPoints(to: place(prefix.count + places[0]))
        }
    }

    /// A character's printed group and place in it, both from 1.
    static func place(_ index: Int) -> (group: Int, character: Int) {
        (index / groupLength + 1, index % groupLength + 1)
    }

    /// Characters bech32 leaves out because they look like others, and the one meant.
    static let likelyMeant: [UInt8: String] = [
        UInt8(ascii: "o"): "the digit 0", UInt8(ascii: "i"): "the letter l", UInt8(ascii: "1"): "the letter l", UInt8(ascii: "b"): "the digit 6",
    ]
}

extension VaultError {
    /// A typed key with a character that no key has after its prefix.
    static func typedKeyCharacterNotUsed(_ place: (group: Int, character: Int), typed: UInt8, likely: String?,
                                         file: String = #fileID, line: UInt = #line) -> VaultError {
        let shown = (0x21...0x7e).contains(typed) ? "'\(String(UnicodeScalar(typed)))'" : "a character"
        return VaultError(.malformedKey, "the typed key's character \(place.character) of group \(place.group) is \(shown), which no key uses"
                          + (likely.map { ": it is probably \($0)" } ?? ""),
                          hint: "keys use the digits 0 and 2 to 9 and the letters except b, i and o; a 1 appears only in the prefix", file: file, line: line)
    }

    /// A typed `nsec1…` of another length than a key's.
    static func typedKeyLength(_ count: Int, expected: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "the typed key has \(count) characters; a key as printed has \(expected) (16 groups of four, the last of three): "
                   + (count < expected ? "a character or a group is missing" : "a character or a group is extra"), file: file, line: line)
    }

    /// A typed key whose checksum fails and points to one character.
    static func typedKeyChecksumPoints(to place: (group: Int, character: Int), file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "the typed key's checksum points to character \(place.character) of group \(place.group): compare that character with the sheet",
                   hint: "0 and o, l and 1, u and v are easily mixed up", file: file, line: line)
    }
}
