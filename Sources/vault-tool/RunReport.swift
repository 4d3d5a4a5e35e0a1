import CLISupport
import FoundationEssentials
import Synchronization
import VaultCore

/// What a batch run shows while it runs, for the folder batch and the bucket batch alike: each
/// result as one JSON Lines line on standard output, in the order they finish; on a terminal's
/// standard error a progress bar redrawn in place; and the count of each status for the summary.
final class RunReport<Status: Hashable & Sendable>: Sendable {
    private let counts = Mutex([Status: Int]())
    private let total: Int
    /// The statuses the progress bar counts as failures.
    private let failing: Set<Status>
    private let showProgress = StandardStreams.errorIsTerminal && LogFormat.current == .text
    /// `--log-format json` on a log (not a terminal): a progress event every 10 seconds.
    private let logProgress = LogFormat.current == .json
    private let lastProgress = Mutex<Date>(Date())
    /// One terminal shows both streams: each report line is printed above the bar (the bar is
    /// cleared, the line written, the bar drawn again), never through it.
    private let sharedTerminal = StandardStreams.outputAndErrorShareTerminal
    private let started = Date()

    init(total: Int, failing: Set<Status>) {
        self.total = total
        self.failing = failing
    }

    /// Counts and writes one result; throws when standard output cannot take it (a full disk, a
    /// closed pipe), which stops the run: a report with lines missing is no report.
    func add(_ status: Status, _ line: JSONValue) throws {
        let text = Array((String(decoding: line.reported(pretty: false), as: UTF8.self) + "\n").utf8)
        try counts.withLock { counts in
            counts[status, default: 0] += 1
            if sharedTerminal { StandardStreams.writeError(Array("\r\u{1b}[K".utf8)) }
            try StandardStreams.writeOutput(text)
            if showProgress {
                Self.drawProgress(done: counts.values.reduce(0, +), total: total, failed: failing.reduce(0) { $0 + counts[$1, default: 0] },
                                  seconds: Date().timeIntervalSince(started))
            }
            if logProgress, lastProgress.withLock({ last in
                guard Date().timeIntervalSince(last) >= LogFormat.progressInterval else { return false }
                last = Date()
                return true
            }) {
                StandardStreams.writeError(LogFormat.line(level: "info", event: "progress", tool: "vault-tool", fields: [
                    ("done", .int(counts.values.reduce(0, +))), ("total", .int(total)),
                    ("failed", .int(failing.reduce(0) { $0 + counts[$1, default: 0] })),
                    ("seconds", .int(Int(Date().timeIntervalSince(started)))),
                ]))
            }
        }
    }

    /// Clears the progress bar and returns how many results had each status.
    func finish() -> [Status: Int] {
        if showProgress { StandardStreams.writeError(Array("\r\u{1b}[K".utf8)) }
        return counts.withLock { $0 }
    }

    /// "[#####.....] 1200/2000  310/s  ETA 3 s  2 failed", redrawn in place.
    static func drawProgress(done: Int, total: Int, failed: Int, seconds: Double) {
        let width = 30, filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let eta = rate > 0 ? Int((Double(total - done) / rate).rounded(.up)) : nil
        let etaText = eta.map { $0 >= 120 ? "ETA \($0 / 60) min" : "ETA \($0) s" } ?? "ETA …"
        let rateText = rate >= 10 ? String(Int(rate)) : rate.fixed(decimals: 1)
        StandardStreams.writeError(Array("\r[\(bar)] \(done)/\(total)  \(rateText)/s  \(etaText)\(failed > 0 ? "  \(failed) failed" : "")\u{1b}[K".utf8))
    }
}
