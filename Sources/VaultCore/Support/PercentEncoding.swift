// Reading `%XX` escapes (RFC 3986): the suite's one decoder of them.

public enum PercentEncoding {
    /// `text`'s bytes with each `%XX` decoded, and `+` read as a space where `plusIsSpace` (S3's
    /// `encoding-type=url` listings and its inventories write a space so). `broken`: some `%`
    /// was not followed by two hex digits; it is kept as written.
    public static func decoded(_ text: String, plusIsSpace: Bool = false) -> (bytes: [UInt8], broken: Bool) {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var broken = false, index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "%"):
                if index + 2 < bytes.count, let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2]) {
                    out.append(high << 4 | low)
                    index += 3
                    continue
                }
                broken = true
                out.append(bytes[index])
            case UInt8(ascii: "+") where plusIsSpace: out.append(0x20)
            default: out.append(bytes[index])
            }
            index += 1
        }
        return (out, broken)
    }

    /// An S3 key as a listing (`encoding-type=url`) or an inventory writes it: percent-encoded
    /// UTF-8, a space as `+`. Nil for an encoding that is broken, or bytes that are no UTF-8 (no
    /// S3 key is).
    public static func s3Key(_ text: String) -> String? {
        let (bytes, broken) = decoded(text, plusIsSpace: true)
        return broken ? nil : String(validating: bytes, as: UTF8.self)
    }
}
