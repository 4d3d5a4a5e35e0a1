import Foundation
import Testing
@testable import VaultCore
@testable import VaultFiles
@testable import VaultImaging

/// The rules of the one write path (issue 16), as values: which refusal comes, and that a
/// refused or unpublished write leaves every file as it was.
@Suite struct WritePathTests {
    /// A fresh folder with an input file in it.
    final class Folder {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("write-path-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data("input\n".utf8).write(to: URL(fileURLWithPath: path + "/in"))
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func contents(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: path + "/" + name).map { [UInt8]($0) } }
        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
    }

    func refusal(_ body: () throws -> Void) -> VaultError.Code? {
        do {
            try body()
            return nil
        } catch let error as VaultError {
            return error.code
        } catch {
            return nil
        }
    }

    func check(_ folder: Folder, output: String) -> VaultError.Code? {
        refusal {
            try FileSet.check(inputs: [FileSet.Input("input", folder.path + "/in")], outputs: [("output", try OutputLocation(output))])
        }
    }

    @Test func anOutputThatIsAnInputIsRefusedHoweverItIsNamed() throws {
        let folder = try Folder()
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link", withDestinationPath: "in")
        #expect(link(folder.path + "/in", folder.path + "/hard") == 0)
        try FileManager.default.createDirectory(atPath: folder.path + "/sub", withIntermediateDirectories: true)
        for alias in ["in", "./in", "sub/../in", "link", "hard"] {
            #expect(check(folder, output: folder.path + "/" + alias) == .sameFile, "\(alias)")
        }
        #expect(check(folder, output: folder.path + "/other") == nil)
        #expect(folder.contents("in") == Array("input\n".utf8))
    }

    @Test func twoOutputsThatAreOneFileAreRefused() throws {
        let folder = try Folder()
        let first = try OutputLocation(folder.path + "/new"), second = try OutputLocation(folder.path + "/./new")
        #expect(refusal { try FileSet.check(inputs: [], outputs: [("a", first), ("b", second)]) } == .sameFile)
        // Also in a folder that does not exist yet, spelled two ways.
        let third = try OutputLocation(folder.path + "/x/y/new", createFolders: true), fourth = try OutputLocation(folder.path + "/x/./y/new", createFolders: true)
        #expect(refusal { try FileSet.check(inputs: [], outputs: [("a", third), ("b", fourth)]) } == .sameFile)
        #expect(try folder.names() == ["in"])  // declaring made no folder
    }

    @Test func outputsThatAreNotRegularFilesAreRefused() throws {
        let folder = try Folder()
        #expect(mkfifo(folder.path + "/fifo", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/null", withDestinationPath: "/dev/null")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/dangling", withDestinationPath: "nowhere")
        try FileManager.default.createDirectory(atPath: folder.path + "/dir", withIntermediateDirectories: true)
        for output in [folder.path + "/fifo", folder.path + "/null", "/dev/null", folder.path + "/dangling", folder.path + "/dir"] {
            #expect(refusal { _ = try OutputLocation(output) } == .unsafeOutput, "\(output)")
        }
        #expect(refusal { _ = try OutputLocation(folder.path + "/") } == .unsafeOutput)
    }

    @Test func aLinkToARegularFileIsResolvedAndStaysALink() throws {
        let folder = try Folder()
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/target"))
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link", withDestinationPath: "target")
        // A new file: what another test of this process read at its inode, since removed, is not it.
        if let made = FileIdentity.of(existing: folder.path + "/target") { FilesRead.forget(made) }
        try AtomicFile.write(Array("new\n".utf8), to: folder.path + "/link", mode: 0o644, exclusive: false)
        #expect(folder.contents("target") == Array("new\n".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.path + "/link") == "target")
    }

    @Test func anUnpublishedStageLeavesNothingAndPublishingIsAllOrNothing() throws {
        let folder = try Folder()
        do {
            let location = try OutputLocation(folder.path + "/staged")
            _ = try Array("x".utf8).withUnsafeBytes { try StagedOutput(location, bytes: $0, mode: 0o600) }
        }
        #expect(try folder.names() == ["in"])
        let location = try OutputLocation(folder.path + "/in")
        let staged = try Array("replaced\n".utf8).withUnsafeBytes { try StagedOutput(location, bytes: $0, mode: 0o600) }
        #expect(refusal { try staged.publish(exclusive: true) } == .outputExists)  // an existing file is not replaced
        #expect(folder.contents("in") == Array("input\n".utf8))
        #expect(try folder.names() == ["in"])
    }

    /// A file the run read is replaced only as read (FilesRead): written to, saved over or
    /// removed since, it is refused and kept; untouched, or never read, it is replaced.
    @Test func aFileReadIsReplacedOnlyAsRead() throws {
        func readWhole(_ path: String) {
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 64)
            _ = FilesRead.reading(descriptor) { read(descriptor, &buffer, buffer.count) }
        }
        var folders: [Folder] = []  // kept to the end: a file removed may give its inode to the next one
        var readFiles: [FileIdentity] = []
        // What this test read is forgotten as it ends: its files' inodes go to other tests' files.
        defer { readFiles.forEach(FilesRead.forget) }
        for change in ["none", "never read", "written", "saved over", "removed"] {  // those that free an inode last
            let folder = try Folder()
            folders.append(folder)
            let path = folder.path + "/in"
            if change != "never read" {
                readWhole(path)
                if let identity = FileIdentity.of(existing: path) { readFiles.append(identity) }
            }
            let location = try OutputLocation(path)
            let staged = try Array("replaced\n".utf8).withUnsafeBytes { try StagedOutput(location, bytes: $0, mode: 0o600) }
            switch change {
            case "written": try Data("input!\n".utf8).write(to: URL(fileURLWithPath: path))  // in place: same inode
            case "saved over":
                try Data("input\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/new"))
                #expect(rename(folder.path + "/new", path) == 0)
            case "removed": #expect(unlink(path) == 0)
            default: break
            }
            let unchanged = change == "none" || change == "never read"
            #expect(refusal { try staged.publish(exclusive: false) } == (unchanged ? nil : .changedSinceRead), "\(change)")
            #expect(folder.contents("in") == (unchanged ? Array("replaced\n".utf8) : change == "removed" ? nil : change == "written" ? Array("input!\n".utf8) : Array("input\n".utf8)), "\(change)")
            #expect(try folder.names().filter { $0 != "in" }.isEmpty, "\(change)")
        }
    }

    @Test func aLinkPlantedAfterTheCheckIsReplacedNotFollowed() throws {
        let folder = try Folder()
        let location = try OutputLocation(folder.path + "/out")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/out", withDestinationPath: "in")
        try Array("written\n".utf8).withUnsafeBytes { try StagedOutput(location, bytes: $0, mode: 0o644).publish(exclusive: false) }
        #expect(folder.contents("in") == Array("input\n".utf8))
        #expect(folder.contents("out") == Array("written\n".utf8))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder.path + "/out")) == nil)
    }

    /// A new output is named by link(2), which never replaces: a file made at its name since
    /// it was resolved is found there, and replaced as any output is, but never a key (a
    /// hostile review), and the file that replaced it is not the run's to take back.
    @Test func aFileSavedAtANewOutputsNameMeanwhileIsReplacedUnlessItHoldsAKey() throws {
        let folder = try Folder()
        let keyed = try OutputLocation(folder.path + "/key-out")
        let key = try String(decoding: SecretKey.generate().nsec().withUnsafeBytes { Array($0) }, as: UTF8.self) + "\n"
        try Data(key.utf8).write(to: URL(fileURLWithPath: folder.path + "/key-out"))
        let refused = try Array("vault\n".utf8).withUnsafeBytes { try StagedOutput(keyed, bytes: $0, mode: 0o644) }
        #expect(refusal { try refused.publish(exclusive: false) } == .outputExists)
        #expect(folder.contents("key-out") == Array(key.utf8))
        let plain = try OutputLocation(folder.path + "/out")
        try Data("someone's note\n".utf8).write(to: URL(fileURLWithPath: folder.path + "/out"))
        let staged = try Array("written\n".utf8).withUnsafeBytes { try StagedOutput(plain, bytes: $0, mode: 0o644) }
        try staged.publish(exclusive: false)
        #expect(folder.contents("out") == Array("written\n".utf8))
        #expect(!staged.isWithdrawable)
        #expect(try folder.names() == ["in", "key-out", "out"])
    }

    @Test func outputNamesUpTo255BytesWork() throws {
        let folder = try Folder()
        let name = String(repeating: "n", count: 255)
        try AtomicFile.write(Array("ok".utf8), to: folder.path + "/" + name, mode: 0o644, exclusive: false)
        #expect(folder.contents(name) == Array("ok".utf8))
        #expect(try folder.names() == ["in", name])
    }

    @Test func limitsAreCheckedBeforeMoreIsHeld() throws {
        let folder = try Folder()
        let atLimit = [UInt8](repeating: 0x61, count: InputLimits.line) + [0x0a]
        try Data(atLimit + atLimit).write(to: URL(fileURLWithPath: folder.path + "/lines"))
        try Data([UInt8](repeating: 0x61, count: InputLimits.line + 1)).write(to: URL(fileURLWithPath: folder.path + "/long"))
        func lines(_ name: String) throws -> Int {
            let descriptor = open(folder.path + "/" + name, O_RDONLY)
            defer { close(descriptor) }
            var reader = LineReader(descriptor: descriptor, name: name)
            var count = 0
            while try reader.next() != nil { count += 1 }
            return count
        }
        #expect(try lines("lines") == 2)
        #expect(refusal { _ = try lines("long") } == .tooLarge)
        #expect(refusal { try LineReader.forEachLine(in: [UInt8](repeating: 0x61, count: InputLimits.line + 1), name: "m") { _, _ in } } == .tooLarge)
        #expect(refusal { _ = try BoundedRead.file(folder.path + "/long", limit: InputLimits.line, what: "vault") } == .tooLarge)
        #expect(try BoundedRead.file(folder.path + "/long", limit: InputLimits.line + 1, what: "vault").count == InputLimits.line + 1)
        #expect(refusal { _ = try BoundedRead.file(folder.path + "/long", limit: InputLimits.listFile, what: "manifest", lines: true) } == .tooLarge)
        // A device named as an input is refused before it is opened (issue 37); read from a
        // descriptor, an endless stream still costs no more than the limit.
        #expect(refusal { _ = try BoundedRead.file("/dev/zero", limit: 1 << 20, what: "vault") } == .notARegularFile)
        let zero = open("/dev/zero", O_RDONLY)
        defer { close(zero) }
        #expect(refusal { _ = try BoundedRead.all(from: zero, limit: 1 << 20, name: "/dev/zero", what: "vault") } == .tooLarge)
    }

    @Test func aFileIsReadWholeWhateverItsSizeAndWhateverItsSizeSays() throws {
        // A regular file is read straight into an array of its size and one byte more; around
        // the 64 KiB chunk of other descriptors, and a file whose size says 0 (/proc), every byte.
        let folder = try Folder()
        for size in [1, 65_535, 65_536, 65_537, 480_018] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
            try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/f"))
            #expect(try BoundedRead.file(folder.path + "/f", limit: size, what: "vault") == bytes)
            #expect(refusal { _ = try BoundedRead.file(folder.path + "/f", limit: size - 1, what: "vault") } == .tooLarge)
        }
        let status = open("/proc/self/status", O_RDONLY)
        defer { close(status) }
        #expect(try String(decoding: BoundedRead.all(from: status, limit: 1 << 20, name: "status", what: "file"), as: UTF8.self).contains("\nPid:"))
    }

    @Test func aRevisionIsNeverRaisedPastTheLargest() throws {
        #expect(try VaultDocument.revision(after: 41) == 42)
        #expect(refusal { _ = try VaultDocument.revision(after: Int.max) } == .outOfRange)
    }

    @Test func picturesDeclaringTooManyPixelsAreRefusedFromTheHeader() throws {
        // A PNG header alone declaring 20,000 × 20,000: refused before any pixel is allocated.
        var png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [0x00, 0x00, 0x4e, 0x20, 0x00, 0x00, 0x4e, 0x20, 8, 0, 0, 0, 0]
        let crc = Self.crc32(Array(png[12...]))
        png += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc & 0xff)]
        #expect(refusal { _ = try GrayImage(decoding: png) } == .tooLarge)
    }

    /// PNG's chunk checksum (ISO 3309 CRC-32), for building a header by hand.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xedb8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}
