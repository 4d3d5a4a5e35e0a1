// vault-floor VAULTS_FOLDER KEY_FILE SCRATCH_FOLDER [GROUP_SIZE]
//
// SCRATCH_FOLDER must not exist: vault-floor makes it and writes the migrated vaults there.
//
// The floor of a batch migration (issue 29): the work no migration of these vaults from
// version 1 to 2 can avoid, each step timed on its own over every vault of the folder, on this
// machine. scripts/bench sums the steps, divides by the cores and prints how far above it the
// tool is. A step's inputs are the previous step's outputs, held in memory, so each is timed
// alone:
//
//   read        open, read and close each vault file
//   open        XChaCha20-Poly1305 of the envelope (libsodium), into protected memory
//   parse       the document's JSON into a value (the suite's reader)
//   fields      each sealed field: base64, opened, sealed again under v2's associated data
//   write       the value back to JSON (the suite's writer, pretty as vaults are written)
//   seal        XChaCha20-Poly1305 of the new document under a new header
//   create      each output created, written and closed under a temporary name, then renamed
//   durability  one syncfs(2) and one folder fsync per group, as the batch does
//
// Not included, because a faster tool could skip them or they are the suite's own promises
// beyond the format: reading the document into its model and checking its rules, reading every
// output back before it is written, the journal and the manifest. Prints one JSON object:
// microseconds per vault of each step, and the vault count.
import Dispatch
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    printError("usage: vault-floor VAULTS_FOLDER KEY_FILE SCRATCH_FOLDER [GROUP_SIZE]")
    exit(64)
}
let (vaultsFolder, keyFile, scratch) = (arguments[1], arguments[2], arguments[3])
let groupSize = max(1, arguments.count > 4 ? Int(arguments[4]) ?? 64 : 64)

func printError(_ line: String) {
    _ = Array((line + "\n").utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    printError("vault-floor: \(message)")
    exit(1)
}

func microseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
}

do {
    // The key file is read into an array that SecretBytes zeroes once it holds the key.
    let keyDescriptor = open(keyFile, O_RDONLY | O_CLOEXEC)
    guard keyDescriptor >= 0 else { fail("cannot open '\(keyFile)'") }
    var keyBytes = [UInt8](repeating: 0, count: 512)
    let keyCount = keyBytes.withUnsafeMutableBytes { read(keyDescriptor, $0.baseAddress, $0.count) }
    close(keyDescriptor)
    guard keyCount > 0, keyCount < keyBytes.count else { fail("cannot read the key file '\(keyFile)'") }
    keyBytes.removeSubrange(keyCount...)
    let parent = try SecretKey(parsing: try SecretBytes(consuming: &keyBytes), what: "key file")
    let key = try Derivation.vaultKey(for: parent).secret
    let names = try FileManager.default.contentsOfDirectory(atPath: vaultsFolder).filter { $0.hasSuffix(".vault") }.sorted()
    guard !names.isEmpty else { fail("no .vault files in '\(vaultsFolder)'") }
    let random = SystemRandom()
    var times: [(String, Double)] = []

    var files: [[UInt8]] = []
    times.append(("read", microseconds {
        for name in names {
            let descriptor = open(vaultsFolder + "/" + name, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { fail("cannot open '\(name)'") }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { fail("cannot read '\(name)'") }
            var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            guard count == bytes.count else { fail("short read of '\(name)'") }
            files.append(bytes)
        }
    }))

    // Timed alone, each plaintext dropped as the tool drops it (its protected buffer is reused);
    // then opened again, untimed, into the arrays the parser reads, as the tool's reader does.
    func openEnvelope(_ file: [UInt8]) throws -> SecretBytes {
        let header = try VaultHeader(parsing: file.prefix(VaultEnvelope.headerByteCount))
        return try file.withUnsafeBytes {
            try XChaCha20Poly1305.open(UnsafeRawBufferPointer(rebasing: $0[VaultEnvelope.headerByteCount...]), key: key, nonce: header.nonce, associatedData: header.bytes)
        }
    }
    try times.append(("open", microseconds {
        for file in files { _ = try openEnvelope(file) }
    }))
    var plaintexts = try files.map { try openEnvelope($0).withUnsafeBytes { Array($0) } }
    defer { for index in plaintexts.indices { plaintexts[index].zeroize() } }

    var documents: [JSONValue] = []
    try times.append(("parse", microseconds {
        for plaintext in plaintexts { documents.append(try JSONValue(parsing: plaintext, what: "the vault document")) }
    }))

    /// A sealed field's base64 opened as v1 binds it and sealed again as v2 does.
    func reseal(_ value: JSONValue, field: SecretField) throws -> JSONValue {
        guard case .string(let text) = value, let blob = Data(base64Encoded: text), blob.count > 24 else { fail("a sealed field is not base64") }
        let bytes = Array(blob)
        let secret = try bytes.withUnsafeBytes {
            try XChaCha20Poly1305.open(UnsafeRawBufferPointer(rebasing: $0[24...]), key: key, nonce: Array(bytes[..<24]),
                                       associatedData: VaultDocument.associatedData(version: 1, field: field))
        }
        let nonce = random.bytes(24)
        let sealed = try secret.withUnsafeBytes {
            try XChaCha20Poly1305.seal($0, key: key, nonce: nonce, associatedData: VaultDocument.associatedData(version: 2, field: field))
        }
        return .string(Data(nonce + sealed).base64EncodedString())
    }
    try times.append(("fields", microseconds {
        for index in documents.indices {
            guard case .object(var entries) = documents[index] else { fail("a document is not an object") }
            for entry in entries.indices {
                switch entries[entry].key {
                case "parentWrapKeyEncrypted":
                    entries[entry].value = try reseal(entries[entry].value, field: .wrapKey)
                case "childProfiles":
                    guard case .array(var children) = entries[entry].value else { continue }
                    for child in children.indices {
                        guard case .object(var fields) = children[child], case .string(let id)? = children[child]["profileId"] else { continue }
                        for field in fields.indices where fields[field].key == "nsecEncrypted" {
                            fields[field].value = try reseal(fields[field].value, field: .childNsec(profileId: id))
                        }
                        children[child] = .object(fields)
                    }
                    entries[entry].value = .array(children)
                default: break
                }
            }
            documents[index] = .object(entries)
        }
    }))

    var outputs: [[UInt8]] = []
    times.append(("write", microseconds {
        for document in documents { outputs.append(document.serialized()) }
    }))

    var sealed: [[UInt8]] = []
    try times.append(("seal", microseconds {
        for (file, output) in zip(files, outputs) {
            let old = try VaultHeader(parsing: file.prefix(VaultEnvelope.headerByteCount))
            let header = VaultHeader(schemaVersion: 2, householdID: old.householdID, nonce: random.bytes(24))
            sealed.append(header.bytes + (try output.withUnsafeBytes { try XChaCha20Poly1305.seal($0, key: key, nonce: header.nonce, associatedData: header.bytes) }))
        }
    }))

    // Its outputs are renamed over whatever has their names, so they go only into a folder it
    // makes now: never into one that holds anything, such as the vaults it read.
    guard mkdir(scratch, 0o700) == 0 else { fail("cannot make the folder '\(scratch)': give a new folder (its parent must exist)") }
    let folder = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard folder >= 0 else { fail("cannot open '\(scratch)'") }
    var create = 0.0, durability = 0.0
    for start in stride(from: 0, to: names.count, by: groupSize) {
        create += microseconds {
            for index in start..<min(start + groupSize, names.count) {
                let temporary = ".\(index).tmp"
                let descriptor = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else { fail("cannot create '\(temporary)' in '\(scratch)'") }
                let count = sealed[index].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
                guard count == sealed[index].count, renameat(folder, temporary, folder, names[index]) == 0 else { fail("cannot write '\(names[index])'") }
            }
        }
        durability += microseconds {
            guard AtomicFile.syncFileSystem(folder), AtomicFile.syncFolder(folder) == 0 else { fail("cannot flush '\(scratch)'") }
        }
    }
    times.append(("create", create))
    times.append(("durability", durability))

    let perVault = times.map { "\"\($0.0)\": \(($0.1 / Double(names.count)).fixed(decimals: 2))" }.joined(separator: ", ")
    print("{\"vaults\": \(names.count), \"groupSize\": \(groupSize), \"microsecondsPerVault\": {\(perVault)}}")
} catch {
    fail("\(error)")
}
