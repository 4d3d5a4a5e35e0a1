import FoundationEssentials  // URL parsing and UUIDs

/// How a code's JSON is written: the suite's documented form (docs/tools.md), or what the seeds'
/// Swift code writes with `JSONEncoder`'s defaults (`JSONEncoder().encode(payload)`): a `Date` as
/// the seconds since 2001-01-01T00:00:00Z (a number), `Data` as standard base64, and `/` in a
/// string as `\/`. A reader takes both and says which it read.
public enum CodeEncoding: String, Sendable, CaseIterable {
    case documented
    case app

    /// 2001-01-01T00:00:00Z, Foundation's reference date, in seconds since 1970.
    static let referenceDate: Int64 = 978_307_200

    /// A `Date` as `JSONEncoder` writes it by default: seconds since the reference date, a
    /// whole number when it is one.
    static func appDate(_ time: Timestamp) -> JSONValue {
        let seconds = time.seconds - referenceDate
        guard time.nanoseconds != 0 else { return .number(String(seconds)) }
        let digits = String(time.nanoseconds)
        var fraction = String(repeating: "0", count: 9 - digits.count) + digits
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return .number("\(seconds).\(fraction)")
    }

    /// A time as either form writes it: an RFC 3339 string, or seconds since 2001 (a number,
    /// fractions to the nanosecond, in any spelling JSON allows: `8.176741E8` too); nil for
    /// anything else.
    static func time(_ value: JSONValue) -> (Timestamp, CodeEncoding)? {
        switch value {
        case .string(let text): return Timestamp(rfc3339: text).map { ($0, .documented) }
        case .number(let written):
            guard let text = withoutExponent(written) else { return nil }
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            // Bounded before any arithmetic (Int64.min has no magnitude in Int64); the sign is
            // the text's, so -0.5 is half a second before the reference date.
            guard let whole = Int64(parts[0]), whole.magnitude < 100_000_000_000 else { return nil }
            let negative = parts[0].hasPrefix("-")
            var nanoseconds: Int32 = 0
            if parts.count == 2 {
                let digits = parts[1]
                // Read to the nanosecond, as many digits as are written (JSONDecoder reads them
                // all into a Double; a trial: 21 were refused as "out of the range").
                guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                let first = String(digits.prefix(9))
                nanoseconds = Int32(first + String(repeating: "0", count: 9 - first.count))!
            }
            if negative, nanoseconds > 0 { return (Timestamp(seconds: whole - 1 + referenceDate, nanoseconds: 1_000_000_000 - nanoseconds), .app) }
            return (Timestamp(seconds: whole + referenceDate, nanoseconds: nanoseconds), .app)
        default: return nil
        }
    }

    /// Why a value is no time: a number out of a date's range, or not a time at all.
    static func timeProblem(_ value: JSONValue) -> String {
        if case .number = value { return "is a number of seconds since 2001-01-01 out of the range a date can have (at most 11 digits before the point)" }
        return "should be an RFC 3339 time, or a number of seconds since 2001-01-01 as the app's JSONEncoder writes a Date"
    }

    /// A JSON number's text with its exponent applied to the decimal point, exactly (no
    /// floating point): `8.176741E8` is `817674100`, `1.5e-1` is `0.15`. Nil past an exponent
    /// no date needs (a time is at most 11 digits; its fraction is read to the nanosecond).
    static func withoutExponent(_ text: String) -> String? {
        guard let mark = text.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return text }
        guard let exponent = Int(text[text.index(after: mark)...]), (-30...30).contains(exponent) else { return nil }
        var mantissa = text[..<mark]
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = String(parts[0]), fraction = parts.count == 2 ? String(parts[1]) : ""
        let digits = whole + fraction
        let point = whole.count + exponent
        let padded = point < 0 ? String(repeating: "0", count: -point) + digits : point > digits.count ? digits + String(repeating: "0", count: point - digits.count) : digits
        let at = max(point, 0)
        var integer = String(padded.prefix(at)).drop { $0 == "0" }, decimals = String(padded.dropFirst(at))
        while decimals.hasSuffix("0") { decimals.removeLast() }
        if integer.isEmpty { integer = "0" }
        return (negative ? "-" : "") + integer + (decimals.isEmpty ? "" : "." + decimals)
    }

    /// Compact JSON as `JSONEncoder` writes it: `/` escaped as `\/`.
    static func appJSON(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        for byte in value.serialized(pretty: false) {
            if byte == UInt8(ascii: "/") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        return out
    }
}

/// The MyTube device-link QR (seed 000, Flow 2 and Phase 3): what the primary shows a new iPad.
/// JSON `{vaultURL, nsec, parentPubkey, expiresAt}`; `nsec` as NIP-19, `expiresAt` RFC 3339.
/// The QR holds the parent key itself: the page and the image are secrets.
public struct DeviceLink: Sendable {
    /// The longest a link may be valid (`--expires-in`): a day. The QR holds the parent key, so
    /// a long-lived one is a standing copy of it.
    public static let maximumLifetime = 86_400

    public let vaultURL: String
    public let key: SecretKey
    public let expiresAt: Timestamp
    /// How the payload read wrote the two fields the forms differ in (the documented form for
    /// a link made here): the same form for a code either writer made; different ones for a
    /// code neither made whole (an app whose encoder writes dates as RFC 3339 and its key as
    /// base64), which is read, and said to be mixed (a trial: it was called the app's form).
    public let keyEncoding: CodeEncoding, timeEncoding: CodeEncoding

    /// The form the payload read was written in, or nil when its fields mix the two.
    public var encoding: CodeEncoding? { keyEncoding == timeEncoding ? keyEncoding : nil }

    public init(vaultURL: String, key: SecretKey, expiresAt: Timestamp) {
        self.vaultURL = vaultURL
        self.key = key
        self.expiresAt = expiresAt
        keyEncoding = .documented
        timeEncoding = .documented
    }

    /// The QR's payload: the documented form (`nsec` as NIP-19, `expiresAt` RFC 3339), or the
    /// app's (seed 000's `LinkPayload` through `JSONEncoder`: `nsec` the 32 bytes in base64,
    /// `expiresAt` seconds since 2001, `/` escaped), in the struct's field order.
    public func payload(encoding: CodeEncoding = .documented) throws -> [UInt8] {
        switch encoding {
        case .documented:
            let nsec = String(decoding: try key.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self)
            return JSONValue.object([("vaultURL", .string(vaultURL)), ("nsec", .string(nsec)), ("parentPubkey", .string(key.publicKey.hex)),
                                     ("expiresAt", .string(expiresAt.rfc3339))]).serialized(pretty: false)
        case .app:
            let nsec = try Sodium.base64(key.withUnsafeBytes { try SecretBytes(copying: $0) })
            return CodeEncoding.appJSON(.object([("vaultURL", .string(vaultURL)), ("nsec", .string(nsec)), ("parentPubkey", .string(key.publicKey.hex)),
                                                 ("expiresAt", CodeEncoding.appDate(expiresAt))]))
        }
    }

    /// Reads a scanned payload and checks it: the key is the stated parent key, the URL ends in
    /// the household's vault file, and the link has not expired at `now`.
    public init(payload: [UInt8], now: Timestamp) throws {
        var reader = try JSONObjectReader(JSONValue(parsing: payload, what: "the device link", quotingNames: false), path: "")
        vaultURL = try reader.string("vaultURL")
        if vaultURL.unicodeScalars.contains(where: \.isControlOrInvisible) { throw VaultError.codeFieldHasControl("vaultURL") }
        let nsec = try reader.string("nsec")
        let stated = try reader.publicKeyHex("parentPubkey")
        let expiresAtValue = try reader.required("expiresAt")
        guard let (expiry, timeForm) = CodeEncoding.time(expiresAtValue) else {
            throw reader.invalid("expiresAt", CodeEncoding.timeProblem(expiresAtValue))
        }
        expiresAt = expiry
        // The documented form's nsec1…, or the app's `Data`: the 32 bytes in base64. Read before
        // the fields nobody asked for are refused, and held as a key a person gave: an error
        // or a report quoting the code's other text withholds any piece of it (a trial: a field
        // named by 40 of its hex digits, or by its base64, was quoted whole).
        // In either case, as bech32 is read (BIP-173: a code may be all upper case).
        let isBech32 = nsec.utf8.prefix(5).map({ $0 | 0x20 }) == Array("nsec1".utf8)
        if isBech32 {
            var nsecBytes = Array(nsec.utf8)
            key = try SecretKey(parsing: SecretBytes(consuming: &nsecBytes), what: "the link's nsec")
        } else if let raw = try Sodium.base64Secret(nsec, byteCount: 32) {
            raw.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
            key = try SecretKey(secret: raw)
        } else {
            throw reader.invalid("nsec", "should be nsec1…, or the key's 32 bytes in base64 as the app's JSONEncoder writes Data")
        }
        try reader.finish()
        // The key's own field aside, no field carries it: the URL is printed by every reader,
        // as it is, percent-decoded (`%2B`, `%2F` hid a base64 key: a hostile review) and with
        // a query's `+` read as the space it means there (a key split by them: a trial).
        let written = Array(vaultURL.utf8)
        let readings = [PercentEncoding.decoded(vaultURL).bytes, PercentEncoding.decoded(vaultURL, plusIsSpace: true).bytes]
        guard HeldSecrets.match(in: written) == nil, !readings.contains(where: { $0 != written && HeldSecrets.match(in: $0) != nil }) else {
            throw VaultError.linkURLHoldsItsKey()
        }
        keyEncoding = isBech32 ? .documented : .app
        timeEncoding = timeForm
        guard key.publicKey == stated else {
            throw VaultError.linkKeyNotItsParentKey()
        }
        // The new device fetches its vault there with the key beside it in the same code: a
        // plain-HTTP fetch is open to whoever is on the path (``HTTPSAddress``).
        guard let url = HTTPSAddress.parsed(vaultURL) else {
            throw VaultError.linkURLNotHTTPS()
        }
        let expected = Household(parentPublicKey: stated).id.hex + ".vault"
        guard url.lastPathComponent == expected else {
            throw VaultError.linkURLOfAnotherHousehold(vaultFile: expected)
        }
        guard now <= expiresAt else {
            throw VaultError.linkExpired(at: expiresAt, now: now)
        }
        // No link is made to last longer than a day (the app's last 5 minutes): one that claims
        // to is forged, or made by a clock that is wrong, and is not the one to hand a key to.
        guard expiresAt.seconds - now.seconds <= Int64(Self.maximumLifetime) + PairingCode.allowedClockSkew else {
            throw VaultError.linkExpiresTooLate(at: expiresAt, now: now)
        }
    }
}

/// The screen-time app's pairing QR (seed 004): `{shareURL, parentDeviceID, verificationToken,
/// sharedZoneID, timestamp}`, the timestamp as RFC 3339. The zone is optional (seed 004's
/// `sharedZoneID: String?`): a code without one leaves the field out, as `JSONEncoder` leaves
/// out a nil optional, and one reading `null` is read as without one.
public struct PairingCode: Sendable, Equatable {
    /// A new verification token: a version 4 UUID from `random` (injected, so tests can
    /// reproduce it).
    public static func newVerificationToken(random: some RandomSource) -> String {
        var bytes = random.bytes(16)
        bytes[6] = bytes[6] & 0x0f | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString
    }

    public let shareURL: String
    public let parentDeviceID: String
    public let verificationToken: String
    public let sharedZoneID: String?
    public let timestamp: Timestamp
    /// How the payload read was written (the documented form for a code made here).
    public private(set) var encoding: CodeEncoding = .documented

    /// Whether `text` is a version 4 UUID of RFC 4122's variant, as `newVerificationToken` and
    /// the app's `UUID()` make, and reads as drawn at random: six different hex digits at least
    /// (`…-4000-8000-000000000000` is version 4 in form only, a trial; 32 random digits have
    /// fewer less than once in 10^11).
    static func isRandomUUID(_ text: String) -> Bool {
        guard let uuid = UUID(uuidString: text)?.uuid, uuid.6 >> 4 == 4, uuid.8 >> 6 == 0b10 else { return false }
        return Set(text.lowercased().filter(\.isHexDigit)).count >= 6
    }

    public static let defaultMaximumAge: Int64 = 600
    /// The most a reader may allow (`--max-age`): a day.
    public static let maximumAllowedAge: Int64 = 86_400
    public static let allowedClockSkew: Int64 = 60

    public init(shareURL: String, parentDeviceID: String, verificationToken: String, sharedZoneID: String?, timestamp: Timestamp) {
        self.shareURL = shareURL
        self.parentDeviceID = parentDeviceID
        self.verificationToken = verificationToken
        self.sharedZoneID = sharedZoneID
        self.timestamp = timestamp
    }

    public func jsonValue() -> JSONValue { .object(fields) }

    /// Every field in the struct's order, a zone the code does not name as null.
    private var orderedFields: [(key: String, value: JSONValue)] {
        [("shareURL", .string(shareURL)), ("parentDeviceID", .string(parentDeviceID)), ("verificationToken", .string(verificationToken)),
         ("sharedZoneID", sharedZoneID.map(JSONValue.string) ?? .null), ("timestamp", .string(timestamp.rfc3339))]
    }

    /// The documented form's fields, in order; a code without a zone has no `sharedZoneID`
    /// (as `JSONEncoder` leaves out a nil optional).
    public var fields: [(key: String, value: JSONValue)] { orderedFields.filter { $0.value != .null } }

    /// Every field as a report names it (`read --json`): a code without a zone says so with a
    /// null, so a reader of the report finds each field.
    public var reportedFields: [(key: String, value: JSONValue)] { orderedFields + [("encoding", .string(encoding.rawValue))] }

    /// The QR's payload: the documented form, or the app's (seed 004's `PairingPayload` through
    /// `JSONEncoder`: `timestamp` seconds since 2001, `/` escaped), in the struct's field order.
    public func payload(encoding: CodeEncoding = .documented) -> [UInt8] {
        switch encoding {
        case .documented: jsonValue().serialized(pretty: false)
        case .app:
            CodeEncoding.appJSON(.object(fields.map { $0.key == "timestamp" ? ($0.key, CodeEncoding.appDate(timestamp)) : $0 }))
        }
    }

    /// Every field present and well formed: an https share URL, a UUID device id, a token, a
    /// zone, and a timestamp at most `maximumAge` seconds old and at most 60 s in the future.
    public init(payload: [UInt8], now: Timestamp, maximumAge: Int64 = defaultMaximumAge) throws {
        var reader = try JSONObjectReader(JSONValue(parsing: payload, what: "the pairing code"), path: "")
        shareURL = try reader.string("shareURL")
        parentDeviceID = try reader.string("parentDeviceID")
        verificationToken = try reader.string("verificationToken")
        sharedZoneID = try reader.optionalString("sharedZoneID")
        let timestampValue = try reader.required("timestamp")
        guard let (time, form) = CodeEncoding.time(timestampValue) else {
            throw reader.invalid("timestamp", CodeEncoding.timeProblem(timestampValue))
        }
        timestamp = time
        encoding = form
        try reader.finish()
        for (name, value) in [("shareURL", shareURL), ("parentDeviceID", parentDeviceID), ("verificationToken", verificationToken), ("sharedZoneID", sharedZoneID ?? "")] {
            if value.unicodeScalars.contains(where: \.isControlOrInvisible) { throw VaultError.codeFieldHasControl(name) }
            // A pairing code carries no key: one in a field (a hostile or mixed-up code) would be
            // printed by every reader of it, so the code is refused, the value not shown.
            if Array(value.utf8).withUnsafeBytes({ KeyText.holdsKey($0) }) { throw VaultError.codeFieldHoldsKey(name) }
        }
        guard HTTPSAddress.parsed(shareURL) != nil else {
            throw VaultError.pairingShareURLNotHTTPS()
        }
        guard let device = UUID(uuidString: parentDeviceID) else { throw VaultError.pairingDeviceIDNotUUID() }
        // Blank is empty to a person comparing what the two devices show.
        // A zone is absent or named: blank is neither.
        for (name, value) in [("verificationToken", verificationToken), ("sharedZoneID", sharedZoneID ?? "-")] where !value.contains(where: { !$0.isWhitespace }) {
            throw VaultError.pairingFieldEmpty(name)
        }
        // The app makes it with `UUID().uuidString`: random, version 4. A guessable one (the
        // nil UUID, a time-based one, the device's own id, "abc") was accepted (a trial), and
        // only its randomness makes the code worth comparing on the two screens.
        guard Self.isRandomUUID(verificationToken), UUID(uuidString: verificationToken) != device else {
            throw VaultError.pairingTokenNotRandom()
        }
        let age = now.seconds - timestamp.seconds
        guard age <= maximumAge else {
            throw VaultError.pairingCodeTooOld(age: age, maximumAge: maximumAge)
        }
        guard -age <= Self.allowedClockSkew else {
            throw VaultError.pairingCodeFromTheFuture(seconds: -age)
        }
    }
}

extension VaultError {
    /// A device link whose nsec is not the parent key it states.
    static func linkKeyNotItsParentKey(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the link's parentPubkey is not the public key of its nsec", file: file, line: line)
    }

    /// A device link whose vault URL holds its key, or a piece of it, in any spelling.
    static func linkURLHoldsItsKey(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "vaultURL holds the link's key, or a piece of it (not shown): a link carries its key in its nsec field only", file: file, line: line)
    }

    /// A device link whose vault URL is not an https URL with a host.
    static func linkURLNotHTTPS(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "vaultURL should be an https URL with a host and no user or password", file: file, line: line)
    }

    /// A device link whose vault URL is not the household's vault file, `vaultFile`.
    static func linkURLOfAnotherHousehold(vaultFile: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the vault URL does not end in this household's vault file \(vaultFile)", file: file, line: line)
    }

    /// A device link read after its expiry.
    static func linkExpired(at expiresAt: Timestamp, now: Timestamp, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the link expired \(TimeSpan.relative(expiresAt, now: now)), at \(expiresAt)",
                   hint: "show a new link on the primary device", file: file, line: line)
    }

    /// A pairing code's field that reads as a key, words or a share.
    static func codeFieldHoldsKey(_ field: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(field) reads as a key, recovery words or a share (not shown), which a pairing code never carries", file: file, line: line)
    }

    /// A code's field that holds a control or invisible character (none of its fields may).
    static func codeFieldHasControl(_ field: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "\(field) holds a control or invisible character, which no field of a code may hold", file: file, line: line)
    }

    /// A pairing code whose shareURL is not an https URL with a host.
    static func pairingShareURLNotHTTPS(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "shareURL should be an https URL with a host and no user or password", file: file, line: line)
    }

    /// A pairing code whose parentDeviceID is not a UUID.
    static func pairingDeviceIDNotUUID(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "parentDeviceID should be a UUID", file: file, line: line)
    }

    /// A pairing code whose verification token is not a random (version 4) UUID, or is the
    /// parent device's own id.
    static func pairingTokenNotRandom(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "verificationToken should be a random UUID (version 4), other than the parent device's id", file: file, line: line)
    }

    /// A pairing code with an empty or blank verification token or zone (`field`).
    static func pairingFieldEmpty(_ field: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        // The zone is optional: a code without one leaves it out.
        let needed = field == "sharedZoneID" ? "a code without a zone leaves the field out" : "a pairing code needs it"
        return VaultError(.malformedDocument, "\(field) is empty or blank; \(needed)", file: file, line: line)
    }

    /// A device link that claims to stay valid longer than any link is made for.
    static func linkExpiresTooLate(at expiresAt: Timestamp, now: Timestamp, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the link claims to be valid until \(expiresAt) (\(TimeSpan.relative(expiresAt, now: now))), longer than the day any link is made for; a clock is wrong or the link is not the app's",
                   hint: "show a new link on the primary device", file: file, line: line)
    }

    /// A pairing code older than the reader allows (`age` and `maximumAge` in seconds).
    static func pairingCodeTooOld(age: Int64, maximumAge: Int64, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the pairing code is \(TimeSpan.words(seconds: age)) old, more than the \(maximumAge) s allowed",
                   hint: "show a new pairing code on the parent's device", file: file, line: line)
    }

    /// A pairing code stamped further in the future than the allowed clock skew.
    static func pairingCodeFromTheFuture(seconds: Int64, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.authenticationFailed, "the pairing code's timestamp is \(seconds) s in the future; a clock is wrong", file: file, line: line)
    }
}

/// The one rule for an address a code hands to a device (a link's vault, a pairing's share):
/// https, the scheme in any case (RFC 3986), with a host a resolver could be asked for and a
/// port one could listen on, and no user or password (every reader of the code would show
/// them, and a device's request would send them). Foundation's parser takes a space, `...`,
/// `%40` or port 0 in a host (a hostile trial); this checks the authority as written. A query (a
/// presigned URL's signature) and a fragment are the server's business.
enum HTTPSAddress {
    static func parsed(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", url.user == nil, url.password == nil else { return nil }
        // The authority as written: what stands between "https://" and the path, query or fragment.
        guard text.utf8.count > "https://".utf8.count, text.utf8.prefix(8).map({ $0 | 0x20 }) == Array("https://".utf8) else { return nil }
        let authority = Array(text.utf8.dropFirst("https://".utf8.count).prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        var host = authority[...], port: ArraySlice<UInt8> = []
        if host.first == UInt8(ascii: "[") {
            // An IPv6 literal: hex digits, colons and an IPv4 tail; no zone (`%25eth0`).
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let literal = host[(host.startIndex + 1)..<close]
            guard literal.contains(UInt8(ascii: ":")), literal.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return nil }
            let rest = host[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                port = rest.dropFirst()
                guard !port.isEmpty else { return nil }
            }
            host = literal
        } else {
            if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
                port = host[(colon + 1)...]
                host = host[..<colon]
                guard !port.isEmpty else { return nil }
            }
            // A name: dot-separated labels of letters, digits and inner hyphens (a final dot
            // allowed); letters past ASCII are an internationalised name's.
            var labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
            guard !labels.isEmpty, labels.allSatisfy({ label in
                !label.isEmpty && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                    && label.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 >= 0x80 }
            }) else { return nil }
        }
        if !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(String(decoding: port, as: UTF8.self)),
                  (1...65535).contains(number) else { return nil }
        }
        return url
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20) }
    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x7a).contains(byte | 0x20) }
}
