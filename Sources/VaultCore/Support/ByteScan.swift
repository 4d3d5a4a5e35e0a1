/// Where JSON text needs a closer look, found eight bytes at a time: a vault's text is mostly
/// long runs of plain ASCII (member keys, device ids), which the parser, the writer and the
/// escaping of invisibles used to read a byte at a time, with a bounds check for each (the most
/// of a large `open`'s own instructions, callgrind; docs/performance.md).
///
/// The word tests are the classic ones ("Bit Twiddling Hacks", "determine if a word has a byte
/// less than n"): each says exactly whether some byte of the word qualifies, not which; the
/// byte is then found one at a time.
enum ByteScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is less than `bound` (at most 0x80).
    @inline(__always)
    private static func hasByte(_ word: UInt64, lessThan bound: UInt8) -> Bool {
        (word &- ones &* UInt64(bound)) & ~word & highBits != 0
    }

    /// Whether some byte of `word` is `byte`.
    @inline(__always)
    private static func hasByte(_ word: UInt64, equalTo byte: UInt8) -> Bool {
        hasByte(word ^ (ones &* UInt64(byte)), lessThan: 1)
    }

    /// From `start`, the index of the first byte a JSON string cannot hold as it is (a quote, a
    /// backslash or a control character below 0x20), or `bytes.count`; and whether any byte
    /// before it is past ASCII (the run then needs UTF-8 validation).
    static func stringRun(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (end: Int, nonASCII: Bool) {
        var index = start, words: UInt64 = 0, tail: UInt8 = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if hasByte(word, equalTo: 0x22) || hasByte(word, equalTo: 0x5c) || hasByte(word, lessThan: 0x20) { break }
            words |= word
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 || byte == 0x5c || byte < 0x20 { break }
            tail |= byte
            index += 1
        }
        return (index, words & highBits != 0 || tail >= 0x80)
    }

    /// From `start`, the index of the first byte at or past 0x7f (DEL, or any byte of a
    /// character past ASCII), or `bytes.count`.
    static func firstPastASCII(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if word & highBits != 0 || hasByte(word, equalTo: 0x7f) { break }
            index += 8
        }
        while index < bytes.count, bytes[index] < 0x7f { index += 1 }
        return index
    }

    /// Whether every byte is a lowercase hex digit (0-9, a-f). Eight at a time: a byte below
    /// 0x80 plus (0x80 - lo) has its high bit set exactly when it is at least lo, and no sum
    /// carries into the next byte, so each range is two additions and a mask.
    static func isLowercaseHex(_ bytes: UnsafeRawBufferPointer) -> Bool {
        @inline(__always) func atLeast(_ word: UInt64, _ bound: UInt8) -> UInt64 { word &+ ones &* UInt64(0x80 - bound) }
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let digit = atLeast(word, 0x30) & ~atLeast(word, 0x3a)
            let letter = atLeast(word, 0x61) & ~atLeast(word, 0x67)
            guard word & highBits == 0, (digit | letter) & highBits == highBits else { return false }
            index += 8
        }
        while index < bytes.count {
            let char = bytes[index]
            guard (char &- 0x30 < 10) != (char &- 0x61 < 6) else { return false }
            index += 1
        }
        return true
    }
}
