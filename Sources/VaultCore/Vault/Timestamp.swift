/// An instant in UTC, read and written as RFC 3339 (`2025-11-19T10:00:00Z`).
///
/// Kept as whole seconds plus nanoseconds, not a floating-point `Date`, so that a fractional
/// input such as `.123456789` comes back out digit for digit.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public let seconds: Int64
    /// 0 ..< 1_000_000_000.
    public let nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        precondition((0..<1_000_000_000).contains(nanoseconds))
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// A day (`YYYY-MM-DD`, its first instant in UTC) or a full RFC 3339 time; nil on anything
    /// else. How a person names a cut-off ("not seen since 2026-01-01").
    public init?(dayOrTime text: String) {
        guard let time = Timestamp(rfc3339: text) ?? Timestamp(rfc3339: text + "T00:00:00Z") else { return nil }
        self = time
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; an offset is folded into UTC.
    /// Returns nil on anything else.
    public init?(rfc3339 text: String) {
        let c = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= c.count else { return nil }
            var value = 0
            for index in range {
                guard (0x30...0x39).contains(c[index]) else { return nil }
                value = value * 10 + Int(c[index] - 0x30)
            }
            return value
        }
        guard c.count >= 20,
              let year = number(0..<4), c[4] == 0x2d, let month = number(5..<7), c[7] == 0x2d,
              let day = number(8..<10), c[10] == 0x54 || c[10] == 0x74,
              let hour = number(11..<13), c[13] == 0x3a, let minute = number(14..<16), c[16] == 0x3a,
              let second = number(17..<19),
              (1...12).contains(month), (1...Self.daysInMonth(year: year, month: month)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }

        var index = 19
        var nanos = 0
        if c[index] == 0x2e {
            index += 1
            var digits = 0
            while index < c.count, (0x30...0x39).contains(c[index]) {
                if digits < 9 { nanos = nanos * 10 + Int(c[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanos *= 10 }
        }
        var offsetSeconds = 0
        guard index < c.count else { return nil }
        if c[index] == 0x5a || c[index] == 0x7a {
            index += 1
        } else if c[index] == 0x2b || c[index] == 0x2d {
            guard let offsetHour = number((index + 1)..<(index + 3)), index + 3 < c.count, c[index + 3] == 0x3a,
                  let offsetMinute = number((index + 4)..<(index + 6)), offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetSeconds = (offsetHour * 3600 + offsetMinute * 60) * (c[index] == 0x2b ? 1 : -1)
            index += 6
        } else {
            return nil
        }
        guard index == c.count else { return nil }

        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        self.init(seconds: seconds, nanoseconds: Int32(nanos))
    }

    /// RFC 3339 in UTC with a `Z`; a fraction only when there is one, without trailing zeros.
    public var rfc3339: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = Self.civilFromDays(Int(days))
        // Every timestamp of every document is written this way: digits into one buffer, not
        // a dozen small strings joined (issue 29). Years outside 0–9999 keep the general path.
        if (0...9999).contains(year) {
            return String(unsafeUninitializedCapacity: 30) { out in
                var count = 0
                func put(_ value: Int, _ width: Int) {
                    var value = value
                    for index in stride(from: count + width - 1, through: count, by: -1) {
                        out[index] = 0x30 + UInt8(value % 10)
                        value /= 10
                    }
                    count += width
                }
                func put(_ byte: UInt8) { out[count] = byte; count += 1 }
                put(year, 4); put(0x2d); put(month, 2); put(0x2d); put(day, 2); put(0x54)
                put(secondOfDay / 3600, 2); put(0x3a); put(secondOfDay / 60 % 60, 2); put(0x3a); put(secondOfDay % 60, 2)
                if nanoseconds > 0 {
                    put(0x2e)
                    put(Int(nanoseconds), 9)
                    while out[count - 1] == 0x30 { count -= 1 }
                }
                put(0x5a)
                return count
            }
        }
        return piecewiseRFC3339
    }

    /// The same text joined from strings: years outside 0–9999, and the tests' reference.
    var piecewiseRFC3339: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = Self.civilFromDays(Int(days))
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if nanoseconds > 0 {
            var fraction = pad(Int(nanoseconds), 9)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    public var description: String { rfc3339 }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days: exact proleptic Gregorian arithmetic.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
