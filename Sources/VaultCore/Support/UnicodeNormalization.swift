internal import CUnistring
import Glibc

/// NFKC, the one Unicode normalisation the suite needs (NIP-49's passphrase), from GNU
/// libunistring rather than Foundation's, which brings 34 MB of ICU into every tool. The only
/// owner of libunistring; bytes in, bytes out, so a valid UTF-8 passphrase never becomes a
/// `String` (an invalid one is repaired through one, an unzeroed copy, as it always was).
package enum UnicodeNormalization {
    /// `text` (UTF-8) in Normalization Form KC. Invalid UTF-8 is first repaired as
    /// `String(decoding:as:)` repairs it (each bad sequence U+FFFD), as the passphrase always was.
    /// The caller zeroes the result; every buffer of libunistring's is zeroed before it is freed.
    package static func nfkc(_ text: UnsafeRawBufferPointer) throws -> [UInt8] {
        let input = text.bindMemory(to: UInt8.self)
        if input.isEmpty { return [] }
        if u8_check(input.baseAddress, input.count) != nil {
            var repaired = Array(String(decoding: input, as: UTF8.self).utf8)
            defer { repaired.zeroize() }
            return try repaired.withUnsafeBytes { try nfkc($0) }
        }
        // Room for the usual case in one call; NFKC can grow text (U+FDFA is 18 letters), and
        // when it grows past this libunistring allocates a buffer of its own.
        var result = [UInt8](repeating: 0, count: 4 * input.count + 16)
        var length = result.count
        let (produced, inPlace, failure) = result.withUnsafeMutableBufferPointer { buffer in
            let produced = u8_normalize(cunistring_nfkc(), input.baseAddress, input.count, buffer.baseAddress, &length)
            return (produced, produced == buffer.baseAddress, produced == nil ? errno : 0)
        }
        guard let produced else {
            result.zeroize()
            throw VaultError.normalizationFailed(failure)
        }
        if inPlace {
            result.removeSubrange(length...)
            return result
        }
        defer {
            memset(produced, 0, length)
            free(produced)
        }
        result.zeroize()
        return Array(UnsafeBufferPointer(start: produced, count: length))
    }
}

extension VaultError {
    /// libunistring could not normalise the text (out of memory: the input is valid by then).
    static func normalizationFailed(_ code: Int32, file: String = #fileID, line: UInt = #line) -> VaultError {
        libraryFailure("libunistring", "could not normalise the passphrase (NFKC): \(ErrnoText.of(code))", file: file, line: line)
    }
}
