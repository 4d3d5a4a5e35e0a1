import VaultCore
import VaultFiles
import VaultStorage

/// An S3 Inventory report in CSV (`S3InventoryReport_CSV_20161130`), as S3 publishes it daily or
/// weekly: a `manifest.json` naming the source bucket, the CSV columns (`fileSchema`) and the
/// gzip-compressed CSV files, which sit in the manifest's own bucket. A fleet run reads its jobs
/// from it instead of listing millions of keys.
///
/// Each CSV line is one object version: fields in `fileSchema`'s order, each in double quotes
/// (a quote inside doubled), no header line, the key URL-encoded. Only the current version of an
/// object counts: a line whose `IsLatest` is false or whose `IsDeleteMarker` is true (columns an
/// inventory of all versions has) is skipped.
public struct S3Inventory: Sendable {
    /// The bucket the inventory lists.
    public let sourceBucket: String
    /// The CSV files, in the manifest's bucket.
    public let files: [S3ObjectName]
    /// `fileSchema`'s column names, in order.
    public let columns: [String]

    /// The most one CSV file may inflate to: 8 GiB, far past the largest files S3 writes.
    static let fileInflatedLimit = 8 << 30
    /// The most a compressed CSV file may be: it is read whole, one at a time.
    static let fileByteLimit = 1 << 30

    /// Loads what reading a report's files needs (zlib): a run asks before it reads the
    /// manifest, so a missing library stops it before anything is fetched (exit 69).
    public static func requireLibraries() throws {
        try GzipReader.requireLibrary()
    }

    /// Parses a `manifest.json` read from `manifest` (its bucket holds the files).
    public init(manifest bytes: [UInt8], at manifest: S3ObjectName) throws {
        let what = "the inventory manifest \(manifest)"
        guard case .object(let entries) = try JSONValue(parsing: bytes, what: what) else {
            throw VaultError.malformedInventory("\(what) is not a JSON object")
        }
        func string(_ key: String) throws -> String {
            guard case .string(let value)? = entries.first(where: { $0.key == key })?.value else {
                throw VaultError.malformedInventory("\(what) has no \(key) string")
            }
            return value
        }
        let format = try string("fileFormat")
        guard format == "CSV" else {
            throw VaultError.malformedInventory("\(what) lists \(format) files; only CSV inventories are read (configure the inventory's format as CSV)")
        }
        sourceBucket = try string("sourceBucket")
        columns = try string("fileSchema").split(separator: ",").map { $0.trimmingBlanks() }
        for required in ["Bucket", "Key"] where !columns.contains(required) {
            throw VaultError.malformedInventory("\(what): its fileSchema has no \(required) column")
        }
        guard case .array(let listed)? = entries.first(where: { $0.key == "files" })?.value else {
            throw VaultError.malformedInventory("\(what) has no files array")
        }
        files = try listed.map { file in
            guard case .object(let fields) = file, case .string(let key)? = fields.first(where: { $0.key == "key" })?.value, !key.isEmpty else {
                throw VaultError.malformedInventory("\(what): each of its files needs a key")
            }
            return S3ObjectName(bucket: manifest.bucket, key: key)
        }
    }

    /// Every current object the inventory lists, as (bucket, key), file by file and line by
    /// line; one CSV file is held (compressed) at a time, its lines inflated a chunk at a time.
    /// A line naming a bucket other than ``sourceBucket`` is refused: the whole report is then
    /// suspect. An object listed twice is given twice; callers that make jobs drop the second.
    public func forEachObject(store: ObjectStore, _ each: (S3ObjectName) throws -> Void) throws {
        let bucketColumn = columns.firstIndex(of: "Bucket")!, keyColumn = columns.firstIndex(of: "Key")!
        let latestColumn = columns.firstIndex(of: "IsLatest"), deleteColumn = columns.firstIndex(of: "IsDeleteMarker")
        for file in files {
            guard let object = try store.withClient({ try $0.get(file, limit: Self.fileByteLimit) }) else {
                throw VaultError.noSuchObject(file.description, what: "inventory file")
            }
            var lines = LineBuffer(name: file.description)
            func row(_ line: ArraySlice<UInt8>, _ lineNumber: Int) throws {
                let line = line.last == 0x0d ? line.dropLast() : line
                guard !line.isEmpty else { return }
                let fields = try Self.fields(of: line, where: "\(file) line \(lineNumber)")
                guard fields.count == columns.count else {
                    throw VaultError.malformedInventory("\(file) line \(lineNumber) has \(fields.count) fields, its fileSchema \(columns.count)")
                }
                // A report lists one bucket: a line of another is a report mixed up with another's
                // (or made up), and migrating it in place would change vaults nobody chose.
                guard fields[bucketColumn] == sourceBucket else {
                    throw VaultError.inventoryLineOfAnotherBucket("\(file) line \(lineNumber)", bucket: fields[bucketColumn], sourceBucket: sourceBucket)
                }
                if let latestColumn, fields[latestColumn] == "false" { return }
                if let deleteColumn, fields[deleteColumn] == "true" { return }
                guard let key = PercentEncoding.s3Key(fields[keyColumn]) else {
                    throw VaultError.malformedInventory("\(file) line \(lineNumber): the key is not URL-encoded UTF-8")
                }
                try each(S3ObjectName(bucket: fields[bucketColumn], key: key))
            }
            let reader = try GzipReader()
            try reader.inflate(object.bytes, what: file.description, limit: Self.fileInflatedLimit) { chunk in
                lines.append(chunk)
                while let line = try lines.nextLine() { try row(line, lines.lineNumber) }
            }
            if let line = lines.finalLine() { try row(line, lines.lineNumber) }
        }
    }

    /// The fields of one CSV line: each in double quotes with a quote inside doubled, or bare.
    static func fields(of line: ArraySlice<UInt8>, where place: String) throws -> [String] {
        var fields: [String] = []
        var index = line.startIndex
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        while true {
            var field: [UInt8] = []
            if index < line.endIndex, line[index] == quote {
                index += 1
                while true {
                    guard index < line.endIndex else { throw VaultError.malformedInventory("\(place): a quoted field does not end") }
                    if line[index] == quote {
                        if index + 1 < line.endIndex, line[index + 1] == quote {
                            field.append(quote)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    field.append(line[index])
                    index += 1
                }
            } else {
                while index < line.endIndex, line[index] != comma {
                    guard line[index] != quote else { throw VaultError.malformedInventory("\(place): a quote inside an unquoted field") }
                    field.append(line[index])
                    index += 1
                }
            }
            guard let text = String(validating: field, as: UTF8.self) else {
                throw VaultError.malformedInventory("\(place): a field is not UTF-8")
            }
            fields.append(text)
            if index == line.endIndex { return fields }
            guard line[index] == comma else { throw VaultError.malformedInventory("\(place): text after a quoted field") }
            index += 1
        }
    }
}
