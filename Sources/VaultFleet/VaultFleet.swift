// VaultFleet: work on many vaults at once. The journaled folder batch (BatchMigration, its
// manifest staged in SQLite), the bucket batch (BucketMigration), their journal (SQLite,
// through VaultSQLite), the census of a folder or a bucket, and sample fleets for trials. Built
// on VaultCore's one-vault rules, VaultFiles' write path and VaultStorage's store. Layers:
// docs/architecture.md.
