import FoundationEssentials
import Glibc
import VaultCore

/// Reading with a limit: at most `limit` bytes are ever held, and one more byte is enough to
/// refuse, so `/dev/zero` or a 200 MB stray file costs no more memory than the limit.
public enum BoundedRead {
    /// Reads the whole descriptor, refusing (invalid input) past `limit` bytes, and, with
    /// `lines`, a line longer than ``InputLimits/line`` as soon as it is that long.
    public static func all(from descriptor: Int32, limit: Int, name: String, what: String, lines: Bool = false) throws -> [UInt8] {
        var lineStart = 0, lineNumber = 1
        func checkLines(_ out: [UInt8]) throws {
            guard lines else { return }
            while let newline = out[lineStart...].firstIndex(of: 0x0a) {
                guard newline - lineStart <= InputLimits.line else { throw LineBuffer.overlong(name: "\(what) \(FileNames.quoted(name))", line: lineNumber) }
                lineStart = newline + 1
                lineNumber += 1
            }
            guard out.count - lineStart <= InputLimits.line else { throw LineBuffer.overlong(name: "\(what) \(FileNames.quoted(name))", line: lineNumber) }
        }
        // A regular file is read straight into an array of its size and one byte more (the
        // byte that finds its end, or the limit passed): a 480 KB vault was read in 64 KiB
        // chunks appended to an array that grew by copying, a tenth of `open`'s page faults.
        var out = [UInt8]()
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 {
            var failure: Int32 = 0
            out = [UInt8](unsafeUninitializedCapacity: min(Int(info.st_size), limit) + 1) { buffer, count in
                while count < buffer.count {
                    let read = Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                    if read < 0, errno == EINTR { continue }
                    if read < 0 { failure = errno }
                    if read <= 0 { return }
                    count += read
                }
            }
            if failure != 0 { throw AtomicFile.ioError(errno: failure, "could not read \(what) \(FileNames.quoted(name))") }
            guard out.count <= limit else { throw VaultError.tooLarge(what: what, name: name, limit: limit) }
            try checkLines(out)
            // Its end found before the byte more: all of it (one that grew as it was read goes on).
            if out.count <= Int(info.st_size) { return out }
        }
        // Not zeroed first: read(2) fills what is used (a batch reads thousands of small files).
        // What was read is zeroed after: a credential or token file passes through here.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        var filled = 0
        defer {
            explicit_bzero(chunk.baseAddress!, filled)
            chunk.deallocate()
        }
        while true {
            let count = Glibc.read(descriptor, chunk.baseAddress!, chunk.count)
            filled = max(filled, count)
            if count < 0 {
                if errno == EINTR { continue }
                throw AtomicFile.ioError(errno: errno, "could not read \(what) \(FileNames.quoted(name))")
            }
            if count == 0 { return out }
            guard out.count + count <= limit else { throw VaultError.tooLarge(what: what, name: name, limit: limit) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            try checkLines(out)
        }
    }

    /// Reads a file by path (never standard input) with a limit.
    public static func file(_ path: String, limit: Int, what: String, lines: Bool = false) throws -> [UInt8] {
        let descriptor = try AtomicFile.openForReading(path, what: what, handedOn: false)
        defer { close(descriptor) }
        return try all(from: descriptor, limit: limit, name: path, what: what, lines: lines)
    }
}

/// Lines out of bytes that arrive in chunks (a `read`, an inflater), `\n`-terminated, a final
/// line without one counting: only the unfinished line is held between chunks, and a line
/// longer than ``InputLimits/line`` is refused by number as soon as it is that long. The one
/// line splitter: ``LineReader`` feeds it from a descriptor, an inventory from gzip.
public struct LineBuffer {
    private let name: String
    private var buffer: [UInt8] = []
    private var start = 0
    /// The number of the line last returned, from 1.
    public private(set) var lineNumber = 0

    /// `name` names the input in the error for an overlong line ("manifest 'jobs.jsonl'").
    public init(name: String) {
        self.name = name
    }

    /// The next bytes of the input.
    public mutating func append(_ chunk: ArraySlice<UInt8>) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: chunk)
    }

    /// The next complete line without its newline, or nil until more bytes come.
    public mutating func nextLine() throws -> ArraySlice<UInt8>? {
        guard let newline = buffer[start...].firstIndex(of: 0x0a) else {
            guard buffer.count - start <= InputLimits.line else { throw Self.overlong(name: name, line: lineNumber + 1) }
            return nil
        }
        guard newline - start <= InputLimits.line else { throw Self.overlong(name: name, line: lineNumber + 1) }
        let line = buffer[start..<newline]
        start = newline + 1
        lineNumber += 1
        return line
    }

    /// At the end of the input: the last line when it has no newline, else nil.
    public mutating func finalLine() -> ArraySlice<UInt8>? {
        guard start < buffer.count else { return nil }
        let line = buffer[start...]
        start = buffer.count
        lineNumber += 1
        return line
    }

    static func overlong(name: String, line: Int) -> VaultError {
        VaultError(.tooLarge, "\(name) line \(line) is longer than \(InputLimits.describe(bytes: InputLimits.line)), the most a line may be")
    }
}

/// JSON Lines and list files, a line at a time from a descriptor, through ``LineBuffer``, so a
/// file of any size is read in bounded memory.
public struct LineReader {
    private let descriptor: Int32
    private let name: String
    private var lines: LineBuffer
    private var finished = false
    /// The number of the line last returned, from 1.
    public var lineNumber: Int { lines.lineNumber }
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
        self.lines = LineBuffer(name: name)
        self.limit = limit
        self.hasher = hasher
    }

    /// The next line without its newline (a final line without one counts), or nil at the end.
    public mutating func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let line = try lines.nextLine() { return line }
            if finished { return lines.finalLine() }
            try fill()
        }
    }

    private mutating func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw AtomicFile.ioError(errno: errno, "could not read \(name)")
            }
            bytesRead += count
            if let limit, bytesRead > limit.bytes { throw VaultError.tooLarge(what: limit.what, name: limit.path, limit: limit.bytes) }
            if count == 0 { finished = true } else { lines.append(chunk[0..<count]) }
            chunk.withUnsafeBytes { hasher?.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            return
        }
    }

    /// Every line of bytes already in memory, with the same line limit; for parsers that are
    /// fuzzed and tested without files. A final newline ends the last line: no empty line follows it.
    public static func forEachLine(in bytes: [UInt8], name: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        var lines = LineBuffer(name: name)
        lines.append(bytes[...])
        while let line = try lines.nextLine() { try body(lines.lineNumber, line) }
        if let line = lines.finalLine() { try body(lines.lineNumber, line) }
    }
}
