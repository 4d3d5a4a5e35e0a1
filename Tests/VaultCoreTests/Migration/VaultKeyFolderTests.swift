import Foundation
import Testing
@testable import VaultCore
@testable import VaultFleet
import VaultStorage

/// A key folder mounted wrong is refused before a fleet run does anything (issue 38), and the
/// conditional-write probe's objects are known by name to every listing that passes over them.
@Suite struct VaultKeyFolderTests {
    private func folder(_ names: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        for name in names { FileManager.default.createFile(atPath: path + "/" + name, contents: Data("00\n".utf8)) }
        return path
    }

    private func reason(_ path: String) -> String? {
        do {
            try VaultKeyFolder.require(path)
            return nil
        } catch let error as VaultError {
            #expect(error.code == .keyFolderUnusable)
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    @Test func aFolderWithOneHouseholdKeyIsAccepted() throws {
        let household = String(repeating: "0a", count: 32)
        #expect(reason(try folder([household + ".vaultkey", "README", "..data"])) == nil)
    }

    @Test func eachWrongFolderIsNamedWithWhatIsWrong() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-" + UUID().uuidString).path
        #expect(reason(missing)?.contains("'\(missing)' does not exist: expected <household id>.vaultkey files") == true)
        let file = try folder(["x"]) + "/x"
        #expect(reason(file)?.contains("is not a folder") == true)
        #expect(reason(try folder([]))?.contains("is empty") == true)
        #expect(reason(try folder(["..data", "..2026_11_26"]))?.contains("is empty") == true)
        // Keys of other kinds, or named otherwise than a run looks them up.
        let upper = String(repeating: "0A", count: 32) + ".vaultkey"
        let short = String(repeating: "0a", count: 31) + ".vaultkey"
        #expect(reason(try folder(["parent.nsec", upper, short]))?.contains("holds no <household id>.vaultkey file (3 other entries)") == true)
    }

    @Test func theProbeIsKnownByItsNameAtAnyDepth() {
        #expect(ObjectStore.isConditionalWriteProbe("vaults/.hvt-conditional-write-check-0011223344556677"))
        #expect(ObjectStore.isConditionalWriteProbe(".hvt-conditional-write-check-0011223344556677"))
        #expect(!ObjectStore.isConditionalWriteProbe("vaults/.hvt-conditional-write-check-0011/x.vault"))
        #expect(!ObjectStore.isConditionalWriteProbe("vaults/a.hvt-conditional-write-check-0011"))
    }
}
