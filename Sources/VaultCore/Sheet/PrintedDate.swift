extension TextTemplate {
    /// A `YYYY-MM-DD` date as a sheet prints it, in the language's own style ("22 November
    /// 2026", "22 de noviembre de 2026"): the template's `date.format` with `{day}`, `{month}`
    /// (from `month.1` … `month.12`) and `{year}`. The names come from the template, not from
    /// Foundation's locale data, so every machine prints the same pixels.
    public func printedDate(_ date: String) throws -> String {
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else {
            throw VaultError.outOfRange("the printed date", "a date as YYYY-MM-DD, not '\(date)'")
        }
        return try text("date.format", ["day": String(day), "month": text("month.\(month)"), "year": String(year)])
    }
}
