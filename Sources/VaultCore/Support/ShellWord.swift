/// A word as a POSIX shell reads it back: for a hint's command that a person may paste.
package enum ShellWord {
    /// `text` in single quotes, each `'` in it as `'\''`. By bytes: a `'` followed by a
    /// combining mark is one Character, which a split by Characters would leave unescaped.
    /// Text holding a character the renderer would not show as itself (``escapedScalars(_:)``)
    /// is written as bash's `$'…'`, those characters as `\xHH` of their bytes: in single quotes
    /// the one renderer would show them escaped (`\u{a}`), and the line pasted back would name
    /// another file.
    package static func quoted(_ text: String) -> String {
        let escaped = escapedScalars(text)
        if escaped.contains(true) { return ansiQuoted(text, escaping: escaped) }
        var bytes: [UInt8] = [0x27]
        for byte in text.utf8 {
            if byte == 0x27 { bytes += Array("'\\''".utf8) } else { bytes.append(byte) }
        }
        bytes.append(0x27)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Which of `text`'s characters the renderer shows as `\u{…}` (CLISupport's `displaySafe`),
    /// and the control and invisible ones besides.
    private static func escapedScalars(_ text: String) -> [Bool] {
        zip(text.unicodeScalars, DisplayRule.escapedScalars(text)).map { scalar, escaped in escaped || scalar.isControlOrInvisible }
    }

    private static func ansiQuoted(_ text: String, escaping escaped: [Bool]) -> String {
        var word = "$'"
        for (scalar, isEscaped) in zip(text.unicodeScalars, escaped) {
            if isEscaped {
                for byte in String(scalar).utf8 { word += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16) }
            } else if scalar == "\\" || scalar == "'" {
                word += "\\" + String(scalar)
            } else {
                word.unicodeScalars.append(scalar)
            }
        }
        return word + "'"
    }

    /// `text` bare when a shell reads it as it is (letters, digits and `@%+=:,./-_`, as Python's
    /// shlex.quote leaves bare), else ``quoted(_:)``.
    package static func quotedIfNeeded(_ text: String) -> String {
        let bare = !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) || "@%+=:,./-_".utf8.contains(byte)
        }
        return bare ? text : quoted(text)
    }

    /// An option and its value as a command line gives them back: `--db r.sqlite`, or
    /// `--db=-r.sqlite` for a value starting with `-` (but `-` itself, a standard stream), which
    /// the tool's parser would otherwise take for an option ("missing value for '--db'"), quoted
    /// or not. `quoted` always quotes the value (``quoted(_:)``), else only where needed.
    package static func option(_ name: String, _ value: String, quoted alwaysQuoted: Bool = false) -> String {
        let word = alwaysQuoted ? quoted(value) : quotedIfNeeded(value)
        return value.hasPrefix("-") && value != "-" ? "\(name)=\(word)" : "\(name) \(word)"
    }

    /// A path given to another program as an argument: a relative one starting with `-` as
    /// `./-…`, which no program takes for an option.
    package static func path(_ path: String) -> String {
        quoted(path.hasPrefix("-") ? "./" + path : path)
    }
}
