"""An option a command keeps one value of, given twice with two values, is refused before
anything is read or written (exit 64), for every such option of every command of every tool, as
the tools' own help describes them: swift-argument-parser kept the last without a word
(`vault-tool open -o x -o y` wrote only y, exit 0). The same value twice means one thing; lists
and flags may be given as often as one likes."""

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


@pytest.mark.parametrize("tool", TOOLS)
def test_every_single_value_option_given_twice_is_refused(tmp_path, tool):
    for path, spellings in OPTIONS:
        if path[0] != tool:
            continue
        longest = max(spellings, key=len)
        for way in uses(spellings):
            result = run(path, way, tmp_path)
            where = f"{' '.join(path)} {' '.join(way)}"
            assert result.returncode == 64, f"{where}: {result.returncode} {result.stderr}"
            assert "is given twice" in result.stderr and f"give {longest} once" in result.stderr, f"{where}: {result.stderr}"
            assert f"; {' '.join(path)} takes one" in result.stderr, f"{where}: {result.stderr}"
            assert result.stdout == "", f"{where}: {result.stdout}"
            # Nothing was read or written: the values name files that were never made.
            assert sorted(os.listdir(tmp_path)) == [], f"{where}: {os.listdir(tmp_path)}"


def test_an_output_given_twice_writes_neither(tmp_path):
    """The case the trial found: `open -o x -o y` wrote only y."""
    key = ROOT / "Examples" / "household.nsec"
    sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", str(key), "-o", str(tmp_path / "h.vault"), str(ROOT / "Examples" / "household.json")],
                            capture_output=True)
    assert sealed.returncode == 0, sealed.stderr
    before = sorted(os.listdir(tmp_path))
    result = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", str(key), "-o", "x.json", "--output=y.json", "h.vault"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 64, result.stderr
    assert "--output is given twice, with two values (as -o and as --output)" in result.stderr
    assert sorted(os.listdir(tmp_path)) == before
    # Given once, the same command works: the refusal is of the repetition only.
    once = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", str(key), "-o", "x.json", "h.vault"], cwd=tmp_path, capture_output=True)
    assert once.returncode == 0, once.stderr
    assert (tmp_path / "x.json").exists()


def test_lists_flags_and_values_that_look_like_options_are_not_refused(tmp_path):
    """`--device A --device B` is a list; `--json --json` a flag; a value after an option is never
    taken for a second use of it (`--reason --reason` is the parser's to refuse, as a missing
    value, not "given twice")."""
    db = tmp_path / "r.sqlite"
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", str(db)], check=True, capture_output=True)
    listed = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--device", "did:plc:a#d2",
                             "--reason", "lost", "--dry-run", "--json", "--json"], capture_output=True, text=True)
    assert "is given twice" not in listed.stderr, listed.stderr
    assert listed.returncode != 64, listed.stderr
    value = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--reason", "--reason",
                            "--dry-run"], capture_output=True, text=True)
    assert "is given twice" not in value.stderr, value.stderr
    # The same value twice is one meaning, as a wrapper adding what the line already has gives it.
    for twice in (["--now", NOW, "--now", NOW], [f"--now={NOW}", "--now", NOW]):
        same = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", str(db), "--device", "did:plc:a#d1", "--reason", "lost",
                               "--dry-run", *twice], capture_output=True, text=True)
        assert "is given twice" not in same.stderr and same.returncode != 64, same.stderr
    # Two spellings of one name are two values, two files (a trial: NFC and NFD "café" were
    # taken for one value, and only the second file written).
    nfc, nfd = "caf\u00e9.nsec", "cafe\u0301.nsec"
    two = subprocess.run([str(BIN / "vault-tool"), "keygen", "-o", nfc, "-o", nfd], capture_output=True, text=True, cwd=tmp_path)
    assert two.returncode == 64 and "-o is given twice, with two values" in two.stderr, two.stderr
    assert not (tmp_path / nfc).exists() and not (tmp_path / nfd).exists()
    # A second use with no value left is the parser's: "missing value", not "two values".
    missing = subprocess.run([str(BIN / "vault-tool"), "keygen", "-o", "a.nsec", "-o"], capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode == 64 and "is given twice" not in missing.stderr, missing.stderr
    assert not (tmp_path / "a.nsec").exists()
    # After `--`, nothing is an option.
    after = subprocess.run([str(BIN / "vault-tool"), "inspect", "--json", "--", "-o", "-o"], capture_output=True, text=True, cwd=tmp_path)
    assert "is given twice" not in after.stderr, after.stderr
