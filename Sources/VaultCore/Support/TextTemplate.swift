import FoundationEssentials

/// Wording in one language, read from a `Templates/*.LANG.txt` file (recovery sheets, rotation
/// plans): one `key = text` per line, `#` comment lines, `{name}` placeholders.
public struct TextTemplate: Sendable {
    public let language: String
    private let texts: [String: String]

    public init(language: String, text: String) throws {
        self.language = language
        var texts: [String: String] = [:]
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingBlanks()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw VaultError.templateLineWithoutEquals(language, line: number + 1)
            }
            let key = line[..<equals].trimmingBlanks()
            guard texts.updateValue(line[line.index(after: equals)...].trimmingBlanks(), forKey: key) == nil else {
                throw VaultError.templateKeyTwice(language, key: key)
            }
        }
        self.texts = texts
    }

    public var keys: Set<String> { Set(texts.keys) }

    /// The text for `key` with its placeholders filled in.
    public func text(_ key: String, _ values: [String: String] = [:]) throws -> String {
        guard let text = texts[key] else {
            throw VaultError.templateKeyMissing(language, key: key)
        }
        // One pass over the template's own placeholders: a value (a family's label, an app's
        // name) that happens to contain "{date}" is printed as given, never filled in again.
        var filled = "", rest = text[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            filled += rest[..<open]
            filled += values[String(rest[rest.index(after: open)..<close])] ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return filled + rest
    }
}

extension VaultError {
    /// A template line that is neither blank, a comment, nor `key = text`.
    static func templateLineWithoutEquals(_ language: String, line number: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "template '\(language)' line \(number) has no '='", file: file, line: line)
    }

    /// A template that defines one key on two lines.
    static func templateKeyTwice(_ language: String, key: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "template '\(language)' defines '\(key)' twice", file: file, line: line)
    }

    /// A template without the text a page asks for.
    static func templateKeyMissing(_ language: String, key: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "template '\(language)' has no text for '\(key)'", file: file, line: line)
    }
}
