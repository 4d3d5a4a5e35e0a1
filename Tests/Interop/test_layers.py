"""The layers hold what docs/architecture.md says (issue 39): VaultCore is bytes in, bytes out,
and the operating system's side (the write path, bounded reads, child processes) is VaultFiles',
a target of its own above it. Read from the sources and Package.swift: a VaultCore file that
opens, reads, writes, stats or spawns again fails here, whichever test of its own it passes."""
import re

import pytest

from workspace import ROOT

SOURCES = ROOT / "Sources"

# The C library's file, descriptor and process calls, and the Swift types over them: none is
# VaultCore's. Glibc itself stays allowed there (threads, errno, vsnprintf, free).
CALLS = ["open", "openat", "creat", "read", "pread", "readv", "write", "pwrite", "writev", "close", "fstat", "stat",
         "lstat", "fstatat", "statx", "posix_spawn", "posix_spawnp", "fork", "vfork", "execve", "execv", "execvp",
         "waitpid", "pipe", "pipe2", "dup", "dup2", "dup3", "unlink", "unlinkat", "rename", "renameat", "link", "linkat",
         "mkdir", "mkdirat", "rmdir", "fsync", "fdatasync", "syncfs", "ftruncate", "umask", "chmod", "fchmod", "fopen",
         "fdopen", "fread", "fwrite", "opendir", "readdir", "poll", "kill", "ioctl", "isatty", "getenv"]
TYPES = ["FileManager", "FileHandle", "FileDescriptor", "Process"]
IMPORTS = ["CFileSystem", "Foundation", "SystemPackage", "System"]

# A call of one of those names that is not a method (`Vault.open(…)`) or a declaration (`func
# read(…)`); it is the C function's unless an argument has a label (`write(to: &out, …)`,
# `open(bytes, with: access)`: a Swift function's), which C's never have.
CALL = re.compile(r"(?:(?<![\w.])(?<!func )|(?<=Glibc\.))(" + "|".join(CALLS) + r")\s*\(")
# A type by its name, or by its module's (`FoundationEssentials.FileManager`); a module imported
# whole, or one declaration of it (`import struct Foundation.URL`).
TYPE = re.compile(r"(?:(?<![\w.])|(?<=Foundation\.)|(?<=FoundationEssentials\.))(" + "|".join(TYPES) + r")\b")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)?(?:\w+\s+)?import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?("
                    + "|".join(IMPORTS) + r")(?:\.\w+)*\s*$", re.MULTILINE)
STRINGS = re.compile(r'#?"""(.*?)"""#?|#"(?:[^"\n]|"(?!#))*"#|"(?:[^"\\\n]|\\.)*"', re.DOTALL)
COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def code(text):
    """The text without its string literals and comments (which may name any call)."""
    return COMMENTS.sub("", STRINGS.sub('""', text))


def labelled(body, start):
    """Whether the argument list opening at `start` (after its parenthesis) has a label at its
    own depth (`name:`, not a ternary's ` : ` nor one inside a closure or nested call)."""
    depth, outer = 0, []
    for char in body[start:]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0:
            outer.append(char)
    return re.search(r"(?:^|[,(\s])\w+:(?!:)", "".join(outer)) is not None


def os_calls(text):
    """What in `text` (Swift source) talks to the operating system: C calls, types, imports."""
    body = code(text)
    found = [f"{match.group(1)}(" for match in CALL.finditer(body) if not labelled(body, match.end())]
    found += [match.group(1) for match in TYPE.finditer(body)]
    found += [f"import {match.group(1)}" for match in IMPORT.finditer(body)]
    return found


def targets():
    """Package.swift's targets: name -> the names it depends on (products by their own name)."""
    text = (ROOT / "Package.swift").read_text()
    starts = list(re.finditer(r'\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"', text))
    found = {}
    for start, end in zip(starts, starts[1:] + [None]):
        declaration = text[start.end():end.start() if end else len(text)]
        dependencies = re.search(r"dependencies:\s*\[(.*?)\]", declaration, re.DOTALL)
        found[start.group(1)] = set(re.findall(r'"([^"]+)"', dependencies.group(1))) if dependencies else set()
    return found


def test_vaultcore_touches_no_file_descriptor_or_process():
    files = sorted((SOURCES / "VaultCore").rglob("*.swift"))
    assert len(files) > 40, files
    wrong = {str(path.relative_to(ROOT)): calls for path in files if (calls := os_calls(path.read_text()))}
    assert wrong == {}


def test_the_planted_calls_are_found():
    """The sweep itself: each way VaultCore could touch the system again is caught, and its own
    functions of the same names, comments and strings are not."""
    planted = """
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        let count = read(descriptor, buffer.baseAddress, flag ? buffer.count : 1)
        _ = Glibc.write(1, bytes, bytes.count)
        guard fstat(descriptor, &info) == 0 else { return }
        posix_spawn(&child, path, &actions, nil, argv, environ)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        internal import CFileSystem
        import Foundation
        let contents = FoundationEssentials.FileManager.default.contents(atPath: path)
        import struct Foundation.URL
    """
    assert os_calls(planted) == ["open(", "read(", "write(", "fstat(", "posix_spawn(", "FileManager", "FileManager", "import CFileSystem",
                                 "import Foundation", "import Foundation"]
    innocent = """
        import FoundationEssentials
        import Glibc
        let opened = try Vault.open(bytes, with: access)
        let reopened = try open(bytes, with: access).document
        let folded = try read(Array(text.utf8), limit: 20, what: "a name")
        public static func read(words typed: SecretBytes) throws -> Share { try Self.read(words: typed) }
        write(to: &out, pretty: pretty, indent: 0)
        guard heading.read(tokens) else { return false }
        // open(path) here once; now the caller's
        let message = "could not open(2) the file"
        pthread_join(thread, nil)
    """
    assert os_calls(innocent) == []


def test_vaultfiles_is_a_layer_of_its_own_over_vaultcore():
    layers = targets()
    assert {"VaultCore", "CFileSystem"} <= layers["VaultFiles"]
    assert not layers["VaultCore"] & {"VaultFiles", "CFileSystem"}, layers["VaultCore"]
    # The write path and child processes are there, and only there.
    for name in ["AtomicFile", "OutputLocation", "FileSet", "BoundedRead", "Locations", "ChildProcess", "SecretCommand"]:
        assert (SOURCES / "VaultFiles" / f"{name}.swift").exists(), name
        assert not list((SOURCES / "VaultCore").rglob(f"{name}.swift")), name
    # Every layer that writes through it says so; VaultImaging and VaultPaper need no file.
    for layer in ["VaultStorage", "VaultFleet", "VaultRegistry", "CLISupport"]:
        assert "VaultFiles" in layers[layer], layer
    assert not {"VaultFiles", "CFileSystem"} & (layers["VaultImaging"] | layers["VaultPaper"])


def test_cfilesystem_has_one_owner_and_the_file_mode_is_read_once():
    """CFileSystem is VaultFiles' alone, and the mode of a public output (0666 less the umask,
    which can only be read by setting it) is computed in one place: AtomicFile.publicFileMode."""
    swift = sorted(SOURCES.rglob("*.swift"))
    importers = {path.parent.relative_to(SOURCES).parts[0] for path in swift if re.search(r"^\s*(?:\w+\s+)?import CFileSystem\b", path.read_text(), re.MULTILINE)}
    assert importers == {"VaultFiles"}
    umasks = [str(path.relative_to(ROOT)) for path in swift for _ in re.finditer(r"(?<![\w.])umask\s*\(", code(path.read_text()))]
    assert umasks == ["Sources/VaultFiles/AtomicFile.swift"] * 2  # set, then set back
    definitions = [str(path.relative_to(ROOT)) for path in swift if re.search(r"static let publicFileMode\b", path.read_text())]
    assert definitions == ["Sources/VaultFiles/AtomicFile.swift"]


def test_every_command_names_itself():
    """Issue 48: every command's CommandConfiguration names its commandName. Without one,
    swift-argument-parser derives it from the type's name with String(describing:) each time it
    builds the command tree (every run, --version included), and the Swift runtime's first
    conformance lookups behind that took a tenth of a tool's start-up (docs/performance.md)."""
    unnamed = []
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        text = path.read_text()
        for match in re.finditer(r"CommandConfiguration\(", text):
            call = text[match.end():match.end() + 400]
            if not re.match(r"\s*commandName:", call):
                unnamed.append(f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}")
    assert not unnamed, f"commands without a commandName: {unnamed}"


# The documents a tool writes as their formats say (text as UTF-8 verbatim): every other JSON a
# tool writes is a report, a log line or operations, written with `reported()`.
JSON_DOCUMENTS = {"rotation-planner/PlanCommand.swift", "recovery-sheet/Codes.swift"}


def test_every_json_a_tool_writes_goes_through_the_one_renderer():
    """Issue 44: JSON output escapes what text output escapes (DisplayRule): a `--json` report
    passed U+2028, U+202E and zero-width characters raw to the terminal. The tools and CLISupport
    write JSON with `JSONValue.reported()` (or `JSONValue.escapingInvisibles` over JSON already
    written); `serialized()`, whose bytes documents are signed and hashed over, only for the
    documents above, each marked as such where it is written."""
    found = []
    for folder in ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link", "CLISupport", "CLIPictures"]:
        for path in sorted((SOURCES / folder).rglob("*.swift")):
            relative = str(path.relative_to(SOURCES))
            lines = path.read_text().splitlines()
            for number, line in enumerate(lines):
                if re.search(r"\.serialized\(|\.json\(\)", line) and not line.lstrip().startswith("//"):
                    documented = relative in JSON_DOCUMENTS and number > 0 and "A document, not a report" in lines[number - 1]
                    wrapped = "escapingInvisibles(" in line
                    if not (documented or wrapped):
                        found.append(f"{relative}:{number + 1}: {line.strip()}")
    assert not found, "JSON written without the renderer:\n" + "\n".join(found)


# Each library loaded on use (issue 48) is called only by its owner, which loads it first: the
# files that may import its module (or, for libpng and libjpeg, the C target that calls them).
LOADED_ON_USE_OWNERS = {
    "CCurl": {"VaultStorage/HTTPClient.swift"},
    "CLibPQ": {"VaultRegistry/PostgresClient.swift"},
    "CQRencode": {"VaultImaging/QRCode.swift"},
    "CZBar": {"VaultImaging/QRScanner.swift"},
    "CImageCodecs": {"VaultImaging/GrayImage.swift"},
    "CCairo": {"VaultPaper/Render/PageRenderer.swift"},
    "CZxcvbn": {"VaultPaper/PassphraseStrength.swift"},
    "CLibCrypto": {"VaultPaper/Codes/RecoveryCode.swift"},
}


@pytest.mark.parametrize("module", LOADED_ON_USE_OWNERS)
def test_a_library_loaded_on_use_has_one_owner_that_loads_it(module):
    """Only its owner imports the module, and the owner calls LoadOnUse.require: a new file that
    called the library directly could reach it before it is loaded (exit 70, a defect)."""
    importers = {str(path.relative_to(SOURCES)) for path in SOURCES.rglob("*.swift")
                 if re.search(rf"^\s*(?:\w+\s+)?import {module}\b", path.read_text(), re.MULTILINE)}
    assert importers == LOADED_ON_USE_OWNERS[module]
    for owner in importers:
        assert "LoadOnUse.require" in (SOURCES / owner).read_text() or "requireLibraries" in (SOURCES / owner).read_text(), owner
