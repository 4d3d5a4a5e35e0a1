internal import CSodium

/// The one place libsodium is initialised and its return codes are checked.
enum Sodium {
    // A static let runs its initialiser once, thread-safely, on first use.
    private static let initialized: Bool = sodium_init() >= 0

    static func ensureInitialized() throws {
        guard initialized else {
            throw VaultError(.cryptoFailure, "libsodium could not be initialised")
        }
    }

    /// Every libsodium call whose result is a status goes through here: 0 is success.
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws {
        guard status == 0 else {
            throw VaultError(.cryptoFailure, "\(operation()) failed in libsodium")
        }
    }
}
