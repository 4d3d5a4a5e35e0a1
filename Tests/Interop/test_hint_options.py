"""Every option a tool names to its user exists (issue 37): a hint that says "pass --allow-foo"
when the tool has no --allow-foo sends a person at 3 a.m. in circles.

The options each tool has come from the tool itself (`--experimental-dump-help`, every
subcommand). Two sweeps check against them: every string literal in a tool's own sources and in
CLISupport (which every tool prints through), and every command's --help text. An `--option`
after another tool's name on the same line (`rotation-planner plan --mode …`) is checked against
that tool (help text wraps, so the line before counts too); one after a program outside the suite
(`aws s3 ls --recursive`) is not checked. An option a library's message names (which
docs/conventions.md says it should leave to the tools) must at least be one some tool has."""
import json
import re
import subprocess

import pytest

from workspace import BIN, ROOT

TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]
# Programs outside the suite whose options a hint or an example may name.
OTHER_PROGRAMS = ["aws", "psql", "pg_dump", "sqlite3", "chmod", "curl", "gpg", "age", "openssl", "qrencode", "zbarimg", "swift", "git", "find",
                  "xargs", "pdftoppm", "strace", "scripts/test"]
OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
STRING = re.compile(r'"""(.*?)"""|#"(.*?)"#|"((?:[^"\\\n]|\\.)*)"', re.DOTALL)
LIBRARIES = ["VaultCore", "VaultFiles", "VaultStorage", "VaultFleet", "VaultRegistry", "VaultImaging", "VaultPaper"]


def dump(tool):
    result = subprocess.run([str(BIN / tool), "--experimental-dump-help"], capture_output=True, timeout=20)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["command"]


def commands(tool):
    """(path, command) of every command of the tool, the tool itself included."""
    found = []

    def walk(command, path):
        found.append((path, command))
        for sub in command.get("subcommands") or []:
            walk(sub, path + [sub["commandName"]])

    walk(dump(tool), [tool])
    return found


# swift-argument-parser's own options count too: --help, --version, --experimental-dump-help,
# --generate-completion-script (test_help.py runs it on every tool).
OPTIONS = {tool: {name["name"] for _, command in commands(tool) for argument in command.get("arguments") or []
                  for name in argument.get("names") or [] if name["kind"] == "long"} | {"help", "version", "experimental-dump-help", "generate-completion-script"}
           for tool in TOOLS}


def wrong_options(text, tool):
    """The `--options` in `text` that the tool they are said to belong to does not have."""
    wrong = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        for match in OPTION.finditer(line):
            before = (lines[number - 1] + " " if number else "") + line[:match.start()]
            owners = [(before.rfind(name), name) for name in TOOLS + OTHER_PROGRAMS if re.search(rf"(?<![\w/-]){re.escape(name)}\b", before)]
            owner = max(owners)[1] if owners else tool
            if owner in TOOLS and match.group(1) not in OPTIONS[owner]:
                wrong.append(f"{owner}: --{match.group(1)} in {line.strip()!r}")
    return wrong


def literals(path):
    text = path.read_text()
    # Comments are for the reader of the code, not the user of the tool.
    text = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
    return [next(group for group in match.groups() if group is not None) for match in STRING.finditer(text)]


def test_the_tools_options_were_read():
    assert all(len(OPTIONS[tool]) >= 5 for tool in TOOLS), OPTIONS
    assert {"expect-revocations", "max-share", "force", "allow-unmatched"} <= OPTIONS["device-revoker"]


@pytest.mark.parametrize("tool", TOOLS)
def test_every_option_a_tools_sources_name_exists(tool):
    files = sorted((ROOT / "Sources" / tool).rglob("*.swift"))
    assert files
    texts = [text for path in files for text in literals(path)]
    # The sweep reads the messages, hints and help: a tool names many of its own options.
    assert len({name for text in texts for name in OPTION.findall(text)}) >= 5
    wrong = [f"{path.relative_to(ROOT)}: {problem}" for path in files for text in literals(path) for problem in wrong_options(text, tool)]
    assert wrong == []


def test_every_option_the_shared_layer_names_exists_in_some_tool():
    """CLISupport's messages are printed by every tool: an option they name must be one at least
    one tool has (which one prints it is decided at run time)."""
    every = set().union(*OPTIONS.values())
    wrong = [f"{path.relative_to(ROOT)}: --{name}" for path in sorted((ROOT / "Sources" / "CLISupport").rglob("*.swift"))
             for text in literals(path) for name in OPTION.findall(text) if name not in every]
    assert wrong == []


@pytest.mark.parametrize("tool", TOOLS)
def test_every_option_a_help_text_names_exists(tool):
    wrong = []
    for path, _ in commands(tool):
        result = subprocess.run([str(BIN / path[0]), *path[1:], "--help"], capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, (path, result.stderr)
        wrong += [f"{' '.join(path)} --help: {problem}" for problem in wrong_options(result.stdout, tool)]
    assert wrong == []


def test_the_planted_mistake_is_found():
    """The sweep itself: a hint naming an option the tool lacks, and one naming another tool's
    option as this tool's, are both caught; another tool's own option and an outside program's
    are not."""
    assert wrong_options("pass --expect-revocation 3", "device-revoker") == [
        "device-revoker: --expect-revocation in 'pass --expect-revocation 3'"]
    assert wrong_options("pass --mode compromise", "device-revoker") != []
    assert wrong_options("run rotation-planner plan --mode compromise", "device-revoker") == []
    assert wrong_options("aws s3 ls --recursive", "vault-tool") == []


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_option_a_library_names_exists_in_some_tool(library):
    every = set().union(*OPTIONS.values())

    def named(text):
        """The options the text names as the suite's: not those of another program it quotes
        (`aws sso login --sso-session NAME`)."""
        names = []
        for match in OPTION.finditer(text):
            before = text[:match.start()]
            if not any(re.search(rf"(?<![\w/-]){re.escape(program)}\b", before) for program in OTHER_PROGRAMS):
                names.append(match.group(1))
        return names
    wrong = [f"{path.relative_to(ROOT)}: --{name}" for path in sorted((ROOT / "Sources" / library).rglob("*.swift"))
             for text in literals(path) for name in named(text) if name not in every]
    assert wrong == []
