/// The list files the tools read (`--devices-file`, `--signature-keys-file`): one entry a line,
/// white space around it ignored, blank lines and lines starting with `#` skipped.
public enum ListFile {
    /// The entry a line holds; nil for a blank line or a comment.
    public static func entry(_ line: ArraySlice<UInt8>) -> String? {
        let entry = trimmed(String(decoding: line, as: UTF8.self))
        return entry.isEmpty || entry.hasPrefix("#") ? nil : entry
    }

    /// The text without white space around it: Unicode's White_Space and U+200B ZERO WIDTH
    /// SPACE (Foundation's whitespacesAndNewlines), without Foundation's bridging, which cost
    /// more than the rest of reading a 100,000-line devices file.
    private static func trimmed(_ text: String) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar.value == 0x200B }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }
}
