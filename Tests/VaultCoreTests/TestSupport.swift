import Foundation
@testable import VaultCore

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
