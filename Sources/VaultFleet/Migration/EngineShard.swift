import VaultCore

/// `--shard auto`: the shard a job engine gave this process. Each engine runs N copies of one
/// command and tells each its place in the environment, 0-based:
/// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (no count: `--shard-count` or `HVT_SHARD_COUNT`);
/// - AWS Batch array jobs: `AWS_BATCH_JOB_ARRAY_INDEX` (no count either);
/// - Cloud Run jobs: `CLOUD_RUN_TASK_INDEX` and `CLOUD_RUN_TASK_COUNT`.
/// A missing, malformed or contradictory variable is refused naming it: a shard guessed wrong
/// would migrate another machine's vaults, or none.
extension BucketMigration.Shard {
    static let indexVariables = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX", "CLOUD_RUN_TASK_INDEX"]
    static let countVariable = "HVT_SHARD_COUNT"
    static let cloudRunCount = "CLOUD_RUN_TASK_COUNT"

    /// `count`: `--shard-count`, when given.
    public static func fromEngine(_ environment: [String: String], count option: Int?) throws -> Self {
        let set = indexVariables.filter { environment[$0] != nil }
        guard let variable = set.first else { throw VaultError.noEngineShard(indexVariables) }
        guard set.count == 1 else { throw VaultError.contradictoryShard("\(set.joined(separator: " and ")) are both set: which engine runs this?") }
        guard let index = Int(environment[variable]!), index >= 0 else { throw VaultError.badShardVariable(variable, environment[variable]!) }
        // The count, from every place that may say it; all that do must agree.
        var counts: [(String, Int)] = []
        if let option { counts.append(("--shard-count \(option)", option)) }
        for name in [countVariable] + (variable == "CLOUD_RUN_TASK_INDEX" ? [cloudRunCount] : []) {
            guard let text = environment[name] else { continue }
            guard let value = Int(text) else { throw VaultError.badShardVariable(name, text) }
            counts.append(("\(name)=\(value)", value))
        }
        guard let count = counts.first?.1 else {
            throw VaultError.noShardCount(variable, variable == "CLOUD_RUN_TASK_INDEX" ? cloudRunCount : "--shard-count N or \(countVariable)")
        }
        guard counts.allSatisfy({ $0.1 == count }) else {
            throw VaultError.contradictoryShard("the shard count differs: \(counts.map(\.0).joined(separator: ", "))")
        }
        guard (1...maximumCount).contains(count) else { throw VaultError.outOfRange("the shard count (\(counts[0].0))", "1 to \(maximumCount)") }
        guard index < count else { throw VaultError.shardIndexPastCount(variable, index: index, count: count) }
        return Self(index: index + 1, count: count, origin: (["\(variable)=\(index)"] + counts.map(\.0)).joined(separator: ", "))
    }
}

extension VaultError.Code {
    /// `--shard auto` could not tell which shard this process is: a usage error, before
    /// anything is read.
    public static let engineShard = VaultError.Code(name: "engineShard", category: .usage)
}

extension VaultError {
    /// None of the engines' index variables is set.
    static func noEngineShard(_ variables: [String], file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.engineShard, "--shard auto found none of \(variables.joined(separator: ", ")) in the environment",
                   hint: "run it as an indexed job, or give --shard I/N", file: file, line: line)
    }

    /// Two sources disagree about the shard.
    static func contradictoryShard(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.engineShard, "--shard auto: \(what)", file: file, line: line)
    }

    /// A shard variable that is no whole number in range.
    static func badShardVariable(_ variable: String, _ value: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.engineShard, "--shard auto: \(variable) is '\(value.prefix(40))', not a shard index", file: file, line: line)
    }

    /// An index (0-based) not below the count.
    static func shardIndexPastCount(_ variable: String, index: Int, count: Int, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.engineShard, "--shard auto: \(variable) is \(index), but there are \(count) shards (0 to \(count - 1))", file: file, line: line)
    }

    /// An engine that gives no count, and none was given.
    static func noShardCount(_ variable: String, _ needed: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.engineShard, "--shard auto: \(variable) gives this shard's index but not how many there are; give \(needed)", file: file, line: line)
    }
}
