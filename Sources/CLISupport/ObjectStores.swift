import FoundationEssentials
import Synchronization
import VaultCore
import VaultFiles

/// The process's object store, for the one write path (``CommandFiles``, ``InputFiles``). A
/// tool that reads and writes `s3://` names links VaultStorage and gives ``ToolMain/run(_:objectStore:hints:)``
/// a way to connect; the store is made the first time a command names an object (a command on
/// local files never reads the environment or the AWS files). A tool without one refuses
/// `s3://` names with a typed error (``VaultError/noObjectStore(_:)``).
public enum ObjectStores {
    private static let state = Mutex<(connect: (@Sendable () throws -> any ObjectAccess)?, store: (any ObjectAccess)?)>((nil, nil))

    static func register(_ connect: (@Sendable () throws -> any ObjectAccess)?) {
        state.withLock { $0.connect = connect }
    }

    /// The store as the type the tool registered (a bucket batch lists through VaultStorage's
    /// `ObjectStore` itself); a store of another type is refused as no store at all.
    public static func shared<Store: ObjectAccess>(as type: Store.Type, for name: CustomStringConvertible) throws -> Store {
        guard let store = try shared(for: name) as? Store else { throw VaultError.noObjectStore(name.description) }
        return store
    }

    /// The store, connected on first use; `name` is the object a command named, for the refusal.
    public static func shared(for name: CustomStringConvertible) throws -> any ObjectAccess {
        try state.withLock { state in
            if let store = state.store { return store }
            guard let connect = state.connect else { throw VaultError.noObjectStore(name.description) }
            let made = try connect()
            state.store = made
            return made
        }
    }
}
