import Foundation
import Testing
import VaultCore
import VaultFiles
@testable import recovery_sheet

/// The tool's side of the child that reads a PDF (issue 37): both its pipes are read at once.
@Suite struct PDFReaderTests {
    /// A child that writes 1 MiB to standard error around a short standard output: read one
    /// after the other, the tool would wait on standard output while the child waits on a full
    /// standard error pipe (64 KiB), for ever. Both are read to their ends, each kept to its
    /// bound and one byte more.
    @Test func bothPipesAreDrainedAtOnceAndBounded() throws {
        let (child, read) = try drained("head -c 1048576 /dev/zero >&2; printf page; head -c 1048576 /dev/zero >&2", keeping: [100, 4096])
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
        #expect(read[0] == Array("page".utf8))
        #expect(read[1].count == 4097 && read[1].allSatisfy { $0 == 0 })
    }

    /// A child that writes more than the bound to standard output is read to its end too (it
    /// never stalls), and what is kept stays at the bound and one byte more.
    @Test func outputPastItsBoundIsDropped() throws {
        let (child, read) = try drained("head -c 3000000 /dev/zero", keeping: [1000, 10])
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
        #expect(read[0].count == 1001 && read[1].isEmpty)
    }

    /// Runs `script` in sh with both its outputs on pipes the tool drains (standard output, then
    /// standard error, each kept to its bound in `keeping`), and waits for it.
    private func drained(_ script: String, keeping bounds: [Int]) throws -> (child: Process, read: [[UInt8]]) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        let output = Pipe(), errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        try child.run()
        let read = ChildProcess.drain([output.fileHandleForReading.fileDescriptor, errors.fileHandleForReading.fileDescriptor], keeping: bounds).kept
        child.waitUntilExit()
        return (child, read)
    }
}
