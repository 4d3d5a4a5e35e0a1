import FoundationEssentials
import VaultCore

/// Which app's device table a registry serves (issue 47): Catbird's (seed 003: a device has an
/// MLS identity and a signature key, and is a member of conversations) or Family Medical's
/// (seed 002: `user_devices` of UUIDs with a name, a type, first and last seen, and
/// `is_active`, and no conversations). `init` chooses; the registry records the choice among
/// its migrations, so every later command finds it. The rules (revocation's guard rails, the
/// log, imports, the views) are written once, over ``DeviceTable``.
public enum RegistrySchema: String, Sendable, CaseIterable {
    /// Whether `text` is a UUID as Family Medical's ids are (a device given without its user
    /// is one: messages can then say how to give it).
    public static func isUUID(_ text: String) -> Bool { DeviceTable.canonicalUUID(text) != nil }

    case catbird
    case familyMedical = "family-medical"

    /// How help and messages name it.
    public var title: String {
        switch self {
        case .catbird: "Catbird's device table (seed 003)"
        case .familyMedical: "Family Medical's device table (seed 002)"
        }
    }
}

/// How the rules' SQL reaches a schema's `user_devices`: the names of the columns that differ,
/// what the table keeps, and the type its ids have. The columns every schema shares
/// (`device_id`, `device_name`, `is_active`) are written as they are.
struct DeviceTable: Sendable {
    let schema: RegistrySchema
    /// The user's id: Catbird's `user_did`, Family Medical's `user_id`.
    let user: String
    /// When the device was last seen, and when it registered (Family Medical's `first_seen_at`).
    let lastSeen, registered: String
    /// Whether a device's row keeps when and why it was revoked (Catbird's `revoked_at` and
    /// `revocation_reason`); Family Medical's keeps only `is_active`, and the revocation log
    /// the rest.
    let keepsRevocation: Bool
    /// Whether devices are members of conversations (`members`, MLS removals, admins) and
    /// have signature keys: Catbird's only.
    let hasConversations: Bool
    /// The SQL type of the ids in temporary tables that are joined with the table: Family
    /// Medical's are PostgreSQL UUIDs, and a UUID never equals a text.
    let idType: String
    /// After an ORDER BY of ids: byte order (``RegistryDialect/byteOrder``) for text; a UUID
    /// has no collation, and its order is its bytes', the order of its lower-case text.
    let idOrder: String
    /// How the engine's times are read (``RegistryDialect/time(_:)``).
    let dialect: RegistryDialect

    static func of(_ schema: RegistrySchema, _ dialect: RegistryDialect) -> DeviceTable {
        switch schema {
        case .catbird:
            DeviceTable(schema: schema, user: "user_did", lastSeen: "last_seen", registered: "registered_at", keepsRevocation: true,
                        hasConversations: true, idType: "TEXT", idOrder: dialect.byteOrder, dialect: dialect)
        case .familyMedical:
            DeviceTable(schema: schema, user: "user_id", lastSeen: "last_seen_at", registered: "first_seen_at", keepsRevocation: false,
                        hasConversations: false, idType: dialect.uuidType, idOrder: dialect.uuidType == "TEXT" ? dialect.byteOrder : "", dialect: dialect)
        }
    }

    /// A time column of the table as `alias`, read as a time (``RegistryDialect/time(_:)``).
    func time(_ alias: String, _ column: String) -> String { dialect.time("\(alias).\(column)") }

    /// The table's key over a list's columns (`user_did`, `device_id`), in the order a list is
    /// sorted to be looked up in it (``RegistryDialect/sortsListByKey``): Catbird's device is its
    /// user's, Family Medical's is its id alone.
    var keyOrder: String { hasConversations ? "user_did, device_id" : "device_id" }

    /// A parameter compared with an id of the table (`?`, cast where the ids are UUIDs).
    var id: String { idType == "TEXT" ? "?" : "CAST(? AS \(idType))" }

    /// A device's last sign of life, in SQL over the table as `alias`: when it was last seen
    /// or, never seen, when it registered, each read as a time (a text that names none is no
    /// time). "Not seen since" means this, for revoking, sparing and listing alike. Family
    /// Medical's `last_seen_at` is never empty (the app sets it when the device registers): the
    /// column alone, which its index then serves on PostgreSQL.
    func lastSignOfLife(_ alias: String) -> String {
        schema == .familyMedical ? time(alias, lastSeen) : "coalesce(\(time(alias, lastSeen)), \(time(alias, registered)))"
    }

    /// Whether a device of the table as `alias` was not seen since the time of one `?`: its last
    /// sign of life before it, or none at all (neither time in its row, which the app's schema
    /// allows): a device that never showed one is not kept out of every `--not-seen-since`.
    func notSeenSince(_ alias: String) -> String {
        dialect.isBeforeOrNone(lastSignOfLife(alias))
    }

    /// The join of the table as `alias` with a row of the revocation log as `log` (whose ids
    /// are text): the same device, found by the log's index. A Family Medical device is its
    /// id alone, whoever its user (the app finds it so): a revoked device moved to another user
    /// and made active is still the device the log revoked.
    func isLogged(_ alias: String, _ log: String) -> String {
        switch (schema, idType) {
        case (.catbird, _): "\(log).user_did = \(alias).\(user) AND \(log).device_id = \(alias).device_id"
        case (.familyMedical, "TEXT"): "\(log).device_id = \(alias).device_id"
        case (.familyMedical, _): "\(log).device_id = CAST(\(alias).device_id AS TEXT)"
        }
    }

    /// ``isLogged(_:_:)`` for a check of the log against the table, where the table may have been
    /// written by hand: a Family Medical id kept as text (SQLite) in any case, in braces, without
    /// hyphens (PostgreSQL's `uuid` reads all three) or as a URN is the same UUID, and the device
    /// the log revoked (hostile trials revived one so, unseen by `log --verify`).
    func isLoggedInAnySpelling(_ alias: String, _ log: String) -> String {
        guard schema == .familyMedical, idType == "TEXT" else { return isLogged(alias, log) }
        // Any case, braces, no hyphens, a `urn:uuid:` prefix.
        let bare = "replace(replace(replace(replace(lower(\(alias).device_id), 'urn:uuid:', ''), '-', ''), '{', ''), '}', '')"
        return "replace(\(log).device_id, '-', '') = \(bare)"
    }

    /// An id as the table holds it, or why it cannot be one: Family Medical's are UUIDs,
    /// compared in their lower-case form (PostgreSQL prints them so), whichever case is typed.
    func canonicalID(_ text: String) -> String? {
        schema == .familyMedical ? Self.canonicalUUID(text) : text
    }

    /// A UUID in its one written form (8-4-4-4-12 hex digits), in lower case; nil for any
    /// other text, braces and URNs included. Read byte by byte: Foundation's UUID parses and
    /// prints through sscanf and printf, a tenth of revoking 100,000 listed devices.
    static func canonicalUUID(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for index in bytes.indices {
            let byte = bytes[index]
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else if (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) {
                bytes[index] = byte + 32
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) {
                return nil
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
