"""Help as users meet it (issue 12): every leaf command of every tool, found from the tools' own
`--experimental-dump-help`, has at least one example, and no example line is wider than a
terminal's 80 columns less the help's margin, so a command is never wrapped in its middle (long
ones continue on the next line after ` \\`)."""
import json
import subprocess

import pytest

from workspace import BIN

TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]
WIDTH = 78


def leaves():
    found = []
    for tool in TOOLS:
        result = subprocess.run([str(BIN / tool), "--experimental-dump-help"], capture_output=True, timeout=20)
        assert result.returncode == 0, result.stderr

        def walk(command, path):
            subcommands = command.get("subcommands") or []
            if not subcommands and path[-1] != "help":
                found.append((" ".join(path), command.get("discussion") or ""))
            for sub in subcommands:
                walk(sub, path + [sub["commandName"]])

        walk(json.loads(result.stdout)["command"], [tool])
    return found


LEAVES = leaves()


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
