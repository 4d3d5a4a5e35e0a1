// Typed access to a JSON object, with exact error paths.

/// One JSON object being read into a model type. Every accessor names the failing field by its
/// full path (`devices[2].status`), and ``finish()`` refuses fields nobody asked for.
package struct JSONObjectReader {
    package let path: String
    private let entries: [(key: String, value: JSONValue)]
    /// Which entries an accessor asked for, by position (no hashing of names: see parseObject).
    private var consumed: [Bool]
    /// Where the next field asked for is likely to be (see ``optional(_:)``).
    private var next = 0

    /// `whole` names the value when `path` is empty, as the input it came from calls it ("the
    /// line" of a JSON Lines file), for the error when it is not an object.
    package init(_ value: JSONValue, path: String, whole: String = "the document") throws {
        guard case .object(let entries) = value else {
            throw VaultError.notAJSONObject(path.isEmpty ? whole : path)
        }
        self.path = path
        self.entries = entries
        consumed = Array(repeating: false, count: entries.count)
    }

    /// One line of a JSON Lines file (a manifest, a registry import), called "the line" in its
    /// errors; nil for a blank line (spaces, tabs, a carriage return), which such files may hold.
    /// Every JSON Lines reader goes through here.
    package init?(line: ArraySlice<UInt8>) throws {
        guard line.contains(where: { ![0x20, 0x09, 0x0d].contains($0) }) else { return nil }
        try self.init(JSONValue(parsing: Array(line), what: "the line"), path: "", whole: "the line")
    }

    package func fieldPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    package func invalid(_ key: String, _ reason: String) -> VaultError {
        VaultError(.malformedDocument, "\(fieldPath(key)) \(reason)")
    }

    package mutating func optional(_ key: String) -> JSONValue? {
        // Readers ask for the fields in the order the suite writes them: the entry after the
        // last one found is tried first, so a document of the suite's reads each field with
        // one comparison instead of a search (issue 48).
        let position: Int
        if next < entries.count, entries[next].key == key {
            position = next
        } else if let found = entries.firstIndex(where: { $0.key == key }) {
            position = found
        } else {
            return nil
        }
        next = position + 1
        consumed[position] = true
        let value = entries[position].value
        return value == .null ? nil : value
    }

    package mutating func required(_ key: String) throws -> JSONValue {
        guard let value = optional(key) else { throw invalid(key, "is missing") }
        return value
    }

    package mutating func has(_ key: String) -> Bool { entries.contains { $0.key == key } }

    package mutating func string(_ key: String) throws -> String {
        guard case .string(let text) = try required(key) else { throw invalid(key, "should be a string") }
        return text
    }

    package mutating func optionalString(_ key: String) throws -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw invalid(key, "should be a string") }
        return text
    }

    package mutating func bool(_ key: String) throws -> Bool {
        guard case .bool(let flag) = try required(key) else { throw invalid(key, "should be true or false") }
        return flag
    }

    package mutating func int(_ key: String) throws -> Int {
        guard case .number(let text) = try required(key), let number = Int(text) else {
            throw invalid(key, "should be a whole number")
        }
        return number
    }

    package mutating func optionalInt(_ key: String) throws -> Int? {
        guard let value = optional(key) else { return nil }
        guard case .number(let text) = value, let number = Int(text) else { throw invalid(key, "should be a whole number") }
        return number
    }

    package mutating func timestamp(_ key: String) throws -> Timestamp {
        guard let time = Timestamp(rfc3339: try string(key)) else {
            throw invalid(key, "should be an RFC 3339 time such as 2025-11-19T10:00:00Z")
        }
        return time
    }

    package mutating func array(_ key: String) throws -> [(path: String, value: JSONValue)] {
        guard case .array(let elements) = try required(key) else { throw invalid(key, "should be an array") }
        // Concatenation, not interpolation: interpolating an Int costs dynamic casts, and this
        // runs for every element of every array (scripts/bench's profile of `open`).
        let prefix = fieldPath(key) + "["
        return elements.enumerated().map { (prefix + String($0.offset) + "]", $0.element) }
    }

    package mutating func strings(_ key: String) throws -> [String] {
        guard case .array(let elements) = try required(key) else { throw invalid(key, "should be an array") }
        return try elements.enumerated().map { position, element in
            guard case .string(let text) = element else {
                throw VaultError.elementNotAString(fieldPath(key), position: position)
            }
            return text
        }
    }

    /// Fails on any field that no accessor asked for: nothing unknown is silently dropped.
    package func finish() throws {
        if let unknown = consumed.firstIndex(of: false) {
            // A field's name is the input's own text: one that reads as a key, words or a share
            // (a key pasted as a name) is withheld, as every quoted input is.
            let name = QuotedInput(entries[unknown].key)
            throw invalid(name.isWithheld ? name.description : entries[unknown].key, "is not a field of this schema")
        }
    }
}

extension VaultError {
    /// A value read as an object that is not one, named by its path or as the whole input.
    static func notAJSONObject(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(name) should be a JSON object", file: file, line: line)
    }

    /// An element of an array of strings that is not a string.
    static func elementNotAString(_ arrayPath: String, position: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(arrayPath)[\(position)] should be a string", file: file, line: line)
    }
}
