import Glibc
import VaultCore

/// The rule every command's files obey (issue 16): no output is the same file as an input or as
/// another output, by any spelling, link or hard link. A command names all its files here
/// before it writes anything; a clash refuses the whole command, naming both files.
public enum FileSet {
    /// How a refusal names an output: "output" for `-o`, else the label it was declared with
    /// ("--ops 'ops' is a folder": the option that named it).
    public static func refusalName(_ label: String) -> String { label == "-o" ? "output" : label }

    /// A file a command reads, with the label its user knows it by (an option, "manifest line 3").
    public struct Input: Sendable {
        public let label: String
        public let path: String
        public init(_ label: String, _ path: String) {
            self.label = label
            self.path = path
        }
    }

    /// Refuses the first output that is an input or another output. Outputs that do not exist
    /// yet are compared by folder and name, so two spellings of one new file still clash.
    public static func check(inputs: [Input], outputs: [(label: String, location: OutputLocation)]) throws {
        var seen: [FileIdentity: String] = [:]
        for input in inputs where input.path != "-" {
            // An input that does not exist yet (a database's journal or WAL) still has a name.
            guard let identity = FileIdentity.of(existing: input.path) ?? FileIdentity.of(missing: input.path) else { continue }
            if seen[identity] == nil { seen[identity] = "\(input.label) '\(input.path)'" }
        }
        var written: [FileIdentity: String] = [:]
        for (label, location) in outputs {
            let name = "\(label) '\(location.path)'"
            if let input = seen[location.identity] {
                throw VaultError.sameFile(output: name, other: input, otherIsInput: true)
            }
            if let other = written[location.identity] {
                throw VaultError.sameFile(output: name, other: other, otherIsInput: false)
            }
            written[location.identity] = name
        }
    }
}

extension FileSet {
    /// The files SQLite keeps beside a database at `path` (its rollback journal, write-ahead
    /// log and shared memory), which it creates, rewrites and deletes on its own: each is an
    /// output of every command that opens the database, so no input or other output may be one
    /// of them. `owner` names the database in messages ("the registry", "the journal").
    /// Named as SQLite names them: beside the database's resolved path, since SQLite follows a
    /// symbolic link to the database (issue 44: `--ops` at the target's journal passed the check
    /// that compared the link's).
    public static func databaseSideFiles(of path: String, owner: String) -> [Input] {
        var info = stat()
        let isLink = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
        let target = isLink ? ResolvedPath.realPath(path) ?? path : path
        return ["journal", "wal", "shm"].map { Input("\(owner)'s \($0) file", target + "-" + $0) }
    }
}

extension FileSet {
    /// The same rule for objects in a bucket, compared by name (a bucket has no links), and two
    /// more: an input or output names an object, not a prefix, and an output never holds a secret (a bucket's
    /// objects are not private files). Returns each output's object, in order (nil for a file).
    public static func checkObjects(inputs: [Input], outputs: [(label: String, path: String, secret: Bool)]) throws -> [S3ObjectName?] {
        var seen: [S3ObjectName: String] = [:]
        for input in inputs {
            guard case .object(let name) = try VaultLocation(input.path) else { continue }
            // One object is read from it, never a prefix's objects (said before the store).
            guard !name.isPrefix else { throw VaultError.prefixGivenAsObject(input.path, what: input.label) }
            if seen[name] == nil { seen[name] = "\(input.label) '\(input.path)'" }
        }
        var written: [S3ObjectName: String] = [:]
        return try outputs.map { output in
            guard case .object(let name) = try VaultLocation(output.path) else { return nil }
            let label = "\(output.label) '\(output.path)'"
            guard !output.secret else {
                throw VaultError.refusedOutput(output.path, "would hold a secret, and objects in a bucket are not private files; write it to a local file",
                                               what: refusalName(output.label))
            }
            guard !name.isPrefix else { throw VaultError.refusedOutput(output.path, "names a prefix, not an object", what: refusalName(output.label)) }
            if let input = seen[name] { throw VaultError.sameFile(output: label, other: input, otherIsInput: true) }
            if let other = written[name] { throw VaultError.sameFile(output: label, other: other, otherIsInput: false) }
            written[name] = label
            return name
        }
    }
}
