import VaultCore

// The write path's refusals (issue 16): raised here, by the rules every command's outputs obey,
// and by the layers that write through them. The limits (`tooLarge`) and `io` are VaultCore's:
// every layer raises those.

extension VaultError.Code {
    /// An output is the same file as an input or as another output.
    public static let sameFile = VaultError.Code(name: "sameFile", category: .refused)
    /// An output is not a regular file that may be replaced (a FIFO, a device, a folder).
    public static let unsafeOutput = VaultError.Code(name: "unsafeOutput", category: .refused)
    /// An output that must be new (a key, a share, a plan) already exists.
    public static let outputExists = VaultError.Code(name: "outputExists", category: .refused)
}

extension VaultError {
    /// `output` would overwrite `other` (an input, or another output of the same command).
    public static func sameFile(output: String, other: String, otherIsInput: Bool, file: String = #fileID, line: UInt = #line) -> VaultError {
        otherIsInput
            ? VaultError(.sameFile, "\(output) is the same file as \(other); inputs are never overwritten", file: file, line: line)
            : VaultError(.sameFile, "\(output) is the same file as \(other); two outputs cannot share a file", file: file, line: line)
    }

    /// An output that may not be replaced, with why; `what` is how the command names it.
    public static func refusedOutput(_ path: String, _ why: String, what: String = "output", file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.unsafeOutput, "\(what) '\(path)' \(why); refusing to write to it", file: file, line: line)
    }

    /// A secret key's output already exists. A restore never replaces a key file: the file there
    /// may be the family's current key, and the sheet a retired one.
    public static func keyFileExists(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' already exists; a key file is never replaced",
                   hint: "write the key to a new file and compare the two public keys; replacing a key file is a mv you make knowingly",
                   file: file, line: line)
    }

    /// An output that must be new already exists.
    public static func alreadyExists(_ path: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.outputExists, "'\(path)' already exists; refusing to overwrite it", hint: "choose another file name, or move the old file away first",
                   file: file, line: line)
    }
}
