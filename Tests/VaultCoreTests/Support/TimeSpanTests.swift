import Testing
@testable import VaultCore

@Suite struct TimeSpanTests {
    @Test(arguments: [
        (0, "0 seconds"), (1, "1 second"), (59, "59 seconds"), (119, "119 seconds"), (120, "2 minutes"),
        (7_199, "119 minutes"), (7_200, "2 hours"), (2 * 86_400, "2 days"), (20 * 86_400, "2 weeks"),
        (70 * 86_400, "2 months"), (3 * 365 * 86_400 + 5, "3 years"), (-90, "90 seconds"),
    ] as [(Int64, String)])
    func wordsRoundDownToTheLargestUnitThatFitsTwice(_ seconds: Int64, _ words: String) {
        #expect(TimeSpan.words(seconds: seconds) == words)
    }

    @Test func relativeTimesSayWhichWay() {
        let now = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!
        #expect(TimeSpan.relative(Timestamp(rfc3339: "2023-11-01T10:00:00Z")!, now: now) == "3 years ago")
        #expect(TimeSpan.relative(Timestamp(rfc3339: "2026-11-25T10:00:00Z")!, now: now) == "in 3 days")
        #expect(TimeSpan.relative(now, now: now) == "now")
        #expect(TimeSpan.words(seconds: .min).hasSuffix("years"))
    }
}
