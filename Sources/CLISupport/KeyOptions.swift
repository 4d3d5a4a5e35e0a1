import ArgumentParser
import VaultCore
import VaultFiles

/// `--key-file` or `--vault-key-file`: how a command gets into a vault. No option ever takes a
/// secret value itself; both name files (or `-` for standard input).
public struct VaultAccessOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("The parent's secret key: a file holding nsec1… or 64 hex, or - for standard input.", valueName: "FILE"))
    public var keyFile: String?

    @Option(name: .customLong("vault-key-file"), help: ArgumentHelp("Only the vault key (64 hex, from 'vault-tool derive --vault-key-out'), instead of the parent's key.", valueName: "FILE"))
    public var vaultKeyFile: String?

    @Option(name: .customLong("key-command"), help: ArgumentHelp("Instead of --key-file: a command (run without a shell) that prints the parent's key, such as 'pass show family/parent'.", valueName: "CMD"))
    public var keyCommand: String?

    @Option(name: .customLong("vault-key-command"), help: ArgumentHelp("Instead of --vault-key-file: a command (run without a shell) that prints the vault key.", valueName: "CMD"))
    public var vaultKeyCommand: String?

    public init() {}

    public func validate() throws {
        if [keyFile, vaultKeyFile, keyCommand, vaultKeyCommand].compactMap({ $0 }).count > 1 {
            throw ValidationError("give one of --key-file, --vault-key-file, --key-command and --vault-key-command")
        }
        // Split now, so a command the tool will not run is a usage error before anything is read.
        _ = try keyCommand.map { try KeyCommand(parsing: $0, option: "--key-command") }
        _ = try vaultKeyCommand.map { try KeyCommand(parsing: $0, option: "--vault-key-command") }
    }

    /// Fails unless one of them was given.
    public func requireOne() throws {
        if keyFile == nil, vaultKeyFile == nil, keyCommand == nil, vaultKeyCommand == nil {
            throw ValidationError("give --key-file (the parent's key) or --vault-key-file (the vault key)")
        }
    }

    /// Whether any key option was given (a file or a command).
    public var anyGiven: Bool { [keyFile, vaultKeyFile, keyCommand, vaultKeyCommand].contains { $0 != nil } }

    /// Whether the parent key is given (a file or a command), not only the vault key.
    public var givesParentKey: Bool { keyFile != nil || keyCommand != nil }

    /// Refuses, before anything is read, a vault key where `what` needs the parent key
    /// (schema 3's secrets are sealed under the secrets key, which the vault key does not open).
    public func requireParentKey(for what: String) throws {
        guard givesParentKey else { throw VaultError.parentKeyNeeded(what) }
    }

    /// The paths given, for stdin and same-file checks.
    public var paths: [String] { [keyFile, vaultKeyFile].compactMap { $0 } }

    /// The key files as the write path declares them.
    public var declaredInputs: [FileSet.Input] {
        [keyFile.map { FileSet.Input("--key-file", $0) }, vaultKeyFile.map { FileSet.Input("--vault-key-file", $0) }].compactMap { $0 }
    }

    /// Reads whichever key was given; nil when neither was.
    public func load(_ diagnostics: Diagnostics) throws -> VaultAccess? {
        if let keyCommand {
            let contents = try KeyCommand(parsing: keyCommand, option: "--key-command").read()
            return .parentKey(try SecretKey(parsing: contents, what: "the output of --key-command"))
        }
        if let vaultKeyCommand {
            let contents = try KeyCommand(parsing: vaultKeyCommand, option: "--vault-key-command").read()
            return .vaultKey(try VaultKey(parsing: contents, what: "the output of --vault-key-command"))
        }
        if let keyFile {
            return .parentKey(try KeyFiles.parentKey(keyFile, diagnostics))
        }
        if let vaultKeyFile {
            return .vaultKey(try KeyFiles.vaultKey(vaultKeyFile, diagnostics))
        }
        return nil
    }
}

/// A job's key files, as a batch manifest names them (no warnings: a batch reads many), read
/// by the same ``KeyFiles`` readers as the options.
public enum VaultAccessFiles {
    public static func load(keyFile: String?, vaultKeyFile: String?) throws -> VaultAccess {
        let quiet = Diagnostics(toolName: "batch", quiet: true)
        if let keyFile { return .parentKey(try KeyFiles.parentKey(keyFile, quiet)) }
        guard let vaultKeyFile else { throw VaultError.jobNamesNoKeyFile() }
        return .vaultKey(try KeyFiles.vaultKey(vaultKeyFile, quiet))
    }
}

/// `--key-file`, required: the parent's secret key, for commands that cannot work without it.
/// Commands whose key is one of several choices use ``VaultAccessOptions``.
public struct ParentKeyOption: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("The parent's secret key: a file holding nsec1… or 64 hex, or - for standard input.", valueName: "FILE"))
    public var keyFile: String?

    @Option(name: .customLong("key-command"), help: ArgumentHelp("Instead of --key-file: a command (run without a shell) that prints the parent's key, such as 'pass show family/parent'.", valueName: "CMD"))
    public var keyCommand: String?

    public init() {}

    public func validate() throws {
        switch (keyFile, keyCommand) {
        case (nil, nil): throw ValidationError("give --key-file (or --key-command)")
        case (_?, _?): throw ValidationError("give --key-file or --key-command, not both")
        case (nil, let command?): _ = try KeyCommand(parsing: command, option: "--key-command")
        default: break
        }
    }

    /// The key file as the write path declares it; a command declares nothing (it is no file).
    public var declaredInput: FileSet.Input? { keyFile.map { FileSet.Input("--key-file", $0) } }

    public func load(_ diagnostics: Diagnostics) throws -> SecretKey {
        if let keyCommand {
            let contents = try KeyCommand(parsing: keyCommand, option: "--key-command").read()
            return try SecretKey(parsing: contents, what: "the output of --key-command")
        }
        return try KeyFiles.parentKey(keyFile!, diagnostics)
    }
}

public enum KeyFiles {
    /// Reads a parent key file (`nsec1…` or 64 hex).
    public static func parentKey(_ path: String, _ diagnostics: Diagnostics) throws -> SecretKey {
        let contents = try InputFiles.readSecret(path, what: "key file", diagnostics: diagnostics)
        return try SecretKey(parsing: contents, what: "key file \(InputFiles.quotedName(path))")
    }

    /// Reads a vault-key file (64 hex).
    public static func vaultKey(_ path: String, _ diagnostics: Diagnostics) throws -> VaultKey {
        let contents = try InputFiles.readSecret(path, what: "vault-key file", diagnostics: diagnostics)
        return try VaultKey(parsing: contents, what: "vault-key file \(InputFiles.quotedName(path))")
    }
}

/// Only one input may read standard input.
public func requireOneStandardInput(_ paths: [String?]) throws {
    if paths.filter({ $0 == "-" }).count > 1 {
        throw ValidationError("only one input may read standard input ('-')")
    }
}

/// A vault file to open and the key to open it with: the options every vault-reading command
/// shares. Commands that need a key call ``VaultAccessOptions/requireOne()`` in `validate()`.
public struct VaultInputOptions: ParsableArguments {
    @OptionGroup public var access: VaultAccessOptions

    @Argument(help: ArgumentHelp("The vault file (or s3://BUCKET/KEY); - or nothing for standard input.", valueName: "VAULT"))
    public var input = "-"

    public init() {}

    public func validate() throws {
        try requireOneStandardInput(paths)
    }

    /// Every input path, for standard-input checks.
    public var paths: [String] { access.paths + [input] }

    /// Every input as the write path declares it.
    public var declaredInputs: [FileSet.Input] { access.declaredInputs + [FileSet.Input("vault", input)] }

    public func readVault(restartsMigration: Bool = false, reading: VaultReading) throws -> [UInt8] {
        try VaultLogFiles.readVault(input, restartsMigration: restartsMigration, reading: reading)
    }

    /// Reads the key and the vault (once: standard input cannot be read twice) and opens it;
    /// the key must have been required in `validate()`. `restartsMigration`: a migration to
    /// schema 3 in place (``VaultLogFiles/readVault(_:logPath:restartsMigration:)``).
    public func open(_ diagnostics: Diagnostics, restartsMigration: Bool = false, reading: VaultReading) throws -> (access: VaultAccess, vault: OpenedVault, bytes: [UInt8]) {
        guard let access = try access.load(diagnostics) else {
            throw VaultError.noKeyGiven()
        }
        let bytes = try readVault(restartsMigration: restartsMigration && access.parentKey != nil, reading: reading)
        return (access, try Vault.open(bytes, with: access), bytes)
    }
}
