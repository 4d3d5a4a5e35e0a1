import Glibc
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
    let progressLock = Mutex(())
    nonisolated(unsafe) let report = progress
    var threads: [pthread_t] = []
    for _ in 0..<max(1, min(parallelism, count)) {
        let started: pthread_t
        do { started = try startThread {
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
                        progressLock.withLock { _ in report(done) }
                    }
                } catch {
                    state.withLock { $0.failure = $0.failure ?? error }
                    return
                }
            }
        } } catch {
            state.withLock { $0.failure = $0.failure ?? error }
            break
        }
        threads.append(started)
    }
    for thread in threads { pthread_join(thread, nil) }
    let (results, failure) = state.withLock { ($0.results, $0.failure) }
    if let failure { throw failure }
    return results.map { $0! }
}

/// Runs `body` on a new thread with a 1 MiB stack (a pthread: Foundation's `Thread` is not in
/// FoundationEssentials); the thread to join. Throws `threadNotStarted` with pthread_create's
/// own error number (it sets no `errno`).
private func startThread(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
    final class Work { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, 1 << 20)
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, &attributes, { work in
        Unmanaged<Work>.fromOpaque(work!).takeRetainedValue().body()
        return nil
    }, work)
    guard created == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        throw VaultError.threadNotStarted(created)
    }
    return thread
}

extension VaultError {
    /// The system would not start another thread (a process or memory limit).
    static func threadNotStarted(_ code: Int32, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not start a worker thread: \(ErrnoText.of(code))", file: file, line: line)
    }
}
