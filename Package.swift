// swift-tools-version: 6.0
//
// Household Vault Tools: command-line tools around a family app's encrypted identity vault.
// Layout (see docs/architecture.md and ../shared/STYLE.md): C libraries as system modules, the
// rules in one library target a layer (VaultCore at the bottom, bytes in and bytes out;
// VaultFiles, the operating system's side, over it; VaultStorage, VaultFleet, VaultRegistry,
// VaultImaging, VaultPaper above them), shared CLI plumbing in CLISupport and CLIPictures, one
// thin folder per executable that links only the layers it uses.

import PackageDescription

// The folders of the page libraries' headers (cairo, Pango, HarfBuzz, GLib, poppler), as
// `pkg-config --cflags pangocairo poppler-glib` gives them on Debian: CCairo imports the headers
// alone, since the libraries are loaded on use (issue 48) and pkg-config would link them.
#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#else
let multiarch = "x86_64-linux-gnu"
#endif
var pageHeaders: SwiftSetting {
    let folders = [
        "/usr/include/pango-1.0", "/usr/include/glib-2.0", "/usr/lib/\(multiarch)/glib-2.0/include",
        "/usr/include/harfbuzz", "/usr/include/freetype2", "/usr/include/cairo", "/usr/include/poppler/glib",
        "/usr/include/poppler",
    ]
    return .unsafeFlags(folders.flatMap { ["-Xcc", "-I\($0)"] })
}

let package = Package(
    name: "household-vault-tools",
    products: [
        .executable(name: "vault-tool", targets: ["vault-tool"]),
        .executable(name: "recovery-sheet", targets: ["recovery-sheet"]),
        .executable(name: "rotation-planner", targets: ["rotation-planner"]),
        .executable(name: "device-revoker", targets: ["device-revoker"]),
        .executable(name: "device-link", targets: ["device-link"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
    ],
    targets: [
        // C libraries, one system module each; each used only from inside one library layer.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"])]
        ),

        // Headers only, as every C library below that is loaded on use (issue 48): no pkg-config
        // libraries, no `link` in the module maps; the layer's C target (CImagingLoad, …) holds
        // what is called.
        .systemLibrary(name: "CQRencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CZBar", providers: [.apt(["libzbar-dev"])]),
        // cairo, Pango and poppler-glib: the sheets' page layout, PDF and PNG, and reading a PDF
        // back (issue 27).
        // Headers only (loaded on use, CPaperLoad): their folders, which pkg-config's pangocairo
        // and poppler-glib would give with their libraries, are `pageHeaders` (above).
        .systemLibrary(name: "CCairo", providers: [.apt(["libcairo2-dev", "libpango1.0-dev", "libpoppler-glib-dev"])]),
        // SQLite: the device registry's embedded engine, the batches' journals and the manifest's
        // staging, through one owner (VaultSQLite's SQLiteDatabase).
        // Headers only: libsqlite3 is loaded on use (CSQLiteLoad).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's own client: the device registry's second engine (issue 13).
        // Headers only: libpq is loaded on use (CRegistryLoad), so no pkg-config libraries.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // libcurl: HTTP for the S3-compatible object store (issue 15); Debian's OpenSSL flavour,
        // so HTTPS uses the system's trust store.
        // Headers only: libcurl is loaded on use (CStorageLoad).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // zlib: the gzip-compressed CSV files of an S3 Inventory report (a fleet run's source).
        // Headers only: libz is loaded on use (CFleetLoad).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // zxcvbn-c: how many guesses a new passphrase would take (no pkg-config file in Debian).
        .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
        // libcrypto's EVP: AES-256-GCM for the Family Medical recovery codes, on every CPU (where
        // libsodium's AES-GCM needs AES-NI), without swift-crypto's BoringSSL (issue 39).
        .systemLibrary(name: "CLibCrypto", providers: [.apt(["libssl-dev"])]),
        // libunistring: NFKC for NIP-49's passphrase without Foundation's ICU (no pkg-config file
        // in Debian). Linked, not loaded on use: the checks that keep secrets out of every
        // output and record read text in NFKC, and a check must not pass because a library
        // is missing.
        .systemLibrary(name: "CUnistring", providers: [.apt(["libunistring-dev"])]),
        // syncfs(2), which Glibc's Swift module hides (it is a GNU extension).
        .systemLibrary(name: "CFileSystem"),
        // Libraries loaded on first use (issue 48, load_on_use.h): the loader, and one C target a
        // layer with the trampolines and the ELF note of the libraries that layer loads, so a
        // tool records only what its layers may load.
        .target(name: "CLoadOnUse"),
        .target(name: "CSQLiteLoad", dependencies: ["CLoadOnUse"]),
        .target(name: "CStorageLoad", dependencies: ["CLoadOnUse"]),
        .target(name: "CRegistryLoad", dependencies: ["CLoadOnUse"]),
        .target(name: "CImagingLoad", dependencies: ["CLoadOnUse"]),
        .target(name: "CPaperLoad", dependencies: ["CLoadOnUse"]),
        .target(name: "CFleetLoad", dependencies: ["CLoadOnUse"]),
        // libpng and libjpeg report errors by longjmp; this small C target owns the setjmp.
        .target(name: "CImageCodecs", dependencies: ["CImagingLoad"]),

        // The library, one target a layer; each depends only on the layers below it, and each
        // executable links only the layers it uses (docs/architecture.md; the link table test).
        .target(
            name: "VaultCore",
            dependencies: ["CSodium", "CSecp256k1", "CUnistring", "CLoadOnUse"]
        ),
        // The operating system's side of VaultCore: the write path, bounded reads, s3:// names
        // and the ObjectAccess a store provides, child processes (issue 39).
        .target(name: "VaultFiles", dependencies: ["VaultCore", "CFileSystem"]),
        .target(name: "VaultStorage", dependencies: ["VaultCore", "VaultFiles", "CCurl", "CStorageLoad"]),
        // SQLite's one owner, for the two layers that keep a database (VaultFleet, VaultRegistry):
        // a layer of its own, so a tool that keeps none does not link libsqlite3.
        .target(name: "VaultSQLite", dependencies: ["VaultCore", "CSQLite", "CSQLiteLoad"]),
        .target(name: "VaultFleet", dependencies: ["VaultCore", "VaultFiles", "VaultStorage", "VaultSQLite", "CZlib", "CFleetLoad"]),
        .target(name: "VaultRegistry", dependencies: ["VaultCore", "VaultFiles", "VaultSQLite", "CLibPQ", "CRegistryLoad"]),
        .target(name: "VaultImaging", dependencies: ["VaultCore", "CQRencode", "CZBar", "CImageCodecs", "CImagingLoad"]),
        .target(
            name: "VaultPaper",
            dependencies: ["VaultCore", "VaultImaging", "CCairo", "CZxcvbn", "CLibCrypto", "CPaperLoad"],
            swiftSettings: [pageHeaders]
        ),
        .target(
            name: "CLISupport",
            dependencies: [
                "VaultCore", "VaultFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // VERSION (a symbolic link to the top-level file) is compiled in: every tool's
            // --version, the manual pages and the Debian package read the one number.
            resources: [.embedInCode("VERSION")]
        ),
        // Pictures with QR codes on the command line, for the tools that read or make them.
        .target(name: "CLIPictures", dependencies: ["CLISupport", "VaultCore", "VaultImaging"]),
        .executableTarget(
            name: "vault-tool",
            dependencies: [
                "VaultCore", "VaultFiles", "VaultStorage", "VaultFleet", "CLISupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "recovery-sheet",
            dependencies: [
                "VaultCore", "VaultFiles", "VaultStorage", "VaultImaging", "VaultPaper", "CLISupport", "CLIPictures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Templates/ (a symbolic link to the top-level folder) is compiled into the binary,
            // so a copied binary still has its wording.
            exclude: ["Templates/README.md"],
            resources: [.embedInCode("Templates")]
        ),
        .executableTarget(
            name: "rotation-planner",
            dependencies: [
                "VaultCore", "VaultFiles", "VaultStorage", "CLISupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Templates/README.md"],
            resources: [.embedInCode("Templates")]
        ),
        .executableTarget(
            name: "device-revoker",
            dependencies: [
                "VaultCore", "VaultFiles", "VaultStorage", "VaultRegistry", "CLISupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "device-link",
            dependencies: [
                "VaultCore", "VaultImaging", "CLISupport", "CLIPictures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Fuzzing (Fuzz/README.md): the targets are a library, so the tests replay the corpus
        // through the same code; vault-fuzz runs them under libFuzzer when built by scripts/fuzz.
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "FuzzTargets", dependencies: ["VaultCore", "VaultFleet", "VaultRegistry", "VaultImaging", "VaultPaper"]),
        .executableTarget(name: "vault-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"]),
        // The floor of a batch migration (issue 29): each unavoidable step timed on its own, for
        // scripts/bench. Not a tool users get: no product, not packaged.
        .executableTarget(name: "vault-floor", dependencies: ["VaultCore", "VaultFiles"]),

        .testTarget(
            name: "VaultCoreTests",
            dependencies: [
                "VaultCore", "VaultFiles", "VaultStorage", "VaultSQLite", "VaultFleet", "VaultRegistry", "VaultImaging", "VaultPaper", "FuzzTargets",
            ],
            exclude: ["Vectors"]
        ),
        .testTarget(
            name: "CLITests",
            // Depending on the executable makes `swift test` build it before the tests run it.
            dependencies: ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link", "VaultCore", "VaultFiles", "VaultFleet", "VaultStorage", "VaultImaging"],
            exclude: ["Golden"]
        ),
    ]
)
