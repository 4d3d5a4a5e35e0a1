import FoundationEssentials
import Glibc

/// Reading with a limit: at most `limit` bytes are ever held, and one more byte is enough to
/// refuse, so `/dev/zero` or a 200 MB stray file costs no more memory than the limit.
public enum BoundedRead {
    /// Reads the whole descriptor, refusing (invalid input) past `limit` bytes, and, with
    /// `lines`, a line longer than ``InputLimits/line`` as soon as it is that long.
    public static func all(from descriptor: Int32, limit: Int, name: String, what: String, lines: Bool = false) throws -> [UInt8] {
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var lineStart = 0, lineNumber = 1
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw AtomicFile.ioError("could not read \(what) '\(name)'")
            }
            if count == 0 { return out }
            guard out.count + count <= limit else { throw VaultError.tooLarge(what: what, name: name, limit: limit) }
            out.append(contentsOf: chunk[0..<count])
            if lines {
                while let newline = out[lineStart...].firstIndex(of: 0x0a) {
                    guard newline - lineStart <= InputLimits.line else { throw LineReader.overlong(name: "\(what) '\(name)'", line: lineNumber) }
                    lineStart = newline + 1
                    lineNumber += 1
                }
                guard out.count - lineStart <= InputLimits.line else { throw LineReader.overlong(name: "\(what) '\(name)'", line: lineNumber) }
            }
        }
    }

    /// Reads a file by path (never standard input) with a limit.
    public static func file(_ path: String, limit: Int, what: String, lines: Bool = false) throws -> [UInt8] {
        let descriptor = try AtomicFile.openForReading(path, what: what)
        defer { close(descriptor) }
        return try all(from: descriptor, limit: limit, name: path, what: what, lines: lines)
    }
}

/// JSON Lines and list files, a line at a time: a line longer than ``InputLimits/line`` is
/// refused by number before more of it is held, so a file of any size is read in bounded memory.
public struct LineReader {
    private let descriptor: Int32
    private let name: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    /// The number of the line last returned, from 1.
    public private(set) var lineNumber = 0
    /// The most bytes a whole file may have, and the words to refuse more in.
    package struct Limit {
        package let bytes: Int
        package let what: String
        package let path: String

        package init(bytes: Int, what: String, path: String) {
            self.bytes = bytes
            self.what = what
            self.path = path
        }
    }
    private let limit: Limit?
    private var bytesRead = 0
    /// Given every byte read, in order (a batch keeps its manifest's fingerprint).
    private let hasher: SHA256.Hasher?

    public init(descriptor: Int32, name: String) {
        self.init(descriptor: descriptor, name: name, limit: nil, hasher: nil)
    }

    package init(descriptor: Int32, name: String, limit: Limit?, hasher: SHA256.Hasher?) {
        self.descriptor = descriptor
        self.name = name
        self.limit = limit
        self.hasher = hasher
    }

    /// The next line without its newline (a final line without one counts), or nil at the end.
    public mutating func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0a) {
                guard newline - start <= InputLimits.line else { throw overlong() }
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                return line
            }
            guard buffer.count - start <= InputLimits.line else { throw overlong() }
            if finished {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return line
            }
            try fill()
        }
    }

    private mutating func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw AtomicFile.ioError("could not read \(name)")
            }
            bytesRead += count
            if let limit, bytesRead > limit.bytes { throw VaultError.tooLarge(what: limit.what, name: limit.path, limit: limit.bytes) }
            if count == 0 { finished = true } else { buffer.append(contentsOf: chunk[0..<count]) }
            chunk.withUnsafeBytes { hasher?.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            return
        }
    }

    private func overlong() -> VaultError { Self.overlong(name: name, line: lineNumber + 1) }

    static func overlong(name: String, line: Int) -> VaultError {
        VaultError(.tooLarge, "\(name) line \(line) is longer than \(InputLimits.describe(bytes: InputLimits.line)), the most a line may be")
    }

    /// Every line of bytes already in memory, with the same line limit; for parsers that are
    /// fuzzed and tested without files.
    public static func forEachLine(in bytes: [UInt8], name: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        for (index, line) in bytes.split(separator: 0x0a, omittingEmptySubsequences: false).enumerated() {
            guard line.count <= InputLimits.line else { throw overlong(name: name, line: index + 1) }
            try body(index + 1, line)
        }
    }
}
