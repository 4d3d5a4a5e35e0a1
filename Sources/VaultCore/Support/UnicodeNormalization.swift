internal import CUnistring
import Glibc

/// NFKC, the one Unicode normalisation the suite needs (NIP-49's passphrase), and full case
/// folding (names as a person says them), from GNU libunistring rather than Foundation's, which
/// brings 34 MB of ICU into every tool. The only owner of libunistring; bytes in, bytes out, so
/// a valid UTF-8 passphrase never becomes a `String` (an invalid one is repaired through one, an
/// unzeroed copy, as it always was).
package enum UnicodeNormalization {
    /// `text` (UTF-8) in Normalization Form KC. Invalid UTF-8 is first repaired as
    /// `String(decoding:as:)` repairs it (each bad sequence U+FFFD), as the passphrase always was.
    /// The caller zeroes the result; every buffer of libunistring's is zeroed before it is freed.
    package static func nfkc(_ text: UnsafeRawBufferPointer) throws -> [UInt8] {
        try transformed(text) { u8_normalize(cunistring_nfkc(), $0, $1, $2, $3) }
    }

    /// `text` (UTF-8) case folded in full and in NFKC: what Unicode compares caseless text by,
    /// where lower-casing is not enough ("STRASSE" and "Straße", "ΟΔΟΣ" and "οδος" fold alike).
    package static func caseFoldedNFKC(_ text: UnsafeRawBufferPointer) throws -> [UInt8] {
        try transformed(text) { u8_casefold($0, $1, nil, cunistring_nfkc(), $2, $3) }
    }

    /// Runs one of libunistring's `u8_` transformations, which takes the input and its length,
    /// and a buffer and its length, and returns the buffer, one of its own, or nil.
    private static func transformed(_ text: UnsafeRawBufferPointer,
                                    _ transform: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>) -> UnsafeMutablePointer<UInt8>?) throws -> [UInt8] {
        let input = text.bindMemory(to: UInt8.self)
        if input.isEmpty { return [] }
        if u8_check(input.baseAddress, input.count) != nil {
            var repaired = Array(String(decoding: input, as: UTF8.self).utf8)
            defer { repaired.zeroize() }
            return try repaired.withUnsafeBytes { try transformed($0, transform) }
        }
        // Room for the usual case in one call; NFKC and folding can grow text (U+FDFA is 18
        // letters), and when it grows past this libunistring allocates a buffer of its own.
        var result = [UInt8](repeating: 0, count: 4 * input.count + 16)
        var length = result.count
        let (produced, inPlace, failure) = result.withUnsafeMutableBufferPointer { buffer in
            let produced = transform(input.baseAddress, input.count, buffer.baseAddress, &length)
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
