internal import CSodium
import Synchronization

/// Bytes that must not leak: keys, decrypted secrets, key-file contents.
///
/// The buffer comes from `sodium_malloc` (guard pages, no swap where the system allows it), and
/// is zeroed when the last reference goes away, then freed or kept for reuse (``ProtectedPool``).
/// The type prints no bytes, and equality is constant-time.
///
/// It is a final class rather than a non-copyable struct because secrets live inside model
/// values that sit in arrays (a child profile's key), which non-copyable types cannot do yet;
/// the redacting `description`, `debugDescription` and empty `customMirror` keep `print`,
/// string interpolation and `dump` from showing the bytes.
public final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only inside the initialiser, then only read.
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    /// Allocates `count` bytes and lets `initialize` fill them. The buffer starts zeroed.
    public convenience init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try self.init(count: count, fillsEveryByte: false, initialize: initialize)
    }

    /// `fillsEveryByte`: `initialize` writes each of the `count` bytes, so a new buffer is not
    /// zeroed first (a vault's plaintext, half a megabyte, was written over twice).
    private init(count: Int, fillsEveryByte: Bool, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try Sodium.ensureInitialized()
        // sodium_malloc(0) is allowed but returns a distinct pointer; keep at least one byte so
        // every instance owns a real allocation.
        if let kept = ProtectedPool.take(max(count, 1)) {
            pointer = kept  // zeroed when it was given back
        } else {
            guard let fresh = sodium_malloc(max(count, 1)) else { throw VaultError.noProtectedMemory() }
            // sodium_malloc fills a new buffer with a marker byte, not zeros.
            if !fillsEveryByte || count == 0 { sodium_memzero(fresh, max(count, 1)) }
            pointer = fresh
        }
        self.count = count
        // Every stored property is set, so if `initialize` throws, deinit frees the buffer.
        try initialize(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Copies `bytes` into protected memory. The caller remains responsible for its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(count: bytes.count, fillsEveryByte: true) { target in
            if let base = bytes.baseAddress, bytes.count > 0 {
                target.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
            }
        }
    }

    /// Copies `bytes` into protected memory and zeroes the array's buffer.
    public convenience init(consuming bytes: inout [UInt8]) throws {
        defer { bytes.zeroize() }
        try self.init(count: bytes.count, fillsEveryByte: true) { target in
            bytes.withUnsafeBytes { source in target.copyMemory(from: source) }
        }
    }

    deinit {
        let size = max(count, 1)
        if size <= ProtectedPool.largestKept {
            sodium_memzero(pointer, size)
            if ProtectedPool.give(pointer, size) { return }
        }
        // sodium_free zeroes the region itself (libsodium documents it): a large buffer, such as
        // a vault's plaintext, is not written over twice.
        sodium_free(pointer)
    }

    /// The only way to read the bytes. Do not let the pointer escape the closure.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A sub-range copied into a new protected buffer.
    public func slice(_ range: Range<Int>) throws -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return try withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

/// Zeroed protected buffers kept for reuse. Each `sodium_malloc` and `sodium_free` costs about
/// eight system calls (mmap, guard pages by mprotect, mlock, madvise, and back), and a batch of
/// vaults makes some twenty secrets per vault: the calls took most of a batch migration's time,
/// and two threads serialised on the kernel's memory-map lock. A buffer given back is zeroed
/// first (by ``SecretBytes``'s deinit) and keeps its guard pages and lock. Buffers of up to
/// ``largestKept`` bytes are kept, at most ``keptPerSize`` of one size and ``keptInAll`` in all,
/// each three or four pages: a few megabytes of mappings at most. Sizes that come back often
/// (keys, derived keys, a key file's read buffer) keep cycling through their slots.
enum ProtectedPool {
    private struct Buffers: @unchecked Sendable {
        // @unchecked: the pointers are only touched under the mutex.
        var free: [Int: [UnsafeMutableRawPointer]] = [:]
        var count = 0
    }

    private static let buffers = Mutex(Buffers())
    static let largestKept = 8192
    static let keptPerSize = 16
    static let keptInAll = 256

    /// A zeroed buffer of exactly `count` bytes, if one is kept.
    static func take(_ count: Int) -> UnsafeMutableRawPointer? {
        guard count <= largestKept else { return nil }
        return buffers.withLock { buffers in
            guard let pointer = buffers.free[count]?.popLast() else { return nil }
            buffers.count -= 1
            return pointer
        }
    }

    /// Keeps a zeroed buffer for reuse; false when it should be freed instead.
    static func give(_ pointer: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        guard count <= largestKept else { return false }
        return buffers.withLock { buffers in
            guard buffers.count < keptInAll, buffers.free[count, default: []].count < keptPerSize else { return false }
            buffers.free[count, default: []].append(pointer)
            buffers.count += 1
            return true
        }
    }
}

extension SecretBytes: Equatable {
    /// Constant-time comparison of the contents (`sodium_memcmp`); sizes are not secret.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { l in
            rhs.withUnsafeBytes { r in sodium_memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 }
        }
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension Array where Element == UInt8 {
    /// Overwrites the array's storage with zeros (libsodium's `sodium_memzero`, which the
    /// compiler may not remove) and empties it. For scratch buffers that held secret bytes.
    package mutating func zeroize() {
        withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
        }
        removeAll()
    }
}

extension SecretBytes {
    /// The bytes as lowercase hex ASCII, in protected memory.
    public func hex() throws -> SecretBytes {
        try withUnsafeBytes { bytes in try SecretBytes(count: bytes.count * 2) { Hex.encode(bytes, into: $0) } }
    }

    /// Parses a file of `byteCount * 2` hex characters (surrounding whitespace ignored) into
    /// protected memory: vault keys (``VaultKey/init(parsing:what:)``), master keys. `kind`
    /// names the key in the error for a wrong length ("a vault key"). The key read is pinned in
    /// ``HeldSecrets``: no record, sheet or message of the run holds it or a piece of it.
    public static func parsingHex(_ contents: SecretBytes, byteCount: Int, what: String, kind: String? = nil) throws -> SecretBytes {
        try contents.withUnsafeBytes { raw in
            let text = UnsafeRawBufferPointer(rebasing: raw[trimmedRange(raw)])
            guard text.count == byteCount * 2 else {
                throw VaultError.wrongHexLength(what, characters: byteCount * 2, kind: kind)
            }
            let secret = try SecretBytes(count: byteCount) { out in
                guard Hex.decode(text, into: out) else { throw VaultError.notHex(what) }
            }
            // A secret the run holds, whole or in pieces, is kept out of every record and sheet
            // (a trial: a code sheet's label printed 40 hex digits of the master key it read).
            secret.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
            return secret
        }
    }
}

extension VaultError {
    /// sodium_malloc failed: no memory, or the locked-memory limit (ulimit -l) is reached.
    static func noProtectedMemory(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "could not allocate protected memory for a secret", file: file, line: line)
    }

    /// Hex key text of the wrong length; `kind` names the key when the length says which.
    static func wrongHexLength(_ what: String, characters: Int, kind: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) should hold \(characters) hex characters\(kind.map { " (\($0))" } ?? "")", file: file, line: line)
    }

    /// Hex key text holding some other character.
    static func notHex(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedKey, "\(what) has a character that is not hexadecimal", file: file, line: line)
    }
}
