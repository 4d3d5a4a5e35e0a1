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
    /// The envelope formats and cipher suites this build reads. Ranges, not sets: `--version`
    /// names them at every start, and a set's storage costs a conformance scan there.
    public static let supportedFormats: ClosedRange<UInt8> = 1...1
    public static let supportedSuites: ClosedRange<UInt8> = 1...1

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
            throw VaultError.truncatedEnvelope(byteCount: bytes.count)
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

    /// Where every envelope's header keeps its household id, whatever its format or suite.
    static let householdBytes = 10..<42

    /// The household of the envelope `bytes` start with, whatever its format, suite or schema:
    /// nil when they do not start with the magic or end before the id. What a header no parser of
    /// ours takes still says (an output refused over another household's vault of an unknown
    /// suite, a trial).
    public static func household(inAnyHeader bytes: some Collection<UInt8>) -> HouseholdID? {
        let prefix = Array(bytes.prefix(householdBytes.upperBound))
        guard prefix.starts(with: VaultEnvelope.magic), prefix.count == householdBytes.upperBound else { return nil }
        return HouseholdID(bytes: Array(prefix[householdBytes]))
    }

    /// Reads the header at the start of `bytes`; the rest is not looked at, so this also serves
    /// tools that read headers only. Checks run in byte order: magic, length, format, suite,
    /// schema version.
    public init(parsing bytes: some Collection<UInt8>) throws {
        let magic = VaultEnvelope.magic
        let prefix = Array(bytes.prefix(VaultEnvelope.headerByteCount))
        guard prefix.starts(with: magic.prefix(prefix.count)), !prefix.isEmpty else {
            throw VaultError.notAVault()
        }
        guard prefix.count == VaultEnvelope.headerByteCount else {
            throw VaultError.truncatedEnvelope(byteCount: prefix.count)
        }
        guard VaultEnvelope.supportedFormats.contains(prefix[7]) else {
            throw VaultError.unsupportedEnvelopeFormat(prefix[7])
        }
        guard VaultEnvelope.supportedSuites.contains(prefix[8]) else {
            throw VaultError.unsupportedCipherSuite(prefix[8])
        }
        guard VaultDocument.supportedVersions.contains(Int(prefix[9])) else {
            throw VaultError.unsupportedHeaderSchemaVersion(prefix[9])
        }
        self.init(
            schemaVersion: prefix[9],
            householdID: HouseholdID(bytes: Array(prefix[Self.householdBytes])),
            nonce: Array(prefix[42..<66]),
            format: prefix[7],
            suite: prefix[8]
        )
    }

    public var bytes: [UInt8] {
        VaultEnvelope.magic + [format, suite, schemaVersion] + householdID.bytes + nonce
    }
}

extension VaultError {
    /// Bytes that do not start with the magic "MTVAULT".
    static func notAVault(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedEnvelope, "not a vault: it does not start with \"MTVAULT\"", file: file, line: line)
    }

    /// A vault of `byteCount` bytes: too few for the header, or for the header and the tag.
    static func truncatedEnvelope(byteCount: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        byteCount < VaultEnvelope.headerByteCount
            ? VaultError(.malformedEnvelope, "the vault is truncated: \(byteCount) bytes, less than the 66-byte header", file: file, line: line)
            : VaultError(.malformedEnvelope, "the vault is truncated: \(byteCount) bytes leave no room for the 16-byte tag after the 66-byte header",
                         file: file, line: line)
    }

    /// An envelope format byte this build does not read.
    static func unsupportedEnvelopeFormat(_ format: UInt8, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "envelope format \(format) is not supported (this build reads format 1)", file: file, line: line)
    }

    /// A cipher suite byte this build does not read.
    static func unsupportedCipherSuite(_ suite: UInt8, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsupportedVersion, "cipher suite \(suite) is not supported (this build reads suite 1)", file: file, line: line)
    }

    /// A header naming a schema version this build does not read.
    static func unsupportedHeaderSchemaVersion(_ version: UInt8, file: String = #fileID, line: UInt = #line) -> VaultError {
        let versions = "\(VaultDocument.supportedVersions.lowerBound) to \(VaultDocument.supportedVersions.upperBound)"
        return VaultError(.unsupportedVersion, "schema version \(version) is not supported (this build reads versions \(versions))", file: file, line: line)
    }
}
