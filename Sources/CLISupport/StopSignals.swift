import FoundationEssentials
import Glibc
import Synchronization

/// SIGTERM (how a job engine or systemd stops a run) and SIGINT, turned from a death into a
/// request: the handler only records the signal, and a fleet run checks it between vaults,
/// lets the writes in flight finish, records them and prints its summary (``RunBreaker``).
/// Installed only by the commands that run fleets; every other command dies of them as before.
public enum StopSignals {
    /// The signal received, 0 for none. Atomic, so the handler may store it (async-signal-safe).
    private static let received = Atomic<Int32>(0)

    /// Installs the handlers; from then on the signals only set the flag.
    public static func install() {
        _ = received.load(ordering: .relaxed)  // initialised before a handler can touch it
        for signal in [SIGTERM, SIGINT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { StopSignals.received.store($0, ordering: .relaxed) }
            sigemptyset(&action.sa_mask)
            // SA_RESTART: reads and writes in flight carry on as if no signal came; the run
            // looks at the flag between vaults.
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }

    /// The stop signal received, nil for none.
    public static var signalled: Int32? {
        let signal = received.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }
}
