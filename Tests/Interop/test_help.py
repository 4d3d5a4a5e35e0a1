"""Help as users meet it (issue 12): every leaf command of every tool, found from the tools' own
`--experimental-dump-help`, has at least one example, and no example line is wider than a
terminal's 80 columns less the help's margin, so a command is never wrapped in its middle (long
ones continue on the next line after ` \\`)."""
import json
import re
import subprocess

import pytest

from workspace import BIN

TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]
WIDTH = 78


def leaves(metavariables=None):
    found = []
    for tool in TOOLS:
        result = subprocess.run([str(BIN / tool), "--experimental-dump-help"], capture_output=True, timeout=20)
        assert result.returncode == 0, result.stderr

        def walk(command, path):
            subcommands = command.get("subcommands") or []
            if metavariables is not None:
                for argument in command.get("arguments") or []:
                    if argument.get("kind") != "flag" and argument.get("valueName"):
                        metavariables.append((" ".join(path), argument["valueName"]))
            if not subcommands and path[-1] != "help":
                found.append((" ".join(path), command.get("discussion") or ""))
            # A hidden command is the tool's own plumbing (recovery-sheet's _read-pdf), not for people.
            for sub in subcommands:
                if sub.get("shouldDisplay", True):
                    walk(sub, path + [sub["commandName"]])

        walk(json.loads(result.stdout)["command"], [tool])
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
