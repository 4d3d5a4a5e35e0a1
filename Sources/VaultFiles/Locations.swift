import FoundationEssentials
import Glibc
import VaultCore

// The names of what a command reads and writes, files and objects alike, and what the write
// path needs of an object store: VaultFiles knows `s3://` names and the rules for them; talking
// to a store (HTTP, signatures) is VaultStorage's, which only the tools that use one link.

/// A vault's location as a command names it: a local path, `-` (a standard stream), or an object
/// `s3://BUCKET/KEY` (a prefix `s3://BUCKET/PREFIX/` where a command takes many vaults).
public enum VaultLocation: Sendable, Hashable {
    case file(String)
    case standardStream
    case object(S3ObjectName)

    public init(_ text: String) throws {
        if text == "-" {
            self = .standardStream
        } else if let name = try S3ObjectName(parsing: text) {
            self = .object(name)
        } else {
            self = .file(text)
        }
    }

    /// Whether `text` names an object (and so is not a file path).
    public static func isObject(_ text: String) -> Bool { text.hasPrefix("s3://") }

    /// Whether `path`, taken as a file or folder on this machine, is spelled as a URL: a scheme,
    /// a colon and a slash (`s3://…`, `S3://…`, `https://…`, and `S3:/…` typed with one slash).
    /// Made as folders, `s3://b/v2/` became a local folder `s3:` that the run's report then
    /// named as the bucket (a trial: vaults and parent keys written there, exit 0), so the write
    /// path refuses such a name (``VaultError/urlAsLocalPath(_:what:)``); `./s3:/x` is a path.
    public static func isSpelledAsURL(_ path: String) -> Bool {
        let bytes = path.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex,
              bytes[colon...].starts(with: ":/".utf8) else { return false }
        let scheme = bytes[..<colon]
        return scheme.first.map(isLetter) == true
            && scheme.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || "+.-".utf8.contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    /// `folder` joined with a relative path: `s3://b/` + `vaults/x` is `s3://b/vaults/x`, as a
    /// folder and a file name are joined with one slash.
    public static func joined(_ folder: String, _ relative: String) -> String {
        folder.hasSuffix("/") ? folder + relative : folder + "/" + relative
    }
}

/// An object in an S3-compatible bucket: `s3://BUCKET/KEY`. A key ending in `/` (or empty) is a
/// prefix, naming every object below it.
public struct S3ObjectName: Hashable, Sendable, CustomStringConvertible {
    public let bucket: String
    public let key: String

    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// `s3://BUCKET/KEY`; nil when `text` does not start with `s3://`.
    public init?(parsing text: String) throws {
        guard text.hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst("s3://".count)
        let bucket = rest.prefix { $0 != "/" }
        guard Self.isValidBucket(bucket) else { throw VaultError.badObjectName(text) }
        self.bucket = String(bucket)
        key = String(rest.dropFirst(bucket.count + 1))
    }

    /// `s3://BUCKET/PREFIX` as a folder of objects: a prefix named without its final slash is
    /// taken with it (`s3://b/vaults` is `s3://b/vaults/`), as a folder's name is.
    public static func folder(parsing text: String) throws -> S3ObjectName {
        guard let name = try S3ObjectName(parsing: text) else { throw VaultError.badObjectName(text) }
        return name.isPrefix ? name : S3ObjectName(bucket: name.bucket, key: name.key + "/")
    }

    public var isPrefix: Bool { key.isEmpty || key.hasSuffix("/") }
    public var description: String { "s3://\(bucket)/\(key)" }

    /// Whether two prefixes share objects: one lies under the other in the same bucket. A bucket
    /// run writing under a prefix that overlaps its source would list its own results as vaults
    /// to migrate when run again.
    public func overlaps(_ other: S3ObjectName) -> Bool {
        bucket == other.bucket && (key.hasPrefix(other.key) || other.key.hasPrefix(key))
    }

    /// The object `name` under this prefix.
    public func appending(_ name: String) -> S3ObjectName {
        S3ObjectName(bucket: bucket, key: key + name)
    }

    /// S3's bucket naming rules: 3 to 63 lowercase letters, digits, dots and hyphens.
    static func isValidBucket(_ name: Substring) -> Bool {
        (3...63).contains(name.count) && name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
    }
}

/// How a write to an object is conditioned (compare-and-swap: docs/conventions.md, "Nothing lost").
public enum ObjectWriteCondition: Sendable, Equatable {
    /// Replace only the version that was read (`If-Match`).
    case replacing(etag: String)
    /// Create only if there is nothing there (`If-None-Match: *`).
    case creating
}

/// What the one write path needs of an object store (VaultStorage's `ObjectStore` is one): a
/// tool that links no store has none, and refuses `s3://` names (``VaultError/noObjectStore(_:)``).
public protocol ObjectAccess: Sendable {
    /// The object's bytes, refusing more than `limit`; its version is remembered for a write back.
    func read(_ name: S3ObjectName, what: String, limit: Int) throws -> [UInt8]
    /// The version this process read of the object, if it read it.
    func versionRead(_ name: S3ObjectName) -> String?
    /// The object's current version; nil when there is none.
    func currentVersion(_ name: S3ObjectName) throws -> String?
    /// Writes the object under `condition`; a version changed meanwhile refuses it.
    func write(_ name: S3ObjectName, _ bytes: [UInt8], condition: ObjectWriteCondition) throws
}

extension VaultError.Code {
    /// An `s3://` name that is not one.
    public static let badObjectName = VaultError.Code(name: "badObjectName", category: .invalidInput)
    /// An `s3://` name given to a tool that does not read or write object stores.
    public static let noObjectStore = VaultError.Code(name: "noObjectStore", category: .invalidInput)
    /// A file or folder on this machine named as a URL (`s3://…` where only a path is taken).
    public static let urlAsLocalPath = VaultError.Code(name: "urlAsLocalPath", category: .invalidInput)
}

extension VaultError {
    static func badObjectName(_ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badObjectName, "'\(text)' is not an object name: s3://BUCKET/KEY, with a bucket of 3 to 63 lowercase letters, digits, dots and hyphens",
                   file: file, line: line)
    }

    /// A prefix (`s3://BUCKET/` or a key ending in `/`) where one object is read: refused before
    /// the store is reached, or libcurl even loaded (a trial: `inspect s3://b/` tried the store).
    public static func prefixGivenAsObject(_ text: String, what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badObjectName, "\(what) '\(text.prefix(200))' names a prefix (the objects under it), not one object: s3://BUCKET/KEY, with the object's whole key",
                   file: file, line: line)
    }

    /// A file or folder on this machine named as a URL (``VaultLocation/isSpelledAsURL(_:)``):
    /// an option that takes no object, or an object's name in another case than `s3://`.
    public static func urlAsLocalPath(_ path: String, what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let mistypedS3 = path.lowercased().hasPrefix("s3:/") && !path.hasPrefix("s3://")
        return VaultError(.urlAsLocalPath, "\(what) '\(path.prefix(200))' is spelled as a URL, where a path on this machine is taken; nothing was written",
                          hint: mistypedS3 ? "an object in a bucket is named s3://BUCKET/KEY, in lowercase, where an option takes one (see --help); a file or folder here, by a path (./\(path.prefix(200)))"
                                            : "give a path on this machine (./\(path.prefix(200)) if it really is a path here), or see --help for the options that take s3:// names",
                          file: file, line: line)
    }

    /// An object named to a tool that has no object store.
    public static func noObjectStore(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.noObjectStore, "'\(name.prefix(200))' is an object in a bucket, and this tool reads and writes local files only", file: file, line: line)
    }
}
