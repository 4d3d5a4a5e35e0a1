extension Collection where Element == UInt8 {
    /// Whether these bytes start with the ASCII `prefix`, its letters in either case (bech32
    /// allows an all-uppercase key). Only A–Z fold: no other byte stands in for a prefix's.
    package func startsWithFolded(_ prefix: String) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5a).contains(byte) ? byte | 0x20 : byte }
        return count >= prefix.utf8.count && zip(self, prefix.utf8).allSatisfy { folded($0) == folded($1) }
    }
}
