// VaultFiles: the operating system's side of VaultCore, so that VaultCore stays bytes in,
// bytes out (issue 39).
//
// The one write path's rules (issue 16): outputs staged beside their target and published by
// rename or link (`OutputLocation`, `StagedOutput`, `AtomicFile`, whose mode for a public file is
// read from the umask once), the same-file rule (`FileSet`) and its refusals (`FileErrors`),
// bounded reads of files and lines (`BoundedRead`), files that hold a key (`KeyHoldingFile`),
// the names of what a command reads and writes (`s3://` names, `VaultLocation`) and what the
// write path needs of an object store (`ObjectAccess`, VaultStorage's `ObjectStore` is one), and
// child processes (`ChildProcess`, `SecretCommand`). It never prints, exits or reads the
// environment. Layers: docs/architecture.md.
