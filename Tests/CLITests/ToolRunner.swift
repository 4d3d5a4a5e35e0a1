import Foundation
import Testing

/// Runs a built executable of the suite in a scratch copy of the fixtures, the way a person or
/// a script would, and captures what it prints.
struct ToolRun: Sendable {
    let status: Int32
    let stdout: [UInt8]
    let stderr: [UInt8]

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

final class Workspace: @unchecked Sendable {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let repository = testsFolder.deletingLastPathComponent().deletingLastPathComponent()

    /// The folder holding the built executables: next to the test bundle that `swift test`
    /// runs, unless VAULT_TOOLS_BIN overrides it.
    static let binaries: URL = {
        if let folder = ProcessInfo.processInfo.environment["VAULT_TOOLS_BIN"] { return URL(fileURLWithPath: folder) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }()

    /// The binaries that release-built sweeps run where `scripts/test` names them
    /// (HVT_SWEEP_TOOLS_BIN): the tests that start a tool hundreds of times (the suites named
    /// `…Sweep`) run the tools as shipped, not under AddressSanitizer, where each start cost
    /// seven times as much (150 s against 21 s); everything else runs ``binaries``.
    static let sweepBinaries: URL = {
        if let folder = ProcessInfo.processInfo.environment["HVT_SWEEP_TOOLS_BIN"] { return URL(fileURLWithPath: folder) }
        return binaries
    }()

    let folder: URL
    private let tools: URL

    /// Registry files that are PostgreSQL databases in this workspace: an argument naming one
    /// runs on the database instead, and the output names the file again, so one golden case
    /// checks both engines (issue 13).
    var databases: [String: String] = [:]

    /// With a bucket, the workspace's vaults live in the object store too: an argument naming a
    /// file that was uploaded (``uploadToBucket()``) names its object instead, and the output
    /// names the file again, so one golden case checks files and objects alike (issue 15).
    private(set) var bucket: String?
    private var uploaded: Set<String> = []

    /// A fresh folder with copies of Tests/Fixtures and Examples; key files made 0600 as a
    /// parent's would be (git does not keep modes), so no test ever touches the committed files.
    init(sweep: Bool = false) throws {
        tools = sweep ? Self.sweepBinaries : Self.binaries
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hvt-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["keys", "testkit"] {
            try FileManager.default.copyItem(at: Self.repository.appendingPathComponent("Tests/Fixtures/\(name)"), to: folder.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: Self.repository.appendingPathComponent("Examples"), to: folder.appendingPathComponent("example"))
        for key in try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("keys").path) {
            chmod(folder.appendingPathComponent("keys/\(key)").path, 0o600)
        }
        chmod(folder.appendingPathComponent("example/household.nsec").path, 0o600)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func contents(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: path(name)).map(Array.init) }

    func mode(_ name: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path(name))[.posixPermissions] as? Int) ?? -1
    }

    /// Names in the workspace's top folder, to prove that nothing (not even a temp file) was left.
    func topLevelNames() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
    }

    /// Makes a bucket and uploads the testkit and every vault a case prepared (keys and other
    /// secrets stay local: the tools read them from local files only); `testkit` then names the
    /// prefix, and each of `outputs` (a file or folder the case writes) an object or prefix.
    func uploadToBucket(outputs: Set<String> = []) throws {
        let bucket = try S3TestServer.createBucket()
        var files: [String] = []
        for case let relative as String in FileManager.default.enumerator(atPath: folder.path)! {
            let top = relative.prefix { $0 != "/" }
            var isFolder: ObjCBool = false
            guard top == "testkit" || relative.hasSuffix(".vault"),
                  FileManager.default.fileExists(atPath: path(relative), isDirectory: &isFolder), !isFolder.boolValue else { continue }
            files.append(relative)
        }
        try S3TestServer.upload(folder, files, to: bucket)
        self.bucket = bucket
        uploaded = Set(files + ["testkit"]).union(outputs)
    }

    func run(_ tool: String, _ arguments: [String], stdin: String? = nil) throws -> ToolRun {
        let process = Process()
        process.executableURL = tool.hasPrefix("/") ? URL(fileURLWithPath: tool) : tools.appendingPathComponent(tool)
        process.arguments = arguments.map { argument in
            if let bucket, uploaded.contains(argument) { return "s3://\(bucket)/\(argument)" }
            return databases[argument] ?? argument
        }
        // No instance metadata: a tool finding no credentials must not ask 169.254.169.254,
        // which is no address of this machine's (the credential tests serve IMDS on loopback).
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") }
            .merging(S3TestServer.toolEnvironment) { $1 }.merging(["AWS_EC2_METADATA_DISABLED": "true"]) { $1 }
        process.currentDirectoryURL = folder
        let out = folder.appendingPathComponent(".stdout-\(UUID().uuidString)"), err = folder.appendingPathComponent(".stderr-\(UUID().uuidString)")
        // 0600, as a careful person's redirection would be: a secret on standard output is
        // warned about only when others could read the file (that warning has its own test).
        _ = FileManager.default.createFile(atPath: out.path, contents: nil, attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = try stdin.map { try FileHandle(forReadingFrom: folder.appendingPathComponent($0)) } ?? FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        func named(_ bytes: Data) -> [UInt8] {
            guard !databases.isEmpty || bucket != nil else { return Array(bytes) }
            var text = String(decoding: bytes, as: UTF8.self)
            for (name, connection) in databases { text = text.replacingOccurrences(of: connection, with: name) }
            if let bucket { text = text.replacingOccurrences(of: "s3://\(bucket)/", with: "") }
            return Array(text.utf8)
        }
        return ToolRun(status: process.terminationStatus, stdout: named(try Data(contentsOf: out)), stderr: named(try Data(contentsOf: err)))
    }
}

/// Which bits a sweep through a binary flips: each flip costs a process, so the binary's sweeps
/// sample what the library's sweeps (in process) flip exhaustively. Every bit of `wholeBytes`,
/// and one bit of every third other byte, its position turning with the byte so that every bit
/// position of a byte is hit across the file; every bit of every byte with `HVT_FULL_SWEEPS=1`.
enum SampledFlips {
    static func bits(of bytes: Range<Int>, wholeBytes: Range<Int> = 0..<0) -> [Int] {
        let full = ProcessInfo.processInfo.environment["HVT_FULL_SWEEPS"] == "1"
        // Every third byte; every twelfth in the quick tier.
        let every = TestTier.isQuick ? 12 : 3
        return bytes.flatMap { byte -> [Int] in
            if full || wholeBytes.contains(byte) { return Array(byte * 8..<(byte + 1) * 8) }
            return byte % every == 0 ? [byte * 8 + (byte / every) % 8] : []
        }
    }
}

/// Kills at named system calls, as `Tests/Interop/test_faults.py` does: strace stops a run with
/// SIGKILL at its Nth call of a system call, so the moment of a kill is a point in the program
/// (a write, a rename), never a time that a loaded machine may reach before or after the work.
extension Workspace {
    /// Runs `tool` killed at its `call`th call of any of `syscalls` (comma-separated; strace
    /// counts the calls of each thread on its own). True when the kill came before the run ended.
    func runKilled(_ tool: String, _ arguments: [String], at syscalls: String, call: Int) throws -> Bool {
        let traced = try run("/usr/bin/strace", ["-f", "-qq", "-o", "/dev/null", "-e", "trace=\(syscalls)", "-e", "inject=\(syscalls):signal=KILL:when=\(call)",
                                                 tools.appendingPathComponent(tool).path] + arguments)
        // strace ends itself with its tracee's signal (or, run by a shell, with 128 + it).
        return traced.status == SIGKILL || traced.status == 128 + SIGKILL
    }

    /// How many calls of `syscalls` a whole run of `tool` makes, every thread together.
    func calls(of syscalls: String, _ tool: String, _ arguments: [String]) throws -> Int {
        let counted = try run("/usr/bin/strace", ["-f", "-c", "-U", "name,calls", "-e", "trace=\(syscalls)", tools.appendingPathComponent(tool).path] + arguments)
        #expect(counted.status == 0, "\(counted.stderrText)")
        let names = Set(syscalls.split(separator: ","))
        return counted.stderrText.split(separator: "\n").reduce(0) { total, line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, names.contains(fields[0]), let calls = Int(fields[1]) else { return total }
            return total + calls
        }
    }
}
