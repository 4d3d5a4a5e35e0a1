/// The list files the tools read (`--devices-file`, `--signature-keys-file`): one entry a line,
/// white space around it ignored, blank lines and lines starting with `#` skipped.
public enum ListFile {
    /// The entry a line holds; nil for a blank line or a comment.
    public static func entry(_ line: ArraySlice<UInt8>) -> String? {
        let entry = String(decoding: line, as: UTF8.self).trimmingWhiteSpace()
        return entry.isEmpty || entry.hasPrefix("#") ? nil : entry
    }
}
