import VaultCore

extension BucketMigration {
    /// `--shard I/N`: the I-th (1-based) of N equal ranges of household ids, by their first 8
    /// bytes, so N machines split one fleet. A listing takes the shard's run of keys
    /// (``keyRange(under:)``); a manifest's lines, the shard's households.
    /// `--shard auto` reads it from the job engine's environment (``Shard/fromEngine(_:count:)``).
    public struct Shard: Sendable, Equatable, CustomStringConvertible {
        public let index: Int
        public let count: Int
        /// Where the index and count came from: `--shard I/N`, or the variables an engine set
        /// ("JOB_COMPLETION_INDEX=2, HVT_SHARD_COUNT=8"), for the report.
        public let origin: String

        /// The most shards a fleet is split into: AWS Batch's largest array job.
        public static let maximumCount = 10_000

        public init(parsing text: String) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), (1...Self.maximumCount).contains(count), (1...count).contains(index) else {
                throw VaultError.outOfRange("a shard ('\(text)')", "I/N with 1 ≤ I ≤ N ≤ \(Self.maximumCount), such as 1/4")
            }
            self.init(index: index, count: count, origin: "--shard \(text)")
        }

        init(index: Int, count: Int, origin: String) {
            self.index = index
            self.count = count
            self.origin = origin
        }

        /// One shard however it was named: the origin is for the report.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.index == rhs.index && lhs.count == rhs.count }

        public func contains(_ household: HouseholdID) -> Bool {
            let leading = household.bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return Int(leading.multipliedFullWidth(by: UInt64(count)).high) == index - 1
        }

        public var description: String { "\(index)/\(count)" }
    }

}
