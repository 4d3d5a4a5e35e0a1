// VaultStorage: S3-compatible object stores, for the tools that read and write vaults in a
// bucket. AWS Signature Version 4, the configuration as the AWS CLI reads it (from the
// environment the executable passes and the files it names), HTTP through libcurl (its one
// owner), the client with conditional writes, and ObjectStore, the write path's ObjectAccess.
// It never reads the process's environment itself. Layers: docs/architecture.md.
