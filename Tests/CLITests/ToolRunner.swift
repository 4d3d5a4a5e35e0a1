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

    let folder: URL

    /// Registry files that are PostgreSQL databases in this workspace: an argument naming one
    /// runs on the database instead, and the output names the file again, so one golden case
    /// checks both engines (issue 13).
    var databases: [String: String] = [:]

    /// A fresh folder with copies of Tests/Fixtures and Examples; key files made 0600 as a
    /// parent's would be (git does not keep modes), so no test ever touches the committed files.
    init() throws {
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

    func run(_ tool: String, _ arguments: [String], stdin: String? = nil) throws -> ToolRun {
        let process = Process()
        process.executableURL = tool.hasPrefix("/") ? URL(fileURLWithPath: tool) : Self.binaries.appendingPathComponent(tool)
        process.arguments = arguments.map { databases[$0] ?? $0 }
        process.currentDirectoryURL = folder
        let out = folder.appendingPathComponent(".stdout-\(UUID().uuidString)"), err = folder.appendingPathComponent(".stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
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
            guard !databases.isEmpty else { return Array(bytes) }
            var text = String(decoding: bytes, as: UTF8.self)
            for (name, connection) in databases { text = text.replacingOccurrences(of: connection, with: name) }
            return Array(text.utf8)
        }
        return ToolRun(status: process.terminationStatus, stdout: named(try Data(contentsOf: out)), stderr: named(try Data(contentsOf: err)))
    }
}
