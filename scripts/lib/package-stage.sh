#!/usr/bin/env bash
# The Debian package's build step (debian/rules runs it; docs/packaging.md): the five tools in
# release, and under .build/package/stage the files debhelper installs beside them:
#
#   man/TOOL.1                 the manual page, generated from the tool's own parser
#   bash-completion/TOOL       bash, zsh and fish completions, from the tool itself
#   zsh/_TOOL
#   fish/TOOL.fish
#
# The manual pages' date is the Debian changelog's (SOURCE_DATE_EPOCH, which debhelper sets from
# it) and their header names the VERSION file's version, so the same checkout gives the same pages.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/setup.sh

TOOLS=(vault-tool recovery-sheet rotation-planner device-revoker device-link)
STAGE=.build/package/stage
VERSION="$(cat VERSION)"
DATE="$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%F)"

log "building the tools and generate-manual (release)"
build_release "${TOOLS[@]}"
build_generate_manual

rm -rf "$STAGE"
mkdir -p "$STAGE/man" "$STAGE/bash-completion" "$STAGE/zsh" "$STAGE/fish"
for tool in "${TOOLS[@]}"; do
  binary=".build/release/$tool"
  first_line="$("$binary" --version | head -n 1)"
  if [ "$first_line" != "$VERSION" ]; then
    log "error: $tool --version says '$first_line', VERSION says '$VERSION': rebuild"
    exit 1
  fi
  write_manual_and_completions "$binary" "$DATE" "$STAGE/man" "$STAGE/bash-completion" "$STAGE/zsh" "$STAGE/fish"
done
