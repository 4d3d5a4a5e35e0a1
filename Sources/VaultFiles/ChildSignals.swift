import Glibc
import Synchronization

/// A signal that ends the tool (`kill`'s SIGTERM, a closed terminal's SIGHUP, SIGINT, SIGQUIT)
/// while it waits on a child ends the child first, with what it started, then the tool as the
/// signal would have (a hostile trial: `kill -TERM` of a tool waiting on a key command left
/// the command's script and its `sleep 300` running past the tool and past the deadline the
/// tool keeps). The child shares the tool's process group, so that a key command may ask on the
/// terminal, and a signal sent to the tool alone does not reach it.
///
/// While a child is watched (``watch(_:)``) the handlers only record the signal, as
/// ``killWithDescendants`` cannot run in a handler; the loops that wait on the child look
/// every 20 ms (``arrived``), kill it and return; the last watch to end puts the tool's own
/// dispositions back and raises the signal again: the tool dies of it, or a fleet run's
/// handler (``StopSignals``) takes it as a request to stop. A signal the tool ignores (`nohup`)
/// stays ignored.
package enum ChildSignals {
    private static let received = Atomic<Int32>(0)
    private static let watchers = Mutex<(count: Int, previous: [(Int32, sigaction)])>((0, []))
    private static let ending = [SIGTERM, SIGINT, SIGHUP, SIGQUIT]

    /// Whether an ending signal came while a child was watched: its loop kills it and returns.
    package static var arrived: Bool { received.load(ordering: .relaxed) != 0 }

    /// Runs `body`, which starts a child and waits on it, with the ending signals recorded.
    package static func watch<T>(_ body: () throws -> T) rethrows -> T {
        _ = received.load(ordering: .relaxed)  // initialised before a handler can touch it
        watchers.withLock { state in
            state.count += 1
            guard state.count == 1 else { return }
            for signal in ending {
                var previous = sigaction(), recording = sigaction()
                // SIG_IGN is the handler 1 (a C macro, not imported).
                guard sigaction(signal, nil, &previous) == 0,
                      previous.__sigaction_handler.sa_handler.map({ unsafeBitCast($0, to: Int.self) }) != 1 else { continue }
                recording.__sigaction_handler.sa_handler = { ChildSignals.received.store($0, ordering: .relaxed) }
                sigemptyset(&recording.sa_mask)
                recording.sa_flags = SA_RESTART
                sigaction(signal, &recording, nil)
                state.previous.append((signal, previous))
            }
        }
        defer {
            let signal: Int32? = watchers.withLock { state in
                state.count -= 1
                guard state.count == 0 else { return nil }
                for (signal, var previous) in state.previous { sigaction(signal, &previous, nil) }
                state.previous = []
                let signal = received.exchange(0, ordering: .relaxed)
                return signal == 0 ? nil : signal
            }
            if let signal { raise(signal) }
        }
        return try body()
    }
}
