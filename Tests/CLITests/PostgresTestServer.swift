import Foundation

/// The throwaway PostgreSQL server scripts/test starts (scripts/lib/postgres.sh): tests that
/// need it are enabled only when its variables are set, which scripts/test always does.
enum PostgresTestServer {
    private static let environment = ProcessInfo.processInfo.environment

    static var available: Bool { environment["HVT_TEST_PGHOST"] != nil }

    /// A new, empty database, as a connection URI for --db (no password: the socket trusts).
    static func createDatabase() throws -> String {
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
