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
        let status = hvt_library_load(pointer, &message, message.count)
        guard status != 0 else { return }
        let detail = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let soname = String(cString: pointer.pointee.soname), package = String(cString: pointer.pointee.package)
        if status == -2 {
            throw VaultError.libraryTooOld(soname: soname, package: package, feature: feature, detail: detail, file: file, line: line)
        }
        // The loader's message starts with the file it could not load: another than `soname`
        // is one `soname` needs, whose package is not `package` (a hostile trial was told to
        // install libcairo2 when libpng was missing).
        let failed = detail.split(separator: ":", maxSplits: 1).first.map { String($0.split(separator: "/").last ?? $0) }
        if let failed, failed != soname, failed.contains(".so") {
            throw VaultError.libraryDependencyUnavailable(soname: soname, package: package, dependency: failed, feature: feature, detail: detail, file: file, line: line)
        }
        throw VaultError.libraryUnavailable(soname: soname, package: package, feature: feature, detail: detail, file: file, line: line)
    }
}

extension VaultError.Code {
    /// A library loaded on use is not installed or cannot be loaded (exit 69).
    public static let libraryUnavailable = VaultError.Code(name: "libraryUnavailable", category: .unavailable)
    /// A library loaded on use lacks a function the suite calls: older than the suite's (exit 69).
    public static let libraryTooOld = VaultError.Code(name: "libraryTooOld", category: .unavailable)
}

extension VaultError {
    /// `soname`, which `feature` needs, could not be loaded: `detail` is the loader's word, which
    /// names the file it could not load (the library itself, or one it needs). The package is in
    /// the reason too, so the reason alone (relayed from a child process) still says it.
    package static func libraryUnavailable(soname: String, package: String, feature: String, detail: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(
            .libraryUnavailable, "\(feature) needs \(soname) (Debian's \(package)), which could not be loaded: \(detail)",
            hint: "install Debian's \(package) package and what it depends on (apt install \(package)); commands that do not need it work without it",
            file: file, line: line
        )
    }

    /// `soname` is there, but `dependency`, a library it needs, could not be loaded.
    package static func libraryDependencyUnavailable(soname: String, package: String, dependency: String, feature: String, detail: String,
                                                     file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(
            .libraryUnavailable, "\(feature) needs \(soname) (Debian's \(package)), which needs \(dependency), which could not be loaded: \(detail)",
            hint: "install again the Debian package that ships \(dependency) (dpkg-query names it); commands that do not need it work without it",
            file: file, line: line
        )
    }

    /// `soname` is there but lacks a function the suite calls: a version older than the suite's.
    package static func libraryTooOld(soname: String, package: String, feature: String, detail: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(
            .libraryTooOld, "\(feature) needs \(soname) (Debian's \(package)) of a newer version: \(detail)",
            hint: "upgrade Debian's \(package) package to the version the suite's package depends on (apt install \(package) upgrades it)",
            file: file, line: line
        )
    }
}
