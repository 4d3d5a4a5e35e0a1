/// Documented limits on what the suite reads (docs/conventions.md, "Limits"), checked before allocating, so a
/// hostile or mistaken input is refused quickly and in bounded memory.
public enum InputLimits {
    /// A vault, a vault document, a rotation plan, a recovery-code blob: 16 MiB. A household's
    /// vault is kilobytes; the largest generated (50 devices, 10 children, 500 groups) is 0.5 MB.
    public static let document = 16 << 20
    /// A key, passphrase or word file: 4 KiB.
    public static let keyFile = 4096
    /// One line of a JSON Lines file (a manifest, a registry import) or of a list file: 1 MiB.
    public static let line = 1 << 20
    /// A whole manifest or list file: 1 GiB (about ten million lines).
    public static let listFile = 1 << 30
    /// A picture file (PNG or JPEG): 64 MiB.
    public static let imageFile = 64 << 20
    /// A picture's pixels (width × height, read from its header before decoding): 64 million.
    /// A phone photo of a page is 12 to 50 megapixels.
    public static let imagePixels = 64_000_000

    /// The scans a JPEG may have: a camera's progressive JPEG has about ten; each scan is a
    /// pass over the whole image, so thousands of tiny ones cost minutes.
    public static let jpegScans = 100
    /// The coefficient memory a multi-scan JPEG may take to decode (it holds every coefficient
    /// until its last scan): 64 times the file's size, and 64 MiB at least. A phone photo needs
    /// about 12 times its size; a 520-byte header claiming 8000 × 8000 pixels would need 384 MiB.
    public static func jpegCoefficientBytes(forFileOf size: Int) -> Int { max(64 << 20, size.multipliedReportingOverflow(by: 64).partialValue) }

    /// "16 MiB", "64 million pixels": how messages name a limit.
    public static func describe(bytes: Int) -> String {
        bytes >= 1 << 30 ? "\(bytes >> 30) GiB" : bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }
}
