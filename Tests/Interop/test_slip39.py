"""Family key shares (issue 14) against the SLIP-39 reference implementation, trezor's
shamir-mnemonic: shares we make combine there to the key, and shares it makes combine here;
share sheets read back with zbar and zxing-cpp before and after a simulated print and scan, and
scans of enough sheets restore the key; refusals say what is wrong and reveal nothing.
"""
import os
import random
import secrets
import subprocess

import pytest
import shamir_mnemonic
from PIL import Image

from test_recovery_sheet import print_and_scan, zxing
from vaultref import Household
from workspace import RECOVERY_SHEET

WORDLIST = open(os.path.join(os.path.dirname(shamir_mnemonic.__file__), "wordlist.txt")).read().split()
INDEX = {word: i for i, word in enumerate(WORDLIST)}


def run(*args, expect=0, stdin=None):
    result = subprocess.run([RECOVERY_SHEET, *map(str, args)], capture_output=True, input=stdin)
    assert result.returncode == expect, f"exit {result.returncode}: {result.stderr.decode()}"
    return result


def key_file(folder, household):
    path = folder / "parent.nsec"
    path.write_text(household.nsec + "\n")
    path.chmod(0o600)
    return path


def passphrase_file(folder, text):
    path = folder / "pass.txt"
    path.write_text(text + "\n")
    path.chmod(0o600)
    return path


def digits(mnemonic):
    """The compact share code: each word's number in the SLIP-39 list as four digits."""
    return "".join(f"{INDEX[word]:04d}" for word in mnemonic.split())


def enough(groups, group_threshold, rng):
    """A random subset of shares that restores: group_threshold random groups, threshold members each."""
    chosen = rng.sample(range(len(groups)), group_threshold)
    return [(g, m) for g in chosen for m in rng.sample(range(groups[g][1]), groups[g][0])]


def configurations(rng, count):
    for _ in range(count):
        if rng.random() < 0.5:
            n = rng.randint(1, 5)
            t = 1 if n == 1 else rng.randint(2, n)
            yield 1, [(t, n)]
        else:
            groups = []
            for _ in range(rng.randint(2, 4)):
                n = rng.randint(1, 4)
                groups.append((1 if n == 1 else rng.randint(2, n), n))
            yield rng.randint(1, len(groups)), groups


def test_our_shares_combine_with_the_reference(tmp_path):
    rng = random.Random(0x5139)
    for round, (group_threshold, groups) in enumerate(configurations(rng, 8)):
        folder = tmp_path / f"r{round}"
        folder.mkdir()
        household = Household(secrets.token_bytes(32))
        phrase = "TREZOR family of four, 2026" if round % 2 else ""
        args = ["split", "--key-file", key_file(folder, household), "--text", "--dpi", 72, "--iteration-exponent", 0, "-o", folder / "shares"]
        if len(groups) == 1:
            args += ["--threshold", groups[0][0], "--shares", groups[0][1]]
        else:
            args += ["--group-threshold", group_threshold, "--groups", ",".join(f"{t}of{n}" for t, n in groups)]
        if phrase:
            args += ["--passphrase-file", passphrase_file(folder, phrase)]
        run(*args)
        texts = sorted((folder / "shares").glob("*.txt"))
        assert len(texts) == sum(n for _, n in groups)
        for text in texts:
            assert text.stat().st_mode & 0o777 == 0o600
            assert (text.with_suffix(".png")).stat().st_mode & 0o777 == 0o600
        by_name = {text.stem: text.read_text().splitlines()[0].strip() for text in texts}
        # Under the words, the sheet's public check code (issue 44), so typed shares prove the key.
        assert all(text.read_text().splitlines()[1].startswith("HVT-SHARE ") for text in texts)
        names = [(f"group{g + 1}-" if len(groups) > 1 else "") + f"share-{m + 1}-of-{n}" for g, (_, n) in enumerate(groups) for m in range(n)]
        assert sorted(names) == sorted(by_name)
        grid = [[by_name[(f"group{g + 1}-" if len(groups) > 1 else "") + f"share-{m + 1}-of-{n}"] for m in range(n)] for g, (_, n) in enumerate(groups)]
        subset = [grid[g][m] for g, m in enough(groups, group_threshold, rng)]
        assert shamir_mnemonic.combine_mnemonics(subset, phrase.encode()) == household.secret


@pytest.mark.parametrize("extendable", [True, False])
def test_reference_shares_combine_with_ours(tmp_path, extendable):
    rng = random.Random(0x3915 + extendable)
    for round, (group_threshold, groups) in enumerate(configurations(rng, 6)):
        folder = tmp_path / f"r{round}"
        folder.mkdir()
        household = Household(secrets.token_bytes(32))
        phrase = "correct horse" if round % 2 else ""
        shares = shamir_mnemonic.generate_mnemonics(group_threshold, groups, household.secret, phrase.encode(),
                                                    extendable=extendable, iteration_exponent=0)
        files = []
        for index, (g, m) in enumerate(enough(groups, group_threshold, rng)):
            path = folder / f"typed-{index}.txt"
            words = shares[g][m].split()
            # Typed the way a person would: numbered, mixed case, some words by their first four letters.
            path.write_text("\n".join(f"{i + 1}. {(w[:4] if i % 3 == 0 else w).upper() if i % 2 else w}" for i, w in enumerate(words)) + "\n")
            path.chmod(0o600)
            files.append(path)
        args = ["combine", *files, "--npub", household.npub, "-o", folder / "restored.nsec"]
        if phrase:
            args += ["--passphrase-file", passphrase_file(folder, phrase)]
        run(*args)
        assert (folder / "restored.nsec").read_text().strip() == household.nsec
        assert (folder / "restored.nsec").stat().st_mode & 0o777 == 0o600


SHEETS = [(paper, lang, phrase) for paper in ("a4", "letter") for lang in ("en", "es") for phrase in ("", "grandma's passphrase: rose garden 1958")]


@pytest.mark.parametrize("paper,lang,phrase", SHEETS)
def test_share_sheets_read_back_after_print_and_scan(tmp_path, paper, lang, phrase):
    household = Household(secrets.token_bytes(32))
    args = ["split", "--key-file", key_file(tmp_path, household), "--threshold", 2, "--shares", 3, "--paper", paper, "--lang", lang,
            "--date", "2026-11-22", "--label", "Familia García", "--holder", "Abuela Rosa", "--holder", "Tío Luis", "--holder", "Caja fuerte",
            "--text", "--iteration-exponent", 0, "-o", tmp_path / "shares"]
    if phrase:
        args += ["--passphrase-file", passphrase_file(tmp_path, phrase)]
    run(*args)
    scans = []
    for member in (1, 3):
        sheet = tmp_path / "shares" / f"share-{member}-of-3.png"
        expected = digits((tmp_path / "shares" / f"share-{member}-of-3.txt").read_text().splitlines()[0].strip())
        with Image.open(sheet) as image:
            assert image.mode == "L" and image.info["dpi"][0] == pytest.approx(300, abs=0.1)
        for picture in [sheet] + [tmp_path / f"scan-{member}-{dpi}.jpg" for dpi in (150, 100)]:
            if picture != sheet:
                print_and_scan(sheet, picture, int(picture.stem.split("-")[2]))
            zbar = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(picture)], capture_output=True)
            assert expected in zbar.stdout.decode().split("\n"), f"zbarimg could not read the share code of {picture.name}"
            assert expected in zxing(picture), f"zxing-cpp could not read the share code of {picture.name}"
            assert any(text.startswith("HVT-SHARE ") for text in zxing(picture)), f"no check code in {picture.name}"
        scans.append(tmp_path / f"scan-{member}-100.jpg")
    combine = ["combine", *scans, "-o", tmp_path / "restored.nsec"] + (["--passphrase-file", tmp_path / "pass.txt"] if phrase else [])
    run(*combine)
    assert (tmp_path / "restored.nsec").read_text().strip() == household.nsec
    run("verify", "--share", scans[0], "--npub", household.npub)
    run("verify", "--shares", *scans, "--npub", household.npub, *(["--passphrase-file", tmp_path / "pass.txt"] if phrase else []))


def test_refusals_say_what_is_wrong_and_reveal_nothing(tmp_path):
    household = Household(secrets.token_bytes(32))
    run("split", "--key-file", key_file(tmp_path, household), "--threshold", 2, "--shares", 3, "--text", "--dpi", 72,
        "--iteration-exponent", 0, "-o", tmp_path / "a")
    run("split", "--key-file", key_file(tmp_path, household), "--threshold", 2, "--shares", 3, "--text", "--dpi", 72,
        "--iteration-exponent", 0, "-o", tmp_path / "b")
    one, two = tmp_path / "a" / "share-1-of-3.txt", tmp_path / "a" / "share-2-of-3.txt"
    other = tmp_path / "b" / "share-3-of-3.txt"
    words = one.read_text().splitlines()[0].split()
    secret_words = set(words) | set(two.read_text().splitlines()[0].split()) | set(other.read_text().splitlines()[0].split())

    def refused(*shares, status=2):
        result = run("combine", *shares, "-o", tmp_path / "out.nsec", expect=status)
        message = result.stderr.decode()
        assert not (tmp_path / "out.nsec").exists()
        leaked = [w for w in secret_words if f" {w} " in f" {message} "]
        assert not leaked and household.nsec not in message, message
        return message

    assert "1" in refused(one) and "2" in refused(one)  # too few: says how many are needed and given
    refused(one, other)  # two sets
    refused(one, one)  # one share twice
    typo = tmp_path / "typo.txt"
    typo.write_text(" ".join(words[:5] + ["zzzz"] + words[6:]) + "\n")
    assert "6" in refused(typo, two)  # the unknown word's position
    swapped = tmp_path / "swapped.txt"
    swapped.write_text(" ".join(words[:5] + [words[6], words[5]] + words[7:]) + "\n")
    refused(swapped, two)  # the checksum catches two swapped words
    refused(one, two, other)  # a third share of another set is not silently ignored
    run("combine", one, two, "-o", tmp_path / "ok.nsec")
    assert (tmp_path / "ok.nsec").read_text().strip() == household.nsec
    mismatch = run("verify", "--shares", one, two, "--npub", Household(secrets.token_bytes(32)).npub, expect=3)
    assert b"MISMATCH" in mismatch.stdout and household.nsec.encode() not in mismatch.stdout


@pytest.mark.parametrize("options", [
    ["--threshold", 1, "--shares", 3],
    ["--group-threshold", 1, "--groups", "1of3"],
    ["--group-threshold", 1, "--groups", "2of3,1of2"],
    ["--group-threshold", 1, "--groups", "1of1,,2of3"],
    ["--group-threshold", 1, "--groups", "2of3,"],
    ["--group-threshold", 1, "--groups", ",2of3"],
    ["--group-threshold", 1, "--groups", "2of1"],
    ["--threshold", 4, "--shares", 3],
], ids=["1of3", "group-1of3", "second-group-1of2", "empty-group", "trailing-comma", "leading-comma", "2of1", "4of3"])
def test_a_split_the_options_cannot_make_is_a_usage_error(tmp_path, options):
    """A hostile trial: `--threshold 1 --shares 3` ended with exit 1 and Swift's own spelling of
    the library's value (`invalidConfiguration("…")`), a bad --groups with exit 2, and an empty
    group (`1of1,,2of3`) was dropped without a word, making two groups of the three asked for.
    Each is a usage error (exit 64) in words, and nothing is written."""
    key = key_file(tmp_path, Household(secrets.token_bytes(32)))
    result = run("split", "--key-file", key, *options, "-o", tmp_path / "shares", expect=64)
    said = result.stderr.decode()
    assert "invalidConfiguration" not in said and said.startswith("recovery-sheet: error: "), said
    assert not (tmp_path / "shares").exists()
