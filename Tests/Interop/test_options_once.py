"""An option a command keeps one value of, given twice with two values, is named in a warning
before anything is read, for every such option of every command of every tool, as the tools'
own help describes them: swift-argument-parser kept the last without a word (`vault-tool open -o
x -o y` wrote only y, exit 0). The last still wins, as wrappers that add an option to override
one rely on. The same value twice means one thing; lists and flags may be given as often as one
likes."""

import json
import os
import subprocess

import pytest

from workspace import BIN, ROOT, TOOLS, command_tree

NOW = "2026-11-22T10:00:00Z"


def single_value_options():
    """(command path, spellings) of every option that takes one value, from the tools' help."""
    return [(path, [("--" if n["kind"] == "long" else "-") + n["name"] for n in argument.get("names") or []])
            for path, command in command_tree() if "help" not in path[1:]
            for argument in command.get("arguments") or [] if argument.get("kind") == "option" and not argument.get("isRepeating")]


OPTIONS = single_value_options()


def test_the_sweep_reads_every_tool():
    assert {path[0] for path, _ in OPTIONS} == set(TOOLS)
    assert len(OPTIONS) >= 150, len(OPTIONS)
    assert any(len(spellings) == 2 for _, spellings in OPTIONS)


def uses(spellings):
    """Each way to give one option twice: the same spelling, `=` forms, short beside long."""
    longest = max(spellings, key=len)
    shortest = min(spellings, key=len)
    ways = [[longest, "first", longest, "second"], [f"{longest}=first", longest, "second"], [longest, "first", f"{longest}=second"]]
    if shortest != longest:
        ways += [[shortest, "first", longest, "second"], [longest, "first", shortest, "second"], [shortest, "first", shortest, "second"]]
    if len(shortest) == 2:
        # Grouped, as the parser reads `-oo a b`: `-o a -o b` (a trial: only b was written).
        ways.append([shortest + shortest[1], "first", "second"])
    return ways


def run(path, extra, cwd):
    return subprocess.run([str(BIN / path[0]), *path[1:], *extra], capture_output=True, text=True, timeout=30, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def warned(stderr, spellings):
    """Whether `stderr` warns of the option spelt `spellings` given more than once."""
    return any(f"{spelling} is given more than once" in stderr for spelling in spellings) and "the last one given is used" in stderr


@pytest.mark.parametrize("tool", TOOLS)
def test_every_single_value_option_given_twice_is_warned_of(tmp_path, tool):
    # An option no command has, last: the parser then stops the command (exit 64) after the
    # warning, which comes before anything is parsed, so the sweep runs nothing.
    for path, spellings in OPTIONS:
        if path[0] != tool:
            continue
        for way in uses(spellings):
            result = run(path, way + ["--not-an-option-of-any-command"], tmp_path)
            where = f"{' '.join(path)} {' '.join(way)}"
            assert result.returncode == 64, f"{where}: {result.returncode} {result.stderr}"
            assert warned(result.stderr, spellings), f"{where}: {result.stderr}"
            assert "first" not in result.stderr.split("warning:")[1].split("\n")[0], f"{where}: a value quoted: {result.stderr}"
            assert sorted(os.listdir(tmp_path)) == [], f"{where}: {os.listdir(tmp_path)}"


def test_an_output_given_twice_is_warned_of_and_the_last_is_written(tmp_path):
    """The case the trial found: `open -o x -o y` wrote only y, without a word."""
    key = ROOT / "Examples" / "household.nsec"
    sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", str(key), "-o", str(tmp_path / "h.vault"), str(ROOT / "Examples" / "household.json")],
                            capture_output=True)
    assert sealed.returncode == 0, sealed.stderr
    result = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", str(key), "-o", "x.json", "--output=y.json", "h.vault"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--output is given more than once (as -o and as --output), with different values: the last one given is used" in result.stderr
    assert (tmp_path / "y.json").exists() and not (tmp_path / "x.json").exists()
    # In the JSON log too, as an event of its own.
    logged = subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", str(key), "--to", "2", "-o", "a.vault", "-o", "b.vault",
                             "--log-format", "json", "h.vault"], cwd=tmp_path, capture_output=True, text=True)
    assert logged.returncode == 0, logged.stderr
    events = [json.loads(line) for line in logged.stderr.splitlines()]
    assert any(e["level"] == "warning" and "-o is given more than once" in e["message"] for e in events), logged.stderr
    assert (tmp_path / "b.vault").exists() and not (tmp_path / "a.vault").exists()


def test_lists_flags_and_the_same_value_twice_are_not_warned_of(tmp_path):
    """`--device A --device B` is a list; `--json --json` a flag; a value after an option is never
    taken for a second use of it (`--reason --reason` is the parser's to refuse, as a missing
    value); the same value twice means one thing, as a wrapper adding what the line has gives it."""
    db = tmp_path / "r.sqlite"
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", str(db)], check=True, capture_output=True)
    listed = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--device", "did:plc:a#d2",
                             "--reason", "lost", "--dry-run", "--json", "--json"], capture_output=True, text=True)
    assert "given more than once" not in listed.stderr, listed.stderr
    value = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--reason", "--reason",
                            "--dry-run"], capture_output=True, text=True)
    assert "given more than once" not in value.stderr, value.stderr
    for twice in (["--now", NOW, "--now", NOW], [f"--now={NOW}", "--now", NOW]):
        same = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--reason", "lost",
                               "--dry-run", *twice], capture_output=True, text=True)
        assert "given more than once" not in same.stderr, same.stderr
    # Two spellings of one name are two values, two files (a trial: NFC and NFD "café" were
    # taken for one value): warned of, and the last written.
    nfc, nfd = "caf\u00e9.nsec", "cafe\u0301.nsec"
    two = subprocess.run([str(BIN / "vault-tool"), "keygen", "-o", nfc, "-o", nfd], capture_output=True, text=True, cwd=tmp_path)
    assert two.returncode == 0 and "-o is given more than once" in two.stderr, two.stderr
    assert not (tmp_path / nfc).exists() and (tmp_path / nfd).exists()
    # A second use with no value left is the parser's: "missing value", no warning.
    missing = subprocess.run([str(BIN / "vault-tool"), "keygen", "-o", "m.nsec", "-o"], capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode == 64 and "given more than once" not in missing.stderr, missing.stderr
    assert not (tmp_path / "m.nsec").exists()
    # After `--`, nothing is an option.
    after = subprocess.run([str(BIN / "vault-tool"), "inspect", "--json", "--", "-o", "-o"], capture_output=True, text=True, cwd=tmp_path)
    assert "given more than once" not in after.stderr, after.stderr


@pytest.mark.parametrize("formats", [("json", "text"), ("text", "json")])
def test_log_format_given_twice_writes_every_line_in_the_last(tmp_path, formats):
    """The format read before parsing is the parser's, the last given (a trial: with `json` then
    `text`, the warning came out as JSON and the error after it as text)."""
    first, last = formats
    result = subprocess.run([str(BIN / "vault-tool"), "check", "--log-format", first, f"--log-format={last}", "--key-file", "missing.nsec", "h.vault"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) >= 2 and "--log-format is given more than once" in lines[0], result.stderr
    assert all(line.startswith("{") == (last == "json") for line in lines), result.stderr


def long_options_of_commands():
    """(command path, its spellings, each long spelling) of every command without subcommands."""
    found = []
    for path, command in command_tree():
        if command.get("subcommands") or "help" in path[1:]:
            continue
        spellings = [("--" if n["kind"] == "long" else "-") + n["name"] for argument in command.get("arguments") or [] for n in argument.get("names") or []]
        found += [(path, spellings, spelling) for spelling in spellings if spelling.startswith("--") and len(spelling) > 4]
    return found


@pytest.mark.parametrize("tool", TOOLS)
def test_a_mistyped_option_is_named_before_what_the_command_lacks(tmp_path, tool):
    """An option spelt wrong is the mistake named (with the closest spelling), not the option a
    command needs and so seems not to have been given (a trial: `registry revoke --usr bob
    --name x` said "choose the devices one way", `device add --key-fil K` "give --key-file",
    `device add --idd X` "missing expected argument '--id'"), for every option of every command,
    with a value after it or not."""
    swept = 0
    for path, spellings, spelling in long_options_of_commands():
        if path[0] != tool:
            continue
        typo = spelling[:-1]
        if typo in spellings:
            continue
        for extra in [[typo], [typo, "value"]]:
            result = run(path, extra, tmp_path)
            where = f"{' '.join(path)} {' '.join(extra)}"
            assert result.returncode == 64, f"{where}: {result.returncode} {result.stderr}"
            assert f"error: unknown option '{typo}'" in result.stderr, f"{where}: {result.stderr}"
            assert sorted(os.listdir(tmp_path)) == [], f"{where}: {os.listdir(tmp_path)}"
        swept += 1
    assert swept >= 10, swept


@pytest.mark.parametrize("typo,command", [
    ("--usr", ["device-revoker", "registry", "revoke", "--db", "x.db", "--usr", "did:plc:josh", "--name", "x"]),
    ("--key-fil", ["vault-tool", "device", "add", "--key-fil", "k.nsec", "--id", "A", "--name", "B", "-o", "o.vault", "h.vault"]),
    ("--idd", ["vault-tool", "device", "add", "--key-file", "k.nsec", "--idd", "A", "--name", "B", "-o", "o.vault", "h.vault"]),
    ("--key-fil", ["vault-tool", "inspect", "--key-fil", "k.nsec"]),
    ("--new-key-fil", ["rotation-planner", "plan", "--vault", "h.vault", "--key-file", "k.nsec", "--new-key-fil", "n.nsec"]),
])
def test_the_trials_mistyped_options_are_named_with_the_closest(tmp_path, typo, command):
    result = run(command[:1], command[1:], tmp_path)
    assert result.returncode == 64, result.stderr
    assert f"error: unknown option '{typo}'. Did you mean '" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [
    ["vault-tool", "inspect", "--key-file", "--", "--weird.vault"],
    ["device-revoker", "registry", "revoke", "--db", "r.db", "--user", "did:plc:bob", "--name", "--", "--zz"],
    ["vault-tool", "device", "rename", "--key-file", "k.nsec", "-o", "o.vault", "--now", "--", "h.vault", "Kitchen iPad", "--new"],
])
def test_words_after_a_double_dash_where_a_value_belongs_are_not_options(tmp_path, command):
    """`--` where an option's value should be: the value is missing, as the parser says, and
    the words after it are arguments, never named as unknown options (a trial: "unknown option
    '--weird.vault'")."""
    result = run(command[:1], command[1:], tmp_path)
    assert result.returncode == 64, result.stderr
    assert "missing value for '" in result.stderr and "unknown option" not in result.stderr, result.stderr


@pytest.mark.parametrize("tool,words,mistyped,meant", [
    ("device-revoker", ["vault"], "--vualt", "--vault"),
    ("device-revoker", ["registry", "revoke"], "--revoke-x", None),
    ("vault-tool", ["device", "add"], "--nmae", "--name"),
])
def test_a_mistyped_option_beside_a_key_is_named_and_the_key_is_not(tool, words, mistyped, meant, tmp_path):
    """A trial: with a key on the command line every quote that held an argument's text was
    withheld, the suggested spelling too ("Did you mean (not shown)?": '--vault' holds the
    subcommand `vault`). An option's spelling is never a piece of a key: it is shown; the key,
    whole or in two pieces, never is."""
    key = (ROOT / "Tests" / "Fixtures" / "keys" / "parent.nsec").read_text().strip()
    for given in ([key], [key[:20], key[20:]]):
        result = subprocess.run([str(BIN / tool), *words, mistyped, *given], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 64, result.stderr
        said = f"unknown option '{mistyped}'" + (f". Did you mean '{meant}'?" if meant else "")
        assert said in result.stderr, result.stderr
        assert all(piece not in result.stderr + result.stdout for piece in given), result.stderr
