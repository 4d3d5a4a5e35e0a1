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

    /// Every folder under Fuzz/Regressions names a target and holds inputs, and each of them is
    /// replayed: a misnamed or empty folder would otherwise pass by replaying nothing (issue 16).
    @Test func pastCrashesPass() throws {
        let folder = Self.fuzzFolder.appendingPathComponent("Regressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(!names.isEmpty, "Fuzz/Regressions holds no target folder")
        var replayed = 0
        for name in names {
            let target = try #require(FuzzTarget(rawValue: name), "Fuzz/Regressions/\(name) names no fuzz target")
            let inputs = try Self.inputs("Regressions", target)
            #expect(!inputs.isEmpty, "Fuzz/Regressions/\(name) holds no input")
            for input in inputs {
                // A past crash must now run through the target's checks (a failed check stops
                // the process); the result says only whether the parser accepted the input.
                _ = target.run(input.bytes)
                replayed += 1
            }
        }
        let files = try names.map { try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent($0).path).filter { !$0.hasPrefix(".") }.count }
        #expect(replayed == files.reduce(0, +) && replayed > 0, "replayed \(replayed) of \(files.reduce(0, +)) regression inputs")
    }
}
