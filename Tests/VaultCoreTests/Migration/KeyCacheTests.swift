import Testing
@testable import VaultCore
@testable import VaultFleet

/// The batch's key cache (issue 29): a key file shared by many lines is read once, a key that
/// fails to load fails each of its jobs, and a parent key and a vault key by one name differ.
@Suite struct KeyCacheTests {
    static func job(_ line: Int, keyFile: String? = nil, vaultKeyFile: String? = nil) -> BatchMigration.Job {
        BatchMigration.Job(line: line, vault: "v\(line).vault", keyFile: keyFile, vaultKeyFile: vaultKeyFile, output: "out/v\(line).vault")
    }

    static func parent(_ byte: UInt8) throws -> VaultAccess {
        .parentKey(try SecretKey(secret: .test(Array(repeating: byte, count: 32))))
    }

    @Test func aSharedKeyFileIsLoadedOnce() throws {
        let cache = KeyCache()
        var loads = 0
        for line in 1...100 {
            let access = try cache.access(for: Self.job(line, keyFile: "/keys/a.nsec")) { _ in loads += 1; return try Self.parent(1) }
            #expect(access.parentKey == (try Self.parent(1)).parentKey)
        }
        #expect(loads == 1)
    }

    @Test func aKeyThatFailsToLoadFailsEveryJobAndIsNotKept() {
        let cache = KeyCache()
        var loads = 0
        for line in 1...3 {
            #expect(throws: VaultError.self) {
                try cache.access(for: Self.job(line, keyFile: "/keys/missing.nsec")) { _ in loads += 1; throw VaultError(.io, "cannot read") }
            }
        }
        #expect(loads == 3)
    }

    @Test func aParentKeyFileAndAVaultKeyFileOfOneNameAreDifferentKeys() throws {
        let cache = KeyCache()
        let vaultKey = try VaultKey(secret: .test(Array(repeating: 7, count: 32)))
        _ = try cache.access(for: Self.job(1, keyFile: "/keys/k")) { _ in try Self.parent(2) }
        let second = try cache.access(for: Self.job(2, vaultKeyFile: "/keys/k")) { _ in .vaultKey(vaultKey) }
        #expect(second.parentKey == nil)
        #expect(try second.vaultKey().secret == vaultKey.secret)
    }

    @Test func pastItsCapacityTheCacheStartsOverAndStillGivesEachJobItsOwnKey() throws {
        let cache = KeyCache()
        var loads = 0
        let files = KeyCache.capacity + 10
        for round in 0..<2 {
            for index in 0..<files {
                let byte = UInt8(index % 200 + 1)
                let access = try cache.access(for: Self.job(round * files + index, keyFile: "/keys/\(index).nsec")) { _ in loads += 1; return try Self.parent(byte) }
                #expect(access.parentKey == (try Self.parent(byte)).parentKey)
            }
        }
        #expect(loads > files && loads <= 2 * files)
    }
}
