import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultStorage

/// Counting the vaults under a folder (a mirror of the storage bucket) by envelope format, suite
/// and schema version, without any key: only the first bytes of each file are read.
public struct VaultCensus: Sendable {
    public struct Kind: Hashable, Sendable, Comparable {
        public let format: UInt8, suite: UInt8, schemaVersion: UInt8

        /// Whether this build can open vaults of this kind.
        public var isSupported: Bool {
            VaultEnvelope.supportedFormats.contains(format) && VaultEnvelope.supportedSuites.contains(suite)
                && VaultDocument.supportedVersions.contains(Int(schemaVersion))
        }

        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            (lhs.format, lhs.suite, lhs.schemaVersion) < (rhs.format, rhs.suite, rhs.schemaVersion)
        }
    }

    public private(set) var files = 0
    public private(set) var counts: [Kind: Int] = [:]
    /// Files that are not vault envelopes, relative to the folder, with the reason.
    public private(set) var notVaults: [(path: String, reason: String)] = []
    /// Files with a vault's header that are shorter than the smallest vault: cut off in a copy
    /// or an upload. Counted apart from vaults and from files that are not vaults at all.
    public private(set) var truncated: [(path: String, reason: String)] = []
    /// Household logs beside schema 3 vaults (`<household id>.log`, docs/vault-format.md §10):
    /// neither vaults nor strays.
    public private(set) var householdLogs = 0

    /// No vault is shorter: the header, the tag, and the smallest document any schema version
    /// allows. The header records no length, so this is what can be known without the key.
    public static let minimumVaultByteCount = VaultEnvelope.headerByteCount + XChaCha20Poly1305.tagByteCount + VaultDocument.minimumByteCount

    public var vaults: Int { counts.values.reduce(0, +) }
    /// With `listing`: every vault, by its path under the folder, with its kind and household
    /// (public header fields), so a manifest can be built from it.
    public private(set) var listed: [(path: String, kind: Kind, household: String)] = []
    private var listing = false

    /// Walks `folder` recursively (symbolic links are not followed). `progress` is called every
    /// 1,000 files with the count so far.
    public static func take(of folder: String, listing: Bool = false, progress: ((Int) -> Void)? = nil) throws -> VaultCensus {
        var census = VaultCensus()
        census.listing = listing
        var header = [UInt8](repeating: 0, count: VaultEnvelope.headerByteCount)
        var pending = [""]
        guard AtomicFile.isListableFolder(folder) else {
            throw AtomicFile.ioError(errno: errno, "cannot read the folder '\(folder)'")
        }
        while let relative = pending.popLast() {
            let path = relative.isEmpty ? folder : folder + "/" + relative
            guard let directory = opendir(path) else {
                census.notVaults.append((relative, "folder cannot be read"))
                continue
            }
            var names: [(String, UInt8)] = []
            while let entry = readdir(directory) {
                let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
                // A name not in UTF-8 cannot be opened by the text it would read as (another
                // file may be named so): it is reported, never opened.
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    let shown = FileNames.showingInvalidBytes(bytes)
                    if Int32(entry.pointee.d_type) == DT_REG { census.files += 1 }
                    census.notVaults.append((relative.isEmpty ? shown : relative + "/" + shown, "its name is not valid UTF-8, so it is not read"))
                    continue
                }
                if name != ".", name != ".." { names.append((name, entry.pointee.d_type)) }
            }
            closedir(directory)
            for (name, listedType) in names.sorted(by: { $0.0 < $1.0 }) {
                let child = relative.isEmpty ? name : relative + "/" + name
                // A file system that does not say the type: asked of the entry itself.
                let type = Int32(listedType) == DT_UNKNOWN ? Self.type(of: folder + "/" + child) : Int32(listedType)
                if type == DT_DIR {
                    pending.append(child)
                } else if type == DT_REG {
                    census.files += 1
                    if census.files % 1000 == 0 { progress?(census.files) }
                    census.classify(child, path: folder + "/" + child, buffer: &header)
                } else {
                    // Said, never read: a link (a manifest built from the list would miss the
                    // vault it leads to, a hostile trial), a FIFO, a socket, a device.
                    census.files += 1
                    census.notVaults.append((child, type == DT_LNK ? "a symbolic link, not followed" : "not a regular file, not read"))
                }
            }
        }
        // Folders are walked depth first from a stack; the lists are given in path order.
        census.listed.sort { $0.path < $1.path }
        census.notVaults.sort { $0.path < $1.path }
        census.truncated.sort { $0.path < $1.path }
        return census
    }

    /// The `d_type` of the entry at `path` (not followed), from lstat.
    private static func type(of path: String) -> Int32 {
        var info = stat()
        guard lstat(path, &info) == 0 else { return Int32(DT_UNKNOWN) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return Int32(DT_DIR)
        case S_IFREG: return Int32(DT_REG)
        case S_IFLNK: return Int32(DT_LNK)
        default: return Int32(DT_FIFO)
        }
    }

    /// Counts the objects under `prefix` in an object store the same way: a listing, then a
    /// ranged read of each object's first bytes, `parallelism` at a time. Paths are the keys
    /// below the prefix; keys ending in `/` (folder markers) are not objects of the census.
    public static func take(of prefix: S3ObjectName, store: ObjectStore, listing: Bool = false, parallelism: Int = 32,
                            progress: ((Int) -> Void)? = nil) throws -> VaultCensus {
        var census = VaultCensus()
        census.listing = listing
        var found: [(key: String, size: Int)] = []
        try store.withClient { client in
            // A migration's conditional-write probe, in flight, is no object of the fleet.
            try client.listAll(prefix) { page in
                found += page.filter { !$0.key.hasSuffix("/") && !ObjectStore.isConditionalWriteProbe($0.key) }.map { ($0.key, $0.size) }
            }
        }
        let keys = found.map(\.key)
        // The header alone: the listing gives each object's length, which is all a census
        // knows of the rest.
        let headerCount = VaultEnvelope.headerByteCount
        let headers = try concurrently(keys.count, parallelism: parallelism, progress: progress) { index in
            try store.withClient { try $0.get(S3ObjectName(bucket: prefix.bucket, key: keys[index]), range: 0..<headerCount) }
        }
        for ((key, size), object) in zip(found, headers) {
            let relative = String(key.dropFirst(prefix.key.count))
            census.files += 1
            guard let object else {
                census.notVaults.append((relative, "was removed while counting"))
                continue
            }
            census.classify(relative, header: object.bytes.prefix(headerCount), length: size)
        }
        census.listed.sort { $0.path < $1.path }
        census.notVaults.sort { $0.path < $1.path }
        census.truncated.sort { $0.path < $1.path }
        return census
    }

    private mutating func classify(_ relative: String, path: String, buffer: inout [UInt8]) {
        // A file swapped for a FIFO since the folder was listed is refused, not waited on.
        guard let descriptor = try? AtomicFile.openForReading(path, what: "file") else {
            notVaults.append((relative, "cannot be read"))
            return
        }
        defer { close(descriptor) }
        var info = stat()
        let length = fstat(descriptor, &info) == 0 ? Int(info.st_size) : nil
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        classify(relative, header: buffer.prefix(max(0, count)), length: length)
    }

    /// Sorts one file by its header and length (``sorting(header:length:)``) into the census.
    private mutating func classify(_ relative: String, header bytes: ArraySlice<UInt8>, length: Int?) {
        if relative.hasSuffix(".log"), bytes.starts(with: Self.logStart) {
            householdLogs += 1
            return
        }
        switch Self.sorting(header: bytes, length: length) {
        case .notVault(let reason): notVaults.append((relative, reason))
        case .truncated(let reason, _): truncated.append((relative, reason))
        case .vault(let kind):
            counts[kind, default: 0] += 1
            let start = bytes.startIndex
            if listing { listed.append((relative, kind, Hex.encode(Array(bytes[(start + 10)..<(start + 42)])))) }
        }
    }

    /// How a household log's first line starts: a Nostr event as the suite writes it.
    static let logStart = Array("{\"id\":\"".utf8)

    /// What a file or object is by its header and length: the census's rule, and the rolling
    /// check's before it opens a vault.
    enum Sorting: Equatable {
        case notVault(String)
        /// Cut short, with its kind when its header was whole.
        case truncated(String, Kind?)
        /// A whole header and room for the smallest document.
        case vault(Kind)

        /// Whether the first bytes are a vault's, whole or cut.
        var startsLikeAVault: Bool {
            if case .notVault = self { false } else { true }
        }
    }

    /// Sorts by a header (the first bytes, fewer when the file is shorter) and the whole length;
    /// without a length, the bytes read stand for it.
    static func sorting(header bytes: ArraySlice<UInt8>, length: Int?) -> Sorting {
        let length = length ?? bytes.count
        guard !bytes.isEmpty, bytes.starts(with: VaultEnvelope.magic.prefix(bytes.count)) else {
            return .notVault(bytes.isEmpty ? "empty" : "does not start with MTVAULT")
        }
        guard length >= VaultEnvelope.headerByteCount + XChaCha20Poly1305.tagByteCount else {
            return .truncated("\(length) bytes, less than a header and a tag", nil)
        }
        // Shorter when read than when listed: cut while the census ran.
        guard bytes.count >= VaultEnvelope.headerByteCount else {
            return .truncated("\(bytes.count) bytes, less than a header and a tag", nil)
        }
        let start = bytes.startIndex
        let kind = Kind(format: bytes[start + 7], suite: bytes[start + 8], schemaVersion: bytes[start + 9])
        guard length >= minimumVaultByteCount else {
            return .truncated("\(length) bytes, less than the smallest vault (\(minimumVaultByteCount) bytes)", kind)
        }
        return .vault(kind)
    }
}
