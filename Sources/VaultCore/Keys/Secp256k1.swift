internal import CSecp256k1
internal import CSodium

/// The one Swift type that owns libsecp256k1 state: a signing context, randomised once against
/// side channels, shared by the process. Key types above it never see a C pointer.
final class Secp256k1: @unchecked Sendable {
    // @unchecked: after randomisation the context is only passed to libsecp256k1 functions that
    // take it as `const`, which the library documents as safe to share between threads.
    private let context: OpaquePointer

    static let shared: Secp256k1 = Secp256k1()

    private init() {
        guard let context = secp256k1_context_create(hvt_secp256k1_context_flags_none()) else {
            fatalError("libsecp256k1 could not create a context")
        }
        var seed = SystemRandom().bytes(32)
        defer { seed.zeroize() }
        guard secp256k1_context_randomize(context, seed) == 1 else {
            fatalError("libsecp256k1 could not randomise its context")
        }
        self.context = context
    }

    deinit {
        secp256k1_context_destroy(context)
    }

    /// Whether 32 bytes are a valid secret scalar (0 < k < n).
    func isValidSecretKey(_ secret: UnsafeRawBufferPointer) -> Bool {
        secret.count == 32 && secp256k1_ec_seckey_verify(context, secret.bindMemory(to: UInt8.self).baseAddress!) == 1
    }

    /// The BIP-340 x-only public key of a secret key.
    func xOnlyPublicKey(secret: UnsafeRawBufferPointer) throws -> [UInt8] {
        var keypair = try makeKeypair(secret)
        defer { sodium_memzero(&keypair, MemoryLayout<secp256k1_keypair>.size) }
        var xonly = secp256k1_xonly_pubkey()
        try check(secp256k1_keypair_xonly_pub(context, &xonly, nil, &keypair), "deriving an x-only public key")
        var out = [UInt8](repeating: 0, count: 32)
        try check(secp256k1_xonly_pubkey_serialize(context, &out, &xonly), "serialising an x-only public key")
        return out
    }

    /// Whether 32 bytes parse as an x-only public key (a valid x coordinate).
    func isValidXOnlyPublicKey(_ bytes: [UInt8]) -> Bool {
        var xonly = secp256k1_xonly_pubkey()
        return bytes.count == 32 && secp256k1_xonly_pubkey_parse(context, &xonly, bytes) == 1
    }

    /// A BIP-340 Schnorr signature over a message of any length.
    func sign(message: [UInt8], secret: UnsafeRawBufferPointer, auxiliaryRandom: [UInt8]) throws -> [UInt8] {
        precondition(auxiliaryRandom.count == 32)
        var keypair = try makeKeypair(secret)
        defer { sodium_memzero(&keypair, MemoryLayout<secp256k1_keypair>.size) }
        var auxiliary = auxiliaryRandom
        defer { auxiliary.zeroize() }
        var signature = [UInt8](repeating: 0, count: 64)
        let status = auxiliary.withUnsafeMutableBytes { aux in
            var params = hvt_secp256k1_schnorrsig_extraparams(aux.baseAddress)
            return secp256k1_schnorrsig_sign_custom(context, &signature, message, message.count, &keypair, &params)
        }
        try check(status, "signing")
        return signature
    }

    /// Verifies a BIP-340 signature. A public key that is not on the curve verifies nothing.
    func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        var xonly = secp256k1_xonly_pubkey()
        guard secp256k1_xonly_pubkey_parse(context, &xonly, publicKey) == 1 else { return false }
        return secp256k1_schnorrsig_verify(context, signature, message, message.count, &xonly) == 1
    }

    private func makeKeypair(_ secret: UnsafeRawBufferPointer) throws -> secp256k1_keypair {
        guard secret.count == 32 else {
            throw VaultError.wrongKeyLength("a secp256k1 secret key", secret.count)
        }
        var keypair = secp256k1_keypair()
        guard secp256k1_keypair_create(context, &keypair, secret.bindMemory(to: UInt8.self).baseAddress!) == 1 else {
            throw VaultError.notAScalar()
        }
        return keypair
    }

    /// Every libsecp256k1 status goes through here: 1 is success.
    private func check(_ status: Int32, _ operation: String) throws {
        guard status == 1 else {
            throw VaultError.secp256k1Failed(operation)
        }
    }
}

extension VaultError {
    /// 32 bytes that are zero or not below the curve order.
    static func notAScalar(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidKey, "the secret key is not a valid secp256k1 scalar (zero, or not below the curve order)", file: file, line: line)
    }

    /// A libsecp256k1 call that should not fail did.
    static func secp256k1Failed(_ operation: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "libsecp256k1 failed \(operation)", file: file, line: line)
    }
}
