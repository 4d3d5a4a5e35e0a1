import Foundation
import Testing
import VaultCore

/// A rotation of the testkit household to the "other" test key, made in the scratch workspace.
enum RotationFixtures {
    static let plan = ["plan", "--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec",
                       "--now", "2026-11-22T10:00:00Z", "--reason", "routine yearly rotation", "-o", "plan.json"]

    @Sendable static func prepare(_ workspace: Workspace) throws {
        let run = try workspace.run("rotation-planner", plan)
        guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": run.stderrText]) }
        let compromise = try workspace.run("rotation-planner", plan.map { $0 == "plan.json" ? "compromise.json" : $0 } + ["--mode", "compromise"])
        guard compromise.status == 0 else { throw CocoaError(.fileWriteUnknown) }
        let apply = try workspace.run("rotation-planner", ["apply", "plan.json", "--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.nsec",
                                                            "--new-key-file", "keys/other.nsec", "--out-dir", "rotated", "--ops", "ops.jsonl"])
        guard apply.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["stderr": apply.stderrText]) }
        var tampered = String(decoding: workspace.contents("plan.json")!, as: UTF8.self)
        tampered = tampered.replacingOccurrences(of: "routine yearly rotation", with: "routine yearly rotatioN")
        try Data(tampered.utf8).write(to: URL(fileURLWithPath: workspace.path("tampered.json")))
    }

    static let oldVault = "rotated/vaults/0a92686c7aa4ac0f39bf3a8c6cc4078ef7683ed020866e18320156f952336b4e.vault"
    static let newVault = "rotated/vaults/46b4fceeb01a3e0c90ecb6a059bd3f1c426726ce4b10379306b9b3ea7f683ac4.vault"
}

@Suite struct RotationPlannerGoldenTests {
    static func rotation(_ name: String, _ arguments: [String], stdin: String? = nil) -> GoldenCase {
        GoldenCase(tool: "rotation-planner", name: name, arguments: arguments, stdin: stdin, prepare: RotationFixtures.prepare)
    }

    static let applyArguments = ["--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec", "--out-dir", "again"]

    static let cases: [GoldenCase] = [
        rotation("help", ["--help"]),
        rotation("show", ["show", "plan.json"]),
        rotation("show-compromise", ["show", "compromise.json"]),
        rotation("show-json", ["show", "--json", "plan.json"]),
        rotation("show-tampered", ["show", "tampered.json"]),
        // The vault key where the parent key belongs: a usage error naming the parent key (issue 45).
        GoldenCase(tool: "rotation-planner", name: "plan-with-the-vault-key", arguments: ["plan", "--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.vaultkey",
                                                                                         "--new-key-file", "keys/other.nsec", "-o", "plan.json"]),
        rotation("apply-tampered", ["apply", "tampered.json"] + applyArguments),
        rotation("apply-swapped-keys", ["apply", "plan.json", "--vault", "testkit/ok-household.vault", "--key-file", "keys/other.nsec",
                                        "--new-key-file", "keys/parent.nsec", "--out-dir", "again"]),
        rotation("apply-stale", ["apply", "plan.json", "--vault", "testkit/ok-v2-household.vault", "--key-file", "keys/parent.nsec",
                                 "--new-key-file", "keys/other.nsec", "--out-dir", "again"]),
        rotation("plan-same-key", ["plan", "--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/parent.nsec", "-o", "x.json"]),
        rotation("verify", ["verify", "--old-vault", RotationFixtures.oldVault, "--new-vault", RotationFixtures.newVault, "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec"]),
        rotation("verify-out-dir", ["verify", "--out-dir", "rotated", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec"]),
        rotation("verify-out-dir-wrong", ["verify", "--out-dir", "elsewhere", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec"]),
        rotation("verify-json", ["verify", "--out-dir", "rotated", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec", "--json"]),
        rotation("apply", ["apply", "plan.json"] + applyArguments),
        rotation("apply-json", ["apply", "plan.json"] + applyArguments + ["--ops", "again-ops.jsonl", "--json"]),
        rotation("apply-again-json", ["apply", "plan.json", "--vault", "testkit/ok-household.vault", "--key-file", "keys/parent.nsec",
                                      "--new-key-file", "keys/other.nsec", "--out-dir", "rotated", "--ops", "again-ops.jsonl", "--json"]),
        rotation("apply-json-without-ops", ["apply", "plan.json"] + applyArguments + ["--json"]),
        rotation("show-stdin", ["show", "-"], stdin: "plan.json"),
        rotation("plan-stdin-vault", ["plan", "--vault", "-", "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec",
                                      "--now", "2026-11-22T10:00:00Z", "--reason", "routine yearly rotation", "-o", "plan-again.json"],
                 stdin: "testkit/ok-household.vault"),
    ]

    @Test(arguments: cases)
    func golden(_ golden: GoldenCase) throws {
        try Golden.check(golden)
    }
}

@Suite struct RotationPlannerBehaviourTests {
    @Test func refusedAppliesWriteNothing() throws {
        let workspace = try Workspace()
        try RotationFixtures.prepare(workspace)
        // Every apply case whose recorded exit is a refusal (3 or 4), so a new one is covered too.
        let refused = RotationPlannerGoldenTests.cases.filter { golden in
            let exit = try? String(contentsOf: Golden.folder.appendingPathComponent("rotation-planner/\(golden.name).exit"), encoding: .utf8)
            return golden.arguments.first == "apply" && ["3", "4"].contains(exit?.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(refused.count >= 3)
        for arguments in refused.map(\.arguments) {
            let run = try workspace.run("rotation-planner", arguments)
            #expect(run.status == 3 || run.status == 4, "\(arguments): \(run.stderrText)")
            #expect(!FileManager.default.fileExists(atPath: workspace.path("again")))
        }
    }

    @Test func appliedRotationVerifiesAndOpens() throws {
        let workspace = try Workspace()
        try RotationFixtures.prepare(workspace)
        let vaults = try FileManager.default.contentsOfDirectory(atPath: workspace.path("rotated/vaults")).sorted()
        #expect(vaults.map { "rotated/vaults/" + $0 } == [RotationFixtures.oldVault, RotationFixtures.newVault])
        let verify = try workspace.run("rotation-planner", ["verify", "--old-vault", RotationFixtures.oldVault, "--new-vault", RotationFixtures.newVault,
                                                            "--key-file", "keys/parent.nsec", "--new-key-file", "keys/other.nsec"])
        #expect(verify.status == 0, "\(verify.stdoutText)")
        #expect(verify.stdoutText.split(separator: "\n").allSatisfy { $0.hasPrefix("ok") })
        #expect(try workspace.run("vault-tool", ["check", "--key-file", "keys/other.nsec", RotationFixtures.newVault]).status == 0)
        #expect(try workspace.run("vault-tool", ["check", "--key-file", "keys/parent.nsec", RotationFixtures.oldVault]).status == 0)
        let ops = String(decoding: workspace.contents("ops.jsonl")!, as: UTF8.self).split(separator: "\n")
        #expect(ops.filter { $0.contains(#""op":"device.relink""#) }.count == 2)
        #expect(ops.allSatisfy { $0.hasPrefix(#"{"op":"#) })
        // Verify against the wrong pair of vaults fails.
        let crossed = try workspace.run("rotation-planner", ["verify", "--old-vault", RotationFixtures.oldVault, "--new-vault", "testkit/ok-household.vault",
                                                             "--key-file", "keys/parent.nsec", "--new-key-file", "keys/parent.nsec"])
        #expect(crossed.status == 3)
    }
}

/// Single-bit flips of a signed plan, through the real binary: `apply` reports each as failed
/// verification (exit 3) and creates nothing. One bit of every third byte, its position turning
/// with the byte (``SampledFlips``); the exhaustive sweep of every bit is the library's
/// (PlanTamperTests), in process. The plan is split into twelve parts that run in parallel,
/// against the release tools where scripts/test names them (``Workspace/sweepBinaries``).
@Suite struct RotationPlannerTamperSweep {
    static let parts = 12

    @Test(arguments: 0..<parts)
    func everyBitFlipOfAPlanFailsWithoutOutput(_ part: Int) throws {
        let workspace = try Workspace(sweep: true)
        let made = try workspace.run("rotation-planner", ["plan", "--vault", "testkit/ok-minimal.vault", "--key-file", "keys/parent.nsec",
                                                          "--new-key-file", "keys/other.nsec", "--now", "2026-11-22T10:00:00Z", "-o", "plan.json"])
        try #require(made.status == 0, "\(made.stderrText)")
        let original = try #require(workspace.contents("plan.json"))
        let names = try workspace.topLevelNames()
        let bytes = (original.count * part / Self.parts)..<(original.count * (part + 1) / Self.parts)
        for bit in SampledFlips.bits(of: bytes) {
            var flipped = original
            flipped[bit / 8] ^= 1 << (bit % 8)
            try Data(flipped).write(to: URL(fileURLWithPath: workspace.path("flipped.json")))
            let run = try workspace.run("rotation-planner", ["apply", "flipped.json", "--vault", "testkit/ok-minimal.vault", "--key-file", "keys/parent.nsec",
                                                             "--new-key-file", "keys/other.nsec", "--out-dir", "rotated"])
            #expect(run.status == 3, "bit \(bit): \(run.stderrText)")
            #expect(run.stdout.isEmpty)
        }
        #expect(try workspace.topLevelNames() == names.union(["flipped.json"]), "a rejected plan left an output behind")
    }
}
