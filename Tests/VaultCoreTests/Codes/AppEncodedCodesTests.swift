import Foundation
import Testing
@testable import VaultCore

/// Codes as the app writes them (issue 47, item 5): seed 000's `LinkPayload` and seed 004's
/// `PairingPayload`, declared as the seeds declare them and encoded by Foundation's own
/// `JSONEncoder` with its defaults (`JSONEncoder().encode(payload)`), read back by the suite;
/// and the suite's `--encoding app` output decoded by `JSONDecoder` into the same structs.
@Suite struct AppEncodedCodesTests {
    /// Seed 000, "Device linking": the link the primary shows a new iPad.
    struct LinkPayload: Codable {
        let vaultURL: URL
        let nsec: Data
        let parentPubkey: String
        let expiresAt: Date
    }

    /// Seed 004: the screen-time app's pairing QR (its zone optional: "Add field:
    /// `sharedZoneID: String?`").
    struct PairingPayload: Codable, Equatable {
        let shareURL: String
        let parentDeviceID: String
        let verificationToken: String
        let sharedZoneID: String?
        let timestamp: Date
    }

    let random = SeededRandom(seed: 0x0047)

    @Test func aLinkTheAppEncodesReadsBackAndOursDecodesInTheApp() throws {
        for fraction in [0.0, 0.25, 0.123456] {
            let key = try SecretKey.generate(using: random)
            let household = Household(parentPublicKey: key.publicKey)
            let url = URL(string: "https://minio.example/b/\(household.vaultPath)")!
            let expires = Date(timeIntervalSince1970: 1_800_000_000 + fraction)
            let raw = key.withUnsafeBytes { Data($0) }
            let encoded = try JSONEncoder().encode(LinkPayload(vaultURL: url, nsec: raw, parentPubkey: key.publicKey.hex, expiresAt: expires))
            #expect(String(decoding: encoded, as: UTF8.self).contains(#"\/"#), "JSONEncoder escapes slashes by default")
            let link = try DeviceLink(payload: Array(encoded), now: Timestamp(seconds: 1_799_999_000))
            #expect(link.key == key && link.vaultURL == url.absoluteString && link.encoding == .app)
            #expect(abs(Double(link.expiresAt.seconds) + Double(link.expiresAt.nanoseconds) / 1e9 - expires.timeIntervalSince1970) < 1e-6)
            // The suite's app form is what the app's JSONDecoder reads.
            let ours = try DeviceLink(vaultURL: url.absoluteString, key: key, expiresAt: Timestamp(seconds: 1_800_000_000)).payload(encoding: .app)
            let decoded = try JSONDecoder().decode(LinkPayload.self, from: Data(ours))
            #expect(decoded.nsec == raw && decoded.vaultURL == url && decoded.expiresAt == Date(timeIntervalSince1970: 1_800_000_000))
            // JSONEncoder's key order is not fixed (a dictionary's); its escapes are.
            #expect(String(decoding: ours, as: UTF8.self).contains(#"https:\/\/minio.example\/b\/vaults\/"#))
        }
    }

    /// An app whose encoder writes dates as ISO 8601 keeps base64 for its key: read, and said
    /// to be neither form whole (a trial: it was called the app's form); the other way round too.
    @Test func aLinkMixingTheTwoFormsIsReadAndSaidToBeMixed() throws {
        let key = try SecretKey.generate(using: random)
        let url = URL(string: "https://minio.example/b/\(Household(parentPublicKey: key.publicKey).vaultPath)")!
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let isoDates = try encoder.encode(LinkPayload(vaultURL: url, nsec: key.withUnsafeBytes { Data($0) }, parentPubkey: key.publicKey.hex,
                                                      expiresAt: Date(timeIntervalSince1970: 1_800_000_000)))
        let link = try DeviceLink(payload: Array(isoDates), now: Timestamp(seconds: 1_799_999_000))
        #expect(link.key == key && link.keyEncoding == .app && link.timeEncoding == .documented && link.encoding == nil)
        let nsec = String(decoding: try key.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self)
        let numberTime = #"{"vaultURL":"\#(url.absoluteString)","nsec":"\#(nsec)","parentPubkey":"\#(key.publicKey.hex)","expiresAt":821692800}"#
        let other = try DeviceLink(payload: Array(numberTime.utf8), now: Timestamp(seconds: 1_799_999_000))
        #expect(other.keyEncoding == .documented && other.timeEncoding == .app && other.encoding == nil)
        // Either writer's own form is one form.
        #expect(try DeviceLink(payload: link.payload(encoding: .app), now: Timestamp(seconds: 1_799_999_000)).encoding == .app)
        #expect(try DeviceLink(payload: link.payload(), now: Timestamp(seconds: 1_799_999_000)).encoding == .documented)
    }

    /// With a zone and without one (a trial: a code the app wrote without a zone, the field left
    /// out by JSONEncoder, was refused as "sharedZoneID is missing").
    @Test(arguments: ["FamilyZone", nil] as [String?])
    func aPairingCodeTheAppEncodesReadsBackAndOursDecodesInTheApp(zone: String?) throws {
        let payload = PairingPayload(shareURL: "https://www.icloud.com/share/0abc", parentDeviceID: "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                                     verificationToken: UUID().uuidString, sharedZoneID: zone, timestamp: Date(timeIntervalSince1970: 1_800_000_000.5))
        #expect(String(decoding: try JSONEncoder().encode(payload), as: UTF8.self).contains("sharedZoneID") == (zone != nil))
        let code = try PairingCode(payload: Array(try JSONEncoder().encode(payload)), now: Timestamp(seconds: 1_800_000_010))
        #expect(code.encoding == .app && code.timestamp == Timestamp(seconds: 1_800_000_000, nanoseconds: 500_000_000))
        #expect(code.shareURL == payload.shareURL && code.parentDeviceID == payload.parentDeviceID && code.sharedZoneID == payload.sharedZoneID)
        let ours = code.payload(encoding: .app)
        #expect(try JSONDecoder().decode(PairingPayload.self, from: Data(ours)) == payload)
        #expect(String(decoding: ours, as: UTF8.self).contains(#""timestamp":821692800.5"#))
        // And the documented form still reads, and says so.
        let documented = try PairingCode(payload: code.payload(), now: Timestamp(seconds: 1_800_000_010))
        #expect(documented.encoding == .documented && documented.sharedZoneID == zone)
        #expect(code.reportedFields.first { $0.key == "sharedZoneID" }?.value == zone.map(JSONValue.string) ?? .null)
        // A zone written as null is a code without one; a blank one is neither.
        if zone == nil {
            let withNull = String(decoding: code.payload(), as: UTF8.self).replacingOccurrences(of: #","timestamp""#, with: #","sharedZoneID":null,"timestamp""#)
            #expect(try PairingCode(payload: Array(withNull.utf8), now: Timestamp(seconds: 1_800_000_010)).sharedZoneID == nil)
            let blank = withNull.replacingOccurrences(of: "null", with: #"" ""#)
            #expect(throws: VaultError(.malformedDocument, "")) { try PairingCode(payload: Array(blank.utf8), now: Timestamp(seconds: 1_800_000_010)) }
        }
    }

    @Test func aTimeOrKeyInNeitherFormIsRefusedByName() throws {
        let key = try SecretKey.generate(using: random)
        let url = "https://minio.example/b/\(Household(parentPublicKey: key.publicKey).vaultPath)"
        for (nsec, expires) in [("\"AAAA\"", "1"), ("\"nsec1qqq\"", "1"), ("\"\(try key.withUnsafeBytes { try Sodium.base64(SecretBytes(copying: $0)) })\"", "\"soon\""),
                                ("\"\(try key.withUnsafeBytes { try Sodium.base64(SecretBytes(copying: $0)) })\"", "1e9"),
                                ("\"\(try key.withUnsafeBytes { try Sodium.base64(SecretBytes(copying: $0)) })\"", "1.٣")] {
            let payload = #"{"vaultURL":"\#(url)","nsec":\#(nsec),"parentPubkey":"\#(key.publicKey.hex)","expiresAt":\#(expires)}"#
            #expect(throws: VaultError.self) { try DeviceLink(payload: Array(payload.utf8), now: Timestamp(seconds: 0)) }
        }
        // The extremes of a number are refused, not trapped on; a negative fraction keeps its sign.
        for extreme in ["-9223372036854775808", "9223372036854775807", "100000000000", "-100000000000.5"] {
            #expect(CodeEncoding.time(.number(extreme)) == nil, "\(extreme)")
        }
        #expect(CodeEncoding.time(.number("-0.5"))?.0 == Timestamp(seconds: CodeEncoding.referenceDate - 1, nanoseconds: 500_000_000))
        #expect(CodeEncoding.time(.number("-1.25"))?.0 == Timestamp(seconds: CodeEncoding.referenceDate - 2, nanoseconds: 750_000_000))
    }
}
