import Foundation
import Synchronization
import VaultCore

/// The process's object store, configured from the environment and the AWS files the first time
/// a command names an `s3://` location (a command on local files never reads them).
public enum ObjectStores {
    private static let store = Mutex<ObjectStore?>(nil)

    public static func shared() throws -> ObjectStore {
        try store.withLock { store in
            if let store { return store }
            let made = try ObjectStore(S3Configuration.load(environment: ProcessInfo.processInfo.environment))
            store = made
            return made
        }
    }
}

extension VaultCensus {
    /// The census of a folder, or of every object under an `s3://BUCKET/PREFIX` (a prefix named
    /// without its final slash is taken as a folder: `s3://b/vaults` counts `vaults/…`).
    public static func take(at location: String, listing: Bool, progress: ((Int) -> Void)?) throws -> VaultCensus {
        guard VaultLocation.isObject(location) else {
            return try take(of: location, listing: listing, progress: progress)
        }
        return try take(of: S3ObjectName.folder(parsing: location), store: ObjectStores.shared(), listing: listing, progress: progress)
    }
}
