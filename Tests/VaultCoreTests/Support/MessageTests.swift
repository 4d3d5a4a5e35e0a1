import Testing
@testable import VaultCore

/// What messages quote of their inputs: a bounded part, and ids long enough to tell apart.
@Suite struct MessageTests {
    @Test func aReasonQuotingAHugeInputIsBounded() {
        let error = VaultError(.malformedDocument, "version " + String(repeating: "9", count: 5_000_000) + " is not supported", hint: String(repeating: "h", count: 3000))
        #expect(error.reason.utf8.count < VaultError.maximumMessageLength + 40)
        #expect(error.reason.hasSuffix("more bytes)") && error.hint!.hasSuffix("more bytes)"))
        #expect(VaultError(.io, "short").reason == "short")
    }

    @Test func shortenedIdsDifferWhereTheIdsDo() {
        let a = "0a92686c7aa4ac0f39bf3a8c6cc4078ef7683ed020866e18320156f952336b4e"
        let b = "0a92686c7aa4ac0f39bf3a8c6cc4078ef7683ed020866e18320156f952336b4f"
        let (first, second) = Hex.shortened(a, b)
        #expect(first != second && first.hasSuffix("4e") && second.hasSuffix("4f"))
        let (c, d) = Hex.shortened(a, "ff" + a.dropFirst(2))
        #expect(c == String(a.prefix(12)) + "…" && d.count == 13)
        #expect(Hex.shortened("abc", "abd") == ("abc", "abd"))
    }
}
