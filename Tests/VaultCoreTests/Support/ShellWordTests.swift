import Foundation
import Testing
@testable import VaultCore
import VaultRegistry

/// The words of a hint's command, as bash (the shell people paste into) reads them back: each
/// argument `printf` is given, NUL-terminated. A word holding a control character is bash's
/// `$'…'` (ksh, zsh and POSIX.1-2024 read it too; dash before 0.5.13 does not).
private func shellWords(_ command: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", "printf '%s\\0' " + command]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let bytes = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(command)")
    return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
}

/// A hint's command gives back, through a shell, exactly the words it names, and a value starting
/// with `-` stays a value: `--db=-r.sqlite`, or `./-r.sqlite` as another program's argument.
@Suite struct ShellWordTests {
    static let values = ["plain.sqlite", "my registry.sqlite", "it's", "a'\u{301}b", "$(touch pwned) `x` $HOME", "x;y&z|w>v", "",
                         "line\nbreak", "naïve ✓.sqlite", "-r.sqlite", "-", "--db", "\\back\\slash", "'", "''",
                         "k\n\u{1b}[31mX\u{202e}'\\.nsec", "tab\there\u{200b}", "\u{7f}\r", "pp e\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}"]

    @Test(arguments: values) func aWordIsReadBackAsItWas(_ value: String) throws {
        #expect(try shellWords(ShellWord.quoted(value)) == [value])
        #expect(try shellWords(ShellWord.quotedIfNeeded(value)) == [value])
    }

    @Test(arguments: values) func anOptionsValueStaysItsValue(_ value: String) throws {
        for quoted in [false, true] {
            let words = try shellWords(ShellWord.option("--db", value, quoted: quoted))
            if value.hasPrefix("-") && value != "-" {
                #expect(words == ["--db=" + value])
            } else {
                #expect(words == ["--db", value])
            }
        }
    }

    @Test func aPathStartingWithADashIsNoOption() throws {
        #expect(try shellWords(ShellWord.path("-r.sqlite")) == ["./-r.sqlite"])
        #expect(try shellWords(ShellWord.path("/srv/-r.sqlite")) == ["/srv/-r.sqlite"])
        let hint = try #require(VaultError.registryNeedsRollback("-r.sqlite").hint)
        #expect(hint.contains("sqlite3 './-r.sqlite' 'SELECT"), "\(hint)")
    }
}
