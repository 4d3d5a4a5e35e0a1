import VaultCore
import VaultImaging

extension TextTemplate {
    /// A `YYYY-MM-DD` date as a sheet prints it, in the language's own style ("22 November
    /// 2026", "22 de noviembre de 2026"): the template's `date.format` with `{day}`, `{month}`
    /// (from `month.1` … `month.12`) and `{year}`. The names come from the template, not from
    /// Foundation's locale data, so every machine prints the same pixels.
    public func printedDate(_ date: String) throws -> String {
        guard let (year, month, day) = Self.calendarDate(date) else {
            throw VaultError.outOfRange("the printed date", "a date as YYYY-MM-DD, not '\(date)'")
        }
        return try text("date.format", ["day": String(day), "month": text("month.\(month)"), "year": String(year)])
    }

    /// A day of the calendar as YYYY-MM-DD (one that exists: no February 31), split; nil
    /// for anything else. The one parser of a printed date, for the tools' options too.
    public static func calendarDate(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, Timestamp(rfc3339: text + "T00:00:00Z") != nil,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        return (year, month, day)
    }
}
