import Testing
@testable import VaultCore

/// The signed household log (issue 46, docs/vault-format.md §10): every change a Nostr event
/// signed by whoever made it; `verified` names the first bad event of every tampering.
@Suite struct HouseholdLogTests {
    let random = SeededRandom(seed: 0x0046)

    struct Household3 {
        let parent: SecretKey
        let household: HouseholdID
        var vault: [UInt8]
        var log: HouseholdLog
        var revision = 1
    }

    func started() throws -> Household3 {
        let parent = try SecretKey.generate(using: random)
        let household = Household(parentPublicKey: parent.publicKey).id
        let vault = random.bytes(200)
        let log = try HouseholdLog(events: []).appending(.init(.start, summary: "started"), household: household, vault: vault, revision: 1,
                                                         signer: parent, at: Timestamp(seconds: 1_800_000_000))
        return Household3(parent: parent, household: household, vault: vault, log: log)
    }

    /// A change by `signer`: new vault bytes and their event.
    func change(_ house: inout Household3, by signer: SecretKey, _ action: LogAction = .revoke, at seconds: Int64 = 1_800_000_100) throws {
        house.vault = random.bytes(200)
        house.revision += 1
        // What each action's event names (a revocation its devices, a device change its kind).
        let details: [[String]] = action == .revoke ? [["device", "D\(house.revision)"]] : action == .device ? [["change", "rename"], ["device", "D\(house.revision)"]] : []
        house.log = try house.log.appendingUnverified(.init(action, summary: "\(action)", details: details), household: house.household, vault: house.vault,
                                            revision: house.revision, signer: signer, at: Timestamp(seconds: seconds))
    }

    func grant(_ house: inout Household3, to key: SecretKey, _ actions: [LogAction] = [.revoke], until: Int64 = 1_900_000_000, at seconds: Int64 = 1_800_000_050) throws {
        house.log = try house.log.appendingUnverified(
            .init(.grant, summary: "granted", details: [["p", key.publicKey.hex], ["allow"] + actions.map(\.rawValue), ["until", String(until)]]),
            household: house.household, vault: house.vault, revision: house.revision, signer: house.parent, at: Timestamp(seconds: seconds))
    }

    /// The line of the first bad event a tampered log is refused at.
    func brokenLine(_ log: HouseholdLog, _ house: Household3, vault: [UInt8]? = nil) -> Int? {
        do {
            _ = try log.verified(household: house.household, vault: vault ?? house.vault)
            return nil
        } catch let error as VaultError {
            guard let range = error.reason.range(of: "at event ") else { return -1 }
            return Int(error.reason[range.upperBound...].prefix { $0.isNumber })
        } catch { return -1 }
    }

    @Test func aLogOfParentAndGrantedSupportVerifiesAndReadsBackByteForByte() throws {
        var house = try started()
        let support = try SecretKey.generate(using: random)
        try grant(&house, to: support)
        try change(&house, by: support)
        try change(&house, by: house.parent)
        let verified = try house.log.verified(household: house.household, vault: house.vault)
        #expect(verified.entries.map(\.action) == [.start, .grant, .revoke, .revoke])
        #expect(verified.entries[2].signer == .support(grant: house.log.events[1].idHex))
        #expect(verified.entries[3].signer == .parent)
        #expect(try HouseholdLog(parsing: house.log.bytes) == house.log)
    }

    @Test func everyEditOfAnEventIsFoundAtThatEvent() throws {
        var house = try started()
        for _ in 0..<4 { try change(&house, by: house.parent) }
        let lines = house.log.bytes.split(separator: 0x0a).map { String(decoding: $0, as: UTF8.self) }
        for (index, line) in lines.enumerated() {
            for (from, to) in [("\"content\":\"", "\"content\":\"x"), ("\"created_at\":18", "\"created_at\":17"), ("\"revoke\"", "\"merge\""), ("\"start\"", "\"seal\"")] {
                guard line.contains(from) else { continue }
                var edited = lines
                edited[index] = line.replacingOccurrences(of: from, with: to)
                let log = try HouseholdLog(parsing: Array((edited.joined(separator: "\n") + "\n").utf8))
                #expect(brokenLine(log, house) == index + 1, "\(from) at \(index + 1)")
            }
        }
    }

    @Test func reorderedCutForkedOrForeignLogsAreFoundAtTheirFirstBadEvent() throws {
        var house = try started()
        for _ in 0..<3 { try change(&house, by: house.parent) }
        let events = house.log.events
        // Two events swapped.
        #expect(brokenLine(HouseholdLog(events: [events[0], events[2], events[1], events[3]]), house) == 2)
        // The start cut off.
        #expect(brokenLine(HouseholdLog(events: Array(events.dropFirst())), house) == 1)
        // An event cut from the middle.
        #expect(brokenLine(HouseholdLog(events: [events[0], events[1], events[3]]), house) == 3)
        // The last event cut: the vault is not the head's (nor the one before's: that is a run cut off).
        #expect(brokenLine(HouseholdLog(events: Array(events.dropLast(2))), house) == 2)
        // A fork: a second event after the same predecessor.
        var fork = house
        fork.log = HouseholdLog(events: Array(events.prefix(2)))
        try change(&fork, by: house.parent)
        #expect(brokenLine(HouseholdLog(events: events + [fork.log.events[2]]), fork) == 5)
        // Another household's log.
        let other = try started()
        #expect(brokenLine(other.log, house, vault: other.vault) == 1)
        // A vault changed without its event.
        #expect(brokenLine(house.log, house, vault: random.bytes(200)) == 4)
    }

    @Test func onlyKeysAGrantAllowsMaySignAndOnlyUntilItEndsOrIsWithdrawn() throws {
        var house = try started()
        let support = try SecretKey.generate(using: random), stranger = try SecretKey.generate(using: random)
        // Not granted at all.
        var ungranted = house
        try change(&ungranted, by: stranger)
        #expect(brokenLine(ungranted.log, ungranted) == 2)
        try grant(&house, to: support, [.revoke], until: 1_800_000_500)
        // An action the grant does not allow.
        var merged = house
        try change(&merged, by: support, .merge)
        #expect(brokenLine(merged.log, merged) == 3)
        // A grant a support key signs, or a start after the first event: the parent's only.
        var selfGranted = house
        try grant(&selfGranted, to: stranger)
        selfGranted.log = try HouseholdLog(events: Array(selfGranted.log.events.dropLast())).appendingUnverified(
            .init(.grant, summary: "", details: [["p", stranger.publicKey.hex], ["allow", "revoke"], ["until", "1900000000"]]),
            household: house.household, vault: house.vault, revision: house.revision, signer: support, at: Timestamp(seconds: 1_800_000_060))
        #expect(brokenLine(selfGranted.log, selfGranted) == 3)
        // After the grant ends.
        var late = house
        try change(&late, by: support, at: 1_800_000_600)
        #expect(brokenLine(late.log, late) == 3)
        // After it is withdrawn.
        var withdrawn = house
        withdrawn.log = try withdrawn.log.appendingUnverified(.init(.withdraw, summary: "", details: [["e", house.log.events[1].idHex]]), household: house.household,
                                                    vault: house.vault, revision: house.revision, signer: house.parent, at: Timestamp(seconds: 1_800_000_070))
        try change(&withdrawn, by: support)
        #expect(brokenLine(withdrawn.log, withdrawn) == 4)
        // Within the grant: allowed.
        try change(&house, by: support)
        #expect(brokenLine(house.log, house) == nil)
        #expect(throws: VaultError(.signerNotAllowed, "")) {
            try house.log.verified(household: house.household, vault: house.vault).authorize(support.publicKey, .revoke, at: 1_800_000_600)
        }
    }

    /// A run cut off between publishing the log and the vault leaves the log one event ahead:
    /// verify says so (exit 3), and the next change gives that event up and goes on.
    @Test func aLogAheadOfItsVaultIsNamedAndMendedByTheNextChange() throws {
        var house = try started()
        let before = house.vault
        try change(&house, by: house.parent)
        #expect(throws: VaultError(.logAheadOfVault, "")) { try house.log.verified(household: house.household, vault: before) }
        let ready = try house.log.readyForChange(household: house.household, vault: before, signer: house.parent.publicKey, action: .revoke,
                                                 at: Timestamp(seconds: 1_800_000_200))
        #expect(ready.log.events.count == 1 && ready.signer == .parent && ready.dropped == house.log.events[1])
        // Someone else cannot undo that change by putting the earlier vault back.
        let support = try SecretKey.generate(using: random)
        var granted = try started()
        try grant(&granted, to: support)
        let beforeRevocation = granted.vault
        try change(&granted, by: granted.parent)
        #expect(throws: VaultError(.logAheadOfVault, "")) {
            try granted.log.readyForChange(household: granted.household, vault: beforeRevocation, signer: support.publicKey, action: .revoke,
                                           at: Timestamp(seconds: 1_800_000_200))
        }
    }

    /// A change names the vault it made: one naming the vault the event before it names changed
    /// nothing, and holds only when it gives an event up and names no device (a trial: a support
    /// key's own `revoke` that repeated the vault, its device still active, verified and was
    /// shown as "revoked 1 device").
    @Test func aChangeNamingTheVaultBeforeItChangedNothing() throws {
        var house = try started()
        let support = try SecretKey.generate(using: random)
        try grant(&house, to: support)
        let someEvent = String(repeating: "ab", count: 32)
        let forgeries: [(SecretKey, LogAction, [[String]])] = [
            (support, .revoke, [["device", "D1"]]), (house.parent, .revoke, [["device", "D1"]]), (support, .revoke, [["dropped", someEvent], ["device", "D1"]]),
            (support, .revoke, []), (house.parent, .device, [["change", "rename"], ["device", "D1"]]), (house.parent, .device, [["change", "limit"]]),
            (house.parent, .merge, []), (house.parent, .seal, []),
        ]
        for (signer, action, details) in forgeries {
            let forged = try house.log.appendingUnverified(.init(action, summary: "\(action)", details: details), household: house.household, vault: house.vault,
                                                           revision: house.revision, signer: signer, at: Timestamp(seconds: 1_800_000_100))
            #expect(brokenLine(forged, house) == 3, "\(action) \(details)")
        }
        // Given up (a run cut off, made again with nothing left to do), naming no device: it holds.
        for action in [LogAction.revoke, .device] {
            let givenUp = try house.log.appendingUnverified(.init(action, summary: "gave up", details: [["dropped", someEvent]] + (action == .device ? [["change", "rename"]] : [])),
                                                            household: house.household, vault: house.vault, revision: house.revision, signer: support,
                                                            at: Timestamp(seconds: 1_800_000_100))
            #expect(brokenLine(givenUp, house) == (action == .revoke ? nil : 3))  // the grant allows revoke only
        }
    }

    /// A writer never leaves a log that does not verify: a grant ending before the time its
    /// event bears, an event after the household moved, a signer the log does not allow.
    @Test func appendingRefusesAnEventThatWouldNotVerify() throws {
        var house = try started()
        let support = try SecretKey.generate(using: random)
        #expect(throws: VaultError(.signerNotAllowed, "")) {
            try house.log.appending(.init(.grant, summary: "", details: [["p", support.publicKey.hex], ["allow", "revoke"], ["until", "1700000000"]]),
                                    household: house.household, vault: house.vault, revision: 1, signer: house.parent, at: Timestamp(seconds: 1_800_000_010))
        }
        #expect(throws: VaultError(.signerNotAllowed, "")) {
            try house.log.appending(.init(.revoke, summary: ""), household: house.household, vault: random.bytes(9), revision: 2, signer: support,
                                    at: Timestamp(seconds: 1_800_000_010))
        }
        try change(&house, by: house.parent, .rotate)
        #expect(throws: VaultError(.signerNotAllowed, "")) {
            try house.log.appending(.init(.grant, summary: "", details: [["p", support.publicKey.hex], ["allow", "revoke"], ["until", "1900000000"]]),
                                    household: house.household, vault: house.vault, revision: house.revision, signer: house.parent, at: Timestamp(seconds: 1_800_000_200))
        }
    }

    /// A support key is held to the clock too: a `--now` in the past does not revive its grant.
    @Test func aGrantThatRanOutStaysOutWhateverTimeIsGiven() throws {
        var house = try started()
        let support = try SecretKey.generate(using: random)
        try grant(&house, to: support, until: 1_800_000_500)
        #expect(throws: VaultError(.signerNotAllowed, "")) {
            try house.log.readyForChange(household: house.household, vault: house.vault, signer: support.publicKey, action: .revoke,
                                         at: Timestamp(seconds: 1_800_000_100), clock: Timestamp(seconds: 1_800_000_900))
        }
        #expect(try house.log.readyForChange(household: house.household, vault: house.vault, signer: support.publicKey, action: .revoke,
                                             at: Timestamp(seconds: 1_800_000_100), clock: Timestamp(seconds: 1_800_000_200)).signer != .parent)
    }

    @Test func onlyTheWayTheSuiteWritesAnEventIsRead() throws {
        let house = try started()
        let line = String(decoding: house.log.bytes.dropLast(), as: UTF8.self)
        for variant in [line + "\r", "\u{FEFF}" + line, line.replacingOccurrences(of: ",", with: ", "), line.replacingOccurrences(of: "started", with: "\\u0073tarted"),
                        "", line + "\n"] {
            #expect(throws: VaultError(.logBroken, "")) { try HouseholdLog(parsing: Array((variant + "\n" + line + "\n").utf8)) }
        }
    }

    @Test func aLineThatIsNotAnEventIsBrokenAtItsLine() throws {
        let house = try started()
        for junk in ["{}", "not json", "{\"id\":1}", String(decoding: house.log.bytes.dropLast(), as: UTF8.self) + ",\"x\":1}"] {
            #expect(throws: VaultError(.logBroken, "")) { try HouseholdLog(parsing: house.log.bytes + Array((junk + "\n").utf8)) }
        }
    }

    /// A household that moved stays moved: its old key cannot give up the rotation by putting
    /// the vault from before it back and making another change (a hostile trial did, through
    /// `--log` of the old log).
    @Test func theRotationIsNeverGivenUp() throws {
        var house = try started()
        let before = house.vault
        try change(&house, by: house.parent, .rotate)
        for action in LogAction.allCases {
            #expect(throws: VaultError(.signerNotAllowed, "")) {
                try house.log.readyForChange(household: house.household, vault: before, signer: house.parent.publicKey, action: action,
                                             at: Timestamp(seconds: 1_800_000_200))
            }
        }
    }

    /// The last line of a log ends in a newline, as every event written does.
    @Test func aLastLineWithoutItsNewlineIsBroken() throws {
        let house = try started()
        #expect(throws: VaultError(.logBroken, "")) { try HouseholdLog(parsing: Array(house.log.bytes.dropLast())) }
        #expect(try HouseholdLog(parsing: house.log.bytes) == house.log)
    }

    /// No event records a key, words or a share, nor a secret this run holds, in any tag or its
    /// sentence, in any spelling; people's text is bounded.
    @Test func noEventRecordsASecret() throws {
        let house = try started()
        let parentHex = String(decoding: try house.parent.hex().withUnsafeBytes { Array($0) }, as: UTF8.self)
        house.parent.withUnsafeBytes { HeldSecrets.register($0, pinned: true) }
        let nsec = String(decoding: try house.parent.nsec().withUnsafeBytes { Array($0) }, as: UTF8.self)
        let words = Array(repeating: "abandon", count: 11).joined(separator: " ") + " about"
        let secrets = [nsec, nsec.uppercased(), "export NSEC=\(nsec)", parentHex, "0x" + parentHex, parentHex.uppercased(), "id " + parentHex + " x", words]
        // A grant names the vault before it; any other change the vault it made.
        func append(_ change: HouseholdLog.Change) throws {
            _ = try house.log.appending(change, household: house.household, vault: change.action == .grant ? house.vault : house.vault + [1], revision: 1,
                                        signer: house.parent, at: Timestamp(seconds: 1_800_000_010))
        }
        for secret in secrets {
            #expect(throws: VaultError(.secretInRecord, "")) { try append(.init(.revoke, summary: "ok", reason: secret)) }
            #expect(throws: VaultError(.secretInRecord, "")) { try append(.init(.revoke, summary: secret)) }
            #expect(throws: VaultError(.secretInRecord, "")) {
                try append(.init(.grant, summary: "", details: [["p", Hex.encode(random.bytes(32))], ["allow", "revoke"], ["until", "1900000000"], ["label", secret]]))
            }
        }
        // A key held is refused even where a key belongs (a grant's public key), in any case.
        for held in [parentHex, parentHex.uppercased()] {
            #expect(throws: VaultError(.secretInRecord, "")) {
                try append(.init(.grant, summary: "", details: [["p", held], ["allow", "revoke"], ["until", "1900000000"]]))
            }
        }
        #expect(throws: VaultError(.recordedTextTooLong, "")) { try append(.init(.revoke, summary: "ok", reason: String(repeating: "x", count: 1_001))) }
        // Public text passes: a public key where one belongs, a reason in words.
        try append(.init(.revoke, summary: "revoked Kitchen iPad", reason: "lost on the train", details: [["device", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01"]]))
    }

    /// A change run again after it finished is the change done only when the event there says
    /// the same change of the same vault: every tag but the new vault's digest, and never a
    /// log's first event (a trial: another reason, another vault migrated, was taken for it).
    @Test func aChangeDoneIsTheSameEventOfTheSameVaultNeverALogsFirst() throws {
        let house = try started()
        func revoked(reason: String, at seconds: Int64) throws -> (log: HouseholdLog, vault: [UInt8]) {
            let vault = random.bytes(200)
            return (try house.log.appendingUnverified(.init(.revoke, summary: "revoked Kitchen iPad", reason: reason, details: [["device", "D2"]]),
                                                      household: house.household, vault: vault, revision: 2, signer: house.parent, at: Timestamp(seconds: seconds)), vault)
        }
        let done = try revoked(reason: "lost", at: 1_800_000_100)
        // The same change made again later, sealed again (other bytes): done.
        #expect(try revoked(reason: "lost", at: 1_800_000_900).log.recordsSameChangeDone(done.log.bytes, vaultThere: done.vault))
        // Another reason is another change; the vault there must be the one the event names.
        #expect(try !revoked(reason: "stolen", at: 1_800_000_100).log.recordsSameChangeDone(done.log.bytes, vaultThere: done.vault))
        #expect(try !revoked(reason: "lost", at: 1_800_000_900).log.recordsSameChangeDone(done.log.bytes, vaultThere: random.bytes(200)))
        // A log's first event has no earlier one to say what it changed: never a change done.
        let again = try HouseholdLog(events: []).appending(.init(.start, summary: "started"), household: house.household, vault: house.vault, revision: 1,
                                                           signer: house.parent, at: Timestamp(seconds: 1_800_000_500))
        #expect(!again.recordsSameChangeDone(house.log.bytes, vaultThere: house.vault))
    }

    /// A log is replaced only by one that keeps all of it: another household's, another life
    /// of this one, or a file that is not a log is never replaced; a last event of the same
    /// signer whose vault was never written (a run cut off) may be.
    @Test func aLogIsReplacedOnlyByOneThatKeepsIt() throws {
        var house = try started()
        let other = try started()
        var grown = house
        try change(&grown, by: house.parent)
        #expect(grown.log.mayReplace(house.log.bytes, vaultThere: house.vault))
        #expect(grown.log.mayReplace(house.log.bytes, vaultThere: nil))
        #expect(!grown.log.mayReplace(other.log.bytes, vaultThere: nil))
        #expect(!grown.log.mayReplace(Array("not a log\n".utf8), vaultThere: nil))
        #expect(!house.log.mayReplace(grown.log.bytes, vaultThere: grown.vault))
        // A change cut off (its event written, its vault not), run again: the new event replaces it.
        var cutOff = house
        try change(&cutOff, by: house.parent)
        #expect(grown.log.mayReplace(cutOff.log.bytes, vaultThere: house.vault))
        // Another change of the same signer's, whose vault went elsewhere, is not given up.
        var elsewhere = house
        elsewhere.log = try house.log.appendingUnverified(.init(.revoke, summary: "revoked another device"), household: house.household,
                                                          vault: random.bytes(200), revision: 2, signer: house.parent, at: Timestamp(seconds: 1_800_000_100))
        #expect(!grown.log.mayReplace(elsewhere.log.bytes, vaultThere: nil))
        // Nor a rotation, whatever comes after the history both share.
        var rotated = house
        try change(&rotated, by: house.parent, .rotate)
        #expect(!grown.log.mayReplace(rotated.log.bytes, vaultThere: nil))
        // Not someone else's: a support key's change is not replaced by the parent's.
        let support = try SecretKey.generate(using: random)
        try grant(&house, to: support)
        var bySupport = house
        try change(&bySupport, by: support)
        var byParent = house
        try change(&byParent, by: house.parent)
        #expect(!byParent.log.mayReplace(bySupport.log.bytes, vaultThere: house.vault))
    }
}
