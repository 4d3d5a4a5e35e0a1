#!/usr/bin/env python3
"""Checks each tool's linked C libraries (DT_NEEDED, from readelf -d) against Tests/link-table.txt.

Usage: check_links.py BIN_DIR. Prints one line a tool and exits 1 when any differs. The Swift
runtime, Foundation and the C and C++ runtimes are not counted: every tool links them.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = re.compile(r"^(libswift\w*|libFoundation\w*|libdispatch|libBlocksRuntime|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|ld-linux-aarch64|libclang_rt\.\w+)\.so")
# What the issue that split the layers names as never linked by these tools; and the page
# libraries (cairo, Pango, poppler) belong to recovery-sheet alone.
PAGES = {"libcairo", "libpango-1.0", "libpangocairo-1.0", "libpoppler-glib"}
NEVER = {
    "device-link": {"libcurl", "libpq", "libsqlite3", "libfreetype"} | PAGES,
    "device-revoker": {"libqrencode", "libzbar", "libpng16", "libjpeg", "libfreetype"} | PAGES,
    "vault-tool": {"libqrencode", "libzbar", "libfreetype", "libpng16", "libjpeg", "libpq"} | PAGES,
    "rotation-planner": {"libqrencode", "libzbar", "libfreetype", "libpng16", "libjpeg", "libpq"} | PAGES,
}


def table():
    expected = {}
    for line in (ROOT / "Tests" / "link-table.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            tool, *libraries = line.split()
            expected[tool] = set(libraries)
    return expected


def linked(binary):
    output = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", output)
    return {name.split(".so")[0] for name in names if not RUNTIME.match(name)}


def check(bin_dir):
    """(tool, expected, linked) for every tool in the table."""
    return [(tool, expected, linked(Path(bin_dir) / tool)) for tool, expected in table().items()]


def main():
    failed = False
    for tool, expected, found in check(sys.argv[1]):
        wrong = (found != expected) or bool(found & NEVER.get(tool, set()))
        failed |= wrong
        extra, missing = sorted(found - expected), sorted(expected - found)
        print(f"{'FAIL' if wrong else 'ok  '} {tool:17} {' '.join(sorted(found))}"
              + (f"   not in the table: {' '.join(extra)}" if extra else "") + (f"   missing: {' '.join(missing)}" if missing else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
