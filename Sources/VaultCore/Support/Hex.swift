/// Lowercase hexadecimal, the form every public key and id takes in this suite.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hex of `bytes` into `output`, which must be exactly twice as long. Used for
    /// secrets, so the text lands in protected memory without a `String` in between.
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == bytes.count * 2)
        for (index, byte) in bytes.enumerated() {
            output[2 * index] = digits[Int(byte >> 4)]
            output[2 * index + 1] = digits[Int(byte & 0x0f)]
        }
    }

    /// Decodes hex (either case). Returns nil on odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: chars.count / 2)
        let ok = out.withUnsafeMutableBytes { output in chars.withUnsafeBytes { decode($0, into: output) } }
        return ok ? out : nil
    }

    /// Decodes hex ASCII `chars` into `output`, which must be exactly half as long. Used for
    /// secrets, so the result can land in protected memory without an intermediate array.
    static func decode(_ chars: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard chars.count == output.count * 2 else { return false }
        for index in 0..<output.count {
            guard let high = value(chars[2 * index]), let low = value(chars[2 * index + 1]) else { return false }
            output[index] = high << 4 | low
        }
        return true
    }

    /// True when `text` is exactly `byteCount` bytes of lowercase hex.
    public static func isLowercase(_ text: String, byteCount: Int) -> Bool {
        var text = text
        // A vault holds thousands of member keys: read as one buffer, eight bytes at a time.
        return text.withUTF8 { $0.count == byteCount * 2 && ByteScan.isLowercaseHex(UnsafeRawBufferPointer($0)) }
    }

    package static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case 0x30...0x39: char - 0x30
        case 0x61...0x66: char - 0x61 + 10
        case 0x41...0x46: char - 0x41 + 10
        default: nil
        }
    }
}

extension Hex {
    /// Two long ids (hex keys, household ids) shortened for one message, each to at least
    /// `minimum` characters and past the first place where they differ, so the message never
    /// reads "0a92…, but 0a92…". A shortened id ends in "…".
    public static func shortened(_ first: String, _ second: String, minimum: Int = 12) -> (String, String) {
        let common = zip(first, second).prefix { $0 == $1 }.count
        let length = max(minimum, common + 1)
        func cut(_ text: String) -> String { text.count > length ? String(text.prefix(length)) + "…" : text }
        return (cut(first), cut(second))
    }
}
