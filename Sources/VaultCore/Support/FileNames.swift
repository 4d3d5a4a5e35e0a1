/// How a message names a file a command reads: its path quoted, or standard input in words.
/// Every factory that names a file by its display name renders it here, so none quotes
/// "standard input": quoted, the two words read as a file's name, and as two words of the
/// recovery-word list, which the redaction of quoted secrets withheld ("devices file (not
/// shown: …) lists nothing").
public enum FileNames {
    /// The display name of standard input (`-`).
    public static let standardInput = "standard input"

    /// The display name of a path a command was given: the path, or "standard input" for `-`.
    /// A file really named "standard input" is shown as "./standard input", so the two never
    /// read alike.
    public static func display(_ path: String) -> String {
        path == "-" ? standardInput : path == standardInput ? "./" + path : path
    }

    /// A display name as a message names it: quoted, or standard input in words.
    public static func quoted(_ name: String) -> String {
        name == standardInput ? name : "'\(name)'"
    }
}

extension FileNames {
    /// A name's bytes as text, each byte that is not part of valid UTF-8 written `\x{HH}`: a
    /// name the system gives (a folder's entry, an argument) that no String can hold as it is.
    /// Decoded with repair, two such names would read as one (`k\xfe` and `k\xff` both `k�`),
    /// and a tool would act on the file of the other name (a hostile trial: `keygen -o
    /// $'k\xfe.nsec'` wrote `k�.nsec`). A backslash of the name is doubled, so `\x{fe}` typed in
    /// a name reads apart from a byte.
    public static func showingInvalidBytes(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var shown = "", index = 0
        while index < bytes.count {
            if let length = characterLength(bytes, at: index) {
                let character = String(decoding: bytes[index..<index + length], as: UTF8.self)
                shown += character == "\\" ? "\\\\" : character
                index += length
            } else {
                shown += "\\x{" + Hex.encode([bytes[index]]) + "}"
                index += 1
            }
        }
        return shown
    }

    /// Where the first byte that is part of no UTF-8 character is, if any.
    public static func firstInvalidByte(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            guard let length = characterLength(bytes, at: index) else { return index }
            index += length
        }
        return nil
    }

    /// The length of the valid UTF-8 character at `index`, or nil when its byte begins none.
    private static func characterLength(_ bytes: [UInt8], at index: Int) -> Int? {
        let lead = bytes[index]
        let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
        guard length > 0, index + length <= bytes.count, String(validating: bytes[index..<index + length], as: UTF8.self) != nil else { return nil }
        return length
    }
}
