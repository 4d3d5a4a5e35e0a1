import Foundation
import Testing
@testable import VaultCore
@testable import VaultRegistry
import VaultSQLite

@Suite struct DeviceRegistryTests {
    let now = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

    /// users u0…u(users-1), each with `perUser` devices dK (K global), in conversations c0… of
    /// up to four devices; device 0 of each conversation is admin. Last seen: device K on January
    /// K + 1 (modulo 28).
    func registry(on engine: TestEngine = .sqlite, users: Int = 6, perUser: Int = 2) throws -> (DeviceRegistry, DeviceRegistry) {
        let registry = try DeviceRegistry(location: engine.newLocation(), access: .create)
        var devices = "", members = ""
        for user in 0..<users {
            for slot in 0..<perUser {
                let device = user * perUser + slot
                devices += #"{"user_did": "u\#(user)", "device_id": "d\#(device)", "device_mls_did": "u\#(user)#d\#(device)", "signature_public_key": "\#(String(format: "%04x", device))", "last_seen": "2025-01-\#(String(format: "%02d", device % 28 + 1))T00:00:00Z", "registered_at": "2024-01-01T00:00:00Z"}"# + "\n"
            }
        }
        let total = users * perUser
        for convo in 0..<(total / 4) {
            for k in 0..<4 {
                let device = convo * 4 + k
                members += #"{"convo_id": "c\#(convo)", "member_mls_did": "u\#(device / perUser)#d\#(device)", "user_did": "u\#(device / perUser)", "device_id": "d\#(device)", "joined_at": "2024-02-01T00:00:00Z", "is_admin": \#(k == 0)}"# + "\n"
            }
        }
        let counts = try registry.importRows(deviceLines: ("devices.jsonl", Array(devices.utf8)), memberLines: ("members.jsonl", Array(members.utf8)), now: now)
        #expect(counts.devices == total && counts.members == (total / 4) * 4)
        return (registry, registry)
    }

    /// Active devices, counted in SQL on whichever engine holds the registry.
    func active(_ registry: DeviceRegistry) throws -> Int {
        try registry.read { try $0.int("SELECT count(*) FROM user_devices WHERE is_active") }
    }

    @Test(.needsServers, arguments: TestEngine.all) func importIsAllOrNothingAndNamesTheLine(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        let bad = #"{"user_did": "x", "device_id": "y", "device_mls_did": "x#y", "signature_public_key": "aa"}"# + "\n" + #"{"user_did": "x", "device_id": "z"}"# + "\n"
        do {
            _ = try registry.importRows(deviceLines: ("new.jsonl", Array(bad.utf8)), memberLines: nil, now: now)
            Issue.record("a bad line was imported")
        } catch let error as VaultError {
            #expect(error.reason.hasPrefix("new.jsonl line 2: ") && error.reason.hasSuffix(" is missing"))
        }
        #expect(try path.read { try $0.int("SELECT count(*) FROM user_devices WHERE user_did = 'x'") } == 0)
    }

    /// A file that names one device or membership twice is refused at the second line, on
    /// either engine, and nothing is imported.
    @Test(.needsServers, arguments: TestEngine.all) func aRepeatedLineIsRefusedByItsNumber(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        let device = #"{"user_did": "x", "device_id": "y", "device_mls_did": "x#y", "signature_public_key": "aa"}"#
        let error = #expect(throws: VaultError.self) {
            try registry.importRows(deviceLines: ("twice.jsonl", Array((device + "\n" + device.replacingOccurrences(of: "aa", with: "bb")).utf8)),
                                    memberLines: nil, now: now)
        }
        #expect(error?.reason == "twice.jsonl line 2: an earlier line has the same device")
        let member = #"{"convo_id": "c-new", "member_mls_did": "u0#d0", "user_did": "u0", "device_id": "d0"}"#
        let memberError = #expect(throws: VaultError.self) {
            try registry.importRows(deviceLines: nil, memberLines: ("twice.jsonl", Array((member + "\n" + member).utf8)), now: now)
        }
        #expect(memberError?.reason == "twice.jsonl line 2: an earlier line has the same membership")
        #expect(try registry.devices(matching: .init(user: "x")).isEmpty)
    }

    /// Each rule the staged rows are checked against names the earliest line that breaks it,
    /// whichever rule that is, on either engine, and nothing is imported: a membership of a
    /// device the registry lacks, a new open membership of a revoked device, a second device
    /// of one user with the same signature key. A revoked device's membership already there is
    /// no new membership: upserting it is not refused.
    @Test(.needsServers, arguments: TestEngine.all) func eachStagedRuleNamesTheEarliestLine(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        _ = try registry.revoke(.devices([("u0", "d0")]), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false)
        func member(_ convo: String, _ user: String, _ device: String, left: Bool = false) -> String {
            #"{"convo_id": "\#(convo)", "member_mls_did": "\#(user)#\#(device)", "user_did": "\#(user)", "device_id": "\#(device)""#
                + (left ? #", "left_at": "2026-01-01T00:00:00Z"}"# : "}")
        }
        func refusal(_ lines: [String], upsert: Bool = false) -> String? {
            let error = #expect(throws: VaultError.self) {
                try registry.importRows(deviceLines: nil, memberLines: ("m.jsonl", Array(lines.joined(separator: "\n").utf8)), now: now, upsert: upsert)
            }
            return error?.reason
        }
        func code(_ lines: [String]) -> VaultError.Code? {
            (#expect(throws: VaultError.self) {
                try registry.importRows(deviceLines: nil, memberLines: ("m.jsonl", Array(lines.joined(separator: "\n").utf8)), now: now, upsert: false)
            })?.code
        }
        let fine = member("c9", "u1", "d2"), missing = member("c9", "u8", "d99"), revoked = member("c9", "u0", "d0")
        #expect(code([fine, missing, revoked]) == .notInRegistry && code([fine, revoked, missing]) == .revokedDeviceJoins)
        #expect(VaultError.Code.revokedDeviceJoins.category == .refused)
        #expect(refusal([fine, missing, revoked]) == "m.jsonl line 2: the registry has no device 'u8#d99'")
        #expect(refusal([fine, revoked, missing]) == "m.jsonl line 2: device u0#d0 is revoked; it cannot join a conversation")
        // A closed membership of a revoked device breaks no rule; an open one does.
        #expect(refusal([member("c8", "u0", "d0", left: true), fine, revoked]) == "m.jsonl line 3: device u0#d0 is revoked; it cannot join a conversation")
        #expect(try path.read { try $0.int("SELECT count(*) FROM members WHERE convo_id IN ('c8', 'c9')") } == 0)
        // c0's membership of d0 is there (closed by the revocation): upserting it is no new open
        // membership, so it is not refused, and it stays closed.
        _ = try registry.importRows(deviceLines: nil, memberLines: ("m.jsonl", Array(member("c0", "u0", "d0").utf8)), now: now, upsert: true)
        #expect(try path.read { try $0.int("SELECT count(*) FROM members WHERE device_id = 'd0' AND left_at IS NULL") } == 0)

        let sameKey = #"{"user_did": "u1", "device_id": "d77", "device_mls_did": "u1#d77", "signature_public_key": "0002"}"#
        let newDevice = #"{"user_did": "u9", "device_id": "d78", "device_mls_did": "u9#d78", "signature_public_key": "abcd"}"#
        let error = #expect(throws: VaultError.self) {
            try registry.importRows(deviceLines: ("d.jsonl", Array([newDevice, sameKey].joined(separator: "\n").utf8)), memberLines: nil, now: now)
        }
        #expect(error?.reason == "d.jsonl line 2: this user already has another device with the same signature key")
        #expect(try registry.devices(matching: .init(user: "u9")).isEmpty)
    }

    @Test(.needsServers, arguments: TestEngine.all) func aSecondImportIsRefusedClearlyOrUpsertedWithoutUndoingRevocations(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        _ = try registry.revoke(.devices([("u0", "d0")]), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false)
        let again = #"{"user_did": "u0", "device_id": "d0", "device_mls_did": "u0#d0", "device_name": "Renamed", "signature_public_key": "0000", "last_seen": "2026-01-01T00:00:00Z"}"# + "\n"
            + #"{"user_did": "u0", "device_id": "d1", "device_mls_did": "u0#d1", "device_name": "Renamed", "signature_public_key": "0001", "last_seen": "2024-01-01T00:00:00Z"}"# + "\n"
            + #"{"user_did": "u9", "device_id": "new", "device_mls_did": "u9#new", "signature_public_key": "ffff"}"# + "\n"
        #expect(throws: VaultError(.alreadyImported, "")) { try registry.importRows(deviceLines: ("again.jsonl", Array(again.utf8)), memberLines: nil, now: now) }
        let counts = try registry.importRows(deviceLines: ("again.jsonl", Array(again.utf8)), memberLines: nil, now: now, upsert: true)
        #expect(counts.devices == 3)
        let rows = try path.read {
            try $0.rows("SELECT device_name, is_active, revocation_reason, last_seen FROM user_devices WHERE device_id IN ('d0', 'd1') ORDER BY device_id", [])
        }
        // The revoked device is left exactly as it was; the active one is renamed, and its last
        // seen time does not move back to the older export's.
        #expect(rows[0].optionalText("device_name") == nil && !rows[0].bool("is_active") && rows[0].optionalText("revocation_reason") == "lost")
        #expect(rows[1].optionalText("device_name") == "Renamed" && rows[1].optionalText("last_seen") == "2025-01-02T00:00:00Z")
        #expect(try path.read { try $0.int("SELECT count(*) FROM user_devices WHERE user_did = 'u9'") } == 1)
        // A row saying an active device is inactive is refused, as Family Medical's is: an
        // import never revokes (the update left is_active alone and said nothing).
        let inactive = #"{"user_did": "u0", "device_id": "d1", "device_mls_did": "u0#d1", "signature_public_key": "0001", "is_active": false}"# + "\n"
        let refusal = #expect(throws: VaultError.self) {
            try registry.importRows(deviceLines: ("inactive.jsonl", Array(inactive.utf8)), memberLines: nil, now: now, upsert: true)
        }
        #expect(refusal?.reason.hasPrefix("inactive.jsonl line 1: is_active is false for a device the registry has active") == true)
        #expect(try path.read { try $0.int("SELECT count(*) FROM user_devices WHERE device_id = 'd1' AND is_active") } == 1)
    }

    @Test(.needsServers, arguments: TestEngine.all) func keepLastDeviceSparesEachUsersMostRecentDevice(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        // Not seen since January 6: d0…d4 (u0's both, u1's both, u2's d4); u2 keeps d5 anyway.
        let stale = DeviceRegistry.Selector.notSeenSince(Timestamp(rfc3339: "2025-01-06T00:00:00Z")!)
        let result = try registry.revoke(stale, reason: "stale", now: now, dryRun: false, allowing: .all, collectOperations: false, keepLastDevice: true)
        #expect(result.applied && result.radius.devices == 3 && result.radius.sparedLastDevices == 2 && result.radius.usersLeftWithoutDevice.isEmpty)
        let kept = try path.read {
            try $0.strings("SELECT device_id FROM user_devices WHERE is_active AND user_did IN ('u0', 'u1', 'u2') ORDER BY device_id")
        }
        #expect(kept == ["d1", "d3", "d5"])
    }

    /// SQLite keeps whatever text a row was given: a time the app or a person wrote in another
    /// form (an offset, SQLite's own `CURRENT_TIMESTAMP`, fractions) is chosen, spared and shown
    /// by the instant it names, and text that names none is no time (a hostile trial: they were
    /// chosen and spared by their spelling and shown by their time). Both schemas.
    @Test(arguments: RegistrySchema.allCases) func timesWrittenByHandAreReadAsTimes(schema: RegistrySchema) throws {
        let location = try TestEngine.sqlite.newLocation()
        let registry = try DeviceRegistry(location: location, access: .create, schema: schema)
        // (user, device, last seen): A 20:00Z, B 15:00Z; E 23:00Z, F 01:00Z; G none (unreadable), H 05:00Z with a fraction.
        let rows: [(String, String, String)] = [("u", "A", "2025-12-31T10:00:00-10:00"), ("u", "B", "2025-12-31T15:00:00Z"),
                                                ("w", "E", "2025-12-31 23:00:00"), ("w", "F", "2025-12-31T01:00:00Z"),
                                                ("g", "G", "unknown"), ("g", "H", "2025-12-31T05:00:00.750Z")]
        let uuid = { (text: String) in "00000000-0000-4000-8000-0000000000" + Array(text.utf8).map { String($0, radix: 16) }.joined().prefix(2) }
        try registry.transaction { db in
            for (index, (user, device, seen)) in rows.enumerated() {
                if schema == .catbird {
                    try db.execute("INSERT INTO user_devices (user_did, device_id, device_mls_did, signature_public_key, last_seen, registered_at) VALUES (?, ?, ?, ?, ?, ?)",
                                   [.text(user), .text(device), .text("\(user)#\(device)"), .bytes([UInt8(index)]), .text(seen), .text("2024-01-01T00:00:00Z")])
                } else {
                    try db.execute("INSERT INTO user_devices (device_id, user_id, device_name, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?)",
                                   [.text(uuid(device)), .text(uuid(user)), .text(device), .text("2024-01-01T00:00:00Z"), .text(seen)])
                }
            }
            return ((), true)
        }
        let name = { (view: DeviceRegistry.DeviceView) in view.deviceName ?? view.deviceId }
        let shown = Dictionary(uniqueKeysWithValues: try registry.devices(matching: .init()).map { (name($0), $0.lastSeenAt?.rfc3339) })
        #expect(shown == ["A": "2025-12-31T20:00:00Z", "B": "2025-12-31T15:00:00Z", "E": "2025-12-31T23:00:00Z", "F": "2025-12-31T01:00:00Z",
                          "G": nil, "H": "2025-12-31T05:00:00Z"], "\(schema)")
        let noon = DeviceRegistry.Selector.notSeenSince(Timestamp(rfc3339: "2025-12-31T12:00:00Z")!)
        let later = Timestamp(rfc3339: "2026-01-01T00:00:00Z")!
        let stale = try registry.revoke(noon, reason: nil, now: later, dryRun: true, allowing: .all, collectOperations: false)
        #expect(try Set(registry.batch(of: stale).map(\.device)) == Set(["F", "G", "H"].map { schema == .catbird ? $0 : uuid($0) }), "\(schema)")
        let sparing = try registry.revoke(.notSeenSince(later), reason: nil, now: later, dryRun: true, allowing: .all, collectOperations: false,
                                          keepLastDevice: true)
        // Each user's most recent by its time: A, E, and H (G has none).
        #expect(try Set(registry.batch(of: sparing).map(\.device)) == Set(["B", "F", "G"].map { schema == .catbird ? $0 : uuid($0) }), "\(schema)")
    }

    @Test(.needsServers, arguments: TestEngine.all) func revokeByEachSelector(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        let selectors: [DeviceRegistry.Selector] = [
            .devices([("u0", "d1"), ("nobody", "d9")]), .user("u1"), .notSeenSince(Timestamp(rfc3339: "2025-01-06T12:00:00Z")!),
            // A key listed twice selects its device once.
            .signatureKeys([[0x00, 0x07], [0x00, 0x07]]),
        ]
        var expectedActive = 12
        for (index, selector) in selectors.enumerated() {
            let result = try registry.revoke(selector, reason: "r\(index)", now: now, dryRun: false, allowing: .all, collectOperations: true)
            #expect(result.applied)
            expectedActive -= result.radius.devices
            #expect(try active(path) == expectedActive)
            #expect(result.operations.count == result.radius.memberships)
            #expect(try registry.log(batch: result.batchID).count == result.radius.devices)
            #expect(try registry.log(batch: result.batchID).allSatisfy { $0.reason == "r\(index)" && $0.selector == selector.description })
        }
        // d1; then u1's d2, d3; then those last seen before Jan 6 noon still active: d0, d4, d5; then d7.
        #expect(try active(path) == 12 - 1 - 2 - 3 - 1)
        let open = try path.read { try $0.int("""
            SELECT count(*) FROM members m JOIN user_devices d USING (user_did, device_id) WHERE NOT d.is_active AND m.left_at IS NULL
            """) }
        #expect(open == 0)
    }

    @Test(.needsServers, arguments: TestEngine.all) func secondIdenticalRunChangesNothing(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        let first = try registry.revoke(.user("u2"), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(first.applied && first.radius.devices == 2)
        let second = try registry.revoke(.user("u2"), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(!second.applied && second.radius.devices == 0 && second.radius.alreadyRevoked == 2)
        // A report of nothing to revoke still counts the active devices (it said 0).
        #expect(second.radius.activeDevices == 10)
        #expect(try registry.log(batch: nil).count == 2)
        #expect(try active(path) == 10)
    }

    @Test(.needsServers, arguments: TestEngine.all) func guardRailsRefuseWithoutForceAndDryRunsWriteNothing(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        // u0 owns d0 and d1; d0 is the only admin of c0.
        let refused = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: false, allowing: [], collectOperations: false)
        #expect(!refused.applied && refused.radius.usersLeftWithoutDevice == ["u0"] && refused.radius.conversationsLeftWithoutAdmin == ["c0"])
        // Two of twelve active devices is also more than the default 10%.
        #expect(refused.refusals == [.tooLarge(devices: 2, active: 12, limit: .defaultLimit), .wouldLeaveUsersWithoutDevice(["u0"]),
                                     .wouldLeaveConversationsWithoutAdmin(["c0"])])
        #expect(try active(path) == 12 && (try registry.log(batch: nil)).isEmpty)
        // Refused after the change was made (the size allowed): the change is taken back, the
        // operations it stored with it too, and the batch can still be listed.
        let late = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: false, allowing: [.largeBatch], collectOperations: false, batchID: "LATE")
        #expect(!late.applied && late.refusals.map(\.kind) == ["wouldLeaveUsersWithoutDevice", "wouldLeaveConversationsWithoutAdmin"])
        #expect(try registry.batch(of: late) == [DeviceRegistry.DeviceReference(user: "u0", device: "d0"), DeviceRegistry.DeviceReference(user: "u0", device: "d1")])
        #expect(try active(path) == 12 && (try registry.log(batch: nil)).isEmpty)
        #expect(throws: VaultError.self) { _ = try registry.operations(batch: "LATE") }
        let dry = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: true, allowing: .all, collectOperations: true)
        #expect(!dry.applied && dry.radius.devices == 2 && !dry.operations.isEmpty)
        #expect(try active(path) == 12)
        // d1 alone leaves u0 with d0 and c0 with its admin: allowed.
        #expect(try registry.revoke(.devices([("u0", "d1")]), reason: nil, now: now, dryRun: false, allowing: [], collectOperations: false).applied)
    }

    /// A dry run measures before the change, a real run after it (rolled back when refused):
    /// both must find the same radius and refusals, and the forced run the same radius.
    @Test(.needsServers, arguments: TestEngine.all) func dryRunsAndRealRunsMeasureAlike(engine: TestEngine) throws {
        let cases: [(DeviceRegistry.Selector, keepLast: Bool)] = [
            (.user("u0"), false), (.devices([("u0", "d0"), ("u4", "d9"), ("u9", "d0")]), false),
            (.notSeenSince(Timestamp(rfc3339: "2025-01-06T12:00:00Z")!), false), (.notSeenSince(Timestamp(rfc3339: "2025-01-09T00:00:00Z")!), true),
            (.signatureKeys([[0x00, 0x00], [0x00, 0x05], [0x00, 0x08]]), false),
        ]
        for (selector, keepLast) in cases {
            let (registry, _) = try registry(on: engine)
            _ = try registry.revoke(.devices([("u1", "d3")]), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
            func run(dryRun: Bool, force: Bool) throws -> DeviceRegistry.RevocationResult {
                try registry.revoke(selector, reason: nil, now: now, dryRun: dryRun, allowing: force ? .all : [], collectOperations: true, keepLastDevice: keepLast)
            }
            let dry = try run(dryRun: true, force: false)
            // Each run's batch is listed from where it left it, refused or not, until the next run.
            let dryBatch = try registry.batch(of: dry)
            #expect(dryBatch.count == dry.radius.devices, "\(selector.description)")
            let refused = try run(dryRun: false, force: false)
            #expect(dry.radius == refused.radius && dry.refusals == refused.refusals, "\(selector.description)")
            #expect(try registry.batch(of: refused) == dryBatch, "\(selector.description)")
            #expect(!refused.refusals.isEmpty || refused.applied, "\(selector.description)")
            guard !refused.applied else { continue }
            #expect(try registry.log(batch: nil).count == 1, "a refused run commits nothing")
            let forced = try run(dryRun: false, force: true)
            #expect(forced.applied && forced.radius == dry.radius && forced.operations.count == dry.operations.count, "\(selector.description)")
            #expect(try registry.batch(of: forced) == dryBatch, "\(selector.description)")
        }
    }

    @Test(.needsServers, arguments: TestEngine.all) func theLogIsAppendOnly(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        _ = try registry.revoke(.user("u3"), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        for statement in ["DELETE FROM revocations", "UPDATE revocations SET reason = 'changed'"] {
            #expect(throws: VaultError.self) { try path.transaction { try $0.execute(statement); return ((), true) } }
        }
        #expect(try registry.log(batch: nil).count == 2)
    }

    /// The chained log (issue 46): each batch's record names its operator and is chained to the
    /// one before; a row edited, deleted or inserted behind the triggers' back, a record edited or
    /// deleted, a signature swapped or the chain's start moved is found at its batch.
    @Test(.needsServers, arguments: TestEngine.all) func theChainedLogFindsEveryChangeMadeBehindTheTriggers(engine: TestEngine) throws {
        let signer = try SecretKey.generate(using: SeededRandom(seed: 46))
        let disableTriggers = engine == .sqlite
            ? ["revocations_are_append_only_update", "revocations_are_append_only_delete", "revocation_batches_are_append_only_update",
               "revocation_batches_are_append_only_delete", "revocation_chain_start_is_fixed_update", "batch_operations_are_append_only_update",
               "batch_operations_are_append_only_delete"].map { "DROP TRIGGER \($0)" }.joined(separator: "; ")
            : ["revocations", "revocation_batches", "revocation_chain_start", "batch_operations"].map { "ALTER TABLE \($0) DISABLE TRIGGER USER" }.joined(separator: "; ")
        let tamperings: [(name: String, sql: String, found: String)] = [
            ("a row edited", "UPDATE revocations SET reason = 'forged' WHERE batch_id = 'b2'", "'b2'"),
            ("a row deleted", "DELETE FROM revocations WHERE batch_id = 'b2' AND device_id = 'd5'", "'b2'"),
            ("a row added to a batch", "INSERT INTO revocations (batch_id, revoked_at, user_did, device_id, reason, selector) SELECT batch_id, revoked_at, user_did, 'd0', reason, selector FROM revocations WHERE batch_id = 'b2' AND device_id = 'd4'", "'b2'"),
            ("a row of no batch", "INSERT INTO revocations (batch_id, revoked_at, user_did, device_id, reason, selector) SELECT 'forged', revoked_at, user_did, 'd0', reason, selector FROM revocations WHERE batch_id = 'b2' AND device_id = 'd4'", "'forged'"),
            ("a record deleted", "DELETE FROM revocation_batches WHERE seq = 2", "record 2 is missing"),
            ("an operator renamed", "UPDATE revocation_batches SET operator = 'mallory' WHERE seq = 1", "'b1'"),
            ("a signature swapped", "UPDATE revocation_batches SET signature = (SELECT signature FROM revocation_batches WHERE seq = 3) WHERE seq = 2", "'b2'"),
            ("the chain's start moved", "UPDATE revocation_chain_start SET first_revocation_id = 2", "'b1'"),
            ("a row's id changed", (engine == .sqlite ? "" : "ALTER TABLE revocations ALTER COLUMN id DROP IDENTITY; ") + "UPDATE revocations SET id = id + 100 WHERE batch_id = 'b3'", "'b3'"),
            ("an operation changed", "UPDATE batch_operations SET operation = '{}' WHERE batch_id = 'b2'", "'b2'"),
            ("an operation deleted", "DELETE FROM batch_operations WHERE batch_id = 'b3'", "'b3'"),
            ("a revoked device revived", "UPDATE user_devices SET is_active = \(engine == .sqlite ? "1" : "true") WHERE device_id = 'd2'", "'b1'"),
        ]
        for tampering in tamperings {
            let (registry, _) = try registry(on: engine)
            for (batch, user, key) in [("b1", "u1", nil), ("b2", "u2", signer), ("b3", "u3", signer)] {
                _ = try registry.revoke(.user(user), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: true, batchID: batch,
                                        by: RegistryOperator(name: "sam", signer: key))
            }
            let report = try registry.verifyChain()
            #expect(report.batches.map(\.batchID) == ["b1", "b2", "b3"] && report.rowsChecked == 6 && report.batches[1].signer == signer.publicKey.hex)
            #expect(try registry.batchOperators()["b2"]?.name == "sam")
            // Kept elsewhere and required: a head hash, and the operator's key.
            #expect(throws: VaultError(.registryChainBroken, "")) { try registry.verifyChain(expectHead: String(repeating: "0", count: 64)) }
            #expect(throws: VaultError(.registryChainBroken, "")) { try registry.verifyChain(signers: [signer.publicKey]) }
            #expect(try registry.verifyChain(expectHead: report.batches[1].hash).batches.count == 3)
            try registry.transaction { try $0.execute(disableTriggers); try $0.execute(tampering.sql); return ((), true) }
            do {
                _ = try registry.verifyChain()
                Issue.record("\(tampering.name) was not found")
            } catch let error as VaultError {
                #expect(error.code == .registryChainBroken && error.reason.contains(tampering.found), "\(tampering.name): \(error.reason)")
            }
        }
    }

    /// A guard (a trigger that keeps a rule) dropped, rewritten to do nothing, or disabled: no
    /// writer opens the registry (exit 3, naming it), `log --verify` names it, and `init` puts it
    /// back and says which; after it the rule holds again. A hostile trial dropped v3's
    /// triggers, and `init` said "registry ready".
    @Test(.needsServers, arguments: TestEngine.all, RegistrySchema.allCases) func guardsLostByHandAreFoundAndPutBackByInit(engine: TestEngine, schema: RegistrySchema) throws {
        let isSQLite = engine == .sqlite
        var loosenings: [(name: String, sql: String, guards: [String])] = isSQLite ? [
            ("dropped", "DROP TRIGGER revocations_are_append_only_delete", ["revocations_are_append_only_delete"]),
            ("rewritten", "DROP TRIGGER revocation_batches_are_append_only_update; CREATE TRIGGER revocation_batches_are_append_only_update BEFORE UPDATE ON revocation_batches BEGIN SELECT 1; END",
             ["revocation_batches_are_append_only_update"]),
            // A trial: a trigger added by hand that drops the log's rows as they are written.
            ("added", "CREATE TRIGGER zz BEFORE INSERT ON revocations BEGIN SELECT RAISE(IGNORE); END", ["zz"]),
        ] : [
            ("dropped", "DROP TRIGGER revocations_are_append_only ON revocations", ["revocations_are_append_only"]),
            ("disabled", "ALTER TABLE batch_operations DISABLE TRIGGER batch_operations_are_never_truncated", ["batch_operations_are_never_truncated"]),
            ("its function emptied", "CREATE OR REPLACE FUNCTION registry_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$",
             ["revocations_are_append_only", "revocations_are_never_truncated", "batch_operations_are_append_only", "batch_operations_are_never_truncated",
              "revocation_batches_are_append_only", "revocation_batches_are_never_truncated", "revocation_chain_start_is_fixed", "revocation_chain_start_is_never_truncated"]),
            ("added", "CREATE FUNCTION zz_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$; CREATE TRIGGER zz BEFORE INSERT ON revocations FOR EACH ROW EXECUTE FUNCTION zz_f()",
             ["zz"]),
        ]
        if schema == .catbird {
            loosenings.append(isSQLite ? ("dropped", "DROP TRIGGER members_need_an_active_device_update", ["members_need_an_active_device_update"])
                                       : ("disabled", "ALTER TABLE members DISABLE TRIGGER ALL", ["members_need_an_active_device"]))
        }
        for loosening in loosenings {
            let location = try engine.newLocation()
            let made = try DeviceRegistry(location: location, access: .create, schema: schema)
            // SQLite's names have no case: a guard made again in capitals, but for its quoted
            // text (data, whose case is kept), is in place.
            if isSQLite {
                var quoted = false
                let capitals = made.engine.guards[0].sql.map { character -> String in
                    if character == "'" { quoted.toggle() }
                    return quoted ? String(character) : character.uppercased()
                }.joined()
                #expect(capitals != made.engine.guards[0].sql.uppercased(), "the guard quotes text")
                try made.transaction {
                    try $0.execute("DROP TRIGGER revocations_are_append_only_update; " + capitals)
                    return ((), true)
                }
            }
            let guardsOfNew = try made.guardsNotInPlace()
            #expect(made.restoredGuards.isEmpty && guardsOfNew.isEmpty, "a new registry has every guard")
            try made.transaction { try $0.execute(loosening.sql); return ((), true) }
            let what = "\(engine) \(schema) \(loosening.name)"
            #expect(try made.guardsNotInPlace().sorted() == loosening.guards.sorted(), "\(what)")
            func error(_ body: () throws -> Void) -> VaultError? {
                do { try body(); return nil } catch let error as VaultError { return error } catch { return nil }
            }
            let refused = try #require(error { _ = try DeviceRegistry(location: location, access: .readWrite) }, "\(what)")
            #expect(refused.code == .registryGuardsNotInPlace && loosening.guards.allSatisfy(refused.reason.contains), "\(what): \(refused.reason)")
            let verified = try #require(error { _ = try DeviceRegistry(location: location, access: .readOnly).verifyChain() }, "\(what)")
            #expect(verified.code == .registryGuardsNotInPlace, "\(what): \(verified.reason)")
            let reinitialised = try DeviceRegistry(location: location, access: .create)
            #expect((reinitialised.restoredGuards + reinitialised.droppedTriggers).sorted() == loosening.guards.sorted(), "\(what)")
            #expect(try DeviceRegistry(location: location, access: .create).restoredGuards.isEmpty, "\(what): put back once")
            let reopened = try DeviceRegistry(location: location, access: .readWrite)
            #expect(try reopened.verifyChain().batches.isEmpty, "\(what)")
            #expect(throws: VaultError.self, "\(what): the log is append-only again") {
                try reopened.transaction { try $0.execute("DELETE FROM revocation_chain_start"); return ((), true) }
            }
        }
    }

    /// A trigger of the app's own or added by hand that sets a revoked device active again, or
    /// opens its membership again, within the revoke's own transaction: the revoke reported
    /// success (a hostile trial). It is refused (exit 3), nothing changed; a trigger that leaves
    /// the change standing (the app's own bookkeeping) is no obstacle.
    @Test(.needsServers, arguments: TestEngine.all) func aRevocationUndoneByATriggerIsRefused(engine: TestEngine) throws {
        let sqlite = engine == .sqlite
        let undoers = sqlite ? [
            "CREATE TRIGGER zz AFTER UPDATE OF is_active ON user_devices WHEN NEW.is_active = 0 BEGIN UPDATE user_devices SET is_active = 1 WHERE user_did = NEW.user_did AND device_id = NEW.device_id; END",
            "CREATE TRIGGER zz AFTER UPDATE OF left_at ON members WHEN NEW.left_at IS NOT NULL BEGIN UPDATE members SET left_at = NULL WHERE convo_id = NEW.convo_id AND member_mls_did = NEW.member_mls_did; END",
        ] : [
            "CREATE FUNCTION zz_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.is_active := true; RETURN NEW; END $$; CREATE TRIGGER zz BEFORE UPDATE ON user_devices FOR EACH ROW EXECUTE FUNCTION zz_f()",
        ]
        // Another device, revoked by an earlier batch, revived by the trigger (a trial).
        let reviver = sqlite
            ? "CREATE TRIGGER zz AFTER UPDATE OF is_active ON user_devices WHEN NEW.is_active = 0 BEGIN UPDATE user_devices SET is_active = 1 WHERE device_id = 'd0'; END"
            : "CREATE FUNCTION zz_r() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE user_devices SET is_active = true WHERE device_id = 'd0' AND NOT is_active; RETURN NULL; END $$; CREATE TRIGGER zz AFTER UPDATE ON user_devices FOR EACH ROW WHEN (NOT NEW.is_active AND NEW.device_id <> 'd0') EXECUTE FUNCTION zz_r()"
        for undoer in undoers + [reviver] {
            let (registry, path) = try registry(on: engine)
            if undoer == reviver {
                #expect(try registry.revoke(.user("u0"), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false, batchID: "first").applied)
            }
            try path.transaction { try $0.execute(undoer); return ((), true) }
            let undone = #expect(throws: VaultError.self) {
                try registry.revoke(.user("u1"), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false)
            }
            // A membership opened again meets the registry's own guard first (v3), on SQLite.
            let expected: VaultError.Code = undoer.contains("ON members") ? .malformedDocument : .registryChangeUndone
            #expect(undone?.code == expected && (expected != .registryChangeUndone || undone?.reason.contains(#""zz" on "#) == true),
                    "\(engine) \(undoer): \(String(describing: undone))")
            #expect(try registry.log(batch: nil).allSatisfy { $0.batchID == "first" }, "nothing was changed")
        }
        let (registry, path) = try registry(on: engine)
        try path.transaction {
            try $0.execute(sqlite ? "CREATE TRIGGER bookkeeping AFTER UPDATE OF is_active ON user_devices BEGIN UPDATE user_devices SET device_name = 'off' WHERE user_did = NEW.user_did AND device_id = NEW.device_id AND NOT NEW.is_active; END"
                                  : "CREATE FUNCTION bk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.device_name := 'off'; RETURN NEW; END $$; CREATE TRIGGER bookkeeping BEFORE UPDATE ON user_devices FOR EACH ROW EXECUTE FUNCTION bk()")
            return ((), true)
        }
        #expect(try registry.revoke(.user("u1"), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false).applied)
    }

    @Test(.needsServers, arguments: TestEngine.all) func membersAndRejoinPlan(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        let members = try registry.members(conversation: "c0")
        #expect(members.map(\.userDid) == ["u0", "u1"] && members.map(\.deviceCount) == [2, 2] && members.map(\.isAdmin) == [true, false])
        let lines = #"{"user_did": "u0", "device_id": "new", "device_mls_did": "u0#new", "signature_public_key": "ffff", "key_packages_available": 1}"# + "\n"
            + #"{"user_did": "u0", "device_id": "bare", "device_mls_did": "u0#bare", "signature_public_key": "fffe"}"# + "\n"
        _ = try registry.importRows(deviceLines: ("new.jsonl", Array(lines.utf8)), memberLines: nil, now: now)
        let plan = try registry.rejoinPlan(user: "u0", device: "new")
        #expect(plan.operations == [.object([("op", .string("mls.add")), ("convo", .string("c0")), ("member", .string("u0#new"))])] && plan.emptyBecause == nil)
        #expect(try registry.rejoinPlan(user: "u0", device: "d0").emptyBecause == .alreadyEverywhere)
        // No key packages, no add (seed 003's addMember selects `key_packages_available > 0`):
        // the plan is empty and names what the device will join once it publishes some.
        let bare = try registry.rejoinPlan(user: "u0", device: "bare")
        #expect(bare.operations.isEmpty && bare.emptyBecause == .noKeyPackages(conversations: ["c0"]))
    }

    /// A user whose memberships were all closed by a revocation: the plan is empty and says
    /// which batch closed them.
    @Test(.needsServers, arguments: TestEngine.all) func rejoinPlanExplainsWhyItIsEmpty(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        let batch = try registry.revoke(.user("u0"), reason: "stolen", now: now, dryRun: false, allowing: .all, collectOperations: false, batchID: "TICKET-1")
        #expect(batch.applied)
        _ = try registry.importRows(deviceLines: ("new.jsonl", Array(#"{"user_did": "u0", "device_id": "new", "device_mls_did": "u0#new", "signature_public_key": "ffff"}"#.utf8)), memberLines: nil, now: now)
        let plan = try registry.rejoinPlan(user: "u0", device: "new")
        #expect(plan.operations.isEmpty && plan.emptyBecause == .closedByRevocation(batches: ["TICKET-1"], conversations: ["c0"]))
    }

    /// A revocation that closed no membership is not blamed for an empty plan.
    @Test(.needsServers, arguments: TestEngine.all) func rejoinPlanBlamesOnlyRevocationsThatClosedMemberships(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        let lonely = #"{"user_did": "u9", "device_id": "old", "device_mls_did": "u9#old", "signature_public_key": "eeee"}"# + "\n"
            + #"{"user_did": "u9", "device_id": "new", "device_mls_did": "u9#new", "signature_public_key": "ffff"}"#
        _ = try registry.importRows(deviceLines: ("u9.jsonl", Array(lonely.utf8)), memberLines: nil, now: now)
        #expect(try registry.revoke(.devices([("u9", "old")]), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false).applied)
        #expect(try registry.rejoinPlan(user: "u9", device: "new").emptyBecause == .userInNoConversation)
    }

    @Test(.needsServers, arguments: TestEngine.all) func aBatchIdIsUsedOnce(engine: TestEngine) throws {
        let (registry, path) = try registry(on: engine)
        #expect(try registry.revoke(.devices([("u0", "d1")]), reason: nil, now: now, dryRun: false, allowing: [], collectOperations: false, batchID: "T-1").applied)
        // The same ticket again finds nothing left to do: not an error.
        #expect(try !registry.revoke(.devices([("u0", "d1")]), reason: nil, now: now, dryRun: false, allowing: [], collectOperations: false, batchID: "T-1").applied)
        for dryRun in [true, false] {
            #expect { try registry.revoke(.devices([("u1", "d3")]), reason: nil, now: now, dryRun: dryRun, allowing: [], collectOperations: false, batchID: "T-1") }
                throws: { ($0 as? VaultError)?.code == .batchIdTaken }
        }
        #expect(try active(path) == 11)
    }

    @Test(.needsServers, arguments: TestEngine.all) func unknownConversationsAndBatchesAreErrors(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        #expect { try registry.members(conversation: "nope") } throws: { ($0 as? VaultError)?.code == .notInRegistry }
        #expect { try registry.log(batch: "nope") } throws: { ($0 as? VaultError)?.code == .notInRegistry }
        #expect { try registry.rejoinPlan(user: "u0", device: "nope") } throws: { ($0 as? VaultError)?.code == .notInRegistry }
    }

    @Test(.needsServers, arguments: TestEngine.all) func devicesAreListedByFilter(engine: TestEngine) throws {
        let (registry, _) = try registry(on: engine)
        _ = try registry.revoke(.devices([("u1", "d3")]), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(try registry.devices(matching: .init(user: "u1")).map(\.deviceId) == ["d2", "d3"])
        let revoked = try registry.devices(matching: .init(state: .revoked))
        #expect(revoked.map(\.deviceId) == ["d3"] && revoked[0].revocationReason == "lost" && revoked[0].revokedAt == now && revoked[0].openMemberships == 0)
        #expect(try registry.devices(matching: .init(state: .active)).count == 11)
        #expect(try registry.devices(matching: .init(search: "D1")).map(\.deviceId) == ["d1", "d10", "d11"])
        let stale = try registry.devices(matching: .init(state: .active, notSeenSince: Timestamp(rfc3339: "2025-01-03T00:00:00Z")!))
        #expect(stale.map(\.deviceId) == ["d0", "d1"])
        let named = #"{"user_did": "u9", "device_id": "m1", "device_mls_did": "u9#m1", "device_name": "Móvil de Ángela", "signature_public_key": "abab"}"#
        _ = try registry.importRows(deviceLines: ("named.jsonl", Array(named.utf8)), memberLines: nil, now: now)
        #expect(try registry.devices(matching: .init(search: "ÁNGELA")).map(\.deviceId) == ["m1"])
    }

    /// Two revokers at once on one database: immediate transactions and a busy timeout
    /// (SQLite), or an advisory lock (PostgreSQL), mean both batches land, whole.
    @Test(.needsServers, arguments: TestEngine.all) func concurrentRevokersLoseNoUpdate(engine: TestEngine) async throws {
        let (_, path) = try registry(on: engine, users: 40, perUser: 2)
        let first = try DeviceRegistry(location: path.location, access: .readWrite), second = try DeviceRegistry(location: path.location, access: .readWrite)
        let now = self.now
        async let a = Task.detached { try first.revoke(.devices((0..<20).map { ("u\($0)", "d\($0 * 2 + 1)") }), reason: "a", now: now, dryRun: false, allowing: .all, collectOperations: false) }.value
        async let b = Task.detached { try second.revoke(.devices((20..<40).map { ("u\($0)", "d\($0 * 2 + 1)") }), reason: "b", now: now, dryRun: false, allowing: .all, collectOperations: false) }.value
        let (resultA, resultB) = try await (a, b)
        #expect(resultA.applied && resultB.applied && resultA.radius.devices == 20 && resultB.radius.devices == 20)
        #expect(try active(path) == 40)
        #expect(try first.log(batch: nil).count == 40)
    }
}

/// The registry's part of "nothing lost" (issue 16).
@Suite struct RegistryNothingLostTests {
    let now = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

    func error(_ body: () throws -> Void) -> VaultError.Code? {
        do { try body(); return nil } catch let error as VaultError { return error.code } catch { return nil }
    }

    @Test(.needsServers, arguments: TestEngine.all) func aBatchsOperationsCanBeProducedAgainFromTheDatabase(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine, users: 4, perUser: 2)
        let result = try registry.revoke(.user("u1"), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: true, batchID: "B-1")
        #expect(result.applied && !result.operations.isEmpty)
        let stored = try registry.operations(batch: "B-1")
        #expect(stored == result.operations.flatMap { $0.serialized(pretty: false) + [0x0a] })
        #expect(error { _ = try registry.operations(batch: "no-such-batch") } == .notInRegistry)
        #expect(error { _ = try registry.log(batch: "no-such-batch") } == .notInRegistry)
    }

    /// A batch of more operations than one row holds reads back whole and in order.
    @Test(.needsServers, arguments: TestEngine.all) func operationsOfManyRowsComeBackInOrder(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine, users: 700, perUser: 2)
        let everyone = DeviceRegistry.Selector.notSeenSince(Timestamp(rfc3339: "2026-01-01T00:00:00Z")!)
        let result = try registry.revoke(everyone, reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: true, batchID: "B-big")
        #expect(result.applied && result.operations.count == 1400 && result.operations.count > DeviceRegistry.operationsPerRow)
        // 1,400 devices in conversations of 4: all 350 lose members.
        #expect(result.radius.conversations == 350)
        #expect(try registry.operations(batch: "B-big") == result.operations.flatMap { $0.serialized(pretty: false) + [0x0a] })
        // Whichever engine joins them, a row holds operationsPerRow operations, the last the rest.
        let rows = try registry.read { try $0.strings("SELECT operation FROM batch_operations WHERE batch_id = 'B-big' ORDER BY seq") }
        #expect(rows.map { $0.split(separator: "\n").count } == [DeviceRegistry.operationsPerRow, 1400 - DeviceRegistry.operationsPerRow])
        // PostgreSQL compresses them with lz4 where the server has it and is not configured
        // otherwise (the test server is not), else with the server's setting.
        if engine == .postgres {
            let (lz4, setting, methods) = try registry.read { db in
                (try db.bool("""
                    SELECT count(*) FROM pg_settings WHERE name = 'default_toast_compression' AND source = 'default' AND 'lz4' = ANY (enumvals)
                    """),
                 try db.strings("SHOW default_toast_compression"),
                 try db.strings("SELECT DISTINCT pg_column_compression(operation) FROM batch_operations WHERE batch_id = 'B-big'"))
            }
            #expect(methods == (lz4 ? ["lz4"] : setting))
        }
    }

    /// The stored operations are written from the ids' bytes as each engine returns them
    /// (forEachRow, JSONValue.writeString(utf8:)): they must be the bytes the tool's own JSON
    /// values give, for every character a conversation id or DID may hold.
    @Test(.needsServers, arguments: TestEngine.all) func storedOperationsAreTheToolsOwnJSON(engine: TestEngine) throws {
        let registry = try DeviceRegistry(location: engine.newLocation(), access: .create)
        // Quote, backslash, solidus, every control character the engines can store (PostgreSQL
        // text has no NUL), DEL, and UTF-8 of two, three and four bytes.
        let odd = "q\"b\\s/" + String(String.UnicodeScalarView((1..<0x20).map { Unicode.Scalar(UInt8($0)) })) + "\u{7f} é\u{2028}😀"
        func json(_ text: String) -> String { String(decoding: JSONValue.string(text).serialized(pretty: false), as: UTF8.self) }
        // A user DID, conversation id or member holds no control, line-breaking or invisible
        // character (DeviceRegistry.idProblem): it has the rest.
        let plain = String(odd.unicodeScalars.filter { ![.control, .lineSeparator, .paragraphSeparator, .format].contains($0.properties.generalCategory) })
        let user = json("u" + plain), member = json("u" + plain + "#d0")
        // A device's MLS DID is its user's and id (seed 003), and a membership names it so.
        let devices = #"{"user_did": \#(user), "device_id": "d0", "device_mls_did": \#(json("u" + plain + "#d0")), "signature_public_key": "01"}"# + "\n"
            + #"{"user_did": \#(user), "device_id": "d1", "device_mls_did": \#(json("u" + plain + "#d1")), "signature_public_key": "02"}"# + "\n"
        let members = #"{"convo_id": \#(json("c" + plain)), "member_mls_did": \#(member), "user_did": \#(user), "device_id": "d0"}"# + "\n"
            + #"{"convo_id": "plain", "member_mls_did": \#(member), "user_did": \#(user), "device_id": "d0"}"# + "\n"
        _ = try registry.importRows(deviceLines: ("d", Array(devices.utf8)), memberLines: ("m", Array(members.utf8)), now: now)
        let result = try registry.revoke(.devices([("u" + plain, "d0")]), reason: nil, now: now, dryRun: false, allowing: .all,
                                         collectOperations: true, batchID: "B-odd")
        #expect(result.applied && result.operations.count == 2 && result.radius.conversations == 2)
        let stored = try registry.operations(batch: "B-odd")
        // Bytes, not Strings: String equality would take differently normalised text as equal.
        #expect(stored == result.operations.flatMap { $0.serialized(pretty: false) + [0x0a] })
    }

    /// The conversations a batch closes memberships in are counted in the pass that writes its
    /// operations: ids that are byte prefixes of each other count apart, a conversation's several
    /// memberships once, as the dry run counts them in SQL; a batch that closes none stores none.
    @Test(.needsServers, arguments: TestEngine.all) func conversationsCountOnceEachAndABatchWithoutMembershipsStoresNoOperations(engine: TestEngine) throws {
        let registry = try DeviceRegistry(location: engine.newLocation(), access: .create)
        func json(_ text: String) -> String { String(decoding: JSONValue.string(text).serialized(pretty: false), as: UTF8.self) }
        let devices = (0..<3).map { #"{"user_did": "u", "device_id": "d\#($0)", "device_mls_did": "u#d\#($0)", "signature_public_key": "0\#($0)"}"# + "\n" }.joined()
        let members = [("c", 0), ("c", 1), ("cc", 0), ("c!", 1)].map { convo, device in
            #"{"convo_id": \#(json(convo)), "member_mls_did": "u#d\#(device)", "user_did": "u", "device_id": "d\#(device)"}"# + "\n"
        }.joined()
        _ = try registry.importRows(deviceLines: ("d", Array(devices.utf8)), memberLines: ("m", Array(members.utf8)), now: now)
        let two = DeviceRegistry.Selector.devices([("u", "d0"), ("u", "d1")])
        let dry = try registry.revoke(two, reason: nil, now: now, dryRun: true, allowing: .largeBatch, collectOperations: false, batchID: "B-dry")
        let real = try registry.revoke(two, reason: nil, now: now, dryRun: false, allowing: .largeBatch, collectOperations: false, batchID: "B-two")
        #expect(real.applied && real.radius.memberships == 4 && real.radius.conversations == 3)
        #expect(dry.radius == real.radius)
        // The user's last device, in no conversation: forced, it is revoked with no operations.
        let last = try registry.revoke(.devices([("u", "d2")]), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: true, batchID: "B-none")
        #expect(last.applied && last.radius.memberships == 0 && last.radius.conversations == 0 && last.operations.isEmpty)
        #expect(try registry.operations(batch: "B-none").isEmpty)
        #expect(try registry.read { try $0.int("SELECT count(*) FROM batch_operations WHERE batch_id = 'B-none'") } == 0)
    }

    @Test func readOnlyAccessChangesNothingAndRefusesAForeignDatabase() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("app.sqlite").path
        let other = try SQLiteDatabase(path: path, access: .create)
        try other.write { try $0.execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me')") }
        other.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for access in [DeviceRegistry.Access.readOnly, .readWrite, .create] {
            #expect(error { _ = try DeviceRegistry(path: path, access: access) } == .notARegistry)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["app.sqlite"])

        let (registry, _) = try DeviceRegistryTests().registry(users: 2, perUser: 2)
        let registryPath = registry.path
        _ = registry
        let registryBefore = try Data(contentsOf: URL(fileURLWithPath: registryPath))
        let readOnly = try DeviceRegistry(path: registryPath, access: .readOnly)
        let dryRun = try readOnly.revoke(.user("u0"), reason: nil, now: now, dryRun: true, allowing: .all, collectOperations: true)
        #expect(!dryRun.applied && dryRun.radius.devices == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: registryPath)) == registryBefore)
        #expect(!FileManager.default.fileExists(atPath: registryPath + "-wal") && !FileManager.default.fileExists(atPath: registryPath + "-journal"))
    }

    /// A device's MLS DID is `user_did#device_id`, as the server writes it (seed 003): any
    /// other is refused at import, naming its line, and nothing of the file is imported.
    @Test(.needsServers, arguments: TestEngine.all) func anMLSDidNotOfItsUserAndDeviceIsRefused(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine, users: 1, perUser: 1)
        let before = try registry.devices(matching: .init()).count
        for did in ["did:plc:x#e", "did:plc:y#d", "did:plc:x#d ", "DID:PLC:X#d", "did:plc:x", "d", "did:plc:x#d#d"] {
            let lines = #"{"user_did": "did:plc:x", "device_id": "ok", "device_mls_did": "did:plc:x#ok", "signature_public_key": "aa"}"# + "\n"
                + #"{"user_did": "did:plc:x", "device_id": "d", "device_mls_did": "\#(did)", "signature_public_key": "aa"}"# + "\n"
            do {
                _ = try registry.importRows(deviceLines: ("d.jsonl", Array(lines.utf8)), memberLines: nil, now: now)
                Issue.record("\(did) was imported")
            } catch let error as VaultError {
                #expect(error.code == .malformedDocument && error.reason.contains("device_mls_did") && error.reason.contains("line 2"), "\(did): \(error.reason)")
            }
            #expect(try registry.devices(matching: .init()).count == before)
        }
    }

    @Test(.needsServers, arguments: TestEngine.all) func aNULInsideAnImportedStringIsRefused(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine, users: 1, perUser: 1)
        let line = #"{"user_did": "x", "device_id": "a\u0000b", "device_mls_did": "x#a", "signature_public_key": "aa"}"#
        #expect(error { _ = try registry.importRows(deviceLines: ("d.jsonl", Array(line.utf8)), memberLines: nil, now: now) } == .malformedDocument)
    }
}

/// The engines a registry test runs on: SQLite, and PostgreSQL on the server scripts/test starts
/// (scripts/lib/postgres.sh); without it, the PostgreSQL cases fail, saying so.
enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var all: [TestEngine] { allCases }

    var testDescription: String { rawValue }

    /// A new, empty place for a registry: a file name, or a fresh database.
    func newLocation() throws -> RegistryLocation {
        switch self {
        case .sqlite:
            return .sqlite(path: FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString).sqlite").path)
        case .postgres:
            try TestServers.require("HVT_TEST_PGHOST", "the PostgreSQL server")
            let name = "u_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try PostgresClient(connection: Self.uri("postgres")).execute("CREATE DATABASE \(name)")
            return .postgres(connection: Self.uri(name))
        }
    }

    private static func uri(_ database: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        return "postgresql:///\(database)?host=\(environment["HVT_TEST_PGHOST"]!)&port=\(environment["HVT_TEST_PGPORT"]!)&user=\(environment["HVT_TEST_PGUSER"]!)"
    }
}

/// Which `--db` texts are PostgreSQL, and which carry a password (issue 13).
@Suite struct RegistryLocationTests {
    func code(_ text: String) -> VaultError.Code? {
        do { _ = try RegistryLocation(parsing: text); return nil } catch let error as VaultError { return error.code } catch { return nil }
    }

    @Test func connectionsAreToldFromFilesByTheirLook() throws {
        #expect(try RegistryLocation(parsing: "registry.sqlite") == .sqlite(path: "registry.sqlite"))
        // A key=value look is never a file: libpq's refusal is reported, without its text.
        #expect(code("a=b.sqlite") == .badConnection && code("dbnmae=chat") == .badConnection)
        #expect(code("POSTGRES://db/chat") == .badConnection)  // libpq knows the scheme in lower case only
        for text in ["postgresql:///chat", "postgres://db/chat", "host=/run/postgresql dbname=chat", "service=chat"] {
            #expect(try RegistryLocation(parsing: text) == .postgres(connection: text), "\(text)")
        }
    }

    @Test func aPasswordAnywhereIsRefused() {
        for text in ["postgresql://op:secret@db/chat", "postgres://op:50%@db/chat", "postgresql://op:pa/ss@db/chat",
                     "host=db password=secret", "host=db PASSWORD=secret", "host=db sslpassword=secret",
                     "postgresql://db/chat?password=secret", "dbname=postgresql://op:secret@db/chat"] {
            #expect(code(text) == .passwordInConnection, "\(text)")
        }
        for text in ["postgresql://op@db:5432/chat", "postgresql://db:5432/chat?application_name=a@b", "host=db user=op"] {
            #expect(code(text) == nil, "\(text)")
        }
    }
}

/// A mistyped stolen device must never be skipped unnoticed: unmatched entries refuse the batch
/// before any change, each named with the user's closest devices, unless allowed.
@Suite struct RegistryUnmatchedTests {
    let now = Timestamp(rfc3339: "2025-02-01T00:00:00Z")!

    @Test(.needsServers, arguments: TestEngine.all) func unmatchedEntriesRefuseTheBatchUnlessAllowed(engine: TestEngine) throws {
        let (registry, path) = try DeviceRegistryTests().registry(on: engine)
        let selector = DeviceRegistry.Selector.devices([("u0", "d1"), ("u0", "1d"), ("nobody", "d9")])
        for dryRun in [true, false] {
            let refused = try registry.revoke(selector, reason: nil, now: now, dryRun: dryRun, allowing: .guardRails, collectOperations: false)
            #expect(!refused.applied && refused.refusals == [.unmatched(["u0#1d", "nobody#d9"])])
            #expect(refused.radius.unmatched.map(\.item) == [2, 3] && refused.radius.notFound == 2 && refused.radius.devices == 1)
            #expect(refused.radius.unmatched[0].userKnown && refused.radius.unmatched[0].closest.first == "d1")
            #expect(!refused.radius.unmatched[1].userKnown && refused.radius.unmatched[1].closest.isEmpty)
            #expect(try DeviceRegistryTests().active(path) == 12 && (try registry.log(batch: nil)).isEmpty)
        }
        let allowed = try registry.revoke(selector, reason: nil, now: now, dryRun: false, allowing: .unmatched, collectOperations: false)
        #expect(allowed.applied && allowed.radius.devices == 1 && allowed.radius.unmatched.count == 2)
        #expect(try DeviceRegistryTests().active(path) == 11)
    }

    @Test(.needsServers, arguments: TestEngine.all) func unmatchedKeysAndUsersAreNamed(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine)
        let keys = try registry.revoke(.signatureKeys([[0x00, 0x07], [0xde, 0xad]]), reason: nil, now: now, dryRun: true, allowing: [], collectOperations: false)
        #expect(keys.refusals == [.unmatched(["dead"])] && keys.radius.unmatched.map(\.item) == [2])
        let user = try registry.revoke(.user("did:plc:nobody"), reason: nil, now: now, dryRun: false, allowing: .guardRails, collectOperations: false)
        #expect(user.refusals == [.unmatched(["did:plc:nobody"])] && !user.applied)
    }

    /// Each guard rail has its own override; `.guardRails` (--force) is all of them.
    @Test(.needsServers, arguments: TestEngine.all) func eachGuardRailHasItsOwnOverride(engine: TestEngine) throws {
        let (registry, _) = try DeviceRegistryTests().registry(on: engine)
        // u0's two devices: u0 left without a device, c0 without an admin, 2 of 12 over 10%.
        let users = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: true, allowing: [.usersWithoutDevice, .largeBatch], collectOperations: false)
        #expect(users.refusals.map(\.kind) == ["wouldLeaveConversationsWithoutAdmin"])
        let conversations = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: true, allowing: [.conversationsWithoutAdmin, .largeBatch],
                                                collectOperations: false)
        #expect(conversations.refusals.map(\.kind) == ["wouldLeaveUsersWithoutDevice"])
        let large = try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: true, allowing: [.usersWithoutDevice, .conversationsWithoutAdmin],
                                        collectOperations: false)
        #expect(large.refusals.map(\.kind) == ["tooLarge"])
        #expect(try registry.revoke(.user("u0"), reason: nil, now: now, dryRun: false, allowing: .guardRails, collectOperations: false).applied)
    }

    @Test func distancesCountATranspositionAsOneStep() {
        var distance = EditDistance(from: "hotle", limit: 16)
        #expect(distance.to("hotel") == 1 && distance.to("hole") == 1 && distance.to("hotels") == 2)
        #expect(BIP39.check(typed: .text("hotle")) == .unknown(closest: ["hotel", "hole", "horse"]))
        #expect(BIP39.check(typed: .text("  HOTE ")) == .word("hotel"))
        #expect(EditDistance.closest(to: "ipda-1", among: ["mac-2", "ipad-1", "ipad-2"], count: 3) == ["ipad-1", "ipad-2"])
    }

    /// The share guard on seeded random registries, on both engines: a batch exactly at the
    /// limit goes through, one device more is refused before anything changes (the dry run
    /// and the real run alike), and an expected count lets it through only when it is exact,
    /// whatever else is overridden.
    @Test(.needsServers, arguments: TestEngine.all) func aBatchOverTheShareIsRefusedAtOneDevicePastIt(engine: TestEngine) throws {
        var generator = SeededGenerator(source: SeededRandom(seed: 37))
        for round in 0..<3 {
            let users = Int.random(in: 15...40, using: &generator), perUser = Int.random(in: 1...4, using: &generator)
            let (registry, _) = try DeviceRegistryTests().registry(on: engine, users: users, perUser: perUser)
            let active = users * perUser
            let limit = DeviceRegistry.Share(basisPoints: [250, 1000, 1275, 3333][round % 4])
            let most = limit.basisPoints * active / 10000
            let devices = (0..<active).map { ("u\($0 / perUser)", "d\($0)") }.shuffled(using: &generator)
            let over = DeviceRegistry.Selector.devices(Array(devices.prefix(most + 1)))
            for dryRun in [true, false] {
                let refused = try registry.revoke(over, reason: nil, now: now, dryRun: dryRun, allowing: [.usersWithoutDevice, .conversationsWithoutAdmin],
                                                  collectOperations: false, sizeLimit: .init(limit: limit))
                #expect(!refused.applied && refused.refusals == [.tooLarge(devices: most + 1, active: active, limit: limit)])
                #expect(try refused.radius.activeDevices == active && registry.batch(of: refused).count == most + 1)
            }
            for wrong in [most, most + 2, 0] {
                let refused = try registry.revoke(over, reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false,
                                                  sizeLimit: .init(limit: limit, expected: wrong))
                #expect(!refused.applied && refused.refusals == [.unexpectedCount(expected: wrong, devices: most + 1)])
            }
            #expect(try DeviceRegistryTests().active(registry) == active && (try registry.log(batch: nil)).isEmpty)
            let exact = try registry.revoke(.devices(Array(devices.prefix(most))), reason: nil, now: now, dryRun: false,
                                            allowing: [.usersWithoutDevice, .conversationsWithoutAdmin], collectOperations: false, sizeLimit: .init(limit: limit))
            #expect(exact.applied == (most > 0) && exact.refusals.isEmpty)
            #expect(Set(try registry.batch(of: exact).map(\.text)) == Set(devices.prefix(most).map { "\($0.0)#\($0.1)" }))
            #expect(try DeviceRegistryTests().active(registry) == active - most)
        }
    }

    @Test func sharesReadAndPrintAsPeopleWriteThem() {
        #expect(["10", "2.5", "0.01", "100", "0", "33.33", "007"].map { DeviceRegistry.Share(percent: $0)?.text } == ["10%", "2.5%", "0.01%", "100%", "0%", "33.33%", "7%"])
        for bad in ["", "10.", ".5", "100.01", "101", "-1", "1e1", "2.555", "10%", " 10", "١٠"] { #expect(DeviceRegistry.Share(percent: bad) == nil, "\(bad)") }
        // Rounded up, so a share just past a limit never reads as the limit itself.
        #expect(DeviceRegistry.Share(10001, of: 100000).text == "10.01%" && DeviceRegistry.Share(66473, of: 126473).text == "52.56%")
        #expect(!DeviceRegistry.Share.defaultLimit.isExceeded(by: 10, of: 100) && DeviceRegistry.Share.defaultLimit.isExceeded(by: 11, of: 100))
    }

    /// One rule for what the selectors can address: `USER_DID#DEVICE_ID` reads only as ids the
    /// registry may hold (which import enforces), and two such ids always read back as
    /// themselves, from the command line and from a list file's line.
    /// A log row's line in its batch's digest, written straight into a buffer, is the compact
    /// JSON array the chain has always hashed, whatever its values hold or lack: a chain recorded
    /// before still verifies.
    @Test func aLogRowsDigestLineIsItsJSONArray() {
        let columns = ["id", "batch_id", "revoked_at", "user_did", "device_id", "reason", "selector"]
        let rows: [[RegistryValue]] = [
            [.int(1), .text("b1"), .time("2026-11-22T10:00:00Z"), .text("did:plc:a"), .text("d1"), .text("lost"), .text("devices (1 listed)")],
            [.int(42), .text("q\"b\\"), .text("t\u{1}\n\t"), .text("é\u{202E}😀"), .text("\u{7F}"), .null, .text("")],
            [.text("7"), .int(5), .bytes([1, 2]), .bool(true), .null, .bytes([0x41]), .int(-3)],
            [.text("x"), .null, .null, .null, .null, .int(0), .null],
        ]
        for values in rows {
            let row = RegistryRow(columns: columns, values: values)
            var line: [UInt8] = []
            DeviceRegistry.rowLine(row, to: &line)
            let expected = JSONValue.array([.int(row.int("id")), .string(row.text("batch_id")), .string(row.text("revoked_at")), .string(row.text("user_did")),
                                            .string(row.text("device_id")), row.optionalText("reason").map(JSONValue.string) ?? .null,
                                            .string(row.text("selector"))]).serialized(pretty: false) + [0x0a]
            #expect(line == expected, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test func theSelectorAndImportShareOneRuleForIds() {
        var generator = SeededGenerator(source: SeededRandom(seed: 3737))
        let alphabet: [String] = ["a", "b", "#", " ", "\t", "\n", "\u{1b}", "\u{85}", "\u{a0}", "\u{200b}", "é", ":", "\u{7f}"]
        for _ in 0..<5000 {
            func id() -> String { (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined() }
            let user = id(), device = id()
            let reference = DeviceRegistry.deviceReference("\(user)#\(device)")
            let valid = DeviceRegistry.idProblem(user, as: .user) == nil && DeviceRegistry.idProblem(device, as: .device) == nil
            if let reference {
                #expect(DeviceRegistry.idProblem(reference.user, as: .user) == nil && DeviceRegistry.idProblem(reference.device, as: .device) == nil)
            }
            #expect((DeviceRegistry.deviceReferenceProblem("\(user)#\(device)") == nil) == (reference != nil))
            if valid {
                #expect(reference?.user == user && reference?.device == device)
                #expect(ListFile.entry(Array("\(user)#\(device)".utf8)[...]) == "\(user)#\(device)")
            }
        }
    }
}

/// A failure of the engine's C library is its own code (issue 39), never a file's `io`.
@Suite struct RegistryEngineFailureTests {
    func error(_ body: () throws -> Void) -> VaultError? {
        do { try body(); return nil } catch let error as VaultError { return error } catch { return nil }
    }

    /// A statement the database refuses: SQLite's `sqliteFailure`, PostgreSQL's
    /// `postgresFailure` with its SQLSTATE (42P01, no such table).
    @Test(.needsServers, arguments: TestEngine.all) func aRefusedStatementIsTheEnginesOwnCode(engine: TestEngine) throws {
        let registry = try DeviceRegistry(location: engine.newLocation(), access: .create)
        let failure = try #require(error { _ = try registry.read { try $0.strings("SELECT name FROM no_such_table") } })
        #expect(failure.code == (engine == .postgres ? .postgresFailure : .sqliteFailure) && failure.code.category == .operational, "\(failure)")
        if engine == .postgres { #expect(failure.reason.hasSuffix("(SQLSTATE 42P01)"), "\(failure.reason)") }
    }

    /// No server where the connection points (a closed port): libpq's refusal to connect.
    @Test func aClosedPortCannotBeConnectedTo() throws {
        let failure = try #require(error { _ = try DeviceRegistry(location: .postgres(connection: "postgresql://127.0.0.1:1/chat?user=nobody"), access: .readOnly) })
        // Named by what libpq reads of it, never the string as given (which may nest a password).
        #expect(failure.code == .cannotConnect && failure.reason.hasPrefix("cannot connect to the registry 'host=127.0.0.1 port=1 dbname=chat user=nobody': "), "\(failure)")
    }
}

extension DeviceRegistry {
    /// A revocation's batch, read whole from where the revocation left it: for the small
    /// registries of tests.
    func batch(of result: RevocationResult) throws -> [DeviceReference] {
        var devices: [DeviceReference] = []
        try forEachBatchDevice(of: result) { devices.append($0) }
        return devices
    }
}
