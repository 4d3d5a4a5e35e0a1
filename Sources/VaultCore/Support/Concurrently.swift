import Foundation
import Synchronization

/// Runs `body` for every index in `0..<count` on `parallelism` threads of its own and returns the
/// results in index order; the first error stops the rest and is thrown.
///
/// Threads, not `DispatchQueue.concurrentPerform`: work that waits on the network (a bucket's
/// census or migration) wants more threads than cores, which concurrentPerform never runs; work
/// on the CPU and disk (the folder batch) passes the core count. `progress` is called (from the
/// workers, serialised) every 100 results with the count so far.
package func concurrently<T: Sendable>(_ count: Int, parallelism: Int, progress: ((Int) -> Void)? = nil,
                               _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let state = Mutex<(next: Int, done: Int, results: [T?], failure: Error?)>((0, 0, Array(repeating: nil, count: count), nil))
    let progressLock = NSLock()
    nonisolated(unsafe) let report = progress
    let group = DispatchGroup()
    for _ in 0..<max(1, min(parallelism, count)) {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            while true {
                let index: Int? = state.withLock { state in
                    guard state.failure == nil, state.next < count else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let index else { return }
                do {
                    let result = try body(index)
                    let done = state.withLock { state -> Int in
                        state.results[index] = result
                        state.done += 1
                        return state.done
                    }
                    if done % 100 == 0, let report {
                        progressLock.lock()
                        report(done)
                        progressLock.unlock()
                    }
                } catch {
                    state.withLock { $0.failure = $0.failure ?? error }
                    return
                }
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
    let (results, failure) = state.withLock { ($0.results, $0.failure) }
    if let failure { throw failure }
    return results.map { $0! }
}
