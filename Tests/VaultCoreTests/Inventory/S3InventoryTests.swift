import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultFleet

/// The pieces of reading an S3 Inventory report: gzip through zlib (members in turn, bounded
/// output, broken data refused), CSV lines across chunk boundaries, quoted fields, URL-encoded
/// keys, and the manifest's layout.
@Suite struct S3InventoryTests {
    // gzip.compress(b'"b","k1"\n"b","k2"\r\n'), gzip.compress(b'"b","k3"') and
    // gzip.compress(b'\0' * 100_000), made by Python's gzip module.
    let first = Hex.decode("1f8b0800000000000203534a52d251ca3654e25202338c9478b900c9992c1513000000")!
    let second = Hex.decode("1f8b0800000000000203534a52d251ca3656020016e6bfe308000000")!
    let zeros = Hex.decode("1f8b0800000000000203edc13101000000c2a0f54f6d0d0fa00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000008057037d9511d4a0860100")!

    private func lines(of gzip: [UInt8], limit: Int = 1 << 20) throws -> [String] {
        var lines = LineBuffer(name: "the file")
        var found: [String] = []
        let reader = try GzipReader()
        try reader.inflate(gzip, what: "the file", limit: limit) { chunk in
            // Chunk by chunk, one byte at a time: lines must not depend on where chunks end.
            for index in chunk.indices {
                lines.append(chunk[index...index])
                while let line = try lines.nextLine() { found.append(String(decoding: line, as: UTF8.self)) }
            }
        }
        if let line = lines.finalLine() { found.append(String(decoding: line, as: UTF8.self)) }
        #expect(lines.lineNumber == found.count)
        return found
    }

    @Test func membersAreReadInTurnAndLinesSplitAcrossChunks() throws {
        // The carriage return stays in the line: the inventory's CSV reader drops it.
        #expect(try lines(of: first + second) == [#""b","k1""#, "\"b\",\"k2\"\r", #""b","k3""#])
    }

    @Test func aLineLongerThanTheLimitIsRefusedBeforeItEnds() throws {
        var lines = LineBuffer(name: "the file")
        lines.append(Array("short\n".utf8)[...])
        #expect(try lines.nextLine() == Array("short".utf8)[...])
        let chunk = [UInt8](repeating: 0x61, count: 1 << 16)
        var appended = 0
        let error = #expect(throws: VaultError.self) {
            for _ in 1...20 {
                lines.append(chunk[...])
                appended += 1
                guard try lines.nextLine() == nil else { return }
            }
        }
        // 16 chunks are exactly the limit; the 17th is one byte too many, refused at once.
        #expect(appended == 17)
        #expect(error?.code == .tooLarge)
        #expect(error?.reason.hasPrefix("the file line 2 is longer than 1 MiB") == true)
    }

    @Test func theOutputIsBoundedAndBrokenDataRefused() throws {
        #expect(zeros.count == 132)
        var total = 0
        try GzipReader().inflate(zeros, what: "zeros", limit: 100_000) { total += $0.count }
        #expect(total == 100_000)
        #expect(throws: VaultError.self) { try GzipReader().inflate(zeros, what: "zeros", limit: 99_999) { _ in } }
        #expect(throws: VaultError.self) { try GzipReader().inflate(Array(first.dropLast(8)), what: "cut", limit: 1 << 20) { _ in } }
        #expect(throws: VaultError.self) { try GzipReader().inflate(Array("not gzip".utf8), what: "text", limit: 1 << 20) { _ in } }
        #expect(throws: VaultError.self) { try GzipReader().inflate(first + [0, 0, 0], what: "padded", limit: 1 << 20) { _ in } }
    }

    @Test func fieldsAndKeys() throws {
        func fields(_ text: String) throws -> [String] { try S3Inventory.fields(of: Array(text.utf8)[...], where: "line 1") }
        #expect(try fields(#""b","vaults/a.vault","","true""#) == ["b", "vaults/a.vault", "", "true"])
        #expect(try fields(#""say ""hi""",bare,"""#) == [#"say "hi""#, "bare", ""])
        #expect(try fields("a,,b") == ["a", "", "b"])
        for broken in [#""open"#, #"a"b,c"#, #""quoted"tail"#] {
            #expect(throws: VaultError.self, "\(broken)") { try fields(broken) }
        }
        #expect(PercentEncoding.s3Key("vaults/family+copy.vault") == "vaults/family copy.vault")
        #expect(PercentEncoding.s3Key("a%2Bb%2fc%C3%A9") == "a+b/cé")
        #expect(PercentEncoding.s3Key("bad%2") == nil && PercentEncoding.s3Key("bad%zz") == nil && PercentEncoding.s3Key("%ff") == nil)
    }

    @Test func theManifestIsReadInItsPublishedLayout() throws {
        let at = S3ObjectName(bucket: "inventory", key: "inv/src/daily/2026-11-25T00-00Z/manifest.json")
        let manifest = #"{"sourceBucket": "src", "destinationBucket": "arn:aws:s3:::inventory", "version": "2016-11-30", "fileFormat": "CSV", "fileSchema": "Bucket, Key, Size", "files": [{"key": "inv/src/daily/data/a.csv.gz", "size": 10, "MD5checksum": "00"}]}"#
        let inventory = try S3Inventory(manifest: Array(manifest.utf8), at: at)
        #expect(inventory.sourceBucket == "src" && inventory.columns == ["Bucket", "Key", "Size"])
        #expect(inventory.files == [S3ObjectName(bucket: "inventory", key: "inv/src/daily/data/a.csv.gz")])
        for broken in [manifest.replacingOccurrences(of: #""CSV""#, with: #""Parquet""#),
                       manifest.replacingOccurrences(of: "Bucket, Key", with: "Bucket, Name"),
                       manifest.replacingOccurrences(of: #""files""#, with: #""file""#), "[]"] {
            #expect(throws: VaultError.self) { try S3Inventory(manifest: Array(broken.utf8), at: at) }
        }
    }
}
