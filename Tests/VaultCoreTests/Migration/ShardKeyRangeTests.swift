import Testing
@testable import VaultCore
@testable import VaultFleet

/// Each shard lists only its run of keys: the runs of N shards cover every key under a prefix
/// exactly once, and a vault named after its household is in the run of the shard that holds
/// the household.
@Suite struct ShardKeyRangeTests {
    typealias Shard = BucketMigration.Shard

    static func shards(_ count: Int) -> [Shard] { (1...count).map { try! Shard(parsing: "\($0)/\(count)") } }

    static func hex16(_ value: UInt64) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// A household whose id starts with `leading` and goes on with `rest`.
    static func household(_ leading: UInt64, rest: UInt8) -> HouseholdID {
        HouseholdID(bytes: (0..<8).map { UInt8(truncatingIfNeeded: leading >> (56 - 8 * $0)) } + [UInt8](repeating: rest, count: 24))
    }

    static func key(_ household: HouseholdID, prefix: String = "vaults/") -> String { prefix + household.hex + ".vault" }

    /// The ranges of the ids meet exactly: no id between two shards, none in two.
    @Test(arguments: [1, 2, 3, 4, 7, 8, 10, 16, 100, 255, 1000, 9999, 10_000])
    func idRangesTileTheIdSpace(count: Int) {
        let ranges = Self.shards(count).map(\.leadingRange)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == .max)
        for (lower, upper) in zip(ranges, ranges.dropFirst()) {
            #expect(lower.upperBound &+ 1 == upper.lowerBound)
        }
        // Each range is what contains(_:) says, at its edges and one past them.
        for (shard, range) in zip(Self.shards(count), ranges) {
            #expect(shard.contains(Self.household(range.lowerBound, rest: 0)))
            #expect(shard.contains(Self.household(range.upperBound, rest: 0xff)))
            if range.lowerBound > 0 { #expect(!shard.contains(Self.household(range.lowerBound - 1, rest: 0xff))) }
            if range.upperBound < .max { #expect(!shard.contains(Self.household(range.upperBound + 1, rest: 0))) }
        }
    }

    /// Vaults named after their households, random ones and the edge ones: each is listed by the
    /// one shard that holds its household, and by no other.
    @Test(arguments: [1, 2, 3, 4, 5, 8, 13, 64, 1000])
    func aNamedVaultIsInTheRunOfItsShardOnly(count: Int) {
        var generator = SystemRandomNumberGenerator()
        let shards = Self.shards(count)
        var households: [HouseholdID] = (0..<500).map { _ in HouseholdID(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        households += [Self.household(0, rest: 0), Self.household(.max, rest: 0xff), Self.household(.max, rest: 0),
                       Self.household(0, rest: 0xff)]
        for shard in shards {
            let range = shard.leadingRange
            households += [Self.household(range.lowerBound, rest: 0), Self.household(range.upperBound, rest: 0xff)]
            if range.lowerBound > 0 { households.append(Self.household(range.lowerBound - 1, rest: 0xff)) }
        }
        let ranges = shards.map { $0.keyRange(under: "vaults/") }
        for household in households {
            let key = Self.key(household)
            let listing = ranges.indices.filter { ranges[$0].contains(key) }
            let holding = shards.indices.filter { shards[$0].contains(household) }
            #expect(listing.count == 1 && listing == holding, "\(household.hex)")
        }
    }

    /// Keys not in the hex layout still sort into exactly one run: below the first id, between
    /// the digits and the letters, above the last, in a folder, not ASCII, and the start keys.
    @Test(arguments: [2, 3, 4, 16, 1000])
    func everyOtherKeyIsInExactlyOneRun(count: Int) {
        let ranges = Self.shards(count).map { $0.keyRange(under: "vaults/") }
        var keys = ["vaults/", "vaults/-old.vault", "vaults/.vault", "vaults/0.vault", "vaults/9zz.vault", "vaults/Family.vault",
                    "vaults/README", "vaults/g.vault", "vaults/old/" + String(repeating: "0", count: 64) + ".vault",
                    "vaults/zz/" + String(repeating: "f", count: 64) + ".vault", "vaults/é.vault", "vaults/\u{10FFFF}",
                    "vaults/" + String(repeating: "f", count: 16), "vaults/" + String(repeating: "f", count: 17) + "zz.vault",
                    "vaults/" + String(repeating: "0", count: 16), "vaults/" + String(repeating: "0", count: 15),
                    "vaults/" + String(repeating: "A", count: 64) + ".vault"]
        for range in ranges {
            if let after = range.after {
                keys += [after, after + ".vault", after + "0", String(after.dropLast()), after + "\u{0}", String(after.dropLast()) + "g"]
            }
        }
        for key in keys {
            #expect(ranges.filter { $0.contains(key) }.count == 1, "\(key)")
        }
    }

    /// The ranges compare keys as UTF-8 buffers: the order is UTF8View's, for keys that share
    /// a prefix, are a prefix of each other, are empty, or hold bytes past ASCII.
    @Test func keysCompareInUTF8ByteOrder() {
        var generator = SeededGenerator(source: SeededRandom(seed: 0x5a3))
        let pieces = ["", "a", "b", "0", "f", "é", "e\u{301}", "\u{10FFFF}", "\u{7F}", "/", "vaults/", "\u{0}", "Z"]
        let keys = (0..<400).map { _ in (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() }
        for (lhs, rhs) in zip(keys, keys.reversed()) + keys.map({ ($0, $0) }) + keys.map({ ($0, $0 + "a") }) {
            #expect(ShardKeyRange.precedes(lhs, rhs) == lhs.utf8.lexicographicallyPrecedes(rhs.utf8), "\(lhs.debugDescription) \(rhs.debugDescription)")
        }
    }

    /// The start keys are the shards' lowest ids as 16 hex digits; the first shard lists from the
    /// prefix's first key, the last to its end; one shard lists everything.
    @Test func startKeysAreTheLowestIds() {
        let halves = Self.shards(2).map { $0.keyRange(under: "v/") }
        #expect(halves[0].after == nil && halves[0].through == "v/8000000000000000")
        #expect(halves[1].after == "v/8000000000000000" && halves[1].through == nil)
        let thirds = Self.shards(3).map { $0.keyRange(under: "") }
        // ⌈2⁶⁴/3⌉ = 0x5555555555555556, ⌈2·2⁶⁴/3⌉ = 0xaaaaaaaaaaaaaaab
        #expect(thirds.map(\.after) == [nil, "5555555555555556", "aaaaaaaaaaaaaaab"])
        #expect(thirds.map(\.through) == ["5555555555555556", "aaaaaaaaaaaaaaab", nil])
        let whole = (try! Shard(parsing: "1/1")).keyRange(under: "v/")
        #expect(whole.after == nil && whole.through == nil && whole.contains("v/anything"))
        #expect(Self.hex16(Self.shards(10_000)[9_999].leadingRange.lowerBound) == "fff972474538ef35")
    }

    /// A page ends where the shard's keys are expected to: half the range listed with 500 keys
    /// asks for about 500 more, a short guess is at least doubled, and a key outside the hex
    /// layout asks for a full page.
    @Test func pagesAreSizedToTheKeysStillExpected() {
        let range = (try! Shard(parsing: "1/4")).keyRange(under: "vaults/")
        let halfway = "vaults/" + Self.hex16(range.highest / 2) + String(repeating: "0", count: 48) + ".vault"
        let size = range.nextPageSize(listedInRange: 500, last: halfway, previous: 1000)
        #expect((520...560).contains(size))
        #expect(range.nextPageSize(listedInRange: 500, last: halfway, previous: 400) == 800)
        #expect(range.nextPageSize(listedInRange: 500, last: "vaults/Family.vault", previous: 1000) == 1000)
        let last = (try! Shard(parsing: "4/4")).keyRange(under: "vaults/")
        #expect(last.nextPageSize(listedInRange: 500, last: halfway, previous: 1000) == 1000)
    }
}
