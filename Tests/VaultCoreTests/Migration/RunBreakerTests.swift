import Foundation
import Synchronization
import Testing
@testable import VaultCore
@testable import VaultFleet

/// When a fleet run stops early: the store gone (vaults in a row failed only because of it), a
/// configuration that cannot work, a stop signal; and what it then exits with.
@Suite struct RunBreakerTests {
    static let unreachable = VaultError(.storageUnreachable, "could not reach the object store")
    static let denied = VaultError(.storageDenied, "the object store refused access")
    static let damaged = VaultError(.authenticationFailed, "authentication failed")

    @Test func vaultsInARowThatFailedForTheStoreTripIt() {
        for threshold in 1...8 {
            let breaker = RunBreaker(threshold: threshold)
            for _ in 0..<(threshold - 1) { breaker.record(Self.unreachable) }
            // Anything else in between (a vault done, one that failed for a reason of its own) ends the row.
            breaker.record(nil)
            for _ in 0..<(threshold - 1) { breaker.record(Self.unreachable) }
            breaker.record(Self.damaged)
            for _ in 0..<(threshold - 1) { breaker.record(Self.unreachable) }
            #expect(breaker.mayStart && breaker.stop == nil)
            breaker.record(Self.unreachable)
            #expect(!breaker.mayStart && breaker.stop == .storeGone(Self.unreachable))
        }
    }

    @Test func aConfigurationThatCannotWorkTripsItAtOnce() throws {
        let breaker = RunBreaker(threshold: 100)
        breaker.record(Self.denied)
        #expect(breaker.stop == .configuration(Self.denied))
        let failure = RunBreaker.failure(try #require(breaker.stop), notStarted: 7)
        #expect(failure.code == .storageDenied && failure.code.category == .configuration)
    }

    @Test func aSignalStopsItAndTheRestIsWorthARerun() throws {
        let flag = Flag()
        let breaker = RunBreaker(signalled: { let value = flag.value.load(ordering: .relaxed); return value == 0 ? nil : value })
        #expect(breaker.mayStart)
        flag.value.store(SIGTERM, ordering: .relaxed)
        #expect(breaker.stop == .signal(SIGTERM))
        let failure = RunBreaker.failure(.signal(SIGTERM), notStarted: 12)
        #expect(failure.code == .runStopped && failure.code.category == .temporary)
        #expect(failure.reason == "stopped by SIGTERM after the vaults in flight; 12 vaults were not started")
        let gone = RunBreaker.failure(.storeGone(Self.unreachable), notStarted: 3)
        #expect(gone.code == .storeGone && gone.code.category == .temporary)
        #expect(gone.reason.hasPrefix("the object store went away, so the run stopped: could not reach") && gone.reason.hasSuffix("3 vaults were not started"))
    }

    final class Flag: Sendable {
        let value = Atomic<Int32>(0)
    }
}
