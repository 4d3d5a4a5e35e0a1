/// What kind of code a QR payload is, among the codes the suite prints and reads, told apart by
/// their shape alone (nothing is decrypted or checked), so a reader given the wrong kind can say
/// which it is instead of failing on a field it expected.
public enum PrintedCode: Equatable, Sendable {
    /// A recovery sheet's key: `nsec1…` or `ncryptsec1…`.
    case recoveryKey
    /// A share sheet's share code (SLIP-0039 word numbers, four digits each), with its set.
    case share(set: Int)
    /// A share sheet's public check code, with its set.
    case shareCheck(set: Int)
    /// A recovery-code sheet's Standard SeedQR (BIP-39 word numbers, four digits each).
    case recoveryCode
    /// A device-link QR (JSON with vaultURL and nsec).
    case deviceLink
    /// A screen-time pairing QR (JSON with shareURL and parentDeviceID).
    case pairing
    case other

    /// A payload may be a secret (a key, a share), so it is looked at as bytes; no `String`
    /// is made of it.
    public static func classify(_ payload: [UInt8]) -> PrintedCode {
        if payload.startsWithFolded("nsec1") || payload.startsWithFolded("ncryptsec1") { return .recoveryKey }
        if let check = payload.withUnsafeBytes(ShareCodes.parseCheckCode) { return .shareCheck(set: check.set) }
        let digits = payload.allSatisfy { (0x30...0x39).contains($0) }
        if digits, let share = try? payload.withUnsafeBytes({ try ShareCodes.share(fromCode: $0, share: 1) }) { return .share(set: share.identifier) }
        if digits, [48, 60, 72, 84, 96].contains(payload.count) { return .recoveryCode }
        if let object = try? JSONValue(parsing: Array(payload.prefix(InputLimits.line)), what: "a code"), case .object(let fields) = object {
            let names = Set(fields.map(\.key))
            if names.contains("vaultURL"), names.contains("nsec") { return .deviceLink }
            if names.contains("shareURL"), names.contains("parentDeviceID") { return .pairing }
        }
        return .other
    }

    /// How a message names it: "a share sheet of set 21999".
    public var description: String {
        switch self {
        case .recoveryKey: "a recovery sheet"
        case .share(let set), .shareCheck(let set): "a share sheet of set \(set)"
        case .recoveryCode: "a recovery-code sheet"
        case .deviceLink: "a device-link code"
        case .pairing: "a pairing code"
        case .other: "a code the suite does not make"
        }
    }

    /// The kind among `payloads` that says the most about what the picture is: a share sheet
    /// has two codes, both of one set.
    public static func mostTelling(_ payloads: [[UInt8]]) -> PrintedCode {
        let kinds = payloads.map(classify)
        return kinds.first { if case .share = $0 { true } else { false } } ?? kinds.first { $0 != .other } ?? .other
    }
}

extension VaultError.Code {
    /// A code was read, but of another kind than the command reads.
    public static let wrongKindOfCode = VaultError.Code(name: "wrongKindOfCode", category: .invalidInput)
}

extension VaultError {
    /// `name` names the picture; the tool's hint names the command that reads `found`.
    public static func wrongKindOfCode(_ found: PrintedCode, expected: String, name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.wrongKindOfCode, "\(name) is \(found.description), not \(expected)", file: file, line: line)
    }
}
