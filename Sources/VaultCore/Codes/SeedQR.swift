/// SeedSigner's Standard SeedQR: each word's BIP-39 index as four decimal digits, in order (96
/// digits for 24 words), encoded in a QR code's numeric mode.
public enum SeedQR {
    public static func digits(for entropy: SecretBytes) throws -> String {
        try BIP39.indexes(for: entropy).map { index in
            let text = String(index)
            return String(repeating: "0", count: 4 - text.count) + text
        }.joined()
    }

    /// The entropy behind Standard SeedQR digits; the BIP-39 checksum is verified.
    public static func entropy(fromDigits digits: String) throws -> SecretBytes {
        let chars = Array(digits.utf8)
        guard [48, 60, 72, 84, 96].contains(chars.count), chars.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw VaultError(.malformedKey, "a Standard SeedQR holds 48 to 96 decimal digits, four per word")
        }
        let indexes = stride(from: 0, to: chars.count, by: 4).map { start in chars[start..<start + 4].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        return try BIP39.entropy(fromIndexes: indexes)
    }
}
