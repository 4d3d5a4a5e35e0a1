import Foundation
import Synchronization
import Testing
@testable import VaultCore
@testable import VaultFiles

/// A key command (`--key-command`, a bucket run's `--vault-key-command`) gets only its three
/// standard descriptors: not the tool's, and not another key command's pipe.
@Suite struct SecretCommandTests {
    private func printedLines(_ outcome: SecretCommand.Outcome) throws -> [Substring] {
        guard case .printed(let bytes) = outcome else {
            Issue.record("the command did not print: \(outcome)")
            return []
        }
        return bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.split(separator: "\n")
    }

    /// A descriptor the tool holds open (not close-on-exec, as a pipe another thread's key
    /// command was being given) does not reach the command.
    @Test func theCommandGetsOnlyItsThreeDescriptors() throws {
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        let outcome = try SecretCommand(arguments: ["/bin/sh", "-c", "ls /proc/self/fd"]).run(timeout: 30)
        // 0, 1, 2 and the folder ls reads.
        #expect(try printedLines(outcome).count == 4)
    }

    /// Commands run at once by several threads each see the end of their own output when they
    /// exit: none holds another's pipe open.
    @Test func concurrentCommandsHoldNoOtherPipe() throws {
        let count = 8
        let lines = Mutex<[Int: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let outcome = try? SecretCommand(arguments: ["/bin/sh", "-c", "ls /proc/self/fd"]).run(timeout: 30)
            let printed = outcome.flatMap { try? printedLines($0) } ?? []
            lines.withLock { $0[index] = printed.count }
        }
        #expect(lines.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, 4) }))
    }
}

/// The timeout holds for the command, not only its output.
@Suite struct SecretCommandTimeoutTests {
    /// A command that printed a key and closed its output but runs on is killed at the
    /// timeout: the tool no longer waits for it without end.
    @Test func aCommandThatClosesItsOutputAndRunsOnTimesOut() throws {
        let outcome = try SecretCommand(arguments: ["/bin/sh", "-c", "printf key; exec >&-; exec sleep 60"]).run(timeout: 1)
        guard case .timedOut = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
    }

    /// One that closes its output and exits a little later is waited for, not killed.
    @Test func aCommandThatClosesItsOutputAndThenExitsIsRead() throws {
        let outcome = try SecretCommand(arguments: ["/bin/sh", "-c", "printf key; exec >&-; exit 0"]).run(timeout: 30)
        guard case .printed(let bytes) = outcome else {
            Issue.record("expected the output, got \(outcome)")
            return
        }
        #expect(bytes.withUnsafeBytes { Array($0) } == Array("key".utf8))
    }
}
