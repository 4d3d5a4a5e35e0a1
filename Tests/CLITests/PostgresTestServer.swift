import Foundation
import Testing

/// The fast tier, `scripts/test --quick` (HVT_TEST_TIER=quick), asked for by name: tests that
/// need a server are left out and the binaries' sweeps sampled more thinly. Anywhere else every
/// test runs, and one without its server fails, saying so, and never skips.
enum TestTier {
    static let isQuick = ProcessInfo.processInfo.environment["HVT_TEST_TIER"] == "quick"
}

extension Trait where Self == ConditionTrait {
    /// Needs the servers scripts/test starts: not in the quick tier.
    static var needsServers: Self { .enabled(if: !TestTier.isQuick, "needs the servers scripts/test starts: not in the quick tier") }
}

/// The throwaway PostgreSQL server scripts/test starts (scripts/lib/postgres.sh) and names in
/// its variables: a test that needs it fails without it, saying so, and never skips.
enum PostgresTestServer {
    private static let environment = ProcessInfo.processInfo.environment

    struct Missing: Error, CustomStringConvertible {
        var description: String { "needs the PostgreSQL server that scripts/test starts (HVT_TEST_PGHOST is not set): run through scripts/test" }
    }

    /// A new, empty database, as a connection URI for --db (no password: the socket trusts).
    static func createDatabase() throws -> String {
        guard environment["HVT_TEST_PGHOST"] != nil else { throw Missing() }
        let name = "g_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try psql("CREATE DATABASE \(name)")
        return uri(name)
    }

    static func uri(_ database: String) -> String {
        "postgresql:///\(database)?host=\(environment["HVT_TEST_PGHOST"]!)&port=\(environment["HVT_TEST_PGPORT"]!)&user=\(environment["HVT_TEST_PGUSER"]!)"
    }

    /// Runs SQL with psql as the server's superuser.
    static func psql(_ sql: String, database: String = "postgres") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", uri(database), "-c", sql]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad, userInfo: ["sql": sql]) }
    }
}
