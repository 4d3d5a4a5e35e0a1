import Foundation
import Testing
@testable import VaultCore
import VaultPaper

/// Test-side helpers: files next to the tests, hex, and a seeded random source.
enum TestFiles {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let vectors = testsFolder.appendingPathComponent("Vectors")
    static let fixtures = testsFolder.deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func vector<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: vectors.appendingPathComponent(name)))
    }
}

func hex(_ text: String) -> [UInt8] {
    guard let bytes = Hex.decode(text) else { fatalError("bad hex in a test: \(text)") }
    return bytes
}

extension SecretBytes {
    /// Test-only: the bytes as an array, to compare with a vector.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }

    static func test(_ bytes: [UInt8]) -> SecretBytes {
        try! bytes.withUnsafeBytes { try SecretBytes(copying: $0) }
    }
}

/// SplitMix64: reproducible bytes for property tests and fixtures. Never used outside tests.
final class SeededRandom: RandomSource, @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()

    init(seed: UInt64) { state = seed }

    func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: next()) }
    }

    func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

// Test-side conveniences over the secret-bytes APIs: the tests write their words and
// passphrases as literals, which the library never takes as `String`.
extension SecretBytes {
    static func text(_ text: String) -> SecretBytes { test(Array(text.utf8)) }
    var testText: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

extension BIP39 {
    static func words(for entropy: SecretBytes) throws -> [String] {
        try phrase(for: entropy).testText.split(separator: " ").map(String.init)
    }
    static func entropy(fromWords text: String) throws -> SecretBytes { try entropy(fromWords: .text(text)) }
    static func readings(fromWords text: String) throws -> [Reading] { try readings(fromWords: .text(text)) }
}

extension SLIP39Share {
    init(words text: String, share: Int = 1) throws { try self.init(words: .text(text), share: share) }
    static func read(words text: String, share: Int = 1) throws -> (share: SLIP39Share, order: WordOrder) {
        try read(words: .text(text), share: share)
    }
    func words() -> [String] { try! phrase().testText.split(separator: " ").map(String.init) }
}

extension NIP49 {
    static func encrypt(_ key: SecretKey, passphrase: String, logN: UInt8, keySecurity: KeySecurity = .unknown,
                        random: some RandomSource = SystemRandom()) throws -> String {
        try encrypt(key, passphrase: .text(passphrase), logN: logN, keySecurity: keySecurity, random: random)
    }
    static func decrypt(_ ncryptsec: String, passphrase: String) throws -> (key: SecretKey, keySecurity: UInt8) {
        try decrypt(ncryptsec, passphrase: .text(passphrase))
    }
}

extension WordList {
    static func tokens(_ text: String) throws -> [String] {
        try tokens(.text(text)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension SLIP39 {
    static func split(secret: SecretBytes, groupThreshold: Int, groups: [Group], passphrase: [UInt8],
                      iterationExponent: Int = defaultIterationExponent, extendable: Bool = true, random: RandomSource) throws -> [[SLIP39Share]] {
        try split(secret: secret, groupThreshold: groupThreshold, groups: groups, passphrase: SecretBytes.test(passphrase),
                  iterationExponent: iterationExponent, extendable: extendable, random: random)
    }
    static func combine(_ shares: [SLIP39Share], passphrase: [UInt8]) throws -> SecretBytes {
        try combine(shares, passphrase: SecretBytes.test(passphrase))
    }
}

extension SLIP39 {
    static func index(of typed: String) -> Int? { index(of: Array(typed.utf8)) }
}

extension RecoverySheet {
    static func key(fromPayload payload: [UInt8], name: String, passphrase: () throws -> String?) throws -> (key: SecretKey, encrypted: Bool) {
        try key(fromPayload: payload, name: name) { try passphrase().map(SecretBytes.text) }
    }
    static func key(fromTyped text: String, passphrase: () throws -> String?) throws -> (key: SecretKey, encrypted: Bool, order: WordOrder?) {
        try key(fromTyped: .text(text)) { try passphrase().map(SecretBytes.text) }
    }
}

extension SeedQR {
    static func entropy(fromDigits digits: String) throws -> SecretBytes { try entropy(fromDigits: .text(digits)) }
}

extension ShareCodes {
    static func share(fromCode code: String, share number: Int = 1) throws -> SLIP39Share? { try share(fromCode: .text(code), share: number) }
}

/// The fast tier, `scripts/test --quick` (HVT_TEST_TIER=quick), asked for by name: tests that
/// need a server are left out and exhaustive sweeps sampled. Anywhere else every test runs
/// whole, and one without its server fails, saying so, and never skips.
enum TestTier {
    static let isQuick = ProcessInfo.processInfo.environment["HVT_TEST_TIER"] == "quick"
}

extension Trait where Self == ConditionTrait {
    /// Needs the servers scripts/test starts: not in the quick tier.
    static var needsServers: Self { .enabled(if: !TestTier.isQuick, "needs the servers scripts/test starts: not in the quick tier") }
}

/// The servers scripts/test starts (scripts/lib/postgres.sh, scripts/lib/seaweedfs.sh) and names
/// in the environment: a test that needs one fails without it, saying so, and never skips.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    static func require(_ variable: String, _ server: String) throws {
        guard ProcessInfo.processInfo.environment[variable] != nil else {
            throw Missing(description: "needs \(server) that scripts/test starts (\(variable) is not set): run through scripts/test")
        }
    }
}
