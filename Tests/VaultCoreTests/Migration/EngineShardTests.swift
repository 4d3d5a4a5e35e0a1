import Testing
@testable import VaultCore
@testable import VaultFleet

/// `--shard auto`: each engine's variables give the same shards `--shard I/N` names, and what
/// is missing or contradictory is refused naming it.
@Suite struct EngineShardTests {
    typealias Shard = BucketMigration.Shard

    @Test func eachEngineGivesItsShard() throws {
        let kubernetes = try Shard.fromEngine(["JOB_COMPLETION_INDEX": "0"], count: 4)
        #expect(kubernetes == (try Shard(parsing: "1/4")) && kubernetes.origin == "JOB_COMPLETION_INDEX=0, --shard-count 4")
        let batch = try Shard.fromEngine(["AWS_BATCH_JOB_ARRAY_INDEX": "9999", "HVT_SHARD_COUNT": "10000"], count: nil)
        #expect(batch.index == 10_000 && batch.count == 10_000 && batch.origin == "AWS_BATCH_JOB_ARRAY_INDEX=9999, HVT_SHARD_COUNT=10000")
        let cloudRun = try Shard.fromEngine(["CLOUD_RUN_TASK_INDEX": "2", "CLOUD_RUN_TASK_COUNT": "3"], count: nil)
        #expect(cloudRun.index == 3 && cloudRun.count == 3)
        // Agreeing sources are fine: the count said twice.
        #expect(try Shard.fromEngine(["JOB_COMPLETION_INDEX": "1", "HVT_SHARD_COUNT": "2"], count: 2).index == 2)
    }

    @Test func whatIsMissingOrContradictoryIsNamed() {
        func reason(_ environment: [String: String], _ count: Int? = nil) -> String {
            do {
                _ = try Shard.fromEngine(environment, count: count)
                return "accepted"
            } catch let error as VaultError {
                #expect(error.code == .engineShard || error.code == .outOfRange)
                return error.reason
            } catch { return "\(error)" }
        }
        #expect(reason([:], 4).contains("JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX"))
        #expect(reason(["JOB_COMPLETION_INDEX": "0"]).contains("--shard-count N or HVT_SHARD_COUNT"))
        #expect(reason(["CLOUD_RUN_TASK_INDEX": "0"]).contains("CLOUD_RUN_TASK_COUNT"))
        #expect(reason(["JOB_COMPLETION_INDEX": "0", "AWS_BATCH_JOB_ARRAY_INDEX": "0"], 2).contains("both set"))
        #expect(reason(["JOB_COMPLETION_INDEX": "0", "HVT_SHARD_COUNT": "3"], 4).contains("HVT_SHARD_COUNT=3"))
        #expect(reason(["CLOUD_RUN_TASK_INDEX": "0", "CLOUD_RUN_TASK_COUNT": "3"], 4).contains("CLOUD_RUN_TASK_COUNT=3"))
        #expect(reason(["JOB_COMPLETION_INDEX": "4"], 4).contains("JOB_COMPLETION_INDEX is 4, but there are 4 shards"))
        #expect(reason(["JOB_COMPLETION_INDEX": "-1"], 4).contains("JOB_COMPLETION_INDEX is '-1'"))
        #expect(reason(["JOB_COMPLETION_INDEX": "x"], 4).contains("JOB_COMPLETION_INDEX is 'x'"))
        #expect(reason(["JOB_COMPLETION_INDEX": "0", "HVT_SHARD_COUNT": "many"]).contains("HVT_SHARD_COUNT is 'many'"))
        #expect(reason(["JOB_COMPLETION_INDEX": "0"], 10_001) != "accepted")
    }
}
