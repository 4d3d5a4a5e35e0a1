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

    /// The whole `--version` text. Every tool's configuration holds it, so it is made at every
    /// start: from integers by `String(_:)` and `+`, which, unlike interpolating a generic value or
    /// joining a sequence, look up no protocol conformance at run time (docs/performance.md).
    public static let text = number + "\n"
        + "reads and writes vaults of envelope format " + list(VaultEnvelope.supportedFormats)
        + ", cipher suite " + list(VaultEnvelope.supportedSuites)
        + ", schema versions " + list(VaultDocument.supportedVersions)
        + " (new vaults: " + String(VaultDocument.currentVersion) + ")\n"
        + "reads and writes rotation plans of version " + String(RotationPlan.currentVersion)

    /// "1", "1 and 2", "1, 2 and 3".
    private static func list(_ versions: ClosedRange<UInt8>) -> String {
        list(Int(versions.lowerBound)...Int(versions.upperBound))
    }

    private static func list(_ versions: ClosedRange<Int>) -> String {
        var text = String(versions.lowerBound)
        var version = versions.lowerBound
        while version < versions.upperBound {
            version += 1
            text += (version == versions.upperBound ? " and " : ", ") + String(version)
        }
        return text
    }
}
