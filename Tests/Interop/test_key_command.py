"""Keys where operators keep them: --key-command and --vault-key-command (issue 38).

The command is run without a shell and its standard output is the key; a failing command, one
that prints too much or nothing, and shell syntax the tool does not run are each an error that
never quotes what the command printed. Swept over every command of every tool that takes the
options (read from the tools' own help): --help never runs the command, and shell syntax is a
usage error (64) before anything runs.
"""
import random
import shutil
import subprocess
import sys

import pytest

from test_nothing_lost import leaf_commands
from workspace import BIN, FIXTURES, VAULT_TOOL


def tool(*arguments, cwd, **options):
    return subprocess.run([VAULT_TOOL, *arguments], cwd=cwd, capture_output=True, timeout=120, **options)


@pytest.fixture
def keys(tmp_path):
    result = tool("keygen", "-o", "parent.nsec", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = tool("derive", "--key-file", "parent.nsec", "--vault-key-out", "vault.key", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path


def test_a_command_gives_the_same_key_as_the_file(keys):
    folder = keys / "dir with space"
    folder.mkdir()
    (folder / "parent.nsec").write_bytes((keys / "parent.nsec").read_bytes())
    by_file = tool("derive", "--key-file", "parent.nsec", "--device-id", "kitchen", "--json", cwd=keys)
    assert by_file.returncode == 0, by_file.stderr
    for command in ["cat parent.nsec", "cat 'dir with space/parent.nsec'", 'cat "dir with space/parent.nsec"', r"cat dir\ with\ space/parent.nsec"]:
        by_command = tool("derive", "--key-command", command, "--device-id", "kitchen", "--json", cwd=keys)
        assert by_command.returncode == 0, (command, by_command.stderr)
        assert by_command.stdout == by_file.stdout
    # The vault key by command opens the vault as the file does (a fixture of the test kit).
    shutil.copy(FIXTURES / "testkit" / "ok-household.vault", keys / "h.vault")
    shutil.copy(FIXTURES / "keys" / "parent.vaultkey", keys / "fixture.vaultkey")
    (keys / "fixture.vaultkey").chmod(0o600)
    by_file = tool("inspect", "--vault-key-file", "fixture.vaultkey", "h.vault", cwd=keys)
    by_command = tool("inspect", "--vault-key-command", "cat fixture.vaultkey", "h.vault", cwd=keys)
    assert by_file.returncode == by_command.returncode == 0, by_command.stderr
    assert by_file.stdout == by_command.stdout


SECRET_PRINTER = "import sys; sys.stdout.write(open(sys.argv[1]).read()); sys.exit(int(sys.argv[2]))"


@pytest.mark.parametrize("argv, status, message", [
    (["false"], 1, "--key-command 'false' exited with status 1; nothing it printed was used"),
    ([sys.executable, "printer.py", "parent.nsec", "3"], 1, "exited with status 3; nothing it printed was used"),
    (["head", "-c", "5000", "/dev/zero"], 1, "--key-command 'head' printed more than 4096 bytes, more than a key; nothing it printed was used"),
    (["true"], 2, "--key-command 'true' printed nothing"),
    (["no-such-command-hvt"], 1, "could not run --key-command 'no-such-command-hvt'"),
    ([sys.executable, "printer.py", "not-a-key.txt", "0"], 2, "the output of --key-command"),
])
def test_a_failing_command_is_a_clear_error_that_never_quotes_its_output(keys, argv, status, message):
    (keys / "printer.py").write_text(SECRET_PRINTER)
    (keys / "not-a-key.txt").write_text("nsec1-this-is-no-key-" + "q" * 40 + "\n")
    result = tool("derive", "--key-command", " ".join(argv), "--device-id", "kitchen", cwd=keys)
    stderr = result.stderr.decode()
    assert result.returncode == status, stderr
    assert message in stderr, stderr
    for secret in [(keys / "parent.nsec").read_text().strip(), (keys / "vault.key").read_text().strip(), "q" * 40]:
        assert secret not in stderr and secret not in result.stdout.decode()
    assert stderr.count("\n") <= 2


def test_the_key_is_never_on_the_tools_command_line(keys):
    """The key reaches the tool through the command's standard output, so no argv holds it."""
    argv = [VAULT_TOOL, "derive", "--key-command", "cat parent.nsec", "--device-id", "kitchen"]
    result = subprocess.run(argv, cwd=keys, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    secret = (keys / "parent.nsec").read_text().strip()
    assert all(secret not in argument for argument in argv)


def key_command_commands():
    commands = []
    for command, options in sorted(leaf_commands().items()):
        for option in ("key-command", "vault-key-command"):
            if option in options:
                commands.append(pytest.param(command, option, id=f"{command}:{option}"))
    return commands


SHELL_SYNTAX = ["|", ";", "&", "$", "`", "<", ">", "(", ")", "*", "?", "[", "{", "~", "#"]


@pytest.mark.parametrize("command, option", key_command_commands())
def test_every_command_with_a_key_command_never_runs_it_for_help_and_refuses_shell_syntax(tmp_path, command, option):
    tool_name, *subcommand = command.split()
    marker = tmp_path / "ran"
    result = subprocess.run([str(BIN / tool_name), *subcommand, f"--{option}", f"touch {marker}", "--help"],
                            cwd=tmp_path, capture_output=True, timeout=120)
    assert result.returncode == 0 and f"--{option}" in result.stdout.decode(), result.stderr
    assert not marker.exists()
    generator = random.Random(command + option)
    for syntax in generator.sample(SHELL_SYNTAX, 4):
        text = f"touch {marker} {syntax}x" if syntax not in "~#" else f"touch {marker} {syntax}"
        result = subprocess.run([str(BIN / tool_name), *subcommand, f"--{option}", text], cwd=tmp_path, capture_output=True, timeout=120)
        stderr = result.stderr.decode()
        assert result.returncode == 64, (syntax, stderr)
        # A command missing a required argument says that first, also a usage error.
        assert "is run without a shell and takes only words and quotes" in stderr or "missing expected argument" in stderr, (syntax, stderr)
        assert not marker.exists(), syntax


def test_at_least_every_key_reading_tool_takes_the_options():
    commands = {values[0] for values in (p.values for p in key_command_commands())}
    assert {"vault-tool derive", "vault-tool open", "vault-tool inspect", "recovery-sheet generate", "rotation-planner plan",
            "device-revoker vault", "device-link create"} <= commands, sorted(commands)


@pytest.mark.parametrize("arguments", [
    ["migrate", "--source", "s3://family-vaults/vaults/", "--to", "2", "--in-place", "--vault-key-dir", "keys"],
    ["migrate", "--manifest", "m.jsonl", "--to", "2", "--out-dir", "out"],
    ["check", "--source", "s3://family-vaults/vaults/", "--vault-key-dir", "keys"],
])
@pytest.mark.parametrize("option", ["--key-command", "--vault-key-command"])
def test_a_fleet_run_refuses_a_key_command_it_would_not_use(tmp_path, arguments, option):
    """A fleet run takes one source of keys: --key-command, or --vault-key-command beside
    --vault-key-dir or in a manifest batch (which names its key files), is a usage error, never
    run. --vault-key-command alone in a bucket run: test_fleet_key_command.py."""
    marker = tmp_path / "ran"
    result = tool(*arguments, option, f"touch {marker}", cwd=tmp_path)
    assert result.returncode == 64, result.stderr
    assert not marker.exists()


@pytest.mark.parametrize("mark", ["\u0301", "\u20dd", "\u200d"])
def test_a_combining_mark_neither_hides_shell_syntax_nor_joins_words(keys, mark):
    """A command is read by code points, as a shell reads it: a ';' or a blank followed by a
    combining mark (one Swift Character with it) is still a ';' refused and a blank that splits."""
    refused = tool("derive", "--key-command", f"cat parent.nsec;{mark}", "--device-id", "kitchen", cwd=keys)
    assert refused.returncode == 64 and "takes only words and quotes; it has ';'" in refused.stderr.decode(), refused.stderr
    (keys / "printer.py").write_text(SECRET_PRINTER)
    # The blank before the mark still ends the word "0": the mark is a word of its own, which
    # printer.py ignores; read by Characters, " " and the mark were one, "0" took the mark, and
    # int() refused it.
    split = tool("derive", "--key-command", f"{sys.executable} printer.py parent.nsec 0 {mark}", "--device-id", "kitchen", cwd=keys)
    assert split.returncode == 0, split.stderr
