import VaultCore

/// The one rule that no two manifest lines write one output, for every batch (a folder batch's
/// files, a bucket batch's objects): the first line to name an output claims it, and a later
/// line naming it is refused, both lines said (``VaultError/manifestOutputTwice(_:_:output:file:line:)``).
/// Which outputs are claimed is the caller's (not the objects a check only reads); so is where the
/// claims are kept: in memory here, or in a folder batch's staging database, for a manifest
/// larger than memory should hold (``refuse(_:line:firstLine:)``).
struct ManifestOutputs<Output: Hashable & CustomStringConvertible> {
    private var firstLines: [Output: Int] = [:]

    /// Claims `output` for manifest line `line`; refused when an earlier line claimed it.
    mutating func claim(_ output: Output, line: Int) throws {
        try Self.refuse(output, line: line, firstLine: firstLines[output])
        firstLines[output] = line
    }

    /// The rule for claims kept elsewhere: `firstLine` is the earlier line that named `output`,
    /// nil for none.
    static func refuse(_ output: Output, line: Int, firstLine: Int?) throws {
        if let firstLine { throw VaultError.manifestOutputTwice(firstLine, line, output: output.description) }
    }
}
