import Testing
@testable import VaultCore
@testable import VaultFleet

/// `check --subset`: I/N and auto/N name the same slices; auto/N walks the slices one a day; the
/// slices of one count split every key exactly once, listed by the shards' runs of keys.
@Suite struct FleetCheckSubsetTests {
    typealias Subset = FleetCheck.Subset
    let day: Int64 = 86_400

    @Test func autoTakesTheSliceOfTheDay() throws {
        // 2026-11-25 is day 20,782 since 1970: 20,782 mod 7 = 6, so slice 7 of 7.
        let now = Timestamp(seconds: 20_782 * day + 3_600)
        let tonight = try Subset(parsing: "auto/7", now: now)
        let named = try Subset(parsing: "7/7", now: now)
        #expect(tonight == named)
        #expect(tonight.origin == "auto/7 on 2026-11-25" && named.origin == "7/7")
        // Any time of the day gives the day's slice; the next day the next one, round the week.
        let lastSecond = try Subset(parsing: "auto/7", now: Timestamp(seconds: 20_782 * day + day - 1))
        #expect(lastSecond.index == 7)
        let week = try (0..<7).map { try Subset(parsing: "auto/7", now: Timestamp(seconds: (20_783 + $0) * day)).index }
        #expect(week == [1, 2, 3, 4, 5, 6, 7])
        // Before 1970 the days still count one by one (rounded down, not toward zero): day -1
        // is 6 mod 7.
        let before1970 = try Subset(parsing: "auto/7", now: Timestamp(seconds: -1))
        #expect(before1970.index == 7)
        let one = try Subset(parsing: "auto/1", now: now)
        #expect(one.index == 1)
    }

    @Test func whatIsNotASubsetIsRefused() throws {
        for text in ["0/3", "4/3", "3", "auto", "auto/0", "auto/10001", "1/10001", "/3", "1/", "-1/3", "1/3/5", "one/3", "auto/-2"] {
            #expect(throws: VaultError.self, "\(text)") { try Subset(parsing: text, now: Timestamp(seconds: 0)) }
        }
        let largest = try Subset(parsing: "10000/10000", now: Timestamp(seconds: 0))
        #expect(largest.index == 10_000)
    }

    @Test func theSlicesOfOneCountSplitEveryKeyOnce() throws {
        var generator = SystemRandomNumberGenerator()
        let count = 5
        let slices = try (1...count).map { try Subset(parsing: "\($0)/\(count)", now: Timestamp(seconds: 0)) }
        let households = [String(repeating: "0", count: 64), String(repeating: "f", count: 64)]
            + (0..<200).map { _ in (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined() }
        let keys = households.map { "vaults/\($0).vault" } + ["vaults/README.txt", "vaults/empty.vault", "vaults/old/x.vault", "vaults/ABC.vault"]
        for key in keys {
            // A listing's slices are the shards' runs of keys; a manifest's, households or hashes.
            #expect(slices.filter { $0.shard.keyRange(under: "vaults/").contains(key) }.count == 1, "\(key)")
            #expect(slices.filter { $0.containsManifestObject(key) }.count == 1, "\(key)")
        }
        // A household's vault falls in the slice --shard gives its household, both ways.
        for household in households {
            let id = HouseholdID(bytes: Hex.decode(household)!)
            let key = "vaults/\(household).vault"
            let listed = slices.firstIndex { $0.shard.keyRange(under: "vaults/").contains(key) }! + 1
            let named = slices.firstIndex { $0.containsManifestObject(key) }! + 1
            let sameShard = try BucketMigration.Shard(parsing: "\(listed)/\(count)")
            #expect(sameShard.contains(id) && listed == named)
        }
        #expect(slices[0].containsManifestObject("vaults/\(households[0]).vault") && slices[count - 1].containsManifestObject("vaults/\(households[1]).vault"))
    }
}
