internal import CPaperLoad
internal import CZxcvbn
import VaultCore

/// How hard a new passphrase is to guess, by zxcvbn's model (zxcvbn-c, Debian's libzxcvbn):
/// dictionaries of common passwords, names and words, keyboard patterns, repeats, sequences,
/// dates and l33t substitutions, each costed in guesses. Estimated locally; nothing leaves the
/// machine. A passphrase below ``minimumBits`` is refused unless the person insists.
public struct PassphraseStrength: Sendable, Equatable {
    /// log2 of the guesses zxcvbn expects an attacker to need.
    public let bits: Double

    /// 50 bits, about 10^15 guesses: what a passphrase protecting a printed key must withstand
    /// offline, with scrypt slowing each guess (NIP-49) or none at all (SLIP-39's passphrase is
    /// a few PBKDF2 rounds). Four random common words clear it; "Tr0ub4dor&3" (47) does not.
    public static let minimumBits = 50.0

    public var isWeak: Bool { bits < Self.minimumBits }

    /// Estimates a passphrase (UTF-8). It is copied, NUL-terminated, into protected memory for
    /// the C call, which reads it up to the first NUL: a passphrase holding a NUL is estimated
    /// up to it, which can only make it look weaker.
    public static func estimate(_ passphrase: SecretBytes) throws -> PassphraseStrength {
        // zxcvbn-c, loaded on use (issue 48).
        try LoadOnUse.require(OpaquePointer(hvt_library_zxcvbn()), feature: "judging a passphrase")
        let terminated = try SecretBytes(count: passphrase.count + 1) { buffer in
            passphrase.withUnsafeBytes { buffer.copyMemory(from: $0) }
            buffer[passphrase.count] = 0
        }
        let bits = terminated.withUnsafeBytes { buffer in
            ZxcvbnMatch(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), nil, nil)
        }
        return PassphraseStrength(bits: bits)
    }
}

extension VaultError.Code {
    /// A new passphrase is easier to guess than ``PassphraseStrength/minimumBits``.
    public static let weakPassphrase = VaultError.Code(name: "weakPassphrase", category: .refused)
}

extension VaultError {
    /// The reason names the estimate, never the passphrase.
    public static func weakPassphrase(_ strength: PassphraseStrength, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.weakPassphrase, "the passphrase is too easy to guess: about 2^\(Int(strength.bits.rounded(.down))) guesses by zxcvbn's estimate, "
                   + "below the 2^\(Int(PassphraseStrength.minimumBits)) a printed key needs", file: file, line: line)
    }
}
