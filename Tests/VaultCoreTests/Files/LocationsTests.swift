import Glibc
import Testing
@testable import VaultCore
@testable import VaultFiles

/// A path on this machine spelled as a URL is refused by the write path (a trial: `--out-dir
/// s3://b/v2/` made a local folder `s3:`); only a scheme, a colon and a slash make it one.
@Suite struct LocationsTests {
    @Test(arguments: ["s3://b/k", "S3://b/k", "https://example.com/x", "gs+x.y-z://b/", "file:///tmp/x", "s3://", "S3:/b/v2", "s3:/b/k", "https:/x"])
    func urlsAreSpelledAsURLs(_ path: String) {
        #expect(VaultLocation.isSpelledAsURL(path))
    }

    @Test(arguments: ["./s3://b/k", "./s3:/b/k", "s3:b", "/srv/s3://b", "://b", "3s://b", "a b://c", "vaults/x.vault", "", "-", "é://x", "s3:", "c:\\\\x"])
    func pathsAreNot(_ path: String) {
        #expect(!VaultLocation.isSpelledAsURL(path))
    }

    @Test(arguments: ["S3://hvt-locations-test/k.json", "https://hvt-locations-test/x"])
    func theWritePathRefusesOneAndMakesNothing(_ path: String) throws {
        func refused(_ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(path) was taken as a path")
            } catch let error as VaultError {
                #expect(error.code == .urlAsLocalPath)
            } catch {
                Issue.record("\(error)")
            }
        }
        refused { _ = try OutputLocation(path, createFolders: true) }
        refused { _ = try OutputFolder(path, create: true).opened() }
        refused { try AtomicFile.createFolder(path) }
        let scheme = String(path.prefix { $0 != "/" })
        #expect(access(scheme, F_OK) != 0, "a folder '\(scheme)' was made")
    }
}
