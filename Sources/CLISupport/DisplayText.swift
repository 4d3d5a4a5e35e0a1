/// Text for a person, written to a terminal or a file (issue 44: one renderer for untrusted
/// text). What the tool wrote as a literal is kept, its line breaks included; every value
/// interpolated into it (a device name, an id, a path, a field or a value from a file or a
/// server) is escaped (``Swift/String/displaySafe``), so that it cannot start a line of its
/// own, drive the terminal or hide among invisible characters. A command written tomorrow cannot
/// forget it: a plain `String` does not convert, and lines the tool composed itself (a
/// ``TextTable``'s, whose cells are escaped) are inserted by name, `\(composed: table)`.
///
///     diagnostics.note("device '\(id)' is already revoked")   // id escaped, whatever it holds
public struct DisplayText: ExpressibleByStringInterpolation, Sendable {
    /// The text as it is written.
    public let text: String

    public init(stringLiteral literal: String) { text = literal }

    public init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    /// Text the tool composed from escaped parts (a table, other display text).
    public init(composed: String) { text = composed }

    public struct Interpolation: StringInterpolationProtocol, Sendable {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value: escaped, on one line.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) { text += value.description.displaySafe }

        /// Lines the tool composed itself, already escaped (a table, other display text).
        public mutating func appendInterpolation(composed: String) { text += composed }

        public mutating func appendInterpolation(_ value: DisplayText) { text += value.text }
    }

    /// Joined, as text is.
    public static func + (left: DisplayText, right: DisplayText) -> DisplayText { DisplayText(composed: left.text + right.text) }
}
