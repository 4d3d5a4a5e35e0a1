import Foundation
import Testing

/// One end-to-end case: a command line, and its stdout, stderr and exit code kept in
/// Golden/<tool>/<name>.{stdout,stderr,exit} next to this file.
struct GoldenCase: CustomTestStringConvertible, Sendable {
    let tool: String
    let name: String
    let arguments: [String]
    var stdin: String? = nil
    /// Prepares the scratch workspace before the command runs (test images, word files).
    var prepare: (@Sendable (Workspace) throws -> Void)? = nil

    var testDescription: String { "\(tool) \(name)" }
}

enum Golden {
    static let folder = Workspace.testsFolder.appendingPathComponent("Golden")
    static var recording: Bool { ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" }

    /// Runs the case and compares (`onObjectStore`: with its vaults in a bucket, see
    /// ``Workspace/uploadToBucket()``); with RECORD_GOLDEN=1 writes the files instead and records a
    /// failure, so a recording run can never pass (CI never records).
    static func check(_ golden: GoldenCase, databases: [String: String] = [:], onObjectStore: Bool = false, objectOutputs: Set<String> = []) throws {
        let workspace = try Workspace()
        workspace.databases = databases
        try golden.prepare?(workspace)
        if onObjectStore { try workspace.uploadToBucket(outputs: objectOutputs) }
        let run = try workspace.run(golden.tool, golden.arguments, stdin: golden.stdin)
        // The object-store run checks sameness with the file run's goldens: it never records them.
        try compare(tool: golden.tool, name: golden.name, [("stdout", run.stdout), ("stderr", run.stderr), ("exit", Array("\(run.status)\n".utf8))],
                    record: recording && !onObjectStore)
    }

    /// Compares named outputs with Golden/<tool>/<name>.<suffix>, or records them.
    static func compare(tool: String, name: String, _ actual: [(String, [UInt8])], record: Bool = recording) throws {
        let golden = (tool: tool, name: name)
        let base = folder.appendingPathComponent(tool).appendingPathComponent(name)
        if record {
            try FileManager.default.createDirectory(at: base.deletingLastPathComponent(), withIntermediateDirectories: true)
            for (suffix, bytes) in actual {
                try Data(bytes).write(to: base.appendingPathExtension(suffix))
            }
            Issue.record("recorded \(golden.tool)/\(golden.name); review the diff, then run again without RECORD_GOLDEN")
            return
        }
        for (suffix, bytes) in actual {
            let file = base.appendingPathExtension(suffix)
            guard let expected = FileManager.default.contents(atPath: file.path) else {
                Issue.record("missing golden file \(file.lastPathComponent); record it with RECORD_GOLDEN=1")
                continue
            }
            // Bytes, not text: decoding as UTF-8 maps every invalid sequence to U+FFFD, so two
            // different binary outputs could compare equal (issue 16).
            #expect(bytes == [UInt8](expected), "\(golden.tool) \(golden.name): \(suffix) differs from \(golden.tool)/\(file.lastPathComponent):\n\(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
