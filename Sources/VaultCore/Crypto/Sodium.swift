internal import CSodium

/// The one place libsodium is initialised and its return codes are checked.
enum Sodium {
    // A static let runs its initialiser once, thread-safely, on first use.
    private static let initialized: Bool = sodium_init() >= 0

    static func ensureInitialized() throws {
        guard initialized else {
            throw VaultError.sodiumUnavailable()
        }
    }

    /// Every libsodium call whose result is a status goes through here: 0 is success.
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws {
        guard status == 0 else {
            throw VaultError.sodiumFailed(operation())
        }
    }
}

extension VaultError {
    /// sodium_init failed: no randomness source, or the CPU checks failed.
    static func sodiumUnavailable(file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "libsodium could not be initialised", file: file, line: line)
    }

    /// A libsodium call that returned a failure status; `operation` names the call.
    static func sodiumFailed(_ operation: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.cryptoFailure, "\(operation) failed in libsodium", file: file, line: line)
    }
}
