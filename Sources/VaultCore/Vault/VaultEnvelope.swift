/// The binary vault file (docs/vault-format.md §3):
///
///     offset size
///     0      7    ASCII "MTVAULT"
///     7      1    envelope format = 0x01
///     8      1    suite = 0x01 (HKDF-SHA256 vault key, XChaCha20-Poly1305-IETF)
///     9      1    schema version of the document inside
///     10     32   household id
///     42     24   nonce
///     66     ...  ciphertext ‖ 16-byte tag; associated data = bytes 0..<66
public struct VaultEnvelope: Sendable, Equatable {
    public static let magic: [UInt8] = Array("MTVAULT".utf8)
    public static let headerByteCount = 66
    public static let supportedFormats: Set<UInt8> = [1]
    public static let supportedSuites: Set<UInt8> = [1]

    public let header: VaultHeader
    /// Ciphertext followed by the 16-byte tag.
    public let ciphertext: [UInt8]

    public init(header: VaultHeader, ciphertext: [UInt8]) {
        self.header = header
        self.ciphertext = ciphertext
    }

    /// Parses the header strictly and keeps the rest as ciphertext.
    public init(parsing bytes: [UInt8]) throws {
        header = try VaultHeader(parsing: bytes)
        guard bytes.count >= Self.headerByteCount + XChaCha20Poly1305.tagByteCount else {
            throw VaultError(.malformedEnvelope, "the vault is truncated: \(bytes.count) bytes leave no room for the 16-byte tag after the 66-byte header")
        }
        ciphertext = Array(bytes[Self.headerByteCount...])
    }

    public var bytes: [UInt8] { header.bytes + ciphertext }
}

/// The 66 header bytes, which are also the associated data of the vault's AEAD.
public struct VaultHeader: Sendable, Equatable {
    public let format: UInt8
    public let suite: UInt8
    public let schemaVersion: UInt8
    public let householdID: HouseholdID
    public let nonce: [UInt8]

    public init(schemaVersion: UInt8, householdID: HouseholdID, nonce: [UInt8], format: UInt8 = 1, suite: UInt8 = 1) {
        precondition(nonce.count == XChaCha20Poly1305.nonceByteCount)
        self.format = format
        self.suite = suite
        self.schemaVersion = schemaVersion
        self.householdID = householdID
        self.nonce = nonce
    }

    /// Reads the header at the start of `bytes`; the rest is not looked at, so this also serves
    /// tools that read headers only. Checks run in byte order: magic, length, format, suite,
    /// schema version.
    public init(parsing bytes: some Collection<UInt8>) throws {
        let magic = VaultEnvelope.magic
        let prefix = Array(bytes.prefix(VaultEnvelope.headerByteCount))
        guard prefix.starts(with: magic.prefix(prefix.count)), !prefix.isEmpty else {
            throw VaultError(.malformedEnvelope, "not a vault: it does not start with \"MTVAULT\"")
        }
        guard prefix.count == VaultEnvelope.headerByteCount else {
            throw VaultError(.malformedEnvelope, "the vault is truncated: \(prefix.count) bytes, less than the 66-byte header")
        }
        guard VaultEnvelope.supportedFormats.contains(prefix[7]) else {
            throw VaultError(.unsupportedVersion, "envelope format \(prefix[7]) is not supported (this build reads format 1)")
        }
        guard VaultEnvelope.supportedSuites.contains(prefix[8]) else {
            throw VaultError(.unsupportedVersion, "cipher suite \(prefix[8]) is not supported (this build reads suite 1)")
        }
        guard VaultDocument.supportedVersions.contains(Int(prefix[9])) else {
            let versions = VaultDocument.supportedVersions
            throw VaultError(.unsupportedVersion, "schema version \(prefix[9]) is not supported (this build reads versions \(versions.lowerBound) to \(versions.upperBound))")
        }
        self.init(
            schemaVersion: prefix[9],
            householdID: HouseholdID(bytes: Array(prefix[10..<42])),
            nonce: Array(prefix[42..<66]),
            format: prefix[7],
            suite: prefix[8]
        )
    }

    public var bytes: [UInt8] {
        VaultEnvelope.magic + [format, suite, schemaVersion] + householdID.bytes + nonce
    }
}
