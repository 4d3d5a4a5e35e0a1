"""Help as users meet it (issue 12): every leaf command of every tool, found from the tools' own
`--experimental-dump-help`, has at least one example, and no example line is wider than a
terminal's 80 columns less the help's margin, so a command is never wrapped in its middle (long
ones continue on the next line after ` \\`)."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from workspace import BIN, TOOLS, command_tree

WIDTH = 78


def leaves(metavariables=None):
    found = []
    # A hidden command is the tool's own plumbing (recovery-sheet's _read-pdf), not for people.
    for path, command in command_tree(shown_only=True):
        if metavariables is not None:
            for argument in command.get("arguments") or []:
                if argument.get("kind") != "flag" and argument.get("valueName"):
                    metavariables.append((" ".join(path), argument["valueName"]))
        if not command.get("subcommands") and path[-1] != "help":
            found.append((" ".join(path), command.get("discussion") or ""))
    return found


METAVARIABLES = []
LEAVES = leaves(METAVARIABLES)

# One style (docs/conventions.md): upper-case nouns for the kind of value, no file extensions, no
# one-letter names except N for a number.
METAVARIABLE = re.compile(r"^(N|[A-Z][A-Z_]+(#[A-Z]+)?)$")


def test_the_tools_were_read():
    assert len(LEAVES) >= 30, [name for name, _ in LEAVES]


@pytest.mark.parametrize("name,discussion", LEAVES, ids=[name for name, _ in LEAVES])
def test_every_command_has_an_example_that_fits(name, discussion):
    assert "Example" in discussion, f"'{name} --help' shows no example"
    examples = discussion[discussion.index("Example"):].split("\n")[1:]
    assert any(line.strip().startswith(name.split()[0]) for line in examples), f"'{name} --help': no example runs the tool"
    wide = [line for line in examples if len(line) > WIDTH]
    assert not wide, f"'{name} --help' has example lines wider than {WIDTH} columns (break them with ' \\'): {wide}"
    for line, following in zip(examples, examples[1:]):
        if line.rstrip().endswith("\\"):
            assert following.startswith("    "), f"'{name} --help': a continuation line must be indented: {following!r}"


def test_metavariables_follow_one_style():
    assert len(METAVARIABLES) > 50
    odd = sorted({(command, name) for command, name in METAVARIABLES if not METAVARIABLE.match(name)
                  and name != "subcommands"})
    assert not odd, odd


# The parser's look for a completion-script request is made by the tools only when an argument is
# spelt as that option (CLISupport's ToolRoot; docs/performance.md): every spelling and place the
# parser accepts must still write the script, and help must name the tool alone, as before.
def completion(tool, *arguments):
    result = subprocess.run([str(BIN / tool), *arguments], capture_output=True, timeout=20)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_a_completion_script_is_written_however_it_is_asked_for(tool, shell):
    separate = completion(tool, "--generate-completion-script", shell)
    assert tool in separate and len(separate.splitlines()) > 20, separate[:200]
    subcommand = next(name for name, _ in LEAVES if name.startswith(tool + " ")).split()[1]
    assert subcommand in separate
    assert completion(tool, f"--generate-completion-script={shell}") == separate
    # After a subcommand, as the parser reads the whole line for it.
    assert completion(tool, subcommand, "--generate-completion-script", shell) == separate


@pytest.mark.parametrize("tool", TOOLS)
def test_a_completion_script_for_the_shell_in_use(tool):
    script = subprocess.run([str(BIN / tool), "--generate-completion-script"], capture_output=True, timeout=20,
                            env={"PATH": "/usr/bin:/bin", "SHELL": "/usr/bin/zsh"})
    assert script.returncode == 0, script.stderr
    assert script.stdout.decode() == completion(tool, "--generate-completion-script", "zsh")


@pytest.mark.parametrize("name", [name for name, _ in LEAVES], ids=[name for name, _ in LEAVES])
def test_help_names_the_command_and_nothing_before_it(name):
    tool, *path = name.split()
    for arguments in ([*path, "--help"], ["help", *path]):
        shown = subprocess.run([str(BIN / tool), *arguments], capture_output=True, timeout=20)
        assert shown.returncode == 0, shown.stderr
        usage = [line for line in shown.stdout.decode().splitlines() if line.startswith("USAGE:")]
        assert usage and usage[0].startswith(f"USAGE: {name} "), (arguments, usage)


@pytest.mark.parametrize("tool", TOOLS)
def test_the_manual_sees_no_command_above_the_tool(tool):
    dumped = json.loads(subprocess.run([str(BIN / tool), "--experimental-dump-help"], capture_output=True,
                                       timeout=20, check=True).stdout)
    assert dumped["command"]["commandName"] == tool
    assert not dumped["command"].get("superCommands")
    version = subprocess.run([str(BIN / tool), "--version"], capture_output=True, timeout=20, check=True).stdout.decode()
    assert version.splitlines()[0] == (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()
    assert "envelope format 1, cipher suite 1, schema versions 1, 2 and 3" in version


@pytest.mark.parametrize("tool", TOOLS)
def test_a_shell_with_no_completion_script_is_a_usage_error_on_one_line(tool):
    result = subprocess.run([str(BIN / tool), "--generate-completion-script", "nosh"], capture_output=True, timeout=20)
    assert result.returncode == 64, result.stderr
    error = result.stderr.decode()
    assert "\\u{a}" not in error and "'nosh'" in error and "zsh bash fish" in error, error
    assert error.count("\n") == 2 and error.splitlines()[1].startswith(f"{tool}: hint:"), error
