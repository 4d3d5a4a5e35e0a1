import VaultCore
import VaultFiles
import VaultStorage

extension BucketMigration {
    /// The jobs of every object under `prefix` named `*.vault`; with a shard, of its run of keys
    /// only (``ShardKeyRange``): the listing starts after the shard's first key and stops at the
    /// first key past its end, so N shards list the prefix once between them.
    static func jobs(under prefix: S3ObjectName, destination: Destination, shard: Shard?, store: ObjectStore) throws -> [Job] {
        var jobs: [Job] = []
        try listRun(under: prefix, shard: shard, store: store) { object in
            guard object.key.hasSuffix(".vault") else { return }
            jobs.append(Self.job(S3ObjectName(bucket: prefix.bucket, key: object.key), below: prefix, destination: destination))
        }
        return jobs
    }

    /// Every object under `prefix`, or with a shard its run of keys only (``ShardKeyRange``):
    /// the listing starts after the shard's first key, sizes its pages to the keys still
    /// expected, and stops at the first key past its end.
    static func listRun(under prefix: S3ObjectName, shard: Shard?, store: ObjectStore, _ each: (S3Client.Listed) throws -> Void) throws {
        let range = shard?.keyRange(under: prefix.key)
        var listedInRange = 0
        var pageSize = 1000
        try store.withClient { client in
            try client.listPages(prefix, startAfter: range?.after, nextPageSize: { page in
                guard let range, let last = page.last else { return 1000 }
                pageSize = range.nextPageSize(listedInRange: listedInRange, last: last.key, previous: pageSize)
                return pageSize
            }) { page in
                for object in page {
                    if let range {
                        // A store that ignored start-after would hand this shard the keys of the
                        // shards before it, and two shards would migrate one vault.
                        if !range.isPastStart(object.key), let after = range.after {
                            throw VaultError.startAfterIgnored(prefix.description, key: object.key, after: after)
                        }
                        if range.isPastEnd(object.key) { return false }
                        listedInRange += 1
                    }
                    try each(object)
                }
                return true
            }
        }
    }

}
