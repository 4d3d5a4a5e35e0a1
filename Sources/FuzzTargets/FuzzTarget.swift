import FoundationEssentials
import VaultCore
import VaultFleet
import VaultImaging
import VaultPaper
import VaultRegistry

/// The fuzz targets: every parser that reads bytes a user or an attacker chose.
///
/// Each target takes arbitrary bytes. It must not crash, hang or leak, and whatever it accepts
/// must also pass the target's own checks (mostly: written back out, it reads back the same).
/// A broken check stops the process with the input's target and reason, which libFuzzer saves
/// as a crash. `vault-fuzz` runs them under libFuzzer; the tests replay the committed corpus
/// and every past crash through the same functions (Fuzz/README.md).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Vault envelope header, and the document JSON inside it.
    case vault
    /// NIP-19 keys (`nsec1…`, `npub1…`) and hex key files.
    case nip19
    /// BIP-39 words, as a person types them, and Standard SeedQR digits.
    case bip39
    /// Rotation plans, including the fields behind the planId check.
    case plan
    /// `vault-tool migrate --manifest` JSON Lines.
    case manifest
    /// `device-revoker registry import` JSON Lines, devices and members.
    case `import`
    /// PNG and JPEG decoding, then the QR scan.
    case qr
    /// Recovery-code blobs, device links and pairing codes.
    case codes

    /// Runs one input; true when some parser of the target accepted it (the tests use that to
    /// keep the seed corpus meaningful).
    @discardableResult
    public func run(_ data: [UInt8]) -> Bool {
        switch self {
        case .vault: Self.vault(data)
        case .nip19: Self.nip19(data)
        case .bip39: Self.bip39(data)
        case .plan: Self.plan(data)
        case .manifest: Self.manifest(data)
        case .import: Self.importLines(data)
        case .qr: Self.qr(data)
        case .codes: Self.codes(data)
        }
    }

    /// A fixed clock, so a run depends on its input only.
    static let now = Timestamp(seconds: 1_790_000_000)

    /// The key of no household, made once: the AEAD must refuse it; nothing else may happen.
    static let stranger = VaultAccess.vaultKey(mustSucceed("making a key") {
        try VaultKey(secret: SecretBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 7) })
    })

    private static func vault(_ data: [UInt8]) -> Bool {
        var accepted = false
        if let envelope = try? VaultEnvelope(parsing: data) {
            require(envelope.bytes == data, "an accepted envelope is not written back byte for byte")
            require((try? Vault.open(data, with: stranger)) == nil, "a vault opened with the wrong key")
            accepted = true
        }
        if let document = try? VaultDocument(json: data) {
            let again = mustSucceed("re-reading a written document") { try VaultDocument(json: document.json()) }
            require(again == document, "a document changed when written and read back")
            accepted = true
        }
        return accepted
    }

    private static func nip19(_ data: [UInt8]) -> Bool {
        var accepted = false
        let trimmed = String(decoding: data, as: UTF8.self).trimmingWhiteSpace(), text = trimmed.lowercased()
        if let key = try? SecretKey(parsing: data.withUnsafeBytes { try SecretBytes(copying: $0) }, what: "the key") {
            let bytes = mustSucceed("writing an accepted key") { try (text.hasPrefix("nsec1") ? key.nsec() : key.hex()).withUnsafeBytes { Array($0) } }
            require(String(decoding: bytes, as: UTF8.self) == text, "an accepted secret key is not written back as read")
            accepted = true
        }
        if let key = try? PublicKey(npub: trimmed) {
            require(key.npub == text, "an accepted npub is not written back as read")
            accepted = true
        }
        return accepted
    }

    private static func bip39(_ data: [UInt8]) -> Bool {
        var accepted = false
        let text = String(decoding: data, as: UTF8.self)
        let typed = mustSucceed("copying the input") { try data.withUnsafeBytes { try SecretBytes(copying: $0) } }
        if let entropy = try? BIP39.entropy(fromWords: typed) {
            let phrase = mustSucceed("listing the words of accepted entropy") { try BIP39.phrase(for: entropy) }
            let again = mustSucceed("re-reading the words") { try BIP39.entropy(fromWords: phrase) }
            require(again == entropy, "BIP-39 words do not read back to the same entropy")
            accepted = true
        }
        if let entropy = try? SeedQR.entropy(fromDigits: typed) {
            let digits = mustSucceed("writing SeedQR digits") { try SeedQR.digits(for: entropy) }
            require(digits == typed, "SeedQR digits are not written back as read")
            accepted = true
        }
        return accepted
    }

    private static func plan(_ data: [UInt8]) -> Bool {
        let accepted = checkPlan(data)
        // A random change almost never keeps the planId right, which would hide every field
        // check behind the hash. Re-stamping the id lets the fuzzer reach them too.
        guard let value = try? JSONValue(parsing: data), case .object(let entries) = value else { return accepted }
        let body = JSONValue.object(entries.filter { $0.key != "planId" && $0.key != "signatures" })
        let id = JSONValue.string(Hex.encode(SHA256.hash(body.canonicalSerialized())))
        let stamped = entries.contains { $0.key == "planId" }
            ? entries.map { $0.key == "planId" ? (key: "planId", value: id) : $0 }
            : entries + [(key: "planId", value: id)]
        return checkPlan(JSONValue.object(stamped).serialized()) || accepted
    }

    private static func checkPlan(_ data: [UInt8]) -> Bool {
        guard let plan = try? RotationPlan(json: data) else { return false }
        _ = try? plan.verifySignatures()
        let again = mustSucceed("re-reading a written plan") { try RotationPlan(json: plan.jsonValue().serialized()) }
        require(again == plan, "a plan changed when written and read back")
        return true
    }

    private static func manifest(_ data: [UInt8]) -> Bool {
        guard let jobs = try? BatchMigration.parseManifest(data, manifestPath: "/batch/manifest.jsonl", outDir: "/batch/out") else { return false }
        require(!jobs.isEmpty, "an accepted manifest has no jobs")
        require(Set(jobs.map(\.output)).count == jobs.count, "two jobs of a manifest write the same output")
        for job in jobs {
            // Bytes, not Characters: that is how the file system reads a path.
            let name = job.output.utf8.starts(with: "/batch/out/".utf8) ? Array(job.output.utf8.dropFirst(11)) : []
            require(!name.isEmpty && !name.contains(UInt8(ascii: "/")) && name != Array(".".utf8) && name != Array("..".utf8),
                    "a job writes outside the output folder: \(job.output)")
            require((job.keyFile == nil) != (job.vaultKeyFile == nil), "a job has not exactly one key")
        }
        require(zip(jobs, jobs.dropFirst()).allSatisfy { $0.line < $1.line }, "jobs are out of line order")
        return true
    }

    private static func importLines(_ data: [UInt8]) -> Bool {
        var accepted = false
        let lines = data.split(separator: 0x0a, omittingEmptySubsequences: false).filter { $0.contains { ![0x20, 0x09, 0x0d].contains($0) } }
        for (kind, columns) in [(DeviceRegistry.ImportKind.devices, 11), (.members, 7)] {
            var rows = 0
            guard let count = try? DeviceRegistry.forEachImportRow(kind, in: (name: "import.jsonl", bytes: data), now: now, { row in
                require(row.count == columns, "an import row has \(row.count) values, not \(columns)")
                rows += 1
            }) else { continue }
            require(count == rows && count == lines.count, "an accepted import file did not yield one row per line")
            accepted = true
        }
        return accepted
    }

    private static func qr(_ data: [UInt8]) -> Bool {
        guard let image = try? GrayImage(decoding: data) else { return false }
        _ = try? QRScanner.scan(image)
        let png = mustSucceed("writing a decoded image as PNG") { try image.pngData() }
        let again = mustSucceed("re-reading the PNG") { try GrayImage(decoding: png) }
        require(again.pixels == image.pixels && again.width == image.width, "an image changed when written as PNG and read back")
        return true
    }

    private static func codes(_ data: [UInt8]) -> Bool {
        var accepted = false
        if let blob = try? RecoveryCodeBlob(json: data) {
            let again = mustSucceed("re-reading a written recovery blob") { try RecoveryCodeBlob(json: blob.jsonValue().serialized()) }
            require(again == blob, "a recovery blob changed when written and read back")
            accepted = true
        }
        if let link = try? DeviceLink(payload: data, now: now) {
            let payload = mustSucceed("writing a device link") { try link.payload() }
            let again = mustSucceed("re-reading a written device link") { try DeviceLink(payload: payload, now: now) }
            require(again.key.publicKey == link.key.publicKey && again.vaultURL == link.vaultURL && again.expiresAt == link.expiresAt,
                    "a device link changed when written and read back")
            accepted = true
        }
        if let pairing = try? PairingCode(payload: data, now: now) {
            let again = mustSucceed("re-reading a written pairing code") { try PairingCode(payload: pairing.jsonValue().serialized(), now: now) }
            require(again == pairing, "a pairing code changed when written and read back")
            accepted = true
        }
        return accepted
    }
}

/// Stops the process when a target's check fails: that is what the fuzzer is looking for.
private func require(_ condition: Bool, _ failure: @autoclosure () -> String) {
    if !condition { fatalError("fuzz check failed: \(failure())") }
}

private func mustSucceed<T>(_ what: String, _ body: () throws -> T) -> T {
    do { return try body() } catch { fatalError("fuzz check failed: \(what) threw \(error)") }
}
