import VaultCore

// The codes and factories of the failures VaultFleet raises: batch and bucket runs, their
// manifests and journals, inventories and the rolling check. Each is made here, beside the
// other layers' own (VaultCore's in VaultError.swift, VaultRegistry's in RegistryErrors.swift).

extension VaultError.Code {
    /// A rolling integrity check found damaged or truncated objects, or unreadable keys.
    public static let fleetCheckFailed = VaultError.Code(name: "fleetCheckFailed", category: .operational)
    /// An S3 Inventory report (its manifest.json or a CSV file) is not in the published
    /// layout, or its gzip data does not inflate.
    public static let malformedInventory = VaultError.Code(name: "malformedInventory", category: .invalidInput)
    /// A file given as a batch's journal is some other database.
    public static let notAJournal = VaultError.Code(name: "notAJournal", category: .refused)
    /// A batch journal was started for another manifest or target version.
    public static let journalOfAnotherBatch = VaultError.Code(name: "journalOfAnotherBatch", category: .refused)
    /// An earlier version's batch journal is inside the output folder.
    public static let earlierJournal = VaultError.Code(name: "earlierJournal", category: .refused)
    /// The batch journal must be named: the output folder is `.`, `..` or `/`.
    public static let journalNeedsAName = VaultError.Code(name: "journalNeedsAName", category: .invalidInput)
    /// A journal named `-`: a database is a file, never a stream (it made a file named "-").
    public static let journalNotAFile = VaultError.Code(name: "journalNotAFile", category: .usage)
    /// A bucket batch's manifest names a file.
    public static let fileInBucketBatch = VaultError.Code(name: "fileInBucketBatch", category: .invalidInput)
    /// A folder batch's manifest names an object in a bucket.
    public static let objectInFolderBatch = VaultError.Code(name: "objectInFolderBatch", category: .invalidInput)
}

extension VaultError {
    /// A bucket batch's manifest line that names a file.
    public static func fileInBucketBatch(line: Int, vault: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.fileInBucketBatch, "manifest line \(line) names '\(vault)', which is not an object in a bucket; a bucket run (migrate or check) takes objects only",
                   file: file, line: sourceLine)
    }

    /// Two manifest lines that would write one output.
    public static func manifestOutputTwice(_ earlier: Int, _ line: Int, output: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "manifest lines \(earlier) and \(line) would both write '\(output)'", file: file, line: sourceLine)
    }

    /// A folder batch's manifest line that names an object in a bucket.
    public static func objectInFolderBatch(line: Int, object: String, file: String = #fileID, line sourceLine: UInt = #line) -> VaultError {
        VaultError(.objectInFolderBatch, "manifest line \(line) names an object, '\(object)'; a manifest of objects is migrated in its bucket, not into a folder",
                   file: file, line: sourceLine)
    }

    /// The batch journal of a run begun by an earlier version, at `path` inside the output
    /// folder: that run resumes through it, or starts over by another name.
    public static func earlierJournal(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.earlierJournal, "'\(path)' is the journal of a run begun by an earlier version", file: file, line: line)
    }

    /// A journal named `-`, which names standard input or output everywhere else.
    public static func journalNotAFile(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.journalNotAFile, "the journal is a SQLite database, a file of its own: it cannot be standard input or output ('-')",
                   hint: "name a file for the journal, or leave it out for the default beside the output", file: file, line: line)
    }

    /// An output folder whose neighbour (`.`, `..`, `/`) is no place for a default journal.
    public static func journalNeedsAName(outDir: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.journalNeedsAName, "the output folder '\(outDir)' has no neighbouring place for the journal", file: file, line: line)
    }

    /// A journal that records another batch: mixing two is how work gets lost.
    /// `belongsTo` is the command the journal records it was started by; journals older than
    /// that record (issue 38) are refused as before, without it.
    public static func journalOfAnotherBatch(_ path: String, belongsTo command: String? = nil, file: String = #fileID, line: UInt = #line) -> VaultError {
        guard let command else {
            return VaultError(.journalOfAnotherBatch, "the journal '\(path)' belongs to another batch (another manifest or target version)", file: file, line: line)
        }
        return VaultError(.journalOfAnotherBatch, "the journal '\(path)' belongs to another batch: `\(command)`", file: file, line: line)
    }
}
