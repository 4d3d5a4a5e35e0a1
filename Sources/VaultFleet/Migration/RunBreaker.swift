import FoundationEssentials
import Glibc
import Synchronization
import VaultCore

/// Stops a fleet run early instead of failing every vault that is left: when the store has gone
/// (`threshold` vaults in a row failed only because of it, after their retries), when its
/// configuration cannot work (a failure of the `.configuration` category: no other vault will
/// fare better), or when the process was asked to stop (SIGTERM, SIGINT). Vaults in flight
/// finish and are recorded; the rest are never started, and stay pending for the next run.
public final class RunBreaker: Sendable {
    public enum Stop: Sendable, Equatable {
        /// `threshold` vaults in a row failed because of the store; the last one's error.
        case storeGone(VaultError)
        /// The configuration cannot work; the error that said so.
        case configuration(VaultError)
        /// The signal that asked the run to stop.
        case signal(Int32)
    }

    /// Vaults in a row that failed only because of the store before the run stops.
    public let threshold: Int
    private let signalled: @Sendable () -> Int32?
    private let state = Mutex<(failuresInARow: Int, stop: Stop?)>((0, nil))

    /// `signalled` says which stop signal arrived, if one did (CLISupport's ``StopSignals``).
    public init(threshold: Int = 5, signalled: @escaping @Sendable () -> Int32? = { nil }) {
        self.threshold = max(1, threshold)
        self.signalled = signalled
    }

    /// Why the run stopped, nil while it may go on.
    public var stop: Stop? {
        state.withLock { state in
            if state.stop == nil, let signal = signalled() { state.stop = .signal(signal) }
            return state.stop
        }
    }

    /// Whether another vault may start.
    public var mayStart: Bool { stop == nil }

    /// Counts a vault's outcome: an error of the store adds to the failures in a row, anything
    /// else (done, or failed for a reason of its own: the store answered) ends the row.
    public func record(_ error: VaultError?) {
        state.withLock { state in
            switch error?.code.category {
            case .configuration?:
                state.stop = state.stop ?? .configuration(error!)
            case .temporary?:
                state.failuresInARow += 1
                if state.failuresInARow >= threshold { state.stop = state.stop ?? .storeGone(error!) }
            default:
                state.failuresInARow = 0
            }
        }
    }

    /// What the run ends with when it stopped early: the store gone and a signal are worth
    /// running again (exit 75), a configuration that cannot work is not (its own error).
    public static func failure(_ stop: Stop, notStarted: Int) -> VaultError {
        switch stop {
        case .storeGone(let last): .storeGone(notStarted: notStarted, last: last)
        case .configuration(let error): error
        case .signal(let signal): .runStopped(signal: signal, notStarted: notStarted)
        }
    }
}

/// Thrown inside the run's workers to stop taking vaults; never leaves ``BucketMigration``.
struct RunStopped: Error {}

extension VaultError.Code {
    /// A fleet run stopped because the object store went away; the rest is left for a rerun.
    public static let storeGone = VaultError.Code(name: "storeGone", category: .temporary)
    /// A fleet run stopped on SIGTERM or SIGINT, after the vaults in flight; the rest is left for a rerun.
    public static let runStopped = VaultError.Code(name: "runStopped", category: .temporary)
}

extension VaultError {
    static func storeGone(notStarted: Int, last: VaultError, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storeGone, "the object store went away, so the run stopped: \(last.reason); \(notStarted) vaults were not started",
                   hint: "run the same command again later: finished vaults are not redone", file: file, line: line)
    }

    static func runStopped(signal: Int32, notStarted: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        let name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "signal \(signal)"
        return VaultError(.runStopped, "stopped by \(name) after the vaults in flight; \(notStarted) vaults were not started",
                          hint: "run the same command again: finished vaults are not redone", file: file, line: line)
    }
}
