import Foundation
import Testing
@testable import VaultCore
@testable import VaultFiles

/// The suite's own child process (in place of Foundation's Process): exact environment, input
/// fed while output is read, bounds, and no descriptor of the tool's in the child.
@Suite struct ChildProcessTests {
    @Test func inputGoesInWhileOutputComesOut() throws {
        var random = SeededGenerator(source: SeededRandom(seed: 3))
        let input = (0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let child = try ChildProcess.run("/bin/cat", arguments: [], environment: [:], input: input, outputLimit: 4_000_000, errorLimit: 100, timeout: 60)
        #expect(child.termination == .exited(0))
        #expect(child.output == input)
    }

    @Test func environmentIsExactlyTheOneGiven() throws {
        let child = try ChildProcess.run("/usr/bin/env", arguments: [], environment: ["A": "1", "LANG": "C"], input: nil, outputLimit: 1000, errorLimit: nil, timeout: 60)
        #expect(child.termination == .exited(0))
        #expect(Set(String(decoding: child.output, as: UTF8.self).split(separator: "\n")) == ["A=1", "LANG=C"])
    }

    /// A descriptor the tool holds open (not close-on-exec) does not reach the child.
    @Test func theChildGetsOnlyItsThreeDescriptors() throws {
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        let child = try ChildProcess.run("/bin/sh", arguments: ["-c", "ls /proc/self/fd"], environment: ["PATH": "/usr/bin:/bin"], input: nil,
                                         outputLimit: 1000, errorLimit: 1000, timeout: 60)
        #expect(child.termination == .exited(0))
        // 0, 1, 2 and the folder ls reads.
        #expect(String(decoding: child.output, as: UTF8.self).split(separator: "\n").count == 4)
    }

    @Test func outputPastItsLimitKillsTheChild() throws {
        let child = try ChildProcess.run("/bin/sh", arguments: ["-c", "exec cat /dev/zero"], environment: [:], input: nil, outputLimit: 1000, errorLimit: nil, timeout: 60)
        #expect(child.termination == .killed(SIGKILL))
        #expect(child.output.count == 1001)
    }

    @Test func exitStatusAndStandardErrorAreKept() throws {
        let child = try ChildProcess.run("/bin/sh", arguments: ["-c", "printf oops >&2; exit 3"], environment: [:], input: [1, 2, 3], outputLimit: 10, errorLimit: 2, timeout: 60)
        #expect(child.termination == .exited(3))
        #expect(child.errors == Array("oop".utf8))
    }

    /// A child that closes its input unread while its output stays open: 4 MiB cannot fit in a
    /// pipe (64 KiB), so feeding it ends in EPIPE, an error of the write, never SIGPIPE, which
    /// would end this test process (it does not ignore SIGPIPE, as the tools do). The sleep only
    /// keeps the output open meanwhile.
    @Test func aChildThatClosesItsInputUnreadIsNoSignal() throws {
        let input = [UInt8](repeating: 7, count: 4 << 20)
        let child = try ChildProcess.run("/bin/sh", arguments: ["-c", "exec 0<&-; sleep 2; exit 5"], environment: ["PATH": "/usr/bin:/bin"],
                                         input: input, outputLimit: 10, errorLimit: 10, timeout: 60)
        #expect(child.termination == .exited(5))
    }

    @Test func aMissingProgramIsAStartError() {
        #expect(throws: ChildProcessStartError.self) {
            try ChildProcess.run("/nonexistent/program", arguments: [], environment: [:], input: nil, outputLimit: 10, errorLimit: nil, timeout: 60)
        }
    }

    /// A child past its deadline is killed and said to have timed out (issue 44: a hanging
    /// credential_process hung every bucket command).
    @Test func aChildPastItsDeadlineIsKilled() throws {
        let child = try ChildProcess.run("/bin/sleep", arguments: ["600"], environment: [:], input: nil, outputLimit: 10, errorLimit: 10, timeout: 0.3)
        #expect(child.termination == .timedOut)
    }

    /// A program the child leaves in the background holding its output does not hold the
    /// caller: once the child has exited, what it wrote is read and nothing more is waited for.
    @Test func aGrandchildHoldingThePipeIsNotWaitedFor() throws {
        let child = try ChildProcess.run("/bin/sh", arguments: ["-c", "printf done; sleep 600 & exit 4"], environment: ["PATH": "/usr/bin:/bin"],
                                         input: nil, outputLimit: 100, errorLimit: 100, timeout: 60)
        #expect(child.termination == .exited(4))
        #expect(child.output == Array("done".utf8))
    }

    /// The environment a child of the suite gets keeps no credential, passes what a program
    /// needs, and passes what HVT_CHILD_ENV names.
    @Test func aChildsEnvironmentHoldsNoCredential() {
        let tool = ["PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "AWS_PROFILE": "p", "AWS_ENDPOINT_URL_S3": "http://s3",
                    "AWS_SECRET_ACCESS_KEY": "s", "AWS_ACCESS_KEY_ID": "a", "AWS_SESSION_TOKEN": "t", "PGPASSWORD": "pw",
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN": "c", "SOMETHING_ELSE": "x"]
        let child = ChildEnvironment.minimal(from: tool, adding: ["HVT_HOUSEHOLD": "h1"])
        #expect(child == ["PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "AWS_PROFILE": "p", "AWS_ENDPOINT_URL_S3": "http://s3", "HVT_HOUSEHOLD": "h1"])
        let named = ChildEnvironment.minimal(from: tool.merging(["HVT_CHILD_ENV": "SOMETHING_ELSE, PGPASSWORD"]) { $1 })
        #expect(named["SOMETHING_ELSE"] == "x" && named["PGPASSWORD"] == "pw" && named["AWS_SECRET_ACCESS_KEY"] == nil)
    }
}
