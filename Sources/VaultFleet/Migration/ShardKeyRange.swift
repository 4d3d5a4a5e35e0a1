import Glibc
import VaultCore

/// The keys one shard lists under a prefix, so that N shards list a bucket once between them
/// instead of N times.
///
/// A shard is a range of household ids by their first 8 bytes (``BucketMigration/Shard``), and a
/// vault is named `<64 lowercase hex>.vault` after its household: S3 lists keys in UTF-8 byte
/// order, and lowercase hex of one length sorts as its number, so the vaults of one shard are
/// one run of keys. Shard k starts after `PREFIX` + the 16 hex digits of its lowest id, and ends
/// with (includes) the next shard's start key: every key of the listing sorts into exactly one
/// shard, whatever its name. That holds the rest of the keys too: a vault not in the hex layout
/// (`family.vault`, `Z….vault`, `old/<id>.vault` in a folder below the prefix) belongs to the
/// shard whose run of keys it falls in, by its key and not by its household, and is migrated by
/// that shard alone. The start key itself (16 hex digits, no `.vault`) is never a vault.
public struct ShardKeyRange: Sendable, Equatable {
    /// The listing starts after this key (ListObjectsV2 `start-after`); nil: at the prefix's first key.
    public let after: String?
    /// The last key that may belong (the next shard's `after`); nil: to the end of the prefix.
    public let through: String?
    /// The prefix's length, where a key's hex digits start.
    let prefixLength: Int
    /// The first 8 bytes of the lowest and highest household id of the shard.
    let lowest: UInt64
    let highest: UInt64

    /// Whether `key` sorts into this range (in UTF-8 byte order, S3's).
    public func contains(_ key: String) -> Bool {
        if let after, !Self.precedes(after, key) { return false }
        if let through, Self.precedes(through, key) { return false }
        return true
    }

    /// Whether `key` sorts past the end of the range: the listing of this shard is over.
    public func isPastEnd(_ key: String) -> Bool {
        guard let through else { return false }
        return Self.precedes(through, key)
    }

    /// Whether `key` sorts after the key the listing started after, as a store that honours
    /// `start-after` lists it.
    func isPastStart(_ key: String) -> Bool {
        guard let after else { return true }
        return Self.precedes(after, key)
    }

    /// S3's order, UTF-8 bytes, compared as buffers (a string keeps its UTF-8 in one piece, or
    /// is given one by withUTF8): element by element through UTF8View was most of the time of
    /// the tests that sort thousands of keys into thousands of shards.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order < 0 || (order == 0 && left.count < right.count)
            }
        }
    }

    /// The first 8 bytes of the household id a key in the hex layout names, nil for any other key.
    func leading(_ key: String) -> UInt64? {
        let digits = key.utf8.dropFirst(prefixLength).prefix(16)
        guard digits.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }

    /// How many keys to ask for next, when `listedInRange` keys of the range have been listed
    /// and the last of them is `last`: the keys still expected, from how densely the ids listed so
    /// far fill their part of the range (household ids are uniform), with a margin; at least
    /// twice `previous` when `previous` was itself such an estimate and fell short. A key not in
    /// the hex layout says nothing about density: a full page then.
    func nextPageSize(listedInRange: Int, last: String, previous: Int) -> Int {
        guard through != nil, listedInRange > 0, let position = leading(last), position >= lowest, position <= highest else { return 1000 }
        let covered = Double(position - lowest) + 1
        let remaining = Double(listedInRange) * Double(highest - position) / covered
        let estimate = Int(min(1000, remaining * 1.05 + 16))
        return min(1000, previous < 1000 ? max(estimate, 2 * previous) : estimate)
    }
}

extension BucketMigration.Shard {
    /// The lowest first-8-bytes value of shard `position` (0-based) of `count`: ⌈position · 2⁶⁴ / count⌉,
    /// the least L with ⌊L · count / 2⁶⁴⌋ = position, as ``contains(_:)`` assigns ids.
    static func lowestLeading(_ position: Int, of count: Int) -> UInt64 {
        let (quotient, remainder) = UInt64(count).dividingFullWidth((high: UInt64(position), low: 0))
        return remainder == 0 ? quotient : quotient + 1
    }

    /// The first 8 bytes of the lowest and highest household id in this shard.
    public var leadingRange: ClosedRange<UInt64> {
        let lowest = Self.lowestLeading(index - 1, of: count)
        let highest = index == count ? UInt64.max : Self.lowestLeading(index, of: count) - 1
        return lowest...highest
    }

    /// The keys this shard lists under `prefix` (a key ending in `/`, or empty).
    public func keyRange(under prefix: String) -> ShardKeyRange {
        func startKey(_ position: Int) -> String? {
            guard position > 0, position < count else { return nil }
            let hex = String(Self.lowestLeading(position, of: count), radix: 16)
            return prefix + String(repeating: "0", count: 16 - hex.count) + hex
        }
        let leading = leadingRange
        return ShardKeyRange(after: startKey(index - 1), through: startKey(index), prefixLength: prefix.utf8.count,
                             lowest: leading.lowerBound, highest: leading.upperBound)
    }
}

extension VaultError {
    /// The store listed a key at or before a shard's `start-after`: it does not honour the
    /// parameter, so the shard's run of keys cannot be told from the listing.
    static func startAfterIgnored(_ prefix: String, key: String, after: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.storageFailed, "the object store listed '\(key)' under \(prefix) though asked for keys after '\(after)': it ignores ListObjectsV2's start-after, so shards cannot list their own keys",
                   file: file, line: line)
    }
}
