/// A word as a POSIX shell reads it back: for a hint's command that a person may paste.
package enum ShellWord {
    /// `text` in single quotes, each `'` in it as `'\''`. By bytes: a `'` followed by a
    /// combining mark is one Character, which a split by Characters would leave unescaped.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = [0x27]
        for byte in text.utf8 {
            if byte == 0x27 { bytes += Array("'\\''".utf8) } else { bytes.append(byte) }
        }
        bytes.append(0x27)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` bare when a shell reads it as it is (letters, digits and `@%+=:,./-_`, as Python's
    /// shlex.quote leaves bare), else ``quoted(_:)``.
    package static func quotedIfNeeded(_ text: String) -> String {
        let bare = !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) || "@%+=:,./-_".utf8.contains(byte)
        }
        return bare ? text : quoted(text)
    }
}
