#!/usr/bin/env python3
"""Checks each tool's linked C libraries (DT_NEEDED, from readelf -d) and the libraries it may
load on use (the sonames of its ELF .note.dlopen notes) against Tests/link-table.txt, that no
tool carries ICU, and the size budgets of the same file.

Usage:
  check_links.py BIN_DIR              the libraries, and no ICU (any build)
  check_links.py --release BIN_DIR    the same, each tool's stripped size within its budget, and
                                      the start-up rules of a release build (build_release's
                                      -static-stdlib, the C++ runtime inside, no run path)
  check_links.py --packages DEB...    the Debian packages (every part) within the package budget

Prints one line a tool (or package) and exits 1 when any check fails. The Swift runtime,
FoundationEssentials and the C and C++ runtimes are not counted as C libraries: every tool links
them.
"""
import json
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = re.compile(r"^(libswift\w*|libFoundation\w*|lib_Foundation\w*|libdispatch|libBlocksRuntime|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|ld-linux-aarch64|libclang_rt\.\w+)\.so")
# What the issue that split the layers names as never linked by these tools; and the page
# libraries (cairo, Pango, poppler) belong to recovery-sheet alone.
PAGES = {"libcairo", "libpango-1.0", "libpangocairo-1.0", "libpoppler-glib"}
NEVER = {
    "device-link": {"libcurl", "libpq", "libsqlite3", "libfreetype"} | PAGES,
    "device-revoker": {"libqrencode", "libzbar", "libpng16", "libjpeg", "libfreetype"} | PAGES,
    "vault-tool": {"libqrencode", "libzbar", "libfreetype", "libpng16", "libjpeg", "libpq"} | PAGES,
    "rotation-planner": {"libqrencode", "libzbar", "libfreetype", "libpng16", "libjpeg", "libpq"} | PAGES,
}


# ICU, linked (a debug build's DT_NEEDED: Foundation needs it) or carried inside (a static
# build's data, icudtNN, which keeps its name in a stripped binary too).
ICU_LIBRARY = re.compile(r"^(libicu\w*|lib_FoundationICU|libFoundation|libFoundationInternationalization)\.so")
ICU_DATA = re.compile(rb"icudt\d\d")
MB = 1_000_000


def _rows(keyword=None):
    for line in (ROOT / "Tests" / "link-table.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            first, *rest = line.split("#")[0].split()
            if keyword is None and first not in ("budget", "icu-waiver", "loads"):
                yield first, rest
            elif first == keyword:
                yield rest


def table():
    return {tool: set(libraries) for tool, libraries in _rows()}


def loads_table():
    """The sonames each tool may load on use."""
    return {tool: set(sonames) for tool, *sonames in _rows("loads")}


# The note systemd's and the FDO packaging spec's tools read: owner "FDO", type 0x407c0c0a, a
# JSON array of {feature, description, priority, soname: [...]}.
DLOPEN_NOTE_TYPE = 0x407C0C0A


def dlopen_notes(binary):
    """The entries of the binary's .note.dlopen notes (none: [])."""
    with tempfile.TemporaryDirectory() as folder:
        section = Path(folder) / "notes"
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.note.dlopen", str(binary), str(section)], check=True)
        data = section.read_bytes() if section.exists() else b""
    entries, offset = [], 0
    while offset + 12 <= len(data):
        name_size, description_size, note_type = struct.unpack_from("<III", data, offset)
        offset += 12
        name = data[offset:offset + name_size].rstrip(b"\0")
        offset += (name_size + 3) & ~3
        description = data[offset:offset + description_size].rstrip(b"\0")
        offset += (description_size + 3) & ~3
        if name == b"FDO" and note_type == DLOPEN_NOTE_TYPE:
            entries.extend(json.loads(description))
    return entries


def loaded(binary):
    """The sonames a binary may load on use, from its notes."""
    return {soname for entry in dlopen_notes(binary) for soname in entry["soname"]}


def budgets():
    """Stripped megabytes (10^6 bytes) each tool may weigh, and "packages", all .debs together."""
    return {name: float(limit) for name, limit in _rows("budget")}


def icu_waivers():
    """Tools allowed ICU for now, each line with its reason; a waiver not needed fails too."""
    return {tool for tools in _rows("icu-waiver") for tool in tools}


def carries_icu(binary):
    return any(ICU_LIBRARY.match(name) for name in needed(binary)) or bool(ICU_DATA.search(Path(binary).read_bytes()))


def stripped_size(binary):
    with tempfile.TemporaryDirectory() as folder:
        stripped = Path(folder) / "stripped"
        subprocess.run(["strip", "--strip-all", "-o", str(stripped), str(binary)], check=True)
        return stripped.stat().st_size


def dynamic_section(binary):
    return subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout


def needed(binary):
    """The binary's DT_NEEDED entries."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic_section(binary))


def linked(binary):
    return {name.split(".so")[0] for name in needed(binary) if not RUNTIME.match(name)}


# What a release build must not ask the loader for at each start (issue 48): the C++ runtime as
# shared libraries (build_release links their archives) and a run path (searched for every
# library before the system's folders).
SHARED_CXX_RUNTIME = re.compile(r"^(libstdc\+\+|libgcc_s)\.so")


def start_up_problem(binary):
    cxx = sorted(name for name in needed(binary) if SHARED_CXX_RUNTIME.match(name))
    if cxx:
        return f"links {' '.join(cxx)} (a release build carries the C++ runtime: build it with build_release)"
    if re.search(r"\((RUNPATH|RPATH)\)", dynamic_section(binary)):
        return "has a run path (build_release builds with --disable-local-rpath)"
    return None


def check(bin_dir):
    """(tool, expected, linked) for every tool in the table."""
    return [(tool, expected, linked(Path(bin_dir) / tool)) for tool, expected in table().items()]


def never_problem(tool, found, loads):
    """The libraries the tool's layers keep from it, linked or loaded."""
    names = found | {soname.split(".so")[0] for soname in loads}
    kept = names & NEVER.get(tool, set())
    return f"never linked or loaded by {tool}: {' '.join(sorted(kept))}" if kept else None


def icu_problem(tool, binary):
    """Why the tool's ICU is wrong, or None: it carries ICU unwaived, or is waived needlessly."""
    carries, waived = carries_icu(binary), tool in icu_waivers()
    if carries and not waived:
        return "carries ICU (Foundation's NSString or ICU data): import FoundationEssentials only"
    if waived and not carries:
        return "carries no ICU: remove its icu-waiver line from Tests/link-table.txt"
    return None


def budget_problem(name, size):
    limit = budgets()[name]
    return f"{size / MB:.1f} MB, over its budget of {limit:g} MB" if size > limit * MB else None


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["--packages"]:
        total = sum(Path(deb).stat().st_size for deb in arguments[1:])
        problem = budget_problem("packages", total)
        print(f"{'FAIL' if problem else 'ok  '} {'packages':17} {total / MB:.1f} MB ({len(arguments) - 1} .deb)" + (f"   {problem}" if problem else ""))
        sys.exit(1 if problem else 0)
    release = arguments[:1] == ["--release"]
    bin_dir = Path(arguments[-1])
    failed = False
    for tool, expected, found in check(bin_dir):
        problems = []
        extra, missing = sorted(found - expected), sorted(expected - found)
        if extra:
            problems.append(f"not in the table: {' '.join(extra)}")
        if missing:
            problems.append(f"missing: {' '.join(missing)}")
        loads, expected_loads = loaded(bin_dir / tool), loads_table().get(tool, set())
        if loads - expected_loads:
            problems.append(f"loads, not in the table: {' '.join(sorted(loads - expected_loads))}")
        if expected_loads - loads:
            problems.append(f"loads missing: {' '.join(sorted(expected_loads - loads))}")
        problems.append(never_problem(tool, found, loads))
        problems.append(icu_problem(tool, bin_dir / tool))
        size = ""
        if release:
            stripped = stripped_size(bin_dir / tool)
            size = f" ({stripped / MB:.1f} MB stripped)"
            problems.append(budget_problem(tool, stripped))
            problems.append(start_up_problem(bin_dir / tool))
        problems = [problem for problem in problems if problem]
        failed |= bool(problems)
        print(f"{'FAIL' if problems else 'ok  '} {tool:17} {' '.join(sorted(found))}{size}; loads {' '.join(sorted(loads)) or 'nothing'}"
              + "".join(f"   {problem}" for problem in problems))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
