internal import CLoadOnUse

/// The libraries a layer loads on first use (issue 48; the mechanism is in CLoadOnUse's
/// `load_on_use.h`). A layer's Swift owner of a library calls ``require(_:)`` before its
/// first call into it: from then on its functions are the library's; when the library cannot
/// be loaded, the command stops with exit 69 naming the Debian package to install, and the
/// commands that do not need it still work.
package enum LoadOnUse {
    /// Loads `library` (a layer's `hvt_library_…()`) unless it is loaded.
    package static func require(_ library: OpaquePointer, feature: String, file: String = #fileID, line: UInt = #line) throws {
        let pointer = UnsafeMutablePointer<hvt_library>(library)
        var message = [CChar](repeating: 0, count: 512)
        guard hvt_library_load(pointer, &message, message.count) != 0 else { return }
        let detail = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw VaultError.libraryUnavailable(
            soname: String(cString: pointer.pointee.soname), package: String(cString: pointer.pointee.package),
            feature: feature, detail: detail, file: file, line: line
        )
    }
}

extension VaultError.Code {
    /// A library loaded on use is not installed or cannot be loaded (exit 69).
    public static let libraryUnavailable = VaultError.Code(name: "libraryUnavailable", category: .unavailable)
}

extension VaultError {
    /// `soname`, which `feature` needs, could not be loaded: `detail` is the loader's word.
    package static func libraryUnavailable(soname: String, package: String, feature: String, detail: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(
            .libraryUnavailable, "\(feature) needs \(soname), which could not be loaded (\(detail))",
            hint: "install Debian's \(package) package (apt install \(package)); commands that do not need it work without it",
            file: file, line: line
        )
    }
}
