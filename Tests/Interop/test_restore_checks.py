"""Every restore path given wrong but valid input (issue 37): words, a typed key, a scanned sheet
and shares that pass their own checksums yet are not the family's. Each is refused with exit 3
and nothing written when the tool can know (the shares' check code, --npub, --vault), and says
what to compare when it cannot; the right input restores the key the references (trezor's
python-mnemonic and shamir-mnemonic) find. Keys are random, from seeded generators."""
import random
import shutil
import subprocess

import pytest
import shamir_mnemonic
from mnemonic import Mnemonic

from vaultref import Household
from workspace import FIXTURES, RECOVERY_SHEET

BIP39 = Mnemonic("english")
COMPARE = b"compare it with the public key printed on"


def household(rng):
    return Household(bytes(rng.getrandbits(8) for _ in range(32)))


def run(folder, *args, expect):
    result = subprocess.run([RECOVERY_SHEET, *map(str, args)], capture_output=True, cwd=folder)
    assert result.returncode == expect, f"{args}: exit {result.returncode}: {result.stderr.decode()}"
    return result


def secret_file(path, text):
    path.write_text(text)
    path.chmod(0o600)
    return path


def one_wrong_word_that_fits(words, rng):
    """The words with one changed to another list word, the BIP-39 checksum still passing."""
    while True:
        place, word = rng.randrange(len(words)), rng.choice(BIP39.wordlist)
        changed = words[:place] + [word] + words[place + 1:]
        if word != words[place] and BIP39.check(" ".join(changed)):
            return changed


def restored(folder, name):
    return (folder / name).read_text().strip()


def test_words_and_typed_keys_are_refused_when_they_are_not_the_sheets(tmp_path):
    rng = random.Random(0x37_01)
    for round in range(3):
        folder = tmp_path / f"r{round}"
        folder.mkdir()
        family, other = household(rng), household(rng)
        words = BIP39.to_mnemonic(family.secret).split()
        assert BIP39.to_entropy(words) == family.secret  # the reference reads the words as the key
        nsec = family.nsec
        grouped = " ".join(nsec[i:i + 4] for i in range(0, len(nsec), 4))
        wrong = {
            "another sheet's words": " ".join(BIP39.to_mnemonic(other.secret).split()),
            "a code sheet's words": BIP39.to_mnemonic(bytes(rng.getrandbits(8) for _ in range(32))),
            "one wrong word that fits": " ".join(one_wrong_word_that_fits(words, rng)),
            "another sheet's key": " ".join(other.nsec[i:i + 4] for i in range(0, len(other.nsec), 4)),
        }
        for name, text in wrong.items():
            typed = secret_file(folder / "typed.txt", text + "\n")
            result = run(folder, "words", "--decode", typed, "--npub", family.npub, "-o", "out.nsec", expect=3)
            assert not (folder / "out.nsec").exists(), name
            assert b"is not the public key given; nothing was written" in result.stderr, (name, result.stderr)
            # Without an expectation the tool cannot know: it restores, and says what to compare.
            result = run(folder, "words", "--decode", typed, "-o", "unchecked.nsec", expect=0)
            assert COMPARE in result.stderr and restored(folder, "unchecked.nsec") != family.nsec, name
            (folder / "unchecked.nsec").unlink()
        for name, text in {"the words": " ".join(words), "the key in groups": grouped.upper(), "the key in lines": grouped.replace(" ", "\n")}.items():
            typed = secret_file(folder / "typed.txt", text + "\n")
            result = run(folder, "words", "--decode", typed, "--npub", family.npub, "-o", "right.nsec", expect=0)
            assert restored(folder, "right.nsec") == family.nsec, name
            assert COMPARE not in result.stderr
            (folder / "right.nsec").unlink()


def test_a_typed_key_points_at_the_group_of_a_mistyped_character(tmp_path):
    rng = random.Random(0x37_02)
    checked = 0
    while checked < 6:
        family = household(rng)
        nsec = family.nsec
        data = [i for i in range(5, len(nsec)) if nsec[i] in "0l"]
        if not data:
            continue
        place = rng.choice(data)
        swapped = nsec[:place] + ("o" if nsec[place] == "0" else "1") + nsec[place + 1:]
        typed = secret_file(tmp_path / "typed.txt", " ".join(swapped[i:i + 4] for i in range(0, len(swapped), 4)) + "\n")
        message = run(tmp_path, "words", "--decode", typed, "-o", "out.nsec", expect=2).stderr.decode()
        assert f"character {place % 4 + 1} of group {place // 4 + 1} is '{swapped[place]}'" in message, message
        assert ("the digit 0" if nsec[place] == "0" else "the letter l") in message, message
        # A character of the alphabet, changed: the checksum points to it.
        changed = rng.choice([c for c in "qpzry9x8gf2tvdw0s3jn54khce6mua7l" if c != nsec[place]])
        typed = secret_file(tmp_path / "typed.txt", nsec[:place] + changed + nsec[place + 1:] + "\n")
        message = run(tmp_path, "words", "--decode", typed, "-o", "out.nsec", expect=2).stderr.decode()
        assert f"checksum points to character {place % 4 + 1} of group {place // 4 + 1}" in message, message
        assert not (tmp_path / "out.nsec").exists()
        checked += 1
    short = secret_file(tmp_path / "typed.txt", family.nsec[:-1] + "\n")
    assert b"has 62 characters" in run(tmp_path, "words", "--decode", short, "-o", "out.nsec", expect=2).stderr


@pytest.fixture
def parent_folder(tmp_path):
    shutil.copytree(FIXTURES / "keys", tmp_path / "keys")
    for key in (tmp_path / "keys").iterdir():
        key.chmod(0o600)
    shutil.copy(FIXTURES / "testkit" / "ok-household.vault", tmp_path / "household.vault")
    return tmp_path


def test_words_and_scans_are_checked_against_the_vault(parent_folder):
    folder = parent_folder
    for key in ("parent", "other"):
        run(folder, "words", "--key-file", f"keys/{key}.nsec", "-o", f"{key}-words.txt", expect=0)
        run(folder, "generate", "--key-file", f"keys/{key}.nsec", "--dpi", 100, "-o", f"{key}-sheet.png", expect=0)
    for source in (["words", "--decode", "other-words.txt"], ["scan", "other-sheet.png"]):
        result = run(folder, *source, "--vault", "household.vault", "-o", "out.nsec", expect=3)
        assert not (folder / "out.nsec").exists() and b"nothing was written" in result.stderr, result.stderr
    for source in (["words", "--decode", "parent-words.txt"], ["scan", "parent-sheet.png"]):
        result = run(folder, *source, "--vault", "household.vault", "-o", "out.nsec", expect=0)
        assert (folder / "out.nsec").read_text() == (folder / "keys" / "parent.nsec").read_text()
        assert b"it opens the vault 'household.vault'" in result.stderr
        (folder / "out.nsec").unlink()
    other_npub = run(folder, "scan", "other-sheet.png", "-o", "other.nsec", expect=0).stderr.decode().split("public key: ")[1].split()[0]
    run(folder, "scan", "parent-sheet.png", "--npub", other_npub, "-o", "out.nsec", expect=3)
    assert not (folder / "out.nsec").exists()


def test_a_damaged_vault_is_said_to_be_damaged_not_the_paper(parent_folder):
    """A hostile trial: a vault changed by one byte, or cut short, was blamed on the sheet ("this
    sheet holds another key: an old sheet, or another family's"), which a family might then throw
    away. The vault's header names the household of the key that sealed it: when it names the
    restored key's, the paper is right and the vault damaged (exit 2, nothing written)."""
    folder = parent_folder
    run(folder, "words", "--key-file", "keys/parent.nsec", "-o", "words.txt", expect=0)
    run(folder, "generate", "--key-file", "keys/parent.nsec", "--dpi", 100, "-o", "sheet.png", expect=0)
    whole = (folder / "household.vault").read_bytes()
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 1
    (folder / "flipped.vault").write_bytes(bytes(flipped))
    (folder / "cut.vault").write_bytes(whole[:100])
    (folder / "header-only.vault").write_bytes(whole[:66])
    for vault in ("flipped.vault", "cut.vault", "header-only.vault"):
        for source in (["words", "--decode", "words.txt"], ["scan", "sheet.png"]):
            result = run(folder, *source, "--vault", vault, "-o", "out.nsec", expect=2)
            said = result.stderr.decode()
            assert "the vault is damaged, not the paper" in said and "another family" not in said, said
            assert not (folder / "out.nsec").exists()
        said = run(folder, "verify", "sheet.png", "--vault", vault, expect=2).stderr.decode()
        assert "the vault is damaged, not the paper" in said and "does not match" not in said, said


def split(folder, family, name, phrase, rng, pictures=True):
    key = secret_file(folder / f"{name}.nsec", family.nsec + "\n")
    args = ["split", "--key-file", key, "--threshold", 2, "--shares", 3, "--text", "--iteration-exponent", 0, "--dpi", 150,
            "--date", "2026-11-26", "-o", folder / name]
    if phrase:
        args += ["--passphrase-file", secret_file(folder / f"{name}-pass.txt", phrase + "\n"), "--weak-passphrase"]
    run(folder, *args, expect=0)
    members = rng.sample(range(1, 4), 2)
    return [folder / name / f"share-{m}-of-3" for m in members]


def test_shares_are_checked_against_their_sheets_check_code(tmp_path):
    rng = random.Random(0x37_03)
    for round in range(2):
        folder = tmp_path / f"r{round}"
        folder.mkdir()
        family, other = household(rng), household(rng)
        phrase = f"rose garden {rng.randrange(10**6)}"
        chosen = split(folder, family, "family", phrase, rng)
        pictures = [p.with_suffix(".png") for p in chosen]
        texts = [p.with_suffix(".txt") for p in chosen]
        mnemonics = [t.read_text().splitlines()[0].strip() for t in texts]
        # The same words typed without the check code line under them: nothing proves them.
        bare = [secret_file(t.with_suffix(".bare"), mnemonic + "\n") for t, mnemonic in zip(texts, mnemonics)]
        assert shamir_mnemonic.combine_mnemonics(mnemonics, phrase.encode()) == family.secret
        right = secret_file(folder / "right.txt", phrase + "\n")
        wrong = secret_file(folder / "wrong.txt", phrase + "x\n")
        # What the reference restores without the passphrase is another valid key: the trap.
        assert shamir_mnemonic.combine_mnemonics(mnemonics, b"") != family.secret

        refusals = [
            (["combine", *pictures], "none was given"),
            (["combine", *pictures, "--passphrase-file", wrong], "the passphrase is wrong"),
            (["combine", pictures[0], texts[1], "--passphrase-file", wrong], "the passphrase is wrong"),
            (["combine", *texts, "--passphrase-file", wrong], "the passphrase is wrong"),
            (["combine", *texts], "none was given"),
            (["combine", *bare, "--passphrase-file", wrong, "--npub", family.npub], "is not the public key given"),
            (["combine", *bare, "--npub", family.npub], "is not the public key given"),
            (["verify", "--shares", *pictures, "--npub", family.npub], "none was given"),
            (["verify", "--shares", *pictures, "--passphrase-file", wrong, "--npub", family.npub], "the passphrase is wrong"),
        ]
        for args, why in refusals:
            writes = args[0] == "combine"
            result = run(folder, *args, *(["-o", "out.nsec"] if writes else []), expect=3)
            assert why.encode() in result.stderr, (args, result.stderr)
            assert not (folder / "out.nsec").exists()
            assert family.nsec.encode() not in result.stderr + result.stdout
        # Words typed without their check code prove nothing: without --npub or --vault the
        # restore is refused (issue 44), and written only when asked for, unverified, with what
        # to compare.
        result = run(folder, "combine", *bare, "--passphrase-file", wrong, "-o", "unchecked.nsec", expect=4)
        assert b"nothing proves the restored key" in result.stderr and not (folder / "unchecked.nsec").exists()
        result = run(folder, "combine", *bare, "--passphrase-file", wrong, "--unverified", "-o", "unchecked.nsec", expect=0)
        assert COMPARE in result.stderr and restored(folder, "unchecked.nsec") != family.nsec

        for args in (["combine", *pictures], ["combine", pictures[0], texts[1]], ["combine", *texts], ["combine", *bare, "--npub", family.npub]):
            result = run(folder, *args, "--passphrase-file", right, "-o", "out.nsec", expect=0)
            assert restored(folder, "out.nsec") == family.nsec, args
            assert COMPARE not in result.stderr, args
            (folder / "out.nsec").unlink()
        run(folder, "verify", "--shares", *pictures, "--passphrase-file", right, "--npub", family.npub, expect=0)

        # Another family's valid shares, typed: refused by --npub.
        others = [p.with_suffix(".txt") for p in split(folder, other, "other", "", rng)]
        run(folder, "combine", *others, "--npub", family.npub, "-o", "out.nsec", expect=3)
        assert not (folder / "out.nsec").exists()


def test_a_check_code_copied_from_another_sets_sheet_is_refused(tmp_path):
    """The check code line under a share's words must be its own set's: another set's proves
    nothing of these words (exit 2, naming the share), even when the key would match --npub."""
    rng = random.Random(0x44_07)
    family = household(rng)
    ours = [p.with_suffix(".txt") for p in split(tmp_path, family, "ours", "", rng)]
    theirs = [p.with_suffix(".txt") for p in split(tmp_path, family, "theirs", "", rng)]
    other_check = theirs[0].read_text().splitlines()[1]
    assert other_check.startswith("HVT-SHARE ") and other_check != ours[0].read_text().splitlines()[1]
    forged = [secret_file(tmp_path / f"forged-{i}.txt", share.read_text().splitlines()[0] + "\n" + other_check + "\n")
              for i, share in enumerate(ours)]
    result = run(tmp_path, "combine", *forged, "--npub", family.npub, "-o", "out.nsec", expect=2)
    assert b"copied from another sheet" in result.stderr and not (tmp_path / "out.nsec").exists(), result.stderr


def test_a_share_given_twice_counts_once(tmp_path):
    rng = random.Random(0x37_04)
    family = household(rng)
    one, two = [p.with_suffix(".txt") for p in split(tmp_path, family, "family", "", rng)]
    result = run(tmp_path, "combine", one, two, one, "-o", "out.nsec", expect=0)
    assert restored(tmp_path, "out.nsec") == family.nsec
    assert f"'{one}' is the same share as '{one}', counted once".encode() in result.stderr, result.stderr
    result = run(tmp_path, "combine", one, one, "-o", "again.nsec", expect=2)
    assert b"share 2 is the same share as share 1" in result.stderr and not (tmp_path / "again.nsec").exists()


def test_a_recovery_code_of_another_sheet_is_refused(tmp_path):
    rng = random.Random(0x37_05)
    secret_file(tmp_path / "mk.hex", bytes(rng.getrandbits(8) for _ in range(32)).hex() + "\n")
    run(tmp_path, "code", "new", "--master-key-file", "mk.hex", "--user-id", "u", "-o", "blob.json", "--sheet", "code.png",
        "--code-out", "code.txt", "--dpi", 100, expect=0)
    secret_file(tmp_path / "other.txt", BIP39.to_mnemonic(bytes(rng.getrandbits(8) for _ in range(32))) + "\n")
    run(tmp_path, "code", "unwrap", "--blob", "blob.json", "--code-file", "other.txt", "-o", "out.hex", expect=3)
    assert not (tmp_path / "out.hex").exists()
    run(tmp_path, "code", "unwrap", "--blob", "blob.json", "--code-file", "code.txt", "-o", "out.hex", expect=0)
    assert (tmp_path / "out.hex").read_text().strip() == (tmp_path / "mk.hex").read_text().strip()


def test_shares_named_by_their_sheets_own_title(tmp_path):
    """A words file may start with what the sheet prints above the words: its title and set
    line, in either language. What they say is checked against the words."""
    rng = random.Random(0x37_06)
    family = household(rng)
    key = secret_file(tmp_path / "family.nsec", family.nsec + "\n")
    run(tmp_path, "split", "--key-file", key, "--group-threshold", 1, "--groups", "2of3,2of2", "--text", "--iteration-exponent", 0,
        "--dpi", 72, "-o", tmp_path / "shares", expect=0)
    set_number = int(run(tmp_path, "verify", "--shares", tmp_path / "shares" / "group1-share-1-of-3.txt",
                         tmp_path / "shares" / "group1-share-3-of-3.txt", "--npub", family.npub, expect=0).stdout.decode().split("of set ")[1].split()[0])
    first = (tmp_path / "shares" / "group1-share-1-of-3.txt").read_text().splitlines()[0].split()
    third = (tmp_path / "shares" / "group1-share-3-of-3.txt").read_text().splitlines()[0].split()
    numbered = lambda words: "\n".join(f"{i + 1}. {w}" for i, w in enumerate(words))
    secret_file(tmp_path / "one.txt", f"Family key share 1 of 3, group 1\nThis share as 33 words\n{numbered(first)}\nSet {set_number}. Every sheet…\n")
    secret_file(tmp_path / "three.txt", f"Fragmento 3 de 3 de la clave familiar, grupo 1\nSerie {set_number}: todas las hojas…\n{' '.join(third)}\n")
    run(tmp_path, "combine", "one.txt", "three.txt", "--npub", family.npub, "-o", "out.nsec", expect=0)
    assert restored(tmp_path, "out.nsec") == family.nsec
    assert shamir_mnemonic.combine_mnemonics([" ".join(first), " ".join(third)]) == family.secret
    for heading, why in [("Family key share 2 of 3, group 1", "says share 2, but the words are share 3"),
                         ("Family key share 3 of 3, group 2", "says group 2, but the words are group 1"),
                         (f"Set {set_number + 1 if set_number < 32767 else 0}.", "but the words are set")]:
        secret_file(tmp_path / "three.txt", f"{heading}\n{' '.join(third)}\n")
        result = run(tmp_path, "combine", "one.txt", "three.txt", "-o", "wrong.nsec", expect=2)
        assert why.encode() in result.stderr and b"'three.txt'" in result.stderr, result.stderr
        assert not (tmp_path / "wrong.nsec").exists()


def test_check_codes_that_name_two_households_are_said_to_disagree(tmp_path):
    """One share's check code line changed to another household's (its own set kept): the
    shares combine to the family's key, which one check code does not name. The refusal says
    the check codes disagree, not that a passphrase was missing (the split had none)."""
    rng = random.Random(0x44_08)
    family, other = household(rng), household(rng)
    one, two = [p.with_suffix(".txt") for p in split(tmp_path, family, "family", "", rng)]
    words, check = two.read_text().splitlines()[:2]
    changed = secret_file(tmp_path / "changed.txt", f"{words}\n{' '.join(check.split()[:2])} {other.household_id.hex()[:12]}\n")
    result = run(tmp_path, "combine", one, changed, "-o", "out.nsec", expect=3)
    message = result.stderr.decode()
    assert "do not all name one household" in message and "none was given" not in message, message
    assert not (tmp_path / "out.nsec").exists()
