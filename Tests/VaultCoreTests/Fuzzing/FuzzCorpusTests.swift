import Foundation
import FuzzTargets
import Testing

/// Replays the committed fuzz inputs through the same target code libFuzzer runs: the seeds
/// must still be accepted (or the fuzzer would start from nothing), and every input that once
/// crashed a target must now pass its checks (a crash stops this test run).
@Suite struct FuzzCorpusTests {
    static let fuzzFolder = TestFiles.testsFolder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ kind: String, _ target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let folder = fuzzFolder.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().filter { !$0.hasPrefix(".") }.map { name in
            (name, try [UInt8](Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsAreAccepted(_ target: FuzzTarget) throws {
        let seeds = try Self.inputs("Corpus", target)
        #expect(seeds.count >= 2, "Fuzz/Corpus/\(target.rawValue) should hold seeds")
        for seed in seeds {
            #expect(target.run(seed.bytes), "seed \(seed.name) of \(target.rawValue) is refused by its parser")
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func pastCrashesPass(_ target: FuzzTarget) throws {
        for input in try Self.inputs("Regressions", target) {
            target.run(input.bytes)
        }
    }
}
