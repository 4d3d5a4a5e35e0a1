import FoundationEssentials
import VaultCore

/// What every tool's `--version` prints: the suite's version, then the formats this build reads
/// and writes, so a support desk can tell from one line whether a vault or a plan is readable.
///
/// The number is the repository's `VERSION` file, compiled in: the one source that the manual
/// pages' header and the Debian package take theirs from too (docs/packaging.md).
public enum SuiteVersion {
    /// The suite's version, such as `0.2.0`: the first line of `--version`.
    public static let number = String(decoding: PackageResources.VERSION, as: UTF8.self)
        .trimmingWhiteSpace()

    /// The whole `--version` text.
    public static let text = """
        \(number)
        reads and writes vaults of envelope format \(list(VaultEnvelope.supportedFormats)), \
        cipher suite \(list(VaultEnvelope.supportedSuites)), schema versions \(list(VaultDocument.supportedVersions)) \
        (new vaults: \(VaultDocument.currentVersion))
        reads and writes rotation plans of version \(RotationPlan.currentVersion)
        """

    /// "1", "1 and 2", "1, 2 and 3".
    private static func list<S: Sequence>(_ versions: S) -> String where S.Element: BinaryInteger {
        let names = versions.sorted().map { "\($0)" }
        guard let last = names.last, names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }
}
