/// How a message names a file a command reads: its path quoted, or standard input in words.
/// Every factory that names a file by its display name renders it here, so none quotes
/// "standard input": quoted, the two words read as a file's name, and as two words of the
/// recovery-word list, which the redaction of quoted secrets withheld ("devices file (not
/// shown: …) lists nothing").
public enum FileNames {
    /// The display name of standard input (`-`).
    public static let standardInput = "standard input"

    /// The display name of a path a command was given: the path, or "standard input" for `-`.
    /// A file really named "standard input" is shown as "./standard input", so the two never
    /// read alike.
    public static func display(_ path: String) -> String {
        path == "-" ? standardInput : path == standardInput ? "./" + path : path
    }

    /// A display name as a message names it: quoted, or standard input in words.
    public static func quoted(_ name: String) -> String {
        name == standardInput ? name : "'\(name)'"
    }
}
