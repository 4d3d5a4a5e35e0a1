import Testing
@testable import VaultCore
@testable import VaultFiles

/// What a child writes to standard error is relayed a line at a time, and a line that repeats
/// what it answered on standard output is withheld, in every spelling that answer takes.
@Suite struct ChildErrorsTests {
    /// The lines `bytes` relays as a child's standard error, given its `answer`, in a run that
    /// holds the secrets `held` finds (none: this process's are other tests' keys).
    func relayed(_ bytes: String, answer: String, held: @escaping (ArraySlice<UInt8>) -> Bool = { _ in false }) -> [String] {
        var lines: [String] = []
        ChildErrors.deliver(Array(bytes.utf8), withholding: Array(answer.utf8), holdsHeldSecret: held) { lines.append($0) }
        return lines
    }

    /// A standard error holding a key the run holds is withheld whole, whatever the lines.
    @Test func anErrorHoldingAHeldKeyIsWithheldWhole() {
        let key = "d727917d50873765509e32b3875462f52dc7f945f15c200f32cd060a4d45cbaf"
        let held: (ArraySlice<UInt8>) -> Bool = { text in String(decoding: text, as: UTF8.self).contains(key.prefix(32)) }
        #expect(relayed("a\n\(key.prefix(32))\n\(key.dropFirst(32))\nb\n", answer: "", held: held)
                == ["(its standard error not shown: it holds a key this run holds, in some spelling)"])
        #expect(relayed("a\nb\n", answer: "", held: held) == ["a", "b"])
    }

    @Test func aLineRepeatingTheAnswerIsWithheld() {
        let secret = "wJalrXUtnFEMI/K7MDENGbPxR/fiCYEXAMPLEKEY"
        // A credential_process whose JSON escapes its slashes, as Swift's JSONEncoder does.
        let escaped = #"{"Version":1,"AccessKeyId":"AKIAEXAMPLE123456789","SecretAccessKey":"wJalrXUtnFEMI\/K7MDENGbPxR\u002ffiCYEXAMPLEKEY"}"#
        let lines = relayed("debug: got secret \(secret)\nrefreshing\npart \(secret.prefix(20))\n", answer: escaped)
        #expect(lines.count == 3 && lines[1] == "refreshing")
        #expect(lines[0].hasPrefix("(a line not shown") && lines[2].hasPrefix("(a line not shown"))
        let key = "d727917d50873765509e32b3875462f52dc7f945f15c200f32cd060a4d45cbaf"
        let spelled = [key.uppercased(), String(key.prefix(32)), stride(from: 0, to: 64, by: 2).map { i in String(key.dropFirst(i).prefix(2)) }.joined(separator: ":")]
        #expect(relayed(spelled.joined(separator: "\n") + "\nfine\n", answer: key + "\n") == Array(repeating: lines[0], count: 3) + ["fine"])
        // Nothing answered: every line is shown (its secrets are the relay's to withhold).
        #expect(relayed("a\nb\n", answer: "") == ["a", "b"])
    }
}
