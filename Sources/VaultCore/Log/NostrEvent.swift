// A Nostr event (NIP-01): what the household log is made of, so that any Nostr library verifies it.

/// One signed Nostr event. Its `id` is SHA-256 of NIP-01's serialisation
/// `[0,<pubkey hex>,<created_at>,<kind>,<tags>,<content>]` (compact JSON, strings escaped as
/// NIP-01 lists, everything else verbatim UTF-8), and `sig` a BIP-340 signature of the id by
/// `pubkey`. A parsed event is only read; ``problem`` says whether its id and signature hold.
public struct NostrEvent: Sendable, Equatable {
    public let id: [UInt8]
    public let pubkey: PublicKey
    /// Seconds since 1970-01-01T00:00:00Z.
    public let createdAt: Int64
    public let kind: Int
    public let tags: [[String]]
    public let content: String
    public let sig: [UInt8]

    /// Signs a new event with `key`.
    public static func signed(by key: SecretKey, createdAt: Int64, kind: Int, tags: [[String]], content: String, auxiliaryRandom: [UInt8]? = nil) throws -> NostrEvent {
        let id = SHA256.hash(serializationForID(pubkey: key.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        return NostrEvent(id: id, pubkey: key.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content,
                          sig: try key.signature(for: id, auxiliaryRandom: auxiliaryRandom))
    }

    private init(id: [UInt8], pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String, sig: [UInt8]) {
        self.id = id
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.sig = sig
    }

    /// NIP-01's serialisation, whose SHA-256 is the id. Our compact JSON writer escapes exactly
    /// the characters NIP-01 names (and the other control characters as `\u00XX`, as the
    /// reference implementations do).
    static func serializationForID(pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String) -> [UInt8] {
        JSONValue.array([.int(0), .string(pubkey.hex), .number(String(createdAt)), .int(kind),
                         .array(tags.map { .array($0.map(JSONValue.string)) }), .string(content)]).serialized(pretty: false)
    }

    /// What is wrong with the event itself, or nil: its id is not the hash of its fields, or its
    /// signature is not its pubkey's over that id.
    public var problem: String? {
        let expected = SHA256.hash(Self.serializationForID(pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        guard expected == id else { return "its id is not the hash of its contents (it was edited after signing)" }
        guard pubkey.isValidSignature(sig, for: id) else { return "its signature does not verify" }
        return nil
    }

    public var idHex: String { Hex.encode(id) }

    /// The values of the tags named `name`, each without its name (`["p", "ab…"]` → `["ab…"]`).
    public func tags(named name: String) -> [[String]] {
        tags.filter { $0.first == name }.map { Array($0.dropFirst()) }
    }

    /// The first value of the first tag named `name`.
    public func tag(_ name: String) -> String? { tags(named: name).first?.first }

    // MARK: JSON

    /// The event as one JSON object, in NIP-01's field order.
    public var jsonValue: JSONValue {
        .object([("id", .string(idHex)), ("pubkey", .string(pubkey.hex)), ("created_at", .number(String(createdAt))),
                 ("kind", .int(kind)), ("tags", .array(tags.map { .array($0.map(JSONValue.string)) })),
                 ("content", .string(content)), ("sig", .string(Hex.encode(sig)))])
    }

    /// Reads an event object strictly: the seven fields of NIP-01 and nothing else, ids and keys
    /// as lowercase hex. It is not verified here (``problem``).
    public init(jsonValue value: JSONValue, path: String) throws {
        var reader = try JSONObjectReader(value, path: path, whole: "the event")
        func hex(_ key: String, _ count: Int) throws -> [UInt8] {
            let text = try reader.string(key)
            guard text.utf8.count == count * 2, text == text.lowercased(), let bytes = Hex.decode(text) else {
                throw reader.invalid(key, "should be \(count * 2) lowercase hex characters")
            }
            return bytes
        }
        id = try hex("id", 32)
        do { pubkey = try PublicKey(bytes: try hex("pubkey", 32)) } catch let error as VaultError where error.code == .invalidKey {
            throw reader.invalid("pubkey", "is not a valid public key")
        }
        let created = try reader.int("created_at")
        guard created >= 0 else { throw reader.invalid("created_at", "should not be negative") }
        createdAt = Int64(created)
        kind = try reader.int("kind")
        guard (0...65_535).contains(kind) else { throw reader.invalid("kind", "should be from 0 to 65535") }
        guard case .array(let tagValues) = try reader.required("tags") else { throw reader.invalid("tags", "should be an array of arrays of strings") }
        tags = try tagValues.map { tag in
            guard case .array(let items) = tag, !items.isEmpty else { throw reader.invalid("tags", "should be an array of non-empty arrays of strings") }
            return try items.map { item in
                guard case .string(let text) = item else { throw reader.invalid("tags", "should be an array of arrays of strings") }
                return text
            }
        }
        content = try reader.string("content")
        sig = try hex("sig", 64)
        try reader.finish()
    }
}
