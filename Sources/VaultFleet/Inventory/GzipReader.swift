internal import CFleetLoad
internal import CZlib
import VaultCore

/// Inflates gzip data (RFC 1952) with zlib, the one owner of a `z_stream`: an S3 Inventory
/// report's CSV files come gzip-compressed. Members one after another (as `cat a.gz b.gz` makes)
/// are read in turn; zlib checks each member's CRC-32 and length.
///
/// Bounded by the input: the output goes out in chunks of at most ``chunkByteCount``, never held
/// whole, and stops past `limit` bytes, so a small file that inflates to gigabytes (a "gzip
/// bomb") is refused after `limit`, not after filling the memory.
final class GzipReader {
    static let chunkByteCount = 1 << 16
    private var stream = z_stream()

    /// Loads zlib unless it is loaded (issue 48: no other command maps it). An inventory run
    /// asks before it reads anything, so a missing zlib stops it before the store is reached.
    static func requireLibrary() throws {
        try LoadOnUse.require(OpaquePointer(hvt_library_zlib()), feature: "reading an S3 Inventory report")
    }

    init() throws {
        try Self.requireLibrary()
        guard hvt_inflate_init_gzip(&stream) == Z_OK else {
            throw VaultError.malformedInventory("zlib could not start inflating (out of memory)")
        }
    }

    deinit {
        inflateEnd(&stream)
    }

    /// Inflates `input`, called `what` in errors, handing `each` the output a chunk at a time;
    /// refuses more than `limit` bytes of output.
    func inflate(_ input: [UInt8], what: String, limit: Int, _ each: (ArraySlice<UInt8>) throws -> Void) throws {
        var output = [UInt8](repeating: 0, count: Self.chunkByteCount)
        var produced = 0
        try input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = UInt32(source.count)
            while true {
                let (status, count) = output.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    let status = zlib_inflate(&stream)
                    return (status, target.count - Int(stream.avail_out))
                }
                produced += count
                guard produced <= limit else {
                    throw VaultError.malformedInventory("\(what) inflates to more than \(limit) bytes")
                }
                if count > 0 { try each(output[0..<count]) }
                switch status {
                case Z_STREAM_END:
                    // Another member may follow; anything else after the last one is refused.
                    guard stream.avail_in > 0 else { return }
                    guard inflateReset(&stream) == Z_OK else { throw VaultError.malformedInventory("\(what): zlib could not read on") }
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    throw VaultError.malformedInventory("\(what) ends in the middle of its gzip data")
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                    throw VaultError.malformedInventory("\(what) is not gzip data zlib can inflate (\(message))")
                }
            }
        }
    }
}

/// zlib's `inflate`, named apart from the method above.
private func zlib_inflate(_ stream: inout z_stream) -> Int32 {
    CZlib.inflate(&stream, Z_NO_FLUSH)
}

extension VaultError {
    /// Two vaults of an inventory, in folders of their own, would be written to one output
    /// under `--out` (which keeps only an object's last path part).
    static func inventoryOutputTwice(_ vault: String, output: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedDocument, "the inventory lists two vaults that would both be written to '\(output)', the second \(vault)", file: file, line: line)
    }

    /// An S3 Inventory line naming a bucket other than the one its report lists.
    static func inventoryLineOfAnotherBucket(_ place: String, bucket: String, sourceBucket: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedInventory, "\(place) lists an object in bucket '\(bucket.prefix(100))', not in the report's sourceBucket '\(sourceBucket.prefix(100))'; nothing was started",
                   file: file, line: line)
    }

    /// An S3 Inventory report that is not in the published layout, or whose gzip data is broken.
    static func malformedInventory(_ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.malformedInventory, reason, file: file, line: line)
    }
}
