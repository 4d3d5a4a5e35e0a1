import VaultCore

// The registry's chained log (issue 46, docs/device-registry.md "The chained log"): each
// revocation batch records who ran it and a digest of its rows, chained by hash to the batch
// before it, so an edited, deleted or inserted row of `revocations` is found by
// `registry log --verify`, on SQLite and PostgreSQL alike, whatever the triggers allowed.

/// Who runs a revocation: a name always, and a key that signs the batch's record when given.
public struct RegistryOperator: Sendable {
    /// For callers that name nobody (the library's own tests); the tools always name someone.
    public static let unnamed = RegistryOperator(name: "unnamed")

    public let name: String
    public let signer: SecretKey?

    public init(name: String, signer: SecretKey? = nil) {
        self.name = name
        self.signer = signer
    }
}

extension DeviceRegistry {
    /// One batch's record in the chain.
    public struct BatchRecord: Sendable, Equatable {
        public let seq: Int
        public let batchID: String
        public let recordedAt: String
        public let operatorName: String
        /// The signer's public key (hex), when the batch was signed.
        public let signer: String?
        public let rowsDigest: String
        public let operationsDigest: String
        public let previousHash: String
        public let hash: String
        public let signature: String?
    }

    /// What a verified chain holds.
    public struct ChainReport: Sendable {
        public let batches: [BatchRecord]
        /// Rows written before the registry kept the chain (covered by the first batch's hash).
        public let rowsBeforeChain: Int
        public let rowsChecked: Int
        public var headHash: String? { batches.last?.hash }
    }

    /// The hash a record is chained by: SHA-256 of its fields as canonical JSON (RFC 8785).
    static func recordHash(seq: Int, batchID: String, recordedAt: String, operatorName: String, signer: String?, rowsDigest: String,
                           operationsDigest: String, previousHash: String) -> String {
        let record = JSONValue.object([("seq", .int(seq)), ("batch", .string(batchID)), ("recordedAt", .string(recordedAt)), ("operator", .string(operatorName)),
                                       ("signer", signer.map(JSONValue.string) ?? .null), ("rows", .string(rowsDigest)),
                                       ("operations", .string(operationsDigest)), ("prev", .string(previousHash))])
        return Hex.encode(SHA256.hash(record.canonicalSerialized()))
    }

    /// The first record's predecessor: the chain's start and the rows before it, so neither can
    /// be changed without breaking the first link.
    static func genesisHash(firstRevocationID: Int, rowsBeforeDigest: String) -> String {
        Hex.encode(SHA256.hash(Array("household-vault-tools registry chain\n\(firstRevocationID)\n\(rowsBeforeDigest)\n".utf8)))
    }

    /// SHA-256 of a batch's operations (`batch_operations`), each as `[seq, operation]`, one a
    /// line, in order: what `registry log --ops` writes again is in the chain too.
    static func operationsDigest(db: RegistrySession, batchID: String) throws -> String {
        let hasher = SHA256.Hasher()
        try db.eachRow("SELECT seq, operation FROM batch_operations WHERE batch_id = ? ORDER BY seq", [.text(batchID)]) { row in
            hashLine(JSONValue.array([.int(row.int("seq")), .string(row.text("operation"))]), into: hasher)
        }
        return Hex.encode(hasher.finish())
    }

    /// One line of a digest's text: the value as compact JSON and a newline. The text is
    /// hashed as it is read, never held: a batch's rows and operations grow with the registry.
    private static func hashLine(_ value: JSONValue, into hasher: SHA256.Hasher) {
        (value.serialized(pretty: false) + [0x0a]).withUnsafeBytes { hasher.update($0) }
    }

    /// SHA-256 of rows of `revocations`, each as a compact JSON array of its columns (its id
    /// first), one a line, in id order: the rows of one batch, or those before the chain began.
    ///
    /// Each line is written into one buffer as ``JSONValue/serialized(pretty:)`` writes the
    /// array (held to it by a test): a value and an array of them for each of a large batch's
    /// rows were a third of the tool's time in a revoke of 100,000 devices.
    static func rowsDigest(db: RegistrySession, condition: String, _ arguments: [RegistryValue]) throws -> (digest: String, count: Int) {
        let hasher = SHA256.Hasher()
        var count = 0, line: [UInt8] = []
        try db.eachRow("SELECT id, batch_id, revoked_at, user_did, device_id, reason, selector FROM revocations WHERE \(condition) ORDER BY id", arguments) { row in
            line.removeAll(keepingCapacity: true)
            rowLine(row, to: &line)
            line.withUnsafeBytes { hasher.update($0) }
            count += 1
        }
        return (Hex.encode(hasher.finish()), count)
    }

    /// A row of `revocations` as its digest's line: `[id,"batch",…,reason or null,"selector"]`
    /// and a newline, the columns in the order ``rowsDigest(db:condition:_:)`` selects them.
    static func rowLine(_ row: RegistryRow, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "["))
        line.append(contentsOf: String(row.int(at: 0)).utf8)
        for column in 1...6 {
            line.append(UInt8(ascii: ","))
            // Only the reason may be missing; any other column missing reads as empty text.
            guard let text = row.optionalText(at: column) ?? (column == 5 ? nil : "") else {
                line.append(contentsOf: "null".utf8)
                continue
            }
            JSONValue.writeString(text, to: &line)
        }
        line.append(contentsOf: [UInt8(ascii: "]"), 0x0a])
    }

    /// Records a batch just written, in its transaction: the next link of the chain.
    static func recordBatch(_ batchID: String, time: String, by operatorInfo: RegistryOperator, db: RegistrySession) throws {
        let start = try db.int("SELECT first_revocation_id FROM revocation_chain_start")
        let last = try db.rows("SELECT seq, hash FROM revocation_batches ORDER BY seq DESC LIMIT 1", []).first
        let seq = (last?.int("seq") ?? 0) + 1
        let previous = try last?.text("hash") ?? genesisHash(firstRevocationID: start, rowsBeforeDigest: rowsDigest(db: db, condition: "id < ?", [.int(start)]).digest)
        let rows = try rowsDigest(db: db, condition: "batch_id = ? AND id >= ?", [.text(batchID), .int(start)]).digest
        let operations = try operationsDigest(db: db, batchID: batchID)
        let signer = operatorInfo.signer?.publicKey.hex
        let hash = recordHash(seq: seq, batchID: batchID, recordedAt: time, operatorName: operatorInfo.name, signer: signer, rowsDigest: rows,
                              operationsDigest: operations, previousHash: previous)
        let signature = try operatorInfo.signer.map { Hex.encode(try $0.signature(for: Hex.decode(hash)!)) }
        try db.execute("""
            INSERT INTO revocation_batches (seq, batch_id, recorded_at, operator, signer, rows_digest, operations_digest, prev_hash, hash, signature)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.int(seq), .text(batchID), .text(time), .text(operatorInfo.name), RegistryValue(signer), .text(rows), .text(operations), .text(previous),
                  .text(hash), RegistryValue(signature)])
    }

    /// Walks the whole chain: each record's hash and link, its signature, its rows' and
    /// operations' digests, no row of the log outside a recorded batch, and no device a recorded
    /// batch revoked active again. Throws ``VaultError/registryChainBroken`` (exit 3) naming the
    /// first bad batch or row.
    ///
    /// Whoever can write the tables can also recompute every hash: `expectHead` (the head hash
    /// kept elsewhere, which must still be in the chain) and `signers` (keys one of which must
    /// have signed every batch) are what such a rewrite cannot get past.
    /// A role that row-level security applies to may be shown a log without rows a policy
    /// hides, or the app's rows it checks against: no verdict is given (a trial: it said "ok").
    public func verifyChain(expectHead: String? = nil, signers: [PublicKey] = []) throws -> ChainReport {
        guard tablesUnderRowSecurity.isEmpty else { throw VaultError.registryUnderRowSecurity(path, tablesUnderRowSecurity, refusing: .verdict) }
        let d = dialect
        return try read { db in
            guard try db.bool(d.tableExists, [.text("revocation_batches")]) else { throw VaultError.registryHasNoChain(registry: path) }
            let start = try db.int("SELECT first_revocation_id FROM revocation_chain_start")
            let before = try Self.rowsDigest(db: db, condition: "id < ?", [.int(start)])
            var previous = Self.genesisHash(firstRevocationID: start, rowsBeforeDigest: before.digest)
            var records: [BatchRecord] = []
            var checked = 0
            for row in try db.rows("SELECT seq, batch_id, recorded_at, operator, signer, rows_digest, operations_digest, prev_hash, hash, signature FROM revocation_batches ORDER BY seq", []) {
                let record = BatchRecord(seq: row.int("seq"), batchID: row.text("batch_id"), recordedAt: row.text("recorded_at"), operatorName: row.text("operator"),
                                         signer: row.optionalText("signer"), rowsDigest: row.text("rows_digest"),
                                         operationsDigest: row.text("operations_digest"), previousHash: row.text("prev_hash"),
                                         hash: row.text("hash"), signature: row.optionalText("signature"))
                func broken(_ why: String) -> VaultError { VaultError.registryChainBroken("batch '\(record.batchID)' (record \(record.seq)): \(why)") }
                guard record.seq == records.count + 1 else {
                    throw VaultError.registryChainBroken("record \(records.count + 1) is missing (the next is \(record.seq), batch '\(record.batchID)'): a batch's record was deleted")
                }
                guard record.previousHash == previous else {
                    throw broken(records.isEmpty ? "the rows before the chain began, or where it begins, were changed" : "it does not follow the record before it")
                }
                let hash = Self.recordHash(seq: record.seq, batchID: record.batchID, recordedAt: record.recordedAt, operatorName: record.operatorName,
                                           signer: record.signer, rowsDigest: record.rowsDigest, operationsDigest: record.operationsDigest,
                                           previousHash: record.previousHash)
                guard hash == record.hash else { throw broken("its record was edited (operator, time or digest)") }
                if let signer = record.signer {
                    guard let key = try? PublicKey(hex: signer), let signature = record.signature.flatMap(Hex.decode), key.isValidSignature(signature, for: Hex.decode(hash)!) else {
                        throw broken("its signature does not verify")
                    }
                } else if record.signature != nil {
                    throw broken("it carries a signature but names no signer")
                }
                if !signers.isEmpty, !signers.contains(where: { $0.hex == record.signer }) {
                    throw broken(record.signer == nil ? "it is not signed, and every batch must be signed by one of the keys given" : "it is signed by a key that is not one of those given")
                }
                guard try Self.operationsDigest(db: db, batchID: record.batchID) == record.operationsDigest else {
                    throw broken("its operations (what 'registry log --ops' writes again) were changed after it was recorded")
                }
                let rows = try Self.rowsDigest(db: db, condition: "batch_id = ? AND id >= ?", [.text(record.batchID), .int(start)])
                guard rows.digest == record.rowsDigest else { throw broken("its rows were edited, deleted or added to after it was recorded") }
                checked += rows.count
                previous = hash
                records.append(record)
            }
            // A row after the chain began that no record covers was inserted by hand.
            if let stray = try db.rows("""
                SELECT r.id, r.batch_id FROM revocations r WHERE r.id >= ?
                AND NOT EXISTS (SELECT 1 FROM revocation_batches b WHERE b.batch_id = r.batch_id) ORDER BY r.id LIMIT 1
                """, [.int(start)]).first {
                throw VaultError.registryChainBroken("row \(stray.int("id")) (batch '\(stray.text("batch_id"))') is in no recorded batch: it was inserted by hand")
            }
            // A device a recorded batch revoked is never active again (an import never revives one).
            if let revived = try db.rows("""
                SELECT r.batch_id, r.user_did, r.device_id FROM revocations r JOIN user_devices d ON \(table.isLoggedInAnySpelling("d", "r"))
                WHERE r.id >= ? AND d.is_active ORDER BY r.id LIMIT 1
                """, [.int(start)]).first {
                throw VaultError.registryChainBroken("batch '\(revived.text("batch_id"))': the device \(revived.text("user_did"))#\(revived.text("device_id")) it revoked is active again")
            }
            // Nor a member of a conversation again: a revoke closes every membership, and the
            // registry's trigger keeps an inactive device out (a hostile trial dropped the
            // trigger and reopened one, and the log still verified).
            if table.hasConversations, let rejoined = try db.rows("""
                SELECT r.batch_id, r.user_did, r.device_id, m.convo_id FROM revocations r
                JOIN members m ON m.user_did = r.user_did AND m.device_id = r.device_id
                WHERE r.id >= ? AND m.left_at IS NULL ORDER BY r.id LIMIT 1
                """, [.int(start)]).first {
                throw VaultError.registryChainBroken("batch '\(rejoined.text("batch_id"))': the device \(rejoined.text("user_did"))#\(rejoined.text("device_id")) "
                                                     + "it revoked is a member of conversation \(QuotedInput(rejoined.text("convo_id"))) again")
            }
            if let expectHead, !records.contains(where: { $0.hash.hasPrefix(expectHead.lowercased()) }) {
                throw VaultError.registryChainBroken("its end: the head kept elsewhere \(QuotedInput(expectHead)) is not in the chain, so batches were cut off or the chain was computed again")
            }
            // The log verifies, but whoever dropped a guard could edit it unseen by the database.
            let loose = try engine.guardsNotInPlace(db)
            guard loose.isEmpty else { throw VaultError.registryGuardsNotInPlace(path, RegistryGuard.names(loose), refusing: .verdict) }
            return ChainReport(batches: records, rowsBeforeChain: before.count, rowsChecked: checked)
        }
    }
}

extension VaultError.Code {
    /// The registry's chained log does not verify.
    public static let registryChainBroken = VaultError.Code(name: "registryChainBroken", category: .authentication)
    /// The registry was made before batches were chained, and has not been migrated.
    public static let registryHasNoChain = VaultError.Code(name: "registryHasNoChain", category: .refused)
}

extension VaultError {
    static func registryChainBroken(_ what: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryChainBroken, "the revocation log is broken at \(what)",
                   hint: "the log was changed outside this tool; compare with a backup of the registry", file: file, line: line)
    }

    static func registryHasNoChain(registry: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.registryHasNoChain, "the registry '\(registry)' keeps no chained log yet",
                   hint: "run 'device-revoker registry init' on it once (as the schema owner), then every batch is chained", file: file, line: line)
    }
}

extension DeviceRegistry {
    /// Who ran each recorded batch, by batch id: the name, and the signer's key (hex) if any.
    /// Empty for a registry made before the chain.
    public func batchOperators() throws -> [String: (name: String, signer: String?)] {
        let d = dialect
        return try read { db in
            guard try db.bool(d.tableExists, [.text("revocation_batches")]) else { return [:] }
            var operators: [String: (name: String, signer: String?)] = [:]
            for row in try db.rows("SELECT batch_id, operator, signer FROM revocation_batches", []) {
                operators[row.text("batch_id")] = (row.text("operator"), row.optionalText("signer"))
            }
            return operators
        }
    }
}
