/// Lengths of time as people say them: "45 seconds", "3 days", "2 years". Rounded down to
/// the largest unit that fits, so "expired 3 years ago" never overstates.
public enum TimeSpan {
    private static let units: [(seconds: Int64, name: String)] = [
        (365 * 86_400, "year"), (30 * 86_400, "month"), (7 * 86_400, "week"), (86_400, "day"),
        (3_600, "hour"), (60, "minute"), (1, "second"),
    ]

    /// The span in words; a negative span is described by its length.
    public static func words(seconds: Int64) -> String {
        let length = seconds.magnitude > UInt64(Int64.max) ? Int64.max : Int64(seconds.magnitude)
        // Two of a unit before using it ("90 seconds", not "1 minute"), as people round.
        let unit = units.first { length >= 2 * $0.seconds } ?? units.last { length >= $0.seconds } ?? (1, "second")
        let count = length / unit.seconds
        return "\(count) \(unit.name)\(count == 1 ? "" : "s")"
    }

    /// `time` relative to `now`: "3 years ago", "in 2 days", or "now" within a second.
    public static func relative(_ time: Timestamp, now: Timestamp) -> String {
        let difference = now.seconds - time.seconds
        if difference == 0 { return "now" }
        return difference > 0 ? "\(words(seconds: difference)) ago" : "in \(words(seconds: -difference))"
    }
}
