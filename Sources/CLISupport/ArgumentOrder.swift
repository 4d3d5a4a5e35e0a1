import Glibc
import VaultCore
import VaultFiles

/// A command's positional arguments given in another order than its usage says.
public enum ArgumentOrder {
    /// Refuses arguments given out of order (a trial's `device promote DEVICE VAULT` said "could
    /// not open vault 'B3E9A410'", exit 1, as if a file were lost): `first`, a file the command
    /// reads (the vault), names nothing here or anything but a file beginning with `magic`, while
    /// one of `later` (a device, a name, a limit) does; or, `first` naming nothing, one of
    /// `later` may be that file: standard input, or an object in a bucket. A later argument
    /// that merely names some file here is no such mistake. `usage` is the order the command
    /// takes.
    public static func requireFirst(_ first: String, what: String, before later: [String], usage: String, magic: [UInt8]) throws {
        guard first != "-", !VaultLocation.isSpelledAsURL(first) else { return }
        var info = stat()
        let found = stat(first, &info) == 0
        let missing = !found && errno == ENOENT
        // Found, it is no such file: a folder, a FIFO, a file that does not begin so.
        guard missing || found && !AtomicFile.regularFile(first, beginsWith: magic) else { return }
        let named = later.first { argument in
            AtomicFile.regularFile(argument, beginsWith: magic) || missing && (argument == "-" || VaultLocation.isObject(argument))
        }
        guard let named else { return }
        throw VaultError.argumentsOutOfOrder(what, given: first, named: named, usage: usage)
    }
}

extension VaultError.Code {
    /// A command's arguments given out of order: the file it reads first is not there, and an
    /// argument after it is (or may be) that file.
    public static let argumentsOutOfOrder = VaultError.Code(name: "argumentsOutOfOrder", category: .usage)
}

extension VaultError {
    static func argumentsOutOfOrder(_ what: String, given: String, named: String, usage: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        let later = named == "-" ? "standard input (-)" : QuotedInput(named).description
        let certainty = named == "-" || VaultLocation.isObject(named) ? "may be" : "is"
        return VaultError(.argumentsOutOfOrder, "the \(what) comes first: \(QuotedInput(given)) is no \(what) here, and \(later), given after it, \(certainty) one; nothing was written",
                          hint: "usage: \(usage)", file: file, line: line)
    }
}
