#!/usr/bin/env bash
# Runs inside the clean Debian 12 root that scripts/package --check makes, as root, with the
# packages and this script copied to /tmp/hvt-check (docs/packaging.md). Every check says what it
# checks; the first that fails ends the run with its message, and so fails the package check.
#
#   package-check-root.sh install FLEET_DEB DEB VERSION
#                                               apt installs both; no Swift, no build tools here;
#                                               the fleet package's Depends has none of the sheets' libraries
#   package-check-root.sh tools VERSION         what a support desk and an operator run
#   package-check-root.sh manuals               man renders each page without a warning; bash completes
#   package-check-root.sh remove                apt-get remove leaves no file of either package
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
TOOLS=(vault-tool recovery-sheet rotation-planner device-revoker device-link)
PACKAGES=(household-vault-tools-fleet household-vault-tools)
WORK=/tmp/hvt-check
OWNED=$WORK/package-files.txt

ok() { printf 'package check: ok: %s\n' "$*"; }
fail() { printf 'package check: FAILED: %s\n' "$*" >&2; exit 1; }

install_package() {
  local fleet_deb="$1" deb="$2" version="$3" package
  for tool in swift swiftc cc gcc clang ld dpkg-buildpackage; do
    ! command -v "$tool" >/dev/null || fail "the clean root has $tool; it must have no Swift and no build tools"
  done
  ! compgen -G '/usr/lib/swift*' >/dev/null || fail "the clean root has a Swift runtime under /usr/lib"
  # A fleet image installs the fleet package alone: its Depends must not pull the sheets' libraries in.
  local fleet_depends
  fleet_depends="$(dpkg-deb -f "$fleet_deb" Depends)"
  ! grep -Eq 'cairo|pango|poppler|zbar|qrencode|libpq|fonts-' <<< "$fleet_depends" \
    || fail "the fleet package depends on a library vault-tool does not link: $fleet_depends"
  grep -q 'ca-certificates' <<< "$fleet_depends" || fail "the fleet package does not depend on ca-certificates: $fleet_depends"
  # libcurl is loaded on use (issue 48): no DT_NEEDED entry for dpkg-shlibdeps to see.
  grep -q 'libcurl4' <<< "$fleet_depends" || fail "the fleet package does not depend on libcurl4, which vault-tool loads: $fleet_depends"
  apt-get install -y -q --no-install-recommends "$fleet_deb" "$deb" > "$WORK/apt-install.log" 2>&1 \
    || { cat "$WORK/apt-install.log" >&2; fail "apt-get install $fleet_deb $deb"; }
  : > "$OWNED"
  for package in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${Version}' "$package")" = "$version" ] \
      || fail "the installed $package is not version $version"
    dpkg -L "$package" >> "$OWNED"
    ok "apt-get install ./${package}_${version}_amd64.deb resolved its Depends: $(dpkg-query -W -f='${Depends}' "$package")"
  done
}

check_tools() {
  local version="$1"
  cd "$WORK"
  for tool in "${TOOLS[@]}"; do
    [ "$(command -v "$tool")" = "/usr/bin/$tool" ] || fail "$tool is not /usr/bin/$tool"
    [ "$("$tool" --version | head -n 1)" = "$version" ] || fail "$tool --version does not say $version"
    "$tool" --version | grep -q 'vaults of envelope format' || fail "$tool --version names no vault format"
    "$tool" --help > /dev/null || fail "$tool --help"
  done
  ok "every tool's --version says $version and the formats; every --help works"

  # A new parent key; then the example household (whose document names the example key) sealed,
  # inspected, printed and restored.
  vault-tool keygen -o new-parent.nsec 2> /dev/null
  [ "$(stat -c %a new-parent.nsec)" = 600 ] || fail "keygen's key file is not 0600"
  install -m 600 household.nsec parent.nsec
  vault-tool seal --key-file parent.nsec -o household.vault household.json
  vault-tool inspect --key-file parent.nsec household.vault > inspect.txt
  grep -q . inspect.txt || fail "inspect printed nothing"
  vault-tool check --key-file parent.nsec household.vault > /dev/null
  ok "keygen, seal the example household, inspect and check it"
  for format in png pdf; do
    recovery-sheet generate --key-file parent.nsec --label "Check family" -o "sheet.$format" 2> /dev/null
    recovery-sheet scan "sheet.$format" -o "restored-from-$format.nsec" 2> /dev/null
    cmp -s parent.nsec "restored-from-$format.nsec" || fail "the key scanned back from the $format sheet differs"
    recovery-sheet verify "sheet.$format" --vault household.vault > /dev/null 2>&1 \
      || fail "the $format sheet does not verify against the vault"
  done
  ok "recovery sheet as PNG and PDF (fonts found where the package's Depends put them), scanned back to the same key"

  # A support desk's bulk revoke, on SQLite.
  printf '%s\n' \
    '{"user_did": "did:plc:a", "device_id": "d0", "device_mls_did": "did:plc:a#d0", "signature_public_key": "a0"}' \
    '{"user_did": "did:plc:a", "device_id": "d1", "device_mls_did": "did:plc:a#d1", "signature_public_key": "a1"}' > devices.jsonl
  printf '%s\n' \
    '{"convo_id": "c", "member_mls_did": "did:plc:a#d0", "user_did": "did:plc:a", "device_id": "d0", "joined_at": "2025-01-01T00:00:00Z", "is_admin": true}' \
    '{"convo_id": "c", "member_mls_did": "did:plc:a#d1", "user_did": "did:plc:a", "device_id": "d1", "joined_at": "2025-01-01T00:00:00Z", "is_admin": true}' > members.jsonl
  device-revoker registry init --db registry.sqlite 2> /dev/null
  device-revoker registry import --db registry.sqlite --devices devices.jsonl --members members.jsonl > /dev/null 2>&1
  device-revoker registry revoke --db registry.sqlite --device 'did:plc:a#d1' --reason lost --expect-revocations 1 \
    --ops ops.jsonl > /dev/null 2>&1
  grep -q '"mls.remove"' ops.jsonl || fail "the revoke wrote no mls.remove operation"
  device-revoker registry devices --db registry.sqlite --revoked > revoked.txt 2> /dev/null
  grep -q 'd1' revoked.txt || fail "the revoked device is not listed as revoked"
  ok "registry init, import and revoke on SQLite"
}

check_manuals() {
  apt-get install -y -q --no-install-recommends man-db bash-completion > "$WORK/apt-tools.log" 2>&1 \
    || { cat "$WORK/apt-tools.log" >&2; fail "installing man-db and bash-completion to check the pages"; }
  for tool in "${TOOLS[@]}"; do
    local warnings
    warnings="$(MANWIDTH=80 man --warnings "$tool" 2>&1 > "$WORK/$tool.man.txt")"
    [ -z "$warnings" ] || fail "man $tool warns: $warnings"
    grep -q "household-vault-tools $VERSION" "$WORK/$tool.man.txt" || fail "man $tool names no version $VERSION"
  done
  ok "man renders every page without a warning, each naming household-vault-tools $VERSION"
  local completions
  completions="$(bash -c '
    source /usr/share/bash-completion/bash_completion
    _completion_loader vault-tool
    function=$(complete -p vault-tool | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
    COMP_WORDS=(vault-tool se); COMP_CWORD=1; COMP_LINE="vault-tool se"; COMP_POINT=${#COMP_LINE}
    "$function" vault-tool se vault-tool
    printf "%s\n" "${COMPREPLY[@]}"')"
  grep -qx seal <<< "$completions" || fail "bash does not complete 'vault-tool se' to seal (got: $completions)"
  ok "bash completes 'vault-tool se' to seal"
}

remove_package() {
  apt-get remove -y -q "${PACKAGES[@]}" > "$WORK/apt-remove.log" 2>&1 \
    || { cat "$WORK/apt-remove.log" >&2; fail "apt-get remove"; }
  local package
  for package in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || echo not-installed)" = not-installed ] \
      || fail "dpkg still knows $package after apt-get remove"
  done
  local left=0 path
  while read -r path; do
    [ "$path" = /. ] && continue
    if [ -d "$path" ] && [ ! -L "$path" ]; then
      # A folder may stay only while another package owns it (/usr/bin, /usr/share/man/man1).
      dpkg -S "$path" > /dev/null 2>&1 || { printf 'left behind: %s/\n' "$path" >&2; left=1; }
    elif [ -e "$path" ] || [ -L "$path" ]; then
      printf 'left behind: %s\n' "$path" >&2; left=1
    fi
  done < "$OWNED"
  [ "$left" -eq 0 ] || fail "apt-get remove left files of the packages behind"
  ok "apt-get remove left nothing of either package ($(wc -l < "$OWNED") paths checked)"
}

case "${1:-}" in
  install) install_package "$2" "$3" "$4" ;;
  tools) check_tools "$2" ;;
  manuals) VERSION="$2"; check_manuals ;;
  remove) remove_package ;;
  *) fail "usage: package-check-root.sh install FLEET_DEB DEB VERSION | tools VERSION | manuals VERSION | remove" ;;
esac
