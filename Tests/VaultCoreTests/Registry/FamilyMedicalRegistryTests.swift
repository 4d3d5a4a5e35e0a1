import Foundation
import Testing
@testable import VaultCore
@testable import VaultRegistry

/// Family Medical's device table (seed 002, issue 47) served by the same rules as Catbird's, on
/// both engines: the schema remembered, UUIDs in any case, the guard rails, the log.
@Suite struct FamilyMedicalRegistryTests {
    let now = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

    /// User `k`'s id and device `k`'s id, as UUIDs in lower case.
    static func user(_ k: Int) -> String { String(format: "00000000-0000-4000-8000-%012x", 0xA000 + k) }
    static func device(_ k: Int) -> String { String(format: "00000000-0000-4000-8000-%012x", 0xD000 + k) }

    /// Users 0…users-1 with two devices each (device 2u named "iPhone", 2u+1 "iPad"); device K
    /// last seen on January K + 1, 2025. Ids are imported in upper case: the registry keeps them
    /// in lower case.
    func registry(on engine: TestEngine, users: Int = 5) throws -> DeviceRegistry {
        let registry = try DeviceRegistry(location: engine.newLocation(), access: .create, schema: .familyMedical)
        var lines = ""
        for user in 0..<users {
            for slot in 0..<2 {
                let device = user * 2 + slot
                lines += #"{"device_id": "\#(Self.device(device).uppercased())", "user_id": "\#(Self.user(user))", "device_name": "\#(slot == 0 ? "iPhone" : "iPad")", "device_type": "\#(slot == 0 ? "iPhone 15 Pro" : "iPad Air")", "first_seen_at": "2024-06-01T00:00:00Z", "last_seen_at": "2025-01-\#(String(format: "%02d", device + 1))T00:00:00Z"}"# + "\n"
            }
        }
        #expect(try registry.importRows(deviceLines: ("devices.jsonl", Array(lines.utf8)), memberLines: nil, now: now).devices == users * 2)
        return registry
    }

    func active(_ registry: DeviceRegistry) throws -> [String] {
        try registry.devices(matching: .init(state: .active)).map(\.deviceId)
    }

    func code(_ body: () throws -> Void) -> VaultError.Code? {
        do { try body(); return nil } catch let error as VaultError { return error.code } catch { return nil }
    }

    /// Ids are UUIDs in the one written form, kept in lower case, as Foundation reads them.
    @Test func anIdIsAUUIDInItsOneWrittenForm() {
        let id = "6F1C2B7E-0d4a-4C55-9E1B-2A7F3C9D8E01"
        #expect(DeviceTable.canonicalUUID(id) == "6f1c2b7e-0d4a-4c55-9e1b-2a7f3c9d8e01")
        #expect(DeviceTable.canonicalUUID(id) == UUID(uuidString: id)?.uuidString.lowercased())
        for text in ["{\(id)}", "urn:uuid:\(id)", id.replacingOccurrences(of: "-", with: ""), " \(id)", "\(id) ", "6G1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                     "6F1C2B7E+0D4A-4C55-9E1B-2A7F3C9D8E01", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E0\u{0661}", "", "did:plc:josh"] {
            #expect(DeviceTable.canonicalUUID(text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil || text.utf8.count != 36, "\(text)")
        }
    }

    @Test(.needsServers, arguments: TestEngine.all) func theSchemaIsRememberedAndWhatItLacksIsRefused(engine: TestEngine) throws {
        let registry = try registry(on: engine)
        #expect(registry.schema == .familyMedical)
        for access in [DeviceRegistry.Access.readOnly, .readWrite, .create] {
            #expect(try DeviceRegistry(location: registry.location, access: access).schema == .familyMedical)
        }
        #expect(code { _ = try DeviceRegistry(location: registry.location, access: .create, schema: .catbird) } == .registryHasAnotherSchema)
        #expect(code { _ = try registry.members(conversation: "c0") } == .notInSchema)
        #expect(code { _ = try registry.rejoinPlan(user: Self.user(0), device: Self.device(0)) } == .notInSchema)
        #expect(code { _ = try registry.revoke(.signatureKeys([[1]]), reason: nil, now: now, dryRun: true, allowing: .all, collectOperations: false) } == .notInSchema)
        #expect(code { _ = try registry.importRows(deviceLines: nil, memberLines: ("m", Array("{}\n".utf8)), now: now) } == .notInSchema)
        // A Catbird registry stays one.
        let catbird = try DeviceRegistry(location: engine.newLocation(), access: .create)
        #expect(catbird.schema == .catbird)
        #expect(code { _ = try DeviceRegistry(location: catbird.location, access: .create, schema: .familyMedical) } == .registryHasAnotherSchema)
        // A registry recording both schemas' migrations was changed by hand: refused, whatever the access.
        let migrations = engine == .postgres ? "registry_migrations (name)" : "grdb_migrations (identifier)"
        try catbird.transaction { db in
            try db.execute("INSERT INTO \(migrations) VALUES ('\(RegistryMigration.familyMedical)')")
            return ((), true)
        }
        for access in [DeviceRegistry.Access.readOnly, .readWrite, .create] {
            #expect(code { _ = try DeviceRegistry(location: catbird.location, access: access) } == .registryOfTwoSchemas)
        }
    }

    @Test(.needsServers, arguments: TestEngine.all) func importChecksEachRowAndNeverRevivesADevice(engine: TestEngine) throws {
        let registry = try registry(on: engine, users: 2)
        let line = { (fields: String) in Array("{\"device_id\": \"\(Self.device(9))\", \"user_id\": \"\(Self.user(9))\", \"device_name\": \"Mac\"\(fields)}\n".utf8) }
        func refusal(_ bytes: [UInt8], upsert: Bool = false) -> String? {
            do { _ = try registry.importRows(deviceLines: ("f.jsonl", bytes), memberLines: nil, now: now, upsert: upsert); return nil } catch let error as VaultError { return error.reason } catch { return "\(error)" }
        }
        let bad: [(String, String)] = [
            (#", "device_type": "x", "first_seen_at": "2025-01-02T00:00:00Z", "last_seen_at": "2025-01-01T00:00:00Z""#, "last_seen_at is before first_seen_at"),
            (#", "last_seen_at": "2027-01-01T00:00:00Z""#, "last_seen_at is in the future"),
        ]
        for (fields, message) in bad {
            #expect(refusal(line(fields))?.contains(message) == true, "\(message)")
        }
        #expect(refusal(Array(#"{"device_id": "d9", "user_id": "\#(Self.user(9))", "device_name": "Mac"}"#.utf8) + [0x0a])?.contains("device_id should be a UUID") == true)
        #expect(refusal(line("") + line(""))?.contains("line 2") == true)
        // The same device under another user: refused whether or not updating.
        let moved = Array(#"{"device_id": "\#(Self.device(0))", "user_id": "\#(Self.user(1))", "device_name": "x"}"#.utf8) + [0x0a]
        #expect(refusal(moved) != nil && refusal(moved, upsert: true)?.contains("under another user") == true)
        // Revoked, then imported again: it stays revoked; an active device's last seen never moves back.
        _ = try registry.revoke(.devices([(Self.user(0), Self.device(1).uppercased())]), reason: "lost", now: now, dryRun: false, allowing: .all, collectOperations: false)
        let again = Array(#"""
            {"device_id": "\#(Self.device(1))", "user_id": "\#(Self.user(0))", "device_name": "Renamed", "is_active": true}
            {"device_id": "\#(Self.device(0))", "user_id": "\#(Self.user(0))", "device_name": "Kitchen", "first_seen_at": "2024-06-01T00:00:00Z", "last_seen_at": "2024-07-01T00:00:00Z"}

            """#.utf8)
        _ = try registry.importRows(deviceLines: ("again.jsonl", again), memberLines: nil, now: now, upsert: true)
        let devices = try registry.devices(matching: .init(user: Self.user(0).uppercased()))
        #expect(devices.map(\.deviceName) == ["Kitchen", "iPad"])
        #expect(devices[1].isActive == false && devices[1].revocationReason == "lost" && devices[1].revokedAt == now)
        #expect(devices[0].lastSeenAt == Timestamp(rfc3339: "2025-01-01T00:00:00Z"))
    }

    @Test(.needsServers, arguments: TestEngine.all) func revokeHasEveryGuardRailOfCatbirds(engine: TestEngine) throws {
        let registry = try registry(on: engine)
        // Two of ten active devices, the whole of user 0: over the share, and a user left without a device.
        let refused = try registry.revoke(.user(Self.user(0).uppercased()), reason: nil, now: now, dryRun: false, allowing: [], collectOperations: false)
        #expect(!refused.applied && refused.refusals == [.tooLarge(devices: 2, active: 10, limit: .defaultLimit), .wouldLeaveUsersWithoutDevice([Self.user(0)])])
        #expect(try active(registry).count == 10 && (try registry.log(batch: nil)).isEmpty)
        // An unmatched device is refused before any change, with the user's closest devices.
        let unmatched = try registry.revoke(.devices([(Self.user(1), Self.device(2)), (Self.user(1), Self.device(7))]), reason: nil, now: now,
                                            dryRun: false, allowing: .guardRails, collectOperations: false)
        #expect(!unmatched.applied && unmatched.radius.unmatched.map(\.entry.reported) == ["\(Self.user(1))#\(Self.device(7))"])
        #expect(unmatched.radius.unmatched.first?.closest.isEmpty == false)
        // An id that is no UUID is refused as such, and never reaches the database.
        #expect(code { _ = try registry.revoke(.user("did:plc:josh"), reason: nil, now: now, dryRun: true, allowing: .all, collectOperations: false) } == .notARegistryID)
        // A dry run measures what the real run does, and writes nothing.
        let cutoff = DeviceRegistry.Selector.notSeenSince(Timestamp(rfc3339: "2025-01-05T12:00:00Z")!)
        let dry = try registry.revoke(cutoff, reason: "stale", now: now, dryRun: true, allowing: [], collectOperations: false, keepLastDevice: true,
                                      sizeLimit: .init(expected: 3))
        #expect(!dry.applied && dry.radius.devices == 3 && dry.radius.sparedLastDevices == 2 && dry.refusals.isEmpty)
        #expect(try active(registry).count == 10)
        // Devices 0–4 last seen before the 5th at noon: users 0 and 1 keep devices 1 and 3; user 2 has device 5.
        let real = try registry.revoke(cutoff, reason: "stale", now: now, dryRun: false, allowing: [], collectOperations: false, keepLastDevice: true,
                                       sizeLimit: .init(expected: 3), batchID: "TICKET-1", by: RegistryOperator(name: "support-ana"))
        #expect(try real.applied && registry.batch(of: real).map(\.device) == [Self.device(0), Self.device(2), Self.device(4)])
        #expect(try active(registry) == [1, 3, 5, 6, 7, 8, 9].map(Self.device))
        // The log has each device under the batch, and its chain names the operator.
        #expect(try registry.log(batch: "TICKET-1").map(\.deviceID) == [Self.device(0), Self.device(2), Self.device(4)])
        let chain = try registry.verifyChain()
        #expect(chain.batches.map(\.operatorName) == ["support-ana"])
        // The same run again finds nothing to do.
        let again = try registry.revoke(cutoff, reason: "stale", now: now, dryRun: false, allowing: [], collectOperations: false, keepLastDevice: true)
        #expect(!again.applied && again.radius.devices == 0 && again.radius.alreadyRevoked == 3)
        // The list shows when and why, from the log.
        let listed = try registry.devices(matching: .init(state: .revoked))
        #expect(listed.map(\.deviceId) == [0, 2, 4].map(Self.device) && listed.allSatisfy { $0.revokedAt == now && $0.revocationReason == "stale" })
    }

    /// A real run that spares no last device selects its batch by revoking it (PostgreSQL): what
    /// it counts as revoked before, and the users it leaves without a device, are what selecting
    /// first counts (SQLite), for a user and for a cutoff.
    @Test(.needsServers, arguments: TestEngine.all) func aRunRevokingAsItSelectsCountsWhatWasRevokedBefore(engine: TestEngine) throws {
        let registry = try registry(on: engine)
        _ = try registry.revoke(.devices([(Self.user(0), Self.device(1)), (Self.user(2), Self.device(4))]), reason: nil, now: now, dryRun: false,
                                allowing: .all, collectOperations: false)
        // User 0's devices: 0 active, 1 revoked before; user 0 is left without one.
        let user = try registry.revoke(.user(Self.user(0)), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(user.applied && user.radius.devices == 1 && user.radius.alreadyRevoked == 1 && user.radius.notFound == 0)
        #expect(user.radius.usersLeftWithoutDevice == [Self.user(0)] && user.radius.activeDevices == 8)
        // Last seen before noon on January 5: devices 0–4, of which 0, 1 and 4 were revoked
        // before; 2 and 3 are both of user 1's, who is left without one.
        let cutoff = try registry.revoke(.notSeenSince(Timestamp(rfc3339: "2025-01-05T12:00:00Z")!), reason: nil, now: now, dryRun: false,
                                         allowing: .all, collectOperations: false)
        #expect(try cutoff.applied && registry.batch(of: cutoff).map(\.device) == [Self.device(2), Self.device(3)])
        #expect(cutoff.radius.alreadyRevoked == 3 && cutoff.radius.usersLeftWithoutDevice == [Self.user(1)] && cutoff.radius.users == 1)
        // Nothing left to revoke: every device it names was revoked before.
        let again = try registry.revoke(.user(Self.user(1)), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(!again.applied && again.radius.devices == 0 && again.radius.alreadyRevoked == 2 && again.radius.notFound == 0)
        #expect(try registry.verifyChain().batches.count == 3)
    }

    @Test(.needsServers, arguments: TestEngine.all) func aDeviceIsFoundByItsName(engine: TestEngine) throws {
        let registry = try registry(on: engine)
        #expect(try registry.devices(named: "iPad", user: Self.user(3)).map(\.device) == [Self.device(7)])
        #expect(try registry.devices(named: "IPAD", user: Self.user(3).uppercased()).map(\.device) == [Self.device(7)])
        #expect(code { _ = try registry.devices(named: "Watch", user: Self.user(3)) } == .noDeviceNamed)
        #expect(code { _ = try registry.devices(named: "iPad", user: Self.user(42)) } == .noDeviceNamed)
        // The iPad revoked, then set up again under the same name (seed 002's re-setup): the
        // name is refused with both, so the same revoke run again cannot take the new device.
        _ = try registry.revoke(.devices([(Self.user(3), Self.device(7))]), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(try registry.devices(named: "iPad", user: Self.user(3)).map(\.device) == [Self.device(7)])
        let again = Array(#"{"device_id": "\#(Self.device(99))", "user_id": "\#(Self.user(3))", "device_name": "iPad", "last_seen_at": "2025-03-01T00:00:00Z", "first_seen_at": "2025-02-01T00:00:00Z"}"#.utf8) + [0x0a]
        _ = try registry.importRows(deviceLines: ("again.jsonl", again), memberLines: nil, now: now)
        do {
            _ = try registry.devices(named: "iPad", user: Self.user(3))
            Issue.record("a name an active and a revoked device share was taken")
        } catch let error as VaultError {
            #expect(error.code == .ambiguousRegistryDevice)
            #expect(error.reason.contains("\(Self.device(7)) (revoked") && error.reason.contains("\(Self.device(99)) (active, last seen 2025-03-01T00:00:00Z)"))
        }
        // Both revoked: the name is both, and a revoke of it finds nothing to do.
        _ = try registry.revoke(.devices([(Self.user(3), Self.device(99))]), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        let both = try registry.devices(named: "ipad", user: Self.user(3))
        #expect(both.map(\.device).sorted() == [Self.device(7), Self.device(99)].sorted())
        let result = try registry.revoke(.devices(both.map { ($0.user, $0.device) }), reason: nil, now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(!result.applied && result.radius.alreadyRevoked == 2)
    }

    @Test(.needsServers, arguments: TestEngine.all) func theLogFindsARevokedDeviceMadeActiveUnderAnotherUser(engine: TestEngine) throws {
        let registry = try registry(on: engine)
        _ = try registry.revoke(.devices([(Self.user(0), Self.device(1))]), reason: "stolen", now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(try registry.verifyChain().batches.count == 1)
        #expect(code { _ = try registry.operations(batch: registry.log(batch: nil)[0].batchID) } == .notInSchema)
        // Behind the tool's back: the stolen device, moved to another user and active again.
        let uuid = engine == .postgres ? "::uuid" : ""
        try registry.transaction { db in
            try db.execute("UPDATE user_devices SET user_id = '\(Self.user(4))'\(uuid), is_active = TRUE WHERE device_id = '\(Self.device(1))'\(uuid)")
            return ((), true)
        }
        #expect(code { _ = try registry.verifyChain() } == .registryChainBroken)
    }

    @Test(.needsServers, arguments: TestEngine.all) func anUpdateKeepsWhatTheRowLeavesOutAndNeverRevokes(engine: TestEngine) throws {
        let registry = try registry(on: engine, users: 1)
        let rename = Array(#"{"device_id": "\#(Self.device(0))", "user_id": "\#(Self.user(0))", "device_name": "Kitchen"}"#.utf8) + [0x0a]
        _ = try registry.importRows(deviceLines: ("rename.jsonl", rename), memberLines: nil, now: now, upsert: true)
        let device = try registry.devices(matching: .init()).first { $0.deviceId == Self.device(0) }
        #expect(device?.deviceName == "Kitchen" && device?.lastSeenAt == Timestamp(rfc3339: "2025-01-01T00:00:00Z"))
        let off = Array(#"{"device_id": "\#(Self.device(0))", "user_id": "\#(Self.user(0))", "device_name": "Kitchen", "is_active": false}"#.utf8) + [0x0a]
        #expect(code { _ = try registry.importRows(deviceLines: ("off.jsonl", off), memberLines: nil, now: now, upsert: true) } == .malformedDocument)
        #expect(try active(registry).count == 2)
        let blank = Array(#"{"device_id": "\#(Self.device(9))", "user_id": "\#(Self.user(0))", "device_name": "  "}"#.utf8) + [0x0a]
        #expect(code { _ = try registry.importRows(deviceLines: ("blank.jsonl", blank), memberLines: nil, now: now) } == .malformedDocument)
        // A row with only its last sighting was first seen then, not at the import.
        let seen = Array(#"{"device_id": "\#(Self.device(8))", "user_id": "\#(Self.user(0))", "device_name": "Mac", "last_seen_at": "2025-05-05T00:00:00Z"}"#.utf8) + [0x0a]
        _ = try registry.importRows(deviceLines: ("seen.jsonl", seen), memberLines: nil, now: now)
        let mac = try registry.devices(matching: .init()).first { $0.deviceId == Self.device(8) }
        #expect(mac?.registeredAt == Timestamp(rfc3339: "2025-05-05T00:00:00Z") && mac?.lastSeenAt == mac?.registeredAt)
    }
}

/// On PostgreSQL, a database where the app already made seed 002's table (with its reference to
/// `user_profiles`) gains only the indexes and the log; a table of another shape is refused.
@Suite struct FamilyMedicalOnTheAppsDatabaseTests {
    @Test(.needsServers) func theAppsOwnTableGainsOnlyWhatRevocationNeeds() throws {
        guard case .postgres(let connection) = try TestEngine.postgres.newLocation() else { Issue.record("not PostgreSQL"); return }
        let app = try PostgresClient(connection: connection)
        try app.execute("""
            CREATE TABLE user_profiles (user_id UUID PRIMARY KEY);
            CREATE TABLE user_devices (
                device_id UUID PRIMARY KEY,
                user_id UUID NOT NULL REFERENCES user_profiles(user_id),
                device_name TEXT NOT NULL,
                device_type TEXT,
                first_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
                last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
                is_active BOOLEAN NOT NULL DEFAULT TRUE
            );
            INSERT INTO user_profiles VALUES ('00000000-0000-4000-8000-00000000a000');
            INSERT INTO user_devices (device_id, user_id, device_name) VALUES
                ('00000000-0000-4000-8000-00000000d000', '00000000-0000-4000-8000-00000000a000', 'iPhone'),
                ('00000000-0000-4000-8000-00000000d001', '00000000-0000-4000-8000-00000000a000', 'iPad');
            """)
        let registry = try DeviceRegistry(location: .postgres(connection: connection), access: .create, schema: .familyMedical)
        let now = Timestamp(seconds: Int64(Date().timeIntervalSince1970) + 60)
        let result = try registry.revoke(.devices([("00000000-0000-4000-8000-00000000A000", "00000000-0000-4000-8000-00000000D001")]), reason: "lost",
                                         now: now, dryRun: false, allowing: .all, collectOperations: false)
        #expect(result.applied && result.radius.devices == 1)
        let columns = try app.query("SELECT count(*) FROM information_schema.columns WHERE table_name = 'user_devices'", []).rows
        #expect(columns == [[.int(7)]])
        // The app's reference still holds: a device of a user with no profile cannot be imported.
        let stranger = Array(#"{"device_id": "00000000-0000-4000-8000-00000000d009", "user_id": "00000000-0000-4000-8000-00000000a009", "device_name": "x"}"#.utf8) + [0x0a]
        #expect(throws: VaultError.self) { _ = try registry.importRows(deviceLines: ("f", stranger), memberLines: nil, now: now) }

        guard case .postgres(let other) = try TestEngine.postgres.newLocation() else { return }
        try PostgresClient(connection: other).execute("CREATE TABLE user_devices (device_id TEXT PRIMARY KEY, user_id TEXT, device_name TEXT)")
        do {
            _ = try DeviceRegistry(location: .postgres(connection: other), access: .create, schema: .familyMedical)
            Issue.record("a table of another shape became a registry")
        } catch let error as VaultError {
            #expect(error.code == .incompatibleRegistry && error.reason.contains("user_devices.device_id is text, not uuid"))
        }
    }
}
