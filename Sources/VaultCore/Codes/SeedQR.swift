/// SeedSigner's Standard SeedQR: each word's BIP-39 index as four decimal digits, in order (96
/// digits for 24 words), encoded in a QR code's numeric mode.
public enum SeedQR {
    /// The digits for `entropy`, in protected memory.
    public static func digits(for entropy: SecretBytes) throws -> SecretBytes {
        var indexes = try BIP39.indexes(for: entropy)
        defer { for i in indexes.indices { indexes[i] = 0 } }
        return try FourDigitCode.digits(indexes)
    }

    /// The entropy behind Standard SeedQR digits; the BIP-39 checksum is verified.
    public static func entropy(fromDigits digits: SecretBytes) throws -> SecretBytes {
        var indexes = try digits.withUnsafeBytes { digits in
            guard [48, 60, 72, 84, 96].contains(digits.count), let indexes = FourDigitCode.indexes(digits) else { throw VaultError.malformedSeedQR() }
            return indexes
        }
        defer { for i in indexes.indices { indexes[i] = 0 } }
        return try BIP39.entropy(fromIndexes: indexes)
    }
}

extension VaultError {
    /// Digits that are not a Standard SeedQR (a count other than 48, 60, 72, 84 or 96, or a non-digit).
    static func malformedSeedQR(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "a Standard SeedQR holds 48 to 96 decimal digits, four per word", file: file, line: line)
    }
}

/// Word numbers as four decimal digits each: SeedSigner's Standard SeedQR for BIP-39 words,
/// and the share code for SLIP-0039's. The numbers are a secret's, so the digits are written
/// into protected memory and read from bytes, never from a `String`.
enum FourDigitCode {
    static func digits(_ indexes: [Int]) throws -> SecretBytes {
        try SecretBytes(count: indexes.count * 4) { out in
            for (position, index) in indexes.enumerated() {
                var value = index
                for digit in (0..<4).reversed() {
                    out[position * 4 + digit] = 0x30 + UInt8(value % 10)
                    value /= 10
                }
            }
        }
    }

    /// The numbers behind the digits; nil unless they are all digits, four a number.
    static func indexes(_ digits: UnsafeRawBufferPointer) -> [Int]? {
        guard digits.count % 4 == 0, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return stride(from: 0, to: digits.count, by: 4).map { start in digits[start..<start + 4].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
    }
}
