import Testing
@testable import VaultCore

@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", Int64(0)),
        ("2025-11-19T10:00:00Z", "2025-11-19T10:00:00Z", Int64(1_763_546_400)),
        ("2025-11-19T10:00:00.250Z", "2025-11-19T10:00:00.25Z", Int64(1_763_546_400)),
        ("2025-11-19t10:00:00.123456789z", "2025-11-19T10:00:00.123456789Z", Int64(1_763_546_400)),
        ("2025-11-19T12:30:00+02:30", "2025-11-19T10:00:00Z", Int64(1_763_546_400)),
        ("2025-11-19T05:00:00-05:00", "2025-11-19T10:00:00Z", Int64(1_763_546_400)),
        ("2024-02-29T23:59:59Z", "2024-02-29T23:59:59Z", Int64(1_709_251_199)),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z", Int64(-1)),
    ])
    func parsesAndFormats(_ input: String, _ output: String, _ seconds: Int64) throws {
        let time = try #require(Timestamp(rfc3339: input))
        #expect(time.seconds == seconds)
        #expect(time.rfc3339 == output)
        #expect(Timestamp(rfc3339: time.rfc3339) == time)
    }

    @Test(arguments: ["", "2025-11-19", "2025-11-19T10:00:00", "2025-02-29T10:00:00Z", "2025-13-01T00:00:00Z",
                      "2025-11-19T24:00:00Z", "2025-11-19T10:60:00Z", "2025-11-19T10:00:60Z", "2025-11-19T10:00:00.Z",
                      "2025-11-19T10:00:00+0200", "2025-11-19 10:00:00Z", "2025-11-19T10:00:00Zjunk", "+025-11-19T10:00:00Z"])
    func rejects(_ input: String) {
        #expect(Timestamp(rfc3339: input) == nil)
    }

    @Test func ordersByInstant() throws {
        let a = try #require(Timestamp(rfc3339: "2025-11-19T10:00:00.5Z"))
        let b = try #require(Timestamp(rfc3339: "2025-11-19T12:00:00.4+02:00"))
        #expect(b < a)
    }

    /// The timestamp writer fills one buffer (issue 29): byte for byte the text the joined
    /// strings made, for instants across years 0–9999 with and without fractions.
    @Test func writesWhatThePiecewiseWriterWrote() {
        let random = SeededRandom(seed: 29)
        // 0000-01-01 to 9999-12-31, and a little either side of it.
        let earliest: Int64 = -62_167_219_200 - 86_400 * 400, latest: Int64 = 253_402_300_799 + 86_400 * 400
        for index in 0..<20_000 {
            let seconds = earliest + Int64(random.next() % UInt64(latest - earliest))
            let nanoseconds: Int32 = switch index % 4 {
            case 0: 0
            case 1: Int32(random.next() % 1_000) * 1_000_000
            default: Int32(random.next() % 1_000_000_000)
            }
            let time = Timestamp(seconds: seconds, nanoseconds: nanoseconds)
            #expect(time.rfc3339 == time.piecewiseRFC3339)
        }
        for edge: Int64 in [0, -1, 86_399, 86_400, -62_167_219_200, 253_402_300_799] {
            let time = Timestamp(seconds: edge, nanoseconds: 100)
            #expect(time.rfc3339 == time.piecewiseRFC3339)
        }
    }
}
