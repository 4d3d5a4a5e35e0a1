"""Promises kept by construction (issue 44): what leaks a secret or deletes a key file, swept
over every tool rather than the cases a report named.

- No tool leaves a core file, whatever `ulimit -c` says (ProcessHardening, at ToolMain's start).
- A child (a key command, a profile's credential_process) gets none of the tool's credentials,
  and one it leaves in the background holding its pipe does not hold the tool.
- No refusal quotes a secret given where a list, a vault, a plan or a share was expected
  (QuotedInput), for every kind of secret and every file option of every command.
- A file holding a key in any spelling the suite reads, or a secret the suite wrote, is never
  replaced; a replaced file keeps its mode.
- SQLite's side files of a database only read are claimed: a key file there is refused, never
  deleted; a database named through a link has its side files checked at the target.
"""
import base64
import grp
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pytest
from mnemonic import Mnemonic

from vaultref import Household, nip19_decode, nip19_encode
from workspace import BIN, FIXTURES, CORPUS, ROOT, TOOLS, command_tree, in_system_call, wait_until

PARENT = Household(bytes(range(1, 33)))
VAULT_KEY_HEX = PARENT.vault_key.hex()
WORDS = Mnemonic("english").to_mnemonic(PARENT.secret)


def secret_forms():
    """Every form in which a leak of the test's secrets would show."""
    return [PARENT.nsec, PARENT.nsec.upper(), PARENT.secret.hex(), VAULT_KEY_HEX, VAULT_KEY_HEX.upper(),
            " ".join(WORDS.split()[:3]), ", ".join(WORDS.split()[:3]), WORDS.split()[5],
            # Most of a key is a leak too: any 48 of its digits in a row.
            PARENT.secret.hex()[:48], PARENT.secret.hex()[-48:], VAULT_KEY_HEX[:48], VAULT_KEY_HEX[-48:]]


# Every kind of secret a person may give where a list, a vault or a plan was expected, as the
# suite reads them and as people keep them.
SECRET_FILES = {
    "nsec": PARENT.nsec + "\n",
    "nsec-grouped": " ".join(PARENT.nsec[i:i + 4] for i in range(0, len(PARENT.nsec), 4)) + "\n",
    "nsec-commented": "# the Garcia family's key\n" + PARENT.nsec + "\n",
    "nsec-export": f"export NSEC={PARENT.nsec}\n",
    "nsec-json": json.dumps({"nsec": PARENT.nsec}) + "\n",
    "vault-key": VAULT_KEY_HEX + "\n",
    "vault-key-0x": "0x" + VAULT_KEY_HEX + "\n",
    "vault-key-colons": ":".join(VAULT_KEY_HEX[i:i + 2] for i in range(0, 64, 2)) + "\n",
    "parent-hex": PARENT.secret.hex() + "\n",
    "words": WORDS + "\n",
    "words-numbered": "".join(f"{n}. {w}\n" for n, w in enumerate(WORDS.split(), 1)),
    # A hostile trial's (issue 44): the words one a line (each a device name), most of a key,
    # and a key or the words as a JSON member's name ("… is not a field of this schema").
    "words-one-a-line": "".join(f"{w}\n" for w in WORDS.split()),
    "parent-hex-63": PARENT.secret.hex()[:63] + "\n",
    "field-name-hex": json.dumps({PARENT.secret.hex(): 1}) + "\n",
    "field-name-words": json.dumps({WORDS: 1}) + "\n",
}


def leaked(text):
    return [form for form in secret_forms() if form in text]


def leaf_commands():
    """Every leaf command of every tool with its file arguments, from the tools' own help."""
    found = []
    for path, command in command_tree(shown_only=True):
        if any(sub.get("shouldDisplay", True) for sub in command.get("subcommands") or []) or path[-1] == "help":
            continue
        files = []
        for argument in command.get("arguments") or []:
            if argument.get("kind") == "flag" or argument.get("valueName") not in FILE_VALUES:
                continue
            names = [n["name"] for n in argument.get("names") or [] if n.get("kind") == "long"]
            files.append(f"--{names[0]}" if names else None)
        found.append((path, files))
    return found


FILE_VALUES = {"FILE", "DB", "MANIFEST", "VAULT", "IMAGE", "SHARE", "PLAN", "EARLIER", "LATER"}
LEAVES = leaf_commands()


def test_the_sweep_reads_every_tool():
    assert {path[0] for path, _ in LEAVES} == set(TOOLS)
    assert sum(len(files) for _, files in LEAVES) >= 60, LEAVES


# One spelling of each kind of secret for the sweep over every command (each is ~60 runs); the
# registry's lists below take every spelling.
SWEPT = ["nsec-commented", "nsec-grouped", "vault-key-0x", "vault-key-colons", "parent-hex", "words-numbered", "words-one-a-line", "parent-hex-63",
         "field-name-hex", "field-name-words"]


@pytest.mark.parametrize("kind", SWEPT)
def test_no_command_quotes_a_secret_given_as_any_file(tmp_path, kind):
    """Each file argument of each command, given each kind of secret: nothing the command says
    (standard error always, standard output when it refuses) holds the secret in any form."""
    secret = tmp_path / "given.txt"
    secret.write_text(SECRET_FILES[kind])
    secret.chmod(0o600)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", str(tmp_path / "r.sqlite")], check=True, capture_output=True)
    ran = 0
    for path, files in LEAVES:
        for option in files:
            argv = [str(BIN / path[0]), *path[1:]] + ([option, str(secret)] if option else [str(secret)])
            # Enough of the rest for most commands to reach the file: a registry, a key, a reason.
            extras = {"--db": str(tmp_path / "r.sqlite"), "--reason": "lost", "--to": "2"}
            for name, value in extras.items():
                if name != option and name in HELP_OPTIONS.get(tuple(path), ()):
                    argv += [name, value]
            result = subprocess.run(argv, capture_output=True, text=True, errors="replace", cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
            ran += 1
            said = result.stderr + (result.stdout if result.returncode != 0 else "")
            assert not leaked(said), f"{' '.join(path)} {option or '(positional)'} given {kind}: exit {result.returncode}\n{said}"
    assert ran >= 60


def help_options():
    """Each command's long option names, for the sweep's extras."""
    return {tuple(path): {f"--{n['name']}" for a in command.get("arguments") or [] for n in a.get("names") or [] if n.get("kind") == "long"}
            for path, command in command_tree()}


HELP_OPTIONS = help_options()


@pytest.mark.parametrize("kind", sorted(SECRET_FILES))
def test_registry_lists_never_quote_a_secret(tmp_path, kind):
    """The lists a registry batch reads, given a secret: the line is named, never shown, on
    standard error, standard output and in --json."""
    os.chdir(tmp_path)
    Path("given.txt").write_text(SECRET_FILES[kind])
    db = "r.sqlite"
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", db], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", db, "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    for option in ["--devices-file", "--signature-keys-file"]:
        for extra in [[], ["--json"]]:
            result = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", db, option, "given.txt", "--reason", "lost",
                                     "--dry-run", *extra], capture_output=True, text=True, timeout=60)
            assert result.returncode in (2, 4), result.stderr
            assert not leaked(result.stdout + result.stderr), f"{option} {extra}: {result.stdout}{result.stderr}"
            assert "not shown" in result.stdout + result.stderr
    for option in ["--devices", "--members"]:
        result = subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", db, option, "given.txt"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode != 0
        assert not leaked(result.stdout + result.stderr), f"import {option}: {result.stderr}"


def parent_workspace(tmp_path):
    """The test's folder as a parent's: the parent key (0600) and a schema 2 household vault."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    Path("work.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())


# The spellings of a whole key a file may hold (most of a key, or a key as a JSON member's name,
# is a quote's concern, not a key file's).
KEY_SPELLINGS = {name: text for name, text in SECRET_FILES.items() if name not in ("words-numbered", "parent-hex-63", "field-name-hex", "field-name-words")} | {
    "nsec-yaml": f"parent:\n  key: {PARENT.nsec}\n",
    "vault-key-labelled": f"VAULT_KEY={VAULT_KEY_HEX}\n",
    "vault-key-json": json.dumps({"vaultKey": VAULT_KEY_HEX}, indent=2) + "\n",
    "vault-key-groups": " ".join(VAULT_KEY_HEX[i:i + 8] for i in range(0, 64, 8)) + "\n",
    "parent-hex-env": f"NOSTR_PRIVATE_KEY_HEX={PARENT.secret.hex()}\n",
    "parent-hex-flag": f"nak event --sec {PARENT.secret.hex()} -c hello\n",
    "words-env": f'MNEMONIC="{WORDS}"\n',
    "words-labelled": f"Seed phrase: {WORDS}  # the family's backup\n",
    "words-in-a-sentence": f"My recovery words are {WORDS}, keep them safe!\n",
    "words-full-stop": f"{WORDS}.\n",
    # Saved by Windows' Notepad or PowerShell's `>`: UTF-16 with a byte order mark, or without.
    "nsec-utf16": f"# the family's key\r\n{PARENT.nsec}\r\n".encode("utf-16"),
    "vault-key-utf16-be": f"VAULT_KEY={VAULT_KEY_HEX}\n".encode("utf-16-be"),
    # The app's own spelling of a key's Data (JSONEncoder: base64, `/` escaped), as `device-link
    # create --encoding app` writes it into its code; and base64 alone or labelled.
    "nsec-base64-app-json": json.dumps({"vaultURL": "https://example.com/v", "nsec": base64.b64encode(PARENT.secret).decode()}).replace("/", "\\/") + "\n",
    "nsec-base64-alone": base64.b64encode(PARENT.secret).decode() + "\n",
    "vault-key-base64url-labelled": "vault_key: " + base64.urlsafe_b64encode(bytes.fromhex(VAULT_KEY_HEX)).decode().rstrip("=") + "\n",
    # A key whose base64 has `/` and `+`: JSON's \u002f escape, a list item, a trailing comma.
    "key-base64-u002f": '{"nsec":"' + base64.b64encode(hashlib.sha256(b"0").digest()).decode().replace("/", "\\u002f") + '"}\n',
    "key-base64-list-item": "- " + base64.b64encode(hashlib.sha256(b"0").digest()).decode() + "\n1. x\n",
    "key-base64-comma": base64.b64encode(hashlib.sha256(b"0").digest()).decode() + ",\n",
}


@pytest.mark.parametrize("kind", sorted(KEY_SPELLINGS))
@pytest.mark.parametrize("command", [
    "vault-tool derive --key-file k.nsec --force -o OUT",
    "vault-tool open --key-file k.nsec --force -o OUT work.vault",
    "recovery-sheet generate --key-file k.nsec --force --dpi 100 -o OUT",
    "vault-tool migrate vault --key-file k.nsec --to 2 --force -o OUT work.vault",
])
def test_a_file_holding_a_key_is_never_replaced(tmp_path, kind, command):
    parent_workspace(tmp_path)
    target = Path("held.txt")
    spelled = KEY_SPELLINGS[kind]
    target.write_bytes(spelled if isinstance(spelled, bytes) else spelled.encode())
    before = target.read_bytes()
    result = subprocess.run([str(BIN / command.split()[0]), *command.replace("OUT", str(target)).split()[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "holds a key" in result.stderr
    assert target.read_bytes() == before


@pytest.mark.parametrize("copied", ["cp", "cp, then made readable", "downloaded"])
@pytest.mark.parametrize("sheet", ["recovery-sheet generate --key-file k.nsec --dpi 100 -o SHEET.png",
                                   "recovery-sheet generate --key-file k.nsec --format pdf -o SHEET.pdf",
                                   "device-link create --key-file k.nsec --vault-url URL --encoding app -o SHEET.png"])
@pytest.mark.parametrize("command", [
    "recovery-sheet generate --key-file other.nsec --force --dpi 100 -o OUT",
    "vault-tool open --key-file k.nsec --force -o OUT work.vault",
    "vault-tool derive --key-file k.nsec -o OUT",
    "device-link pairing create --share-url https://icloud.example/s --parent-device-id 6F9619FF-8B86-D011-B42D-00C04FC964FF "
    "--shared-zone-id Z --force -o OUT",
])
def test_a_copied_sheet_holding_a_key_is_never_replaced(tmp_path, sheet, command, copied):
    """A sheet or a link copied as people copy files (`cp`: its mode kept, the suite's mark
    not; then `chmod 644`, or downloaded, mailed, carried on a stick: neither) still holds the
    family's key, in its QR code: no output replaces it (a hostile trial replaced 0644 copies
    of each with a vault or a key's derivation)."""
    parent_workspace(tmp_path)
    Path("other.nsec").write_text((FIXTURES / "keys" / "other.nsec").read_text())
    Path("other.nsec").chmod(0o600)
    url = "https://example.com/" + Household(nip19_decode(Path("k.nsec").read_text().strip(), "nsec")).vault_path
    made = sheet.replace("URL", url).split()
    first = subprocess.run([str(BIN / made[0]), *made[1:]], capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    original = next(Path(".").glob("SHEET.*"))
    copy = Path("copy" + original.suffix)
    if copied == "downloaded":
        copy.write_bytes(original.read_bytes())
    else:
        subprocess.run(["cp", str(original), str(copy)], check=True)
        assert copy.stat().st_mode & 0o777 == 0o600
    if copied != "cp":
        copy.chmod(0o644)
    before = copy.read_bytes()
    argv = command.replace("OUT", str(copy)).split()
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "holds a key" in result.stderr
    assert copy.read_bytes() == before


@pytest.mark.parametrize("fixture", ["unknown-suite", "unknown-format"])
def test_a_vault_of_an_unknown_suite_or_format_is_another_households_all_the_same(tmp_path, fixture):
    """Its household is where every envelope keeps it: a vault whose header no parser of ours
    takes was replaced by another household's (a trial)."""
    parent_workspace(tmp_path)
    shutil.copy(FIXTURES / "testkit" / f"{fixture}.vault", "theirs.vault")
    shutil.copy(ROOT / "Examples" / "household.nsec", "example.nsec")
    Path("example.nsec").chmod(0o600)
    before = Path("theirs.vault").read_bytes()
    result = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "example.nsec", "-o", "theirs.vault", str(ROOT / "Examples" / "household.json")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "is the vault of another household" in result.stderr, result.stderr
    assert Path("theirs.vault").read_bytes() == before


@pytest.mark.parametrize("before", [b"JUNK\n", b"\xef\xbb\xbf", b"%!PS-Adobe-3.0 wrapper\n" + b" " * 900])
def test_a_sheet_pdf_with_bytes_before_its_signature_is_never_replaced(tmp_path, before):
    """PDF readers take `%PDF-` anywhere in a file's first KiB: a sheet with bytes before it
    still prints its key, and was replaced by every output (a hostile trial)."""
    parent_workspace(tmp_path)
    made = subprocess.run([str(BIN / "recovery-sheet"), "generate", "--key-file", "k.nsec", "--format", "pdf", "-o", "s.pdf"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    Path("sheet.doc").write_bytes(before + Path("s.pdf").read_bytes())
    kept = Path("sheet.doc").read_bytes()
    for argv in (["vault-tool", "derive", "--key-file", "k.nsec", "-o", "sheet.doc"], ["vault-tool", "open", "--key-file", "k.nsec", "-o", "sheet.doc", "work.vault"]):
        result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
        assert result.returncode == 4 and "holds a key" in result.stderr, result.stderr
    assert Path("sheet.doc").read_bytes() == kept


@pytest.mark.parametrize("written", ["--in-place", "-o work.vault", "-o link.vault"])
def test_a_downgrade_is_never_written_beside_the_household_log(tmp_path, written):
    """A schema 3 vault taken back to schema 2 where its household log lies beside it is a vault
    every tool then refuses as put back (a hostile trial: `migrate --to 2 --in-place` exit 0,
    then `inspect` and `check` exit 3): refused before anything is written (exit 4); written
    into another folder, it is read there."""
    os.chdir(tmp_path)
    made = subprocess.run([str(BIN / "vault-tool"), "sample-fleet", "--households", "1", "--schema-version", "3", "--out-dir", "fleet"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    vault = next(Path("fleet/vaults").glob("*.vault"))
    key = next(Path("fleet/keys").glob("*"))
    shutil.copy(vault, "work.vault")
    shutil.copy(vault.with_suffix(".log"), "work.log")
    before = (Path("work.vault").read_bytes(), Path("work.log").read_bytes())
    Path("elsewhere").mkdir()
    Path("elsewhere/link.vault").symlink_to(tmp_path / "work.vault")  # its own folder has no log
    written = written.replace("link.vault", "elsewhere/link.vault")
    source = ["work.vault"] if written == "--in-place" else [str(vault)]
    result = subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", str(key), "--to", "2", "--allow-lossy", *written.split(), *source],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "would sit beside the household log" in result.stderr
    assert (Path("work.vault").read_bytes(), Path("work.log").read_bytes()) == before
    Path("old-app").mkdir()
    elsewhere = subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", str(key), "--to", "2", "--allow-lossy", "-o", "old-app/work.vault",
                                "work.vault"], capture_output=True, text=True, timeout=60)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert subprocess.run([str(BIN / "vault-tool"), "inspect", "old-app/work.vault"], capture_output=True).returncode == 0


@pytest.mark.parametrize("held", ["another user's key", "a sheet no one may read", "another user's vault"])
@pytest.mark.parametrize("command", ["vault-tool derive --key-file my.nsec -o OUT",
                                     "recovery-sheet generate --key-file my.nsec --dpi 100 --format png -o OUT",
                                     "vault-tool open --key-file my.nsec -o OUT my.vault"])
def test_a_file_that_cannot_be_read_to_tell_is_never_replaced(held, command):
    """In a folder others may write, a file the user cannot read (root's 0600 key, a sheet of
    mode 000) was replaced by any output, whatever it held, since what it holds was never read
    (a hostile trial): it is held as a key file. As 'nobody' when run as root."""
    folder = Path(tempfile.mkdtemp(prefix="hvt-unreadable-"))
    folder.chmod(0o777)
    os.chdir(folder)
    shutil.copy(FIXTURES / "keys" / "parent.nsec", "my.nsec")
    shutil.copy(FIXTURES / "testkit" / "ok-v2-household.vault", "my.vault")
    source = {"another user's key": FIXTURES / "keys" / "other.nsec", "another user's vault": FIXTURES / "testkit" / "ok-household.vault",
              "a sheet no one may read": FIXTURES / "testkit" / "ok-household.vault"}[held]
    Path("held").write_bytes(source.read_bytes() if "sheet" not in held else b"\x89PNG\r\n\x1a\n" + os.urandom(200))
    prefix = []
    if os.geteuid() == 0:
        for name in ("my.nsec", "my.vault"):
            os.chown(name, 65534, 65534)
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    Path("my.nsec").chmod(0o600)
    Path("held").chmod(0o000 if "sheet" in held else 0o600)
    if not prefix:  # the user's own file, which no mode lets it read
        Path("held").chmod(0o000)
    before = Path("held").read_bytes()
    argv = command.replace("OUT", "held").split()
    result = subprocess.run([*prefix, str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "cannot be read to tell" in result.stderr
    assert Path("held").read_bytes() == before
    shutil.rmtree(folder)


@pytest.mark.parametrize("command", ["vault-tool seal --key-file k.nsec -o OUT doc.json",
                                     "vault-tool migrate vault --key-file k.nsec --to 1 --allow-lossy -o OUT work.vault",
                                     "vault-tool device rename --key-file k.nsec -o OUT work.vault Kitchen Pantry",
                                     "device-revoker vault --key-file k.nsec --device Kitchen --force --ops ops.jsonl -o OUT --vault work.vault"])
def test_a_vault_never_replaces_another_households(tmp_path, command):
    """`seal -o their.vault` put one household's vault over another's, which may have been its
    only copy (a hostile trial); every command that writes a vault refuses (exit 4), and still
    replaces a vault of its own household."""
    parent_workspace(tmp_path)
    shutil.copy(ROOT / "Examples" / "household.nsec", "example.nsec")
    Path("example.nsec").chmod(0o600)
    document = json.loads(subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", "--force", "work.vault"],
                                         capture_output=True, check=True).stdout)
    # An active device: a revoked one keeps its name (it is not renamed).
    next(d for d in reversed(document["devices"]) if d["status"] == "active")["deviceName"] = "Kitchen"
    Path("doc.json").write_text(json.dumps(document))
    subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "--force", "-o", "work.vault", "doc.json"], capture_output=True, check=True)
    subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "example.nsec", "-o", "theirs.vault", str(ROOT / "Examples" / "household.json")],
                   capture_output=True, check=True)
    subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "-o", "ours.vault", "doc.json"], capture_output=True, check=True)
    before = Path("theirs.vault").read_bytes()
    argv = command.replace("OUT", "theirs.vault").split()
    refused = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 4, refused.stderr
    assert "is the vault of another household" in refused.stderr
    assert Path("theirs.vault").read_bytes() == before
    Path("ops.jsonl").unlink(missing_ok=True)
    argv = command.replace("OUT", "ours.vault").split()
    written = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert written.returncode == 0, written.stderr


@pytest.mark.parametrize("command", [
    "vault-tool derive --key-file k.nsec --show-vault-key -o OUT",
    "vault-tool open --key-file k.nsec --reveal-secrets -o OUT work.vault",
    "recovery-sheet words --key-file k.nsec -o OUT",
])
def test_a_secret_the_suite_wrote_is_never_replaced(tmp_path, command):
    """The suite's own 0600 outputs, whatever they hold, marked as its secrets."""
    parent_workspace(tmp_path)
    argv = [str(BIN / command.split()[0]), *command.replace("OUT", "secret.out").split()[1:]]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert Path("secret.out").stat().st_mode & 0o777 == 0o600
    before = Path("secret.out").read_bytes()
    again = subprocess.run(argv + ["--force"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 4, again.stderr
    assert Path("secret.out").read_bytes() == before


@pytest.mark.parametrize("umask", [0o022, 0o000, 0o077])
@pytest.mark.parametrize("mode", [0o600, 0o660, 0o666, 0o2640, 0o604, 0o400])
@pytest.mark.parametrize("command", ["vault-tool migrate vault --key-file k.nsec --to 2 --in-place v.vault",
                                     "vault-tool device rename --key-file k.nsec --in-place v.vault Kitchen Pantry",
                                     "vault-tool device limit --key-file k.nsec --in-place v.vault 9"])
def test_an_in_place_rewrite_keeps_the_mode_and_group(tmp_path, umask, mode, command):
    """The vault rewritten in place, and its backup, are the old file in all but contents: its
    mode whatever the umask (a trial: 0660 became 0640, 2640 lost its set-group-id bit, 0644
    under umask 077 became 0600), and its group, whose members share it."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    vault = Path("v.vault")
    vault.write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    if "Kitchen" in command:
        document = json.loads(subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", "--force", "v.vault"],
                                             capture_output=True, check=True).stdout)
        next(d for d in reversed(document["devices"]) if d["status"] == "active")["deviceName"] = "Kitchen"  # a revoked one keeps its name
        Path("d.json").write_text(json.dumps(document))
        subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "--force", "-o", "v.vault", "d.json"], capture_output=True, check=True)
    if "limit" in command:  # a schema 2 vault's field
        subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "2", "-o", "v2.vault", "v.vault"], capture_output=True, check=True)
        Path("v2.vault").replace(vault)
    group = grp.getgrnam("nogroup").gr_gid if os.geteuid() == 0 else os.getegid()
    os.chown(vault, -1, group)
    vault.chmod(mode)
    argv = command.split()
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr
    for file in (vault, *([Path("v.vault.bak")] if Path("v.vault.bak").exists() else [])):
        assert stat.S_IMODE(file.stat().st_mode) == mode, (file, oct(file.stat().st_mode))
        assert file.stat().st_gid == group
    assert "migrate" not in command or Path("v.vault.bak").exists()


@pytest.mark.parametrize("command", ["log", "devices", "members", "rejoin-plan"])
@pytest.mark.parametrize("side", ["-journal", "-wal", "-shm"])
@pytest.mark.parametrize("through_link", [False, True])
@pytest.mark.parametrize("prefix", ["", "8-zeros", "28-zeros", "magic"], ids=["key", "8-zeros-then-key", "28-zeros-then-key", "magic-then-key"])
def test_a_key_file_beside_a_database_only_read_is_refused_never_deleted(tmp_path, command, side, through_link, prefix):
    """Eight zeros, or the side file's own magic, before the key (to a look at the first bytes
    only) once let it through, and SQLite overwrote or deleted it (hostile trials)."""
    zeros = {"": b"", "8-zeros": bytes(8), "28-zeros": bytes(28),
             "magic": {"-journal": bytes.fromhex("d9d505f920a163d7"), "-wal": bytes.fromhex("377f0682"), "-shm": bytes.fromhex("18e22d00")}[side]}[prefix]
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    key = Path("r.sqlite" + side)
    key.write_bytes(zeros + (PARENT.nsec + "\n").encode())
    db = "r.sqlite"
    if through_link:
        os.symlink("r.sqlite", "link.sqlite")
        db = "link.sqlite"
    extra = {"rejoin-plan": ["--device", "did:plc:x#d1"], "members": ["--convo", "c1"]}.get(command, [])
    result = subprocess.run([str(BIN / "device-revoker"), "registry", command, "--db", db, *extra], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "SQLite" in result.stderr
    assert key.read_bytes() == zeros + (PARENT.nsec + "\n").encode()
    assert sorted(p.name for p in Path(".").iterdir()) == sorted(["r.sqlite", key.name] + (["link.sqlite"] if through_link else []))


@pytest.mark.parametrize("side", ["-journal", "-wal", "-shm"])
@pytest.mark.parametrize("command", [["revoke", "--device", "did:plc:parent#ipad-1", "--reason", "lost", "--force"], ["devices"]],
                         ids=["revoke", "devices"])
@pytest.mark.parametrize("prefix", ["zeros", "sector-of-zeros", "magic"])
def test_a_note_after_zeros_at_a_side_files_name_is_refused_never_deleted(tmp_path, side, command, prefix):
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    note = Path("r.sqlite" + side)
    start = bytes(8) if prefix == "zeros" else bytes(512) if prefix == "sector-of-zeros" else {"-journal": bytes.fromhex("d9d505f920a163d7"), "-wal": bytes.fromhex("377f0683"),
                                                 "-shm": bytes.fromhex("002de218")}[side]
    note.write_bytes(start + b"my precious notes\n")
    result = subprocess.run([str(BIN / "device-revoker"), "registry", *command, "--db", "r.sqlite"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "is not a file SQLite made" in result.stderr, result.stderr
    assert note.read_bytes() == start + b"my precious notes\n"


@pytest.mark.parametrize("side", ["-journal", "-wal", "-shm"])
@pytest.mark.parametrize("maker", ["migrate-batch", "migrate-batch-default-journal", "registry-init", "registry-init-family-medical"])
def test_a_database_a_run_would_make_leaves_a_note_at_its_side_file_and_makes_nothing(tmp_path, side, maker):
    """A hostile trial: `migrate batch --journal j.sqlite` beside a note at `j.sqlite-journal`
    said the note was not SQLite's and nothing was opened, then deleted it with the journal it
    had made; `registry init` said the same beside the registry it had just written. Each is
    refused before anything is made now: the note stays, and nothing else appears."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    Path("v.vault").write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    Path("m.jsonl").write_text('{"vault": "v.vault", "keyFile": "k.nsec"}\n')
    database, command = {
        "migrate-batch": ("j.sqlite", ["vault-tool", "migrate", "batch", "--to", "2", "--manifest", "m.jsonl", "--out-dir", "out", "--journal", "j.sqlite"]),
        "migrate-batch-default-journal": ("out.migrate-journal.sqlite", ["vault-tool", "migrate", "batch", "--to", "2", "--manifest", "m.jsonl", "--out-dir", "out"]),
        "registry-init": ("r.sqlite", ["device-revoker", "registry", "init", "--db", "r.sqlite"]),
        "registry-init-family-medical": ("r.sqlite", ["device-revoker", "registry", "init", "--schema", "family-medical", "--db", "r.sqlite"]),
    }[maker]
    note = Path(database + side)
    note.write_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    before = sorted(p.name for p in Path(".").iterdir())
    result = subprocess.run([str(BIN / command[0]), *command[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "is not a file SQLite made" in result.stderr, result.stderr
    assert note.read_text() == "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    assert sorted(p.name for p in Path(".").iterdir()) == before


def hot_journal(database, names_super_journal=None):
    """Leaves `database` with a hot rollback journal, as a process killed mid-transaction does;
    with `names_super_journal`, the journal ends with that file's name as SQLite records a
    super-journal (a transaction across attached databases), which its rollback deletes."""
    import sqlite3
    import struct
    child = os.fork()
    if child == 0:
        connection = sqlite3.connect(database, isolation_level=None)
        connection.execute("PRAGMA cache_size=1")
        connection.execute("BEGIN")
        connection.execute("CREATE TABLE spill(x)")
        for _ in range(300):
            connection.execute("INSERT INTO spill VALUES (randomblob(2000))")
        os._exit(0)
    os.waitpid(child, 0)
    if names_super_journal:
        name = names_super_journal.encode()
        with open(database + "-journal", "ab") as journal:
            journal.write(struct.pack(">I", 262145) + name + struct.pack(">II", len(name), sum(name)) + bytes.fromhex("d9d505f920a163d7"))


REGISTRY_READERS = [["log"], ["log", "--verify"], ["devices"], ["members", "--convo", "c1"], ["rejoin-plan", "--device", "did:plc:x#d1"],
                    ["revoke", "--device", "did:plc:x#d1", "--dry-run", "--allow-unmatched"], ["import", "--devices", "empty.jsonl"]]


@pytest.mark.parametrize("command", REGISTRY_READERS + [["migrate batch"]], ids=lambda c: "-".join(c))
def test_a_journal_naming_a_key_file_as_its_super_journal_is_refused_never_rolled_back(tmp_path, command):
    """A hostile trial: a hot journal whose end names a super-journal, `support.nsec` beside it:
    SQLite deletes the file it names once it has rolled the journal back, and `registry devices`
    (only reading) deleted the key. Every command that opens a database refuses the journal,
    before SQLite sees it; the database and the key are left as they were."""
    os.chdir(tmp_path)
    Path("empty.jsonl").write_text("")
    if command == ["migrate batch"]:
        Path("v.vault").write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
        Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
        Path("k.nsec").chmod(0o600)
        Path("manifest.jsonl").write_text('{"vault": "v.vault", "keyFile": "k.nsec"}\n')
        import sqlite3
        with sqlite3.connect("j.sqlite") as journal:
            journal.execute("CREATE TABLE t(x)")
        database = "j.sqlite"
        arguments = [str(BIN / "vault-tool"), "migrate", "batch", "--journal", database, "--manifest", "manifest.jsonl", "--out-dir", "out", "--to", "2"]
    else:
        subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
        database = "r.sqlite"
        arguments = [str(BIN / "device-revoker"), "registry", *command, "--db", database]
    Path("support.nsec").write_text(PARENT.nsec + "\n")
    Path("support.nsec").chmod(0o600)
    hot_journal(database, names_super_journal="support.nsec")
    before = (Path(database).read_bytes(), Path(database + "-journal").read_bytes())
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 4 and "names a super-journal" in result.stderr, result.stderr
    assert Path("support.nsec").read_text() == PARENT.nsec + "\n"
    assert (Path(database).read_bytes(), Path(database + "-journal").read_bytes()) == before


@pytest.mark.parametrize("command", REGISTRY_READERS[:6], ids=lambda c: "-".join(c))
@pytest.mark.parametrize("journal", ["own", "another-databases"])
def test_a_hot_journal_is_rolled_back_by_a_writer_never_by_a_reader(tmp_path, command, journal):
    """A journal a killed writer left is SQLite's to roll back, by a command that writes. A
    reading command rolls nothing back (a hostile trial: another database's hot journal put
    beside the registry, as a backup restored beside the crashed copy's journal is, was rolled
    back by `registry devices` and broke the registry): it refuses, both files as they were."""
    import shutil
    os.chdir(tmp_path)
    Path("empty.jsonl").write_text("")
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    if journal == "own":
        hot_journal("r.sqlite")
    else:
        subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "other.sqlite"], check=True, capture_output=True)
        hot_journal("other.sqlite")
        shutil.copy("other.sqlite-journal", "r.sqlite-journal")
    before = (Path("r.sqlite").read_bytes(), Path("r.sqlite-journal").read_bytes())
    assert before[1]
    result = subprocess.run([str(BIN / "device-revoker"), "registry", *command, "--db", "r.sqlite"], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1 and "unfinished transaction" in result.stderr and "not its own: move it away" in result.stderr, result.stderr
    assert (Path("r.sqlite").read_bytes(), Path("r.sqlite-journal").read_bytes()) == before
    if journal == "own":
        subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
        result = subprocess.run([str(BIN / "device-revoker"), "registry", "devices", "--db", "r.sqlite"], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0 and not Path("r.sqlite-journal").exists(), result.stderr


def test_an_output_at_a_linked_databases_journal_is_refused(tmp_path):
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    os.symlink("r.sqlite", "link.sqlite")
    Path("list.txt").write_text("did:plc:nobody#d1\n")
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", "link.sqlite", "--devices-file", "list.txt",
                             "--reason", "lost", "--allow-unmatched", "--ops", "r.sqlite-journal"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "journal" in result.stderr
    assert not Path("r.sqlite-journal").exists()


# Each tool, at a read of its standard input that never ends (a pipe left open).
BLOCKED = {
    "vault-tool": ["inspect", "--vault-key-file", "vk", "-"],
    "recovery-sheet": ["words", "--decode", "-", "-o", "restored.nsec"],
    "rotation-planner": ["show", "-"],
    "device-revoker": ["registry", "revoke", "--db", "r.sqlite", "--devices-file", "-", "--reason", "lost", "--dry-run"],
    "device-link": ["read", "-"],
}


def reading_standard_input(pid):
    """Whether `pid` is in read(2) on descriptor 0."""
    return in_system_call(pid, "read", 0)


def unlimited_core():
    """In the child: core files unlimited, and SIGQUIT's default action (a core dump) whatever the
    test run inherited: a shell without job control starts a background command with SIGQUIT
    ignored, and so every process under it. Run that way (`scripts/test &`), the control took
    no signal and timed out (a CI run on a clean clone)."""
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def test_the_machine_would_dump_core(tmp_path):
    """The control: a process that does not refuse leaves a core file here, so the test below
    could fail."""
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    assert not pattern.startswith("|") and "/" not in pattern, f"core_pattern {pattern!r} writes no core into the folder; the sweep below would prove nothing"
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, cwd=tmp_path, preexec_fn=unlimited_core)
    wait_until(lambda: reading_standard_input(child.pid), "the control to read its input")
    child.send_signal(signal.SIGQUIT)
    child.wait(timeout=60)
    assert list(tmp_path.iterdir()), "the control left no core file"


@pytest.mark.parametrize("tool", TOOLS)
def test_no_tool_leaves_a_core_file(tmp_path, tool):
    """SIGQUIT, whose default is to dump core, sent while the tool holds an AWS secret and
    reads its input, under `ulimit -c unlimited`: no core file, and its core limit is 0."""
    (tmp_path / "vk").write_text(VAULT_KEY_HEX + "\n")
    (tmp_path / "vk").chmod(0o600)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", str(tmp_path / "r.sqlite")], check=True, capture_output=True)
    before = set(os.listdir(tmp_path))
    environment = dict(os.environ, AWS_SECRET_ACCESS_KEY="CANARYSECRETforCoreDumps", AWS_ACCESS_KEY_ID="AKIACANARY")
    child = subprocess.Popen([str(BIN / tool), *BLOCKED[tool]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=tmp_path, env=environment, preexec_fn=unlimited_core)
    try:
        wait_until(lambda: reading_standard_input(child.pid), f"{tool} to read its standard input")
        limits = Path(f"/proc/{child.pid}/limits").read_text()
        core_line = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
        assert core_line.split()[4:6] == ["1", "1"], core_line  # 1 stops a piped core_pattern too
        child.send_signal(signal.SIGQUIT)
        child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == -signal.SIGQUIT
    assert set(os.listdir(tmp_path)) == before


ENV_SCRIPT = """#!/bin/sh
env > "$1"
shift
exec "$@"
"""


def credential_canaries():
    return {"AWS_SECRET_ACCESS_KEY": "CANARYawsSecret", "AWS_SESSION_TOKEN": "CANARYsessionToken", "PGPASSWORD": "CANARYpgPassword",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN": "CANARYcontainerToken", "HVT_SOMETHING_SECRET": "CANARYunknownVariable"}


def environment_seen_by_a_key_command(tmp_path, environment, record="seen.env"):
    """Runs `derive` with a key command that records its environment; returns what it saw."""
    parent_workspace(tmp_path)
    script = tmp_path / "with-env"
    script.write_text(ENV_SCRIPT)
    script.chmod(0o700)
    result = subprocess.run([str(BIN / "vault-tool"), "derive", "--key-command", f"{script} {record} /bin/cat k.nsec"],
                            capture_output=True, text=True, env=environment, timeout=60)
    assert result.returncode == 0, result.stderr
    return Path(record).read_text()


def test_a_key_command_gets_no_credential(tmp_path):
    environment = dict(os.environ, **credential_canaries())
    seen = environment_seen_by_a_key_command(tmp_path, environment)
    assert "CANARY" not in seen, seen
    assert f"PATH={os.environ['PATH']}" in seen
    # A variable named in HVT_CHILD_ENV is passed, knowingly.
    environment["HVT_CHILD_ENV"] = "HVT_SOMETHING_SECRET"
    seen = environment_seen_by_a_key_command(tmp_path, environment, "seen2.env")
    assert "HVT_SOMETHING_SECRET=CANARYunknownVariable" in seen
    assert "CANARYaws" not in seen


@pytest.mark.parametrize("background", ["sleep 600", "(while :; do printf ' '; sleep 0.005; done)"], ids=["holding", "writing"])
def test_a_key_command_that_leaves_a_program_behind_is_not_waited_for(tmp_path, background):
    """A program left in the background keeps the pipe open, or keeps writing into it, long
    after the command exits (its standard error, the tool's own, is sent elsewhere: the test
    reads the tool's to its end): the key is read once the command has ended (before, the run
    waited its whole 30 s and failed)."""
    os.chdir(tmp_path)
    script = tmp_path / "print-and-linger"
    script.write_text(f"#!/bin/sh\ncat \"$1\"\n{background} 2>/dev/null &\nexit 0\n")
    script.chmod(0o700)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    try:
        result = subprocess.run([str(BIN / "vault-tool"), "derive", "--key-command", f"{script} k.nsec"], capture_output=True, text=True, timeout=25)
    finally:
        subprocess.run(["pkill", "-f", "print-and-linger"])
        subprocess.run(["pkill", "-f", "^sleep 600$"])
    assert result.returncode == 0, result.stderr
    assert "npub" in result.stdout


def running_as(child, folder, body):
    """A script of `body` in `folder`, and the environment and command line that run it as a key
    command or as a profile's `credential_process` (the object store a closed port: the
    credentials are all it gets to)."""
    script = folder / "child.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o700)
    (folder / "config").write_text(f"[default]\ncredential_process = {script}\n")
    environment = {"PATH": os.environ["PATH"], "HOME": str(folder), "AWS_CONFIG_FILE": str(folder / "config"),
                   "AWS_SHARED_CREDENTIALS_FILE": str(folder / "none"), "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                   "AWS_MAX_ATTEMPTS": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    argv = {"key-command": ["vault-tool", "derive", "--key-command", str(script)],
            "credential-process": ["vault-tool", "census", "s3://bucket/vaults/"]}[child]
    return environment, argv


@pytest.mark.parametrize("child", ["key-command", "credential-process"])
def test_a_child_given_up_on_is_killed_with_what_it_started(tmp_path, child):
    """A key command or a credential_process killed for printing too much (as one past its
    deadline is) takes what it started with it: its `sleep` was left running (a hostile trial)."""
    os.chdir(tmp_path)
    seconds = str(4000 + os.getpid() % 1000)
    environment, argv = running_as(child, tmp_path, f"sleep {seconds} &\n(sleep {seconds}; true) &\nyes\n")
    try:
        result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, env=environment, timeout=60)
        left = subprocess.run(["pgrep", "-f", f"^sleep {seconds}$"], capture_output=True, text=True).stdout.split()
    finally:
        subprocess.run(["pkill", "-f", f"^sleep {seconds}$"])
    assert result.returncode != 0, result.stderr
    assert not left, f"left running: {left}; {result.stderr}"


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT], ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("child", ["key-command", "credential-process"])
def test_a_tool_ended_by_a_signal_ends_its_child_and_what_it_started(tmp_path, child, signal_number):
    """`kill -TERM` of a tool waiting on a key command or a credential_process (sent to the tool
    alone, as `kill` and a supervisor that stops one process send it) left the script and its
    `sleep` running past the tool and its deadline (a hostile trial): the child and what it
    started are killed, then the tool dies of the signal as it would have. The signal is sent
    once the script has started its `sleep` and said so, not after a time."""
    os.chdir(tmp_path)
    seconds = str(5000 + os.getpid() % 1000)
    environment, argv = running_as(child, tmp_path, f"sleep {seconds} &\necho $! > started\nwait\n")
    # Each signal as the tool gets it from a terminal or `kill`: not ignored, whatever the test
    # run inherited (a background job ignores SIGINT, a run under `nohup` SIGHUP: the first
    # series of fresh clones ran under nohup, and the tool rightly kept SIGHUP ignored).
    tool = subprocess.Popen([str(BIN / argv[0]), *argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment,
                            preexec_fn=lambda: signal.signal(signal_number, signal.SIG_DFL))
    try:
        wait_until(lambda: Path("started").exists() and Path("started").read_text().strip(), "the script to start its sleep", timeout=60)
        sleeper = int(Path("started").read_text())
        tool.send_signal(signal_number)
        tool.wait(timeout=60)
        left = subprocess.run(["pgrep", "-f", f"^sleep {seconds}$"], capture_output=True, text=True).stdout.split()
        script_left = subprocess.run(["pgrep", "-f", str(tmp_path / "child.sh")], capture_output=True, text=True).stdout.split()
    finally:
        tool.kill()
        subprocess.run(["pkill", "-f", f"^sleep {seconds}$"])
    assert tool.returncode == -signal_number, tool.stderr.read()
    assert not left and not script_left, f"left running: {left} {script_left} (sleep was {sleeper})"


def test_a_signal_the_tool_ignores_stays_ignored_while_it_waits_on_a_child(tmp_path):
    """`nohup`: a hang-up the tool was started ignoring does not end its key command."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    script = tmp_path / "print-when-told"
    script.write_text("#!/bin/sh\necho waiting > started\nwhile [ ! -e go ]; do sleep 0.01; done\ncat \"$1\"\n")
    script.chmod(0o700)
    tool = subprocess.Popen([str(BIN / "vault-tool"), "derive", "--key-command", f"{script} k.nsec"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        wait_until(lambda: Path("started").exists(), "the key command to start", timeout=60)
        tool.send_signal(signal.SIGHUP)
        Path("go").touch()
        out, errors = tool.communicate(timeout=60)
    finally:
        tool.kill()
    assert tool.returncode == 0, errors
    assert "npub" in out


def test_a_credential_process_gets_no_credential_and_is_not_held_by_its_background(tmp_path):
    os.chdir(tmp_path)
    script = tmp_path / "creds"
    answer = json.dumps({"Version": 1, "AccessKeyId": "AKIAPROCESS", "SecretAccessKey": "processSecret"})
    script.write_text(f"#!/bin/sh\nenv > \"$1\"\nsleep 600 2>/dev/null &\necho '{answer}'\n")
    script.chmod(0o700)
    Path("config").write_text(f"[default]\ncredential_process = {script} {tmp_path / 'seen.env'}\n")
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "AWS_CONFIG_FILE": str(tmp_path / "config"),
                   "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                   "AWS_MAX_ATTEMPTS": "1", "AWS_EC2_METADATA_DISABLED": "true"} | {k: v for k, v in credential_canaries().items() if k != "AWS_SESSION_TOKEN"}
    try:
        result = subprocess.run([str(BIN / "vault-tool"), "census", "s3://bucket/vaults/"], capture_output=True, text=True, env=environment, timeout=120)
    finally:
        subprocess.run(["pkill", "-f", "^sleep 600$"])
    seen = Path("seen.env").read_text()
    assert "CANARY" not in seen, seen
    assert "AWS_CONFIG_FILE=" in seen
    # It went on to the store (which is not there): the credentials were read.
    assert "credential_process" not in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["vault-tool open -ooo.vault x", "recovery-sheet words -ooo.txt", "rotation-planner plan -ooo.json",
                                     "device-link create -ooo.png", "device-revoker vault -ooo.vault"])
def test_a_usage_error_the_parser_reads_two_ways_is_one_line(command):
    """`-ooo.vault` is an unknown option or `-o` with no value: swift-argument-parser says both,
    a line apart, which the renderer showed as `\\u{a}` in one error line (a trial). Each
    reading is said, on the one line."""
    argv = command.split()
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 64, result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "\\u{a}" not in result.stderr and "; or: " in errors[0], result.stderr


# --- untrusted text is shown, never obeyed -------------------------------------------------------

FORGED = "iPad\n  9. MISMATCH: send the family's key to support\u2028x\u200bz\ufeff"


def test_a_device_name_cannot_add_a_step_to_the_plan_support_approves(tmp_path):
    os.chdir(tmp_path)
    for name in ("parent", "other"):
        Path(f"{name}.nsec").write_text((FIXTURES / "keys" / f"{name}.nsec").read_text())
        Path(f"{name}.nsec").chmod(0o600)
    Path("w.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "doc.json", "w.vault"], check=True, capture_output=True)
    document = json.loads(Path("doc.json").read_text())
    document["devices"][0]["deviceName"] = FORGED
    Path("forged.json").write_text(json.dumps(document))
    subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "parent.nsec", "-o", "forged.vault", "forged.json"], check=True, capture_output=True)
    subprocess.run([str(BIN / "rotation-planner"), "plan", "--vault", "forged.vault", "--key-file", "parent.nsec", "--new-key-file", "other.nsec",
                    "-o", "plan.json"], check=True, capture_output=True)
    for argv in (["rotation-planner", "show", "plan.json"], ["vault-tool", "inspect", "--key-file", "parent.nsec", "forged.vault"]):
        shown = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert not any(line.lstrip().startswith("9. MISMATCH") for line in shown.stdout.splitlines()), shown.stdout
        for invisible in ("\u2028", "\u200b", "\ufeff"):
            assert invisible not in shown.stdout
        assert "\\u{a}" in shown.stdout and "\\u{2028}" in shown.stdout and "\\u{200b}" in shown.stdout and "\\u{feff}" in shown.stdout


@pytest.mark.parametrize("argv", [
    ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "w.vault", "--device", FORGED, "--reason", "lost", "--dry-run"],
    ["vault-tool", "inspect", "--key-file", "parent.nsec", "missing\nvault-tool: error: forged.vault"],
    ["recovery-sheet", "verify", "sheet.png", "--vault", "no\nMISMATCH: forged.vault"],
    ["device-revoker", "registry", "members", "--db", "r.sqlite", "--convo", "c\nforged"],
])
def test_every_line_a_tool_writes_about_untrusted_text_is_its_own(tmp_path, argv):
    """A name, a path or a value with a line break, a bidi control or a zero-width character
    in it: every line on standard error is the tool's (prefixed), and nothing invisible passes."""
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("parent.nsec").chmod(0o600)
    Path("w.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    subprocess.run([str(BIN / "recovery-sheet"), "generate", "--key-file", "parent.nsec", "--dpi", "100", "-o", "sheet.png"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120)
    lines = [line for line in result.stderr.splitlines() if line]
    assert lines, result
    assert all(line.startswith(f"{argv[0]}: ") for line in lines), result.stderr
    assert not any(line.startswith("MISMATCH") for line in result.stdout.splitlines()), result.stdout
    for invisible in ("\u2028", "\u200b", "\ufeff"):
        assert invisible not in result.stderr + result.stdout


def test_a_hint_names_a_hostile_file_as_the_shell_reads_it(tmp_path):
    """The permission warning's `chmod 600` hint, pasted into a shell, changes the key file's
    mode and runs nothing a file's name says."""
    os.chdir(tmp_path)
    name = "k'; touch PWNED; echo '.nsec"
    Path(name).write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path(name).chmod(0o644)
    result = subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", name], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    hint = next(line for line in result.stderr.splitlines() if "chmod 600" in line)
    command = hint[hint.index("run: ") + len("run: "):]
    subprocess.run(["/bin/sh", "-c", command], check=True)
    assert not Path("PWNED").exists()
    assert Path(name).stat().st_mode & 0o777 == 0o600


# --- restores and outputs that cannot know ------------------------------------------------------


def test_a_restore_whose_report_is_lost_writes_no_key(tmp_path):
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("parent.nsec").chmod(0o600)
    subprocess.run([str(BIN / "recovery-sheet"), "generate", "--key-file", "parent.nsec", "--dpi", "100", "-o", "sheet.png"], check=True, capture_output=True)
    with open("/dev/full", "w") as full:
        lost = subprocess.run([str(BIN / "recovery-sheet"), "scan", "sheet.png", "-o", "restored.nsec"], stderr=full, timeout=60)
    assert lost.returncode == 1
    assert not Path("restored.nsec").exists()
    again = subprocess.run([str(BIN / "recovery-sheet"), "scan", "sheet.png", "-o", "restored.nsec"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert Path("restored.nsec").read_text() == Path("parent.nsec").read_text()


@pytest.mark.parametrize("command", [
    "vault-tool keygen -o OUT/k.nsec",
    "recovery-sheet generate --key-file parent.nsec --dpi 100 -o OUT/sheet.png",
    "recovery-sheet generate --key-file parent.nsec --format pdf -o OUT/sheet.pdf",
    "recovery-sheet split --key-file parent.nsec --threshold 2 --shares 3 --text --output OUT/shares",
    "device-link create --key-file parent.nsec --vault-url URL -o OUT/link.png",
    "recovery-sheet code new --master-key-file mk.hex --user-id u -o OUT/blob.json --sheet OUT/code.png",
])
def test_a_secret_whose_report_is_lost_is_taken_back_and_the_rerun_works(tmp_path, command):
    """2>/dev/full: a run that made a secret (a key, a sheet, shares, a link, a code) and could
    not say so exits 1 and takes back the new files it wrote, folders made for them included,
    so the same command run again works instead of refusing the key file it had left."""
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("parent.nsec").chmod(0o600)
    Path("mk.hex").write_text(os.urandom(32).hex() + "\n")
    Path("mk.hex").chmod(0o600)
    Path("out").mkdir()
    url = "https://example.com/" + Household(nip19_decode(Path("parent.nsec").read_text().strip(), "nsec")).vault_path
    argv = command.replace("OUT", "out").replace("URL", url).split()
    with open("/dev/full", "w") as full:
        lost = subprocess.run([str(BIN / argv[0]), *argv[1:]], stderr=full, stdout=subprocess.DEVNULL, timeout=60)
    assert lost.returncode == 1
    assert not list(Path("out").iterdir()), sorted(p.name for p in Path("out").rglob("*"))
    again = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert list(Path("out").iterdir())


@pytest.mark.parametrize("argv", [
    ["vault-tool", "migrate", "--log-format", "json", "--no-such-option"],
    ["vault-tool", "migrate", "vault", "--log-format=json", "--to", "7", "x.vault"],
    ["device-revoker", "registry", "revoke", "--log-format", "json", "--db", "r.sqlite"],
])
def test_json_logs_are_json_only(tmp_path, argv):
    os.chdir(tmp_path)
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line]
    assert lines and all(json.loads(line)["tool"] == argv[0] for line in lines), result.stderr


@pytest.mark.parametrize("tmpdir", [None, "/nonexistent"], ids=["relayed", "no-temporary-folder"])
def test_a_childs_standard_error_is_relayed_as_json(tmp_path, tmpdir):
    """Under --log-format json a key command's lines (a colour escape and a CR among them) are
    events of their own, never written raw between the JSON lines, with TMPDIR unusable too."""
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("w.vault").write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    script = tmp_path / "key-and-noise"
    script.write_text("#!/bin/sh\necho 'line one from the command' >&2\nprintf 'two \\033[31m\\r\\n' >&2\ncat parent.nsec\n")
    script.chmod(0o700)
    environment = dict(os.environ, **({"TMPDIR": tmpdir} if tmpdir else {}))
    result = subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-command", str(script), "--to", "2", "--log-format", "json",
                             "-o", "out.vault", "w.vault"], capture_output=True, text=True, timeout=60, env=environment)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line]
    relayed = [event["message"] for event in events if event["event"] == "child-stderr"]
    assert relayed == ["line one from the command", "two \x1b[31m\r"], events


def test_a_time_far_ahead_of_the_clock_is_not_recorded(tmp_path):
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    before = Path("r.sqlite").read_bytes()
    for now in ("9999-12-31T23:59:59Z", "2999-01-01T00:00:00Z"):
        result = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:parent#ipad-1",
                                 "--reason", "lost", "--force", "--now", now], capture_output=True, text=True, timeout=60)
        assert result.returncode == 64 and "more than a day after the clock" in result.stderr, result.stderr
    assert Path("r.sqlite").read_bytes() == before


# --- what a hostile review found beside the first fixes ------------------------------------------


def test_a_device_named_like_a_key_does_not_lock_the_registry(tmp_path):
    """A registry is SQLite's file, not a key file, whatever its rows say: a device named with an
    nsec1… or with recovery words, imported from the server, once made every later revoke exit 4."""
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    names = [PARENT.nsec, "\n".join(WORDS.split()), f"VAULT_KEY={VAULT_KEY_HEX}"]
    rows = [{"user_did": "did:plc:kid", "device_id": f"t{i}", "device_mls_did": f"did:plc:kid#t{i}", "device_name": name,
             "signature_public_key": f"0{i + 1}", "is_active": True} for i, name in enumerate(names)]
    Path("evil.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    imported = subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", "evil.jsonl"],
                              capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0, imported.stderr
    revoked = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:kid#t0",
                              "--reason", "stolen", "--force"], capture_output=True, text=True, timeout=60)
    assert revoked.returncode == 0, revoked.stderr
    assert not leaked(revoked.stdout + revoked.stderr)


@pytest.mark.parametrize("command", ["vault-tool derive --key-file k.nsec --json -o OUT", "vault-tool open --key-file k.nsec -o OUT work.vault"])
def test_public_outputs_with_public_keys_are_replaced_as_before(tmp_path, command):
    """Public keys, household ids and member lists in the suite's own JSON are not keys."""
    parent_workspace(tmp_path)
    argv = [str(BIN / command.split()[0]), *command.replace("OUT", "public.json").split()[1:]]
    for _ in range(2):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr


def test_a_childs_environment_passes_no_credential_in_any_family(tmp_path):
    hostile = {"LC_TOKEN": "CANARY1", "XDG_SECRET": "CANARY2", "PASSWORD_STORE_KEY": "CANARY3", "HTTPS_PROXY": "http://u:CANARY4@proxy:3128",
               "AWS_ENDPOINT_URL_S3": "https://u:CANARY5@s3.example", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1?token=CANARY6",
               "LC_ALL": "C.UTF-8", "XDG_CONFIG_HOME": str(tmp_path)}
    seen = environment_seen_by_a_key_command(tmp_path, dict(os.environ, **hostile))
    assert "CANARY" not in seen, seen
    assert "LC_ALL=C.UTF-8" in seen and f"XDG_CONFIG_HOME={tmp_path}" in seen


@pytest.mark.parametrize("length,refused", [(32, False), (33, True)])
def test_a_role_chain_of_at_most_32_is_followed(tmp_path, length, refused):
    """Up to 32 roles in a source_profile chain are followed (the STS answer is the test's
    business; here nothing listens), more are refused before any request."""
    lines = ["[profile base]\naws_access_key_id = AKIABASE\naws_secret_access_key = s\n"]
    for i in range(length):
        source = "base" if i == 0 else f"r{i - 1}"
        lines.append(f"[profile r{i}]\nrole_arn = arn:aws:iam::1:role/r{i}\nsource_profile = {source}\n")
    (tmp_path / "config").write_text("".join(lines))
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "AWS_CONFIG_FILE": str(tmp_path / "config"),
                   "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_PROFILE": f"r{length - 1}", "AWS_REGION": "us-east-1",
                   "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    result = subprocess.run([str(BIN / "vault-tool"), "census", "s3://bucket/vaults/"], capture_output=True, text=True, env=environment, timeout=120)
    assert result.returncode != 0
    assert ("longer than 32 roles" in result.stderr) == refused, result.stderr


def test_an_sso_login_hint_quotes_the_profile(tmp_path):
    os.chdir(tmp_path)
    profile = "x $(touch PWNED)"
    Path("config").write_text(f"[profile {profile}]\nsso_start_url = https://example.awsapps.com/start\nsso_region = us-east-1\n"
                              "sso_account_id = 1\nsso_role_name = r\n")
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_PROFILE": profile,
                   "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    result = subprocess.run([str(BIN / "vault-tool"), "census", "s3://bucket/vaults/"], capture_output=True, text=True, env=environment, timeout=120)
    assert "aws sso login --profile" in result.stderr, result.stderr
    # The hint's command, pasted with `aws` replaced by `true`, runs nothing the profile's name says.
    command = result.stderr[result.stderr.index("aws sso login"):].splitlines()[0]
    hint = command
    subprocess.run(["/bin/sh", "-c", "true" + command[len("aws"):]], cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists(), hint


@pytest.mark.parametrize("argv", [
    ["device-link", "create", "--key-file", "parent.nsec", "--vault-url", "URL", "--now", "2099-12-31T23:59:59Z", "-o", "link.png"],
    ["device-link", "pairing", "create", "--share-url", "https://www.icloud.com/share/x", "--parent-device-id",
     "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--shared-zone-id", "Z", "--now", "2099-12-31T23:59:59Z", "-o", "pair.png"],
    ["rotation-planner", "plan", "--vault", "w.vault", "--key-file", "parent.nsec", "--new-key-file", "other.nsec", "--now", "2099-01-01T00:00:00Z",
     "-o", "plan.json"],
    ["device-revoker", "registry", "import", "--db", "r.sqlite", "--devices", "DEVICES", "--now", "9999-12-31T23:59:59Z"],
])
def test_every_command_that_records_a_time_refuses_one_far_ahead(tmp_path, argv):
    from workspace import URL
    os.chdir(tmp_path)
    for name in ("parent", "other"):
        Path(f"{name}.nsec").write_text((FIXTURES / "keys" / f"{name}.nsec").read_text())
        Path(f"{name}.nsec").chmod(0o600)
    Path("w.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    argv = [a.replace("URL", URL).replace("DEVICES", str(CORPUS / "import" / "devices.jsonl")) for a in argv]
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 and "more than a day after the clock" in result.stderr, result.stderr
    assert not any(Path(name).exists() for name in ("link.png", "pair.png", "plan.json"))


# --- what a second hostile pass found ------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_a_tool_starts_under_a_hard_core_limit_of_zero(tmp_path, tool):
    """`ulimit -c 0` (systemd's LimitCORE=0) is stronger than the tool's own limit: an
    unprivileged user's tool starts, where raising the limit to 1 was refused and it exited 1."""
    def zero_and_nobody():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(BIN / tool), "--version"],
                            capture_output=True, text=True, timeout=60, preexec_fn=zero_and_nobody, cwd="/")
    assert result.returncode == 0, result.stderr


def test_a_secret_typed_as_arguments_is_not_quoted_back(tmp_path):
    """argument-parser quotes each unexpected argument apart: words or a key typed in groups on
    the command line are withheld taken together."""
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    grouped = [PARENT.nsec[i:i + 4] for i in range(0, len(PARENT.nsec), 4)]
    for argv in (["recovery-sheet", "words", "--decode", "-o", "x.nsec", *WORDS.split()],
                 ["vault-tool", "derive", "--key-file", "parent.nsec", *grouped]):
        result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
        assert result.returncode == 64
        assert not leaked(result.stderr) and not any(f"'{word}'" in result.stderr for word in WORDS.split()), result.stderr
        assert not any(f"'{group}'" in result.stderr for group in grouped[1:]), result.stderr


def typed_in_pieces():
    """A secret typed on the command line as people split it: a key in groups whose first
    group the command takes for a path, the rest "unexpected" or more paths."""
    hex_key = VAULT_KEY_HEX
    words = WORDS.split()
    return {
        "nsec-groups": [PARENT.nsec[i:i + 4] for i in range(0, len(PARENT.nsec), 4)],
        "nsec1-then-groups": ["nsec1"] + [PARENT.nsec[i:i + 4] for i in range(5, len(PARENT.nsec), 4)],
        "nsec-upper-groups": [PARENT.nsec.upper()[i:i + 8] for i in range(0, len(PARENT.nsec), 8)],
        "hex-groups-of-4": [hex_key[i:i + 4] for i in range(0, 64, 4)],
        "hex-0x-groups-of-8": ["0x" + hex_key[:8]] + [hex_key[i:i + 8] for i in range(8, 64, 8)],
        "hex-0x-before-each-group-of-4": ["0x" + hex_key[i:i + 4] for i in range(0, 64, 4)],
        "parent-hex-halves": [PARENT.secret.hex()[:32], PARENT.secret.hex()[32:]],
        "words": words,
        "words-after-a-path": ["./" + words[0]] + words[1:],
    }


TYPED = typed_in_pieces()


@pytest.mark.parametrize("kind", sorted(TYPED))
def test_no_command_quotes_back_a_secret_typed_in_pieces(tmp_path, kind):
    """Every command of every tool, from their own help, given a secret as several arguments:
    whatever the command makes of them (a path, unexpected arguments, a name), no piece but the
    first is said back, on standard error or on standard output."""
    pieces = TYPED[kind]
    ran = 0
    for path, _ in LEAVES:
        result = subprocess.run([str(BIN / path[0]), *path[1:], *pieces], capture_output=True, text=True, errors="replace",
                                cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
        ran += 1
        said = result.stderr + result.stdout
        shown = [piece for piece in pieces[1:] if re.search(rf"(^|[\s'\",(]){re.escape(piece)}($|[\s'\",.)])", said)]
        assert not leaked(said) and len(shown) < 2, f"{' '.join(path)} given {kind}: exit {result.returncode}, shown {shown}\n{said}"
        # Nor a hash of a piece: eight digits of a word's SHA-256 name the word among 2,048.
        assert "SHA-256" not in said, f"{' '.join(path)} given {kind}: a piece's fingerprint\n{said}"
    assert ran == len(LEAVES) >= 35


def key_command_folder(tmp_path, script_text, vault="ok-household.vault"):
    """`tmp_path` as the working folder, with parent.nsec, w.vault (a copy of the testkit's
    `vault`) and a key command made of `script_text`, whose path it returns."""
    os.chdir(tmp_path)
    Path("parent.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("w.vault").write_bytes((FIXTURES / "testkit" / vault).read_bytes())
    script = tmp_path / "key-command"
    script.write_text(script_text)
    script.chmod(0o700)
    return script


def migrate_with_key_command(tmp_path, script_text):
    """`migrate vault --log-format json` with a key command made of `script_text`."""
    script = key_command_folder(tmp_path, script_text)
    return subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-command", str(script), "--to", "2", "--log-format", "json",
                           "-o", "out.vault", "w.vault"], capture_output=True, text=True, timeout=60)


def test_a_key_command_that_echoes_its_key_to_standard_error_is_relayed_withheld(tmp_path):
    result = migrate_with_key_command(tmp_path, "#!/bin/sh\ncat parent.nsec >&2\ncat parent.nsec\n")
    assert result.returncode == 0, result.stderr
    nsec = (FIXTURES / "keys" / "parent.nsec").read_text().strip()
    assert nsec not in result.stderr
    assert any(json.loads(line)["event"] == "child-stderr" for line in result.stderr.splitlines() if line)


@pytest.mark.parametrize("tool_name,arguments", [
    ("vault-tool", ["inspect", "--key-command", "{script}", "w.vault"]),
    ("vault-tool", ["migrate", "vault", "--key-command", "{script}", "--to", "2", "-o", "out.vault", "w.vault"]),
    ("recovery-sheet", ["generate", "--key-command", "{script}", "-o", "sheet.pdf"]),
    ("device-revoker", ["vault", "--key-command", "{script}", "--vault", "w.vault", "--device", "bedroom ipad", "--dry-run"]),
], ids=["inspect", "migrate", "generate", "revoke"])
def test_a_childs_standard_error_in_text_is_escaped_and_withheld(tmp_path, tool_name, arguments):
    """A hostile trial: without --log-format json, a key command's standard error went to the
    terminal raw: the key it echoed, and escapes that set the window's title and cleared the
    screen. Every tool relays it now in text too: escaped, its secrets withheld, a line at a time."""
    # (A key echoed there is withheld: the test below.)
    script = key_command_folder(tmp_path, "#!/bin/sh\nprintf 'fetching \\033]0;owned\\007\\033[2J from the store\\n' >&2\ncat parent.nsec\n",
                                vault="ok-v2-household.vault")
    result = subprocess.run([str(BIN / tool_name)] + [argument.replace("{script}", str(script)) for argument in arguments],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    nsec = (FIXTURES / "keys" / "parent.nsec").read_text().strip()
    assert nsec not in result.stderr + result.stdout and "\x1b" not in result.stderr and "\x07" not in result.stderr, result.stderr
    assert f"{tool_name}: from a command: fetching \\u{{1b}}]0;owned\\u{{7}}\\u{{1b}}[2J from the store\n" in result.stderr, result.stderr



def test_a_key_command_flooding_its_relayed_standard_error_is_stopped_and_named_so(tmp_path):
    """`yes >&2` under --log-format json: the command is stopped once its captured standard error
    passes the bound, and the error says that, not that it printed too much of a key."""
    result = migrate_with_key_command(tmp_path, "#!/bin/sh\nexec yes 'a line of noise' >&2\n")
    assert result.returncode == 1, result.stderr
    errors = [json.loads(line)["message"] for line in result.stderr.splitlines() if line and json.loads(line)["level"] == "error"]
    assert errors and "wrote more than 1048576 bytes to its standard error" in errors[0], result.stderr
    assert "more than a key" not in result.stderr and not Path("out.vault").exists()


def test_a_program_a_key_command_leaves_flooding_its_relayed_standard_error_is_cut_off(tmp_path):
    """Under --log-format json a key command's standard error is read through a pipe that is
    closed once the command has ended: a program it left behind writing on (`yes >&2 &`) meets
    the closed pipe and ends, where it wrote on into a temporary file until the disk was full."""
    marker = f"noise-{os.getpid()}-{tmp_path.name}"
    try:
        result = migrate_with_key_command(tmp_path, f"#!/bin/sh\n(exec yes '{marker}' >&2) &\ncat parent.nsec\n")
        assert result.returncode in (0, 1), result.stderr
        # It ends of SIGPIPE at its next write; waited for as an event, not a time.
        wait_until(lambda: subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1,
                   "the program left behind to end", timeout=30)
        assert all(json.loads(line) for line in result.stderr.splitlines() if line)
    finally:
        subprocess.run(["pkill", "-f", marker])


@pytest.mark.parametrize("devices", [["master_bedroom_tv", "ParentPhone"], ["keyboard-ipad", "parent-ipad"], ["garage", "office"]])
def test_a_public_output_of_the_suite_is_written_again(tmp_path, devices):
    """derive's device list names each subkey by its device id: an id that reads as a label
    (master, parent, key…) does not make the public list a key file, so the same command runs
    again."""
    parent_workspace(tmp_path)
    argv = [str(BIN / "vault-tool"), "derive", "--key-file", "k.nsec", "-o", "public.txt"]
    for device in devices:
        argv += ["--device-id", device]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    again = subprocess.run(argv + ["--force"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr


def test_an_in_place_migration_cut_off_at_its_note_is_finished_by_running_it_again(tmp_path):
    """2>/dev/full: the migration and its backup are written, the note is not (exit 1). Run
    again, the vault is at its version and nothing changes (exit 0), where the run refused on its
    own backup; a run that would change the vault still refuses a backup in the way."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    Path("h.vault").write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    argv = [str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "2", "--in-place", "h.vault"]
    with open("/dev/full", "w") as full:
        first = subprocess.run(argv, stderr=full, timeout=60)
    assert first.returncode == 1
    migrated, backup = Path("h.vault").read_bytes(), Path("h.vault.bak").read_bytes()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "already at version 2; nothing changed" in again.stderr, again.stderr
    assert Path("h.vault").read_bytes() == migrated and Path("h.vault.bak").read_bytes() == backup
    down = subprocess.run(argv[:6] + ["1"] + argv[7:], capture_output=True, text=True, timeout=60)
    assert down.returncode == 4 and "'h.vault.bak' already exists" in down.stderr, down.stderr
    assert Path("h.vault").read_bytes() == migrated and Path("h.vault.bak").read_bytes() == backup
    # A dry run says what the run would: nothing changes (0), or the backup is in the way (4).
    dry = subprocess.run(argv + ["--dry-run"], capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "nothing would change" in dry.stdout, dry.stderr
    dry_down = subprocess.run(argv[:6] + ["1"] + argv[7:] + ["--dry-run"], capture_output=True, text=True, timeout=60)
    assert dry_down.returncode == 4 and "'h.vault.bak' already exists" in dry_down.stderr, dry_down.stderr
    # Whatever is at the backup's name, a link that leads nowhere too, a run that changes
    # nothing finishes.
    Path("h.vault.bak").unlink()
    os.symlink("nowhere", "h.vault.bak")
    assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
    for suffix in ("", "/x", "a/b"):
        bad = subprocess.run(argv + ["--backup", suffix], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 64 and "--backup is a suffix" in bad.stderr, bad.stderr
    assert Path("h.vault").read_bytes() == migrated


def test_sample_fleet_records_no_time_ahead_of_the_clock(tmp_path):
    """sample-fleet writes --now as each vault's updatedAt: a recording command like the six
    others, it refuses a time more than a day ahead and writes nothing."""
    os.chdir(tmp_path)
    result = subprocess.run([str(BIN / "vault-tool"), "sample-fleet", "--households", "1", "--out-dir", "trial", "--now", "9999-12-31T23:59:59Z"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 and "more than a day after the clock" in result.stderr, result.stderr
    assert not Path("trial").exists()


FORGING_NAME = "pp\n\x1b[31mdevice-revoker: error: FORGED\u202e.txt"


@pytest.mark.parametrize("named", ["PGPASSFILE", "uri", "keywords", "service", "uri-service", "PGSERVICE"])
def test_a_password_file_others_may_read_is_refused_through_the_one_renderer(tmp_path, named):
    """A hostile trial: libpq's own warning about a password file others may read reached
    standard error as libpq wrote it, the file's name raw, and a name holding a line break forged
    an error line of the tool's. The tool says it first, escaped, and connects to nothing."""
    os.chdir(tmp_path)
    # A service file's line cannot hold a line break: its name there has every other trick.
    name = FORGING_NAME.replace("\n", " ") if "service" in named.lower() else FORGING_NAME
    Path(name).write_text("*:*:*:*:secret\n")
    Path(name).chmod(0o644)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    db = "postgresql://u@127.0.0.1:9/x"
    if named == "PGPASSFILE":
        environment["PGPASSFILE"] = str(tmp_path / FORGING_NAME)
    elif named == "uri":
        db += "?passfile=" + urllib.parse.quote(str(tmp_path / FORGING_NAME))
    elif named == "keywords":
        db = "host=127.0.0.1 port=9 passfile='" + str(tmp_path / FORGING_NAME) + "'"
    else:
        # The password file a service file names, which libpq takes over PGPASSFILE.
        Path("services.conf").write_text("# the registry\n[other]\npassfile=/nowhere\n[reg]\n  host=127.0.0.1\nport=9\n"
                                         f"passfile={tmp_path / name}\n[last]\nport=8\n")
        environment["PGSERVICEFILE"] = str(tmp_path / "services.conf")
        environment["PGPASSFILE"] = "/dev/null"
        db = {"service": "service=reg", "uri-service": "postgresql:///x?service=reg", "PGSERVICE": "postgresql:///x"}[named]
        if named == "PGSERVICE":
            environment["PGSERVICE"] = "reg"
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "devices", "--db", db], capture_output=True,
                            text=True, timeout=60, env=environment)
    assert result.returncode == 78 and "is open to others" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr and "WARNING" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("device-revoker: error:")] == [result.stderr.splitlines()[0]]
    # The hint's command, pasted into bash, names the file.
    hint = next(line for line in result.stderr.splitlines() if "chmod 600" in line).split("run: ", 1)[1]
    subprocess.run(["bash", "-c", hint], check=True)
    assert Path(name).stat().st_mode & 0o777 == 0o600


def test_what_libpq_quotes_from_a_service_file_is_withheld_when_it_is_a_secret(tmp_path):
    """A hostile trial: libpq's messages quote what a service file says between double quotes
    (`could not translate host name "…"`, `definition of service "…"`), a key among them."""
    os.chdir(tmp_path)
    Path("services").write_text(f"[family]\nhost={PARENT.secret.hex()}\ndbname=x\n")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"PGSERVICEFILE": str(tmp_path / "services")}
    for db in ["service=family", f"service={VAULT_KEY_HEX}"]:
        result = subprocess.run([str(BIN / "device-revoker"), "registry", "devices", "--db", db], capture_output=True, text=True, timeout=60,
                                env=environment)
        assert result.returncode != 0 and "not shown" in result.stderr, result.stderr
        assert not leaked(result.stdout + result.stderr), result.stderr


@pytest.mark.parametrize("label", ["foo", "nostr", "hex", "backup copy", "mine (do not share)"])
def test_a_key_after_any_label_that_names_nothing_public_is_never_replaced(tmp_path, label):
    """A hostile trial: `foo: <hex>` was replaced by an output, where the rule (docs/conventions.md)
    says a key after a label is a key unless the label names something public."""
    parent_workspace(tmp_path)
    Path("out.txt").write_text(f"{label}: {PARENT.secret.hex()}\n")
    result = subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", "k.nsec", "-o", "out.txt"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert Path("out.txt").read_text() == f"{label}: {PARENT.secret.hex()}\n"


@pytest.mark.parametrize("kind", ["nsec", "vault-key", "words", "parent-hex-63"])
def test_derive_shows_no_device_id_that_reads_as_a_secret(tmp_path, kind):
    """A hostile trial: `derive --device-id` given the nsec or the words printed them back as the
    device's id, where `device add --id` refuses them."""
    parent_workspace(tmp_path)
    for extra in [[], ["--json"]]:
        result = subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", "k.nsec", "--device-id", SECRET_FILES[kind].strip(), *extra],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 64 and result.stdout == "", result.stderr
        assert not leaked(result.stderr), result.stderr


@pytest.mark.parametrize("command", [["generate", "--label"], ["split", "--threshold", "2", "--shares", "2", "--holder"],
                                     ["split", "--threshold", "2", "--shares", "2", "--holder", "Rosa", "--label"]])
@pytest.mark.parametrize("text", ["Garcia\nfamily", "Garcia \u202eevil", "Rosa\x1b[2J", "zero\u200bwidth", "\ufeffbom"])
def test_text_a_sheet_would_print_as_something_else_is_refused(tmp_path, command, text):
    """A parents' trial: a label's line break printed an extra line that looked like the page's
    own, U+202E printed "evil" as "live", ESC a box. Refused (64) before anything is written."""
    parent_workspace(tmp_path)
    out = "sheet.png" if command[0] == "generate" else "shares"
    result = subprocess.run([str(BIN / "recovery-sheet"), command[0], "--key-file", "k.nsec", *command[1:], text, "--dpi", "72", "-o", out],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 64 and "would print as something else" in result.stderr, result.stderr
    assert not Path(out).exists()


def test_a_split_that_cannot_write_its_first_sheet_leaves_no_folder(tmp_path):
    """A parents' trial: `split` onto a full disk left the empty 0700 folder it made (a later
    sheet's failure removed it). The first write of a sheet fails (ENOSPC, at a named call)."""
    parent_workspace(tmp_path)
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=write", "-e", "inject=write:error=ENOSPC:when=1"]
    result = subprocess.run([*inject, str(BIN / "recovery-sheet"), "split", "--key-file", "k.nsec", "--threshold", "2", "--shares", "3",
                             "--dpi", "72", "-o", "shares"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert not Path("shares").exists()


@pytest.mark.parametrize("joined", ["_", ".", "/", "-UPPER_", ""])
def test_recovery_words_however_joined_are_never_quoted_back(tmp_path, joined):
    """A parents' trial: the 24 words joined by `_` or `.` given where a file was expected were
    quoted back whole ("could not open vault 'develop_simple_…'"), and ten words and a fragment
    of the next too. Withheld, as words joined by spaces are."""
    parent_workspace(tmp_path)
    words = WORDS.split()
    spelled = "_".join(w.upper() for w in words) if joined == "-UPPER_" else joined.join(words)
    fragment = " ".join(words[:10]) + " " + words[10][:2]
    for argument in [spelled, fragment]:
        for argv in [["recovery-sheet", "words", "--decode", argument, "-o", "z.nsec"], ["vault-tool", "inspect", "--key-file", "k.nsec", argument]]:
            result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
            assert result.returncode != 0 and "not shown" in result.stderr, (argv, result.stderr)
            said = result.stdout + result.stderr
            assert not any(joined.join(words[i:i + 3]) in said or " ".join(words[i:i + 3]) in said for i in range(0, 9)), said


@pytest.mark.parametrize("ops", ["-", "ops.jsonl"])
@pytest.mark.parametrize("stored", ['{"op":"mls.remove","convo":"c\ndevice-revoker: error: FORGED\x1b[2J"}',
                                    '{"op":"mls.remove","convo":"c"} trailing words', 'not json at all', '{"convo":"c","member":"m"}'],
                         ids=["raw-line-break", "trailing", "text", "no-op"])
def test_stored_operations_changed_by_hand_are_refused_never_copied(tmp_path, ops, stored):
    """A hostile trial: `registry log --batch ID --ops` copied a stored row as it stood, and a
    raw line break in it forged a line of the tool's, with a raw escape to the terminal."""
    import sqlite3
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    with sqlite3.connect("r.sqlite") as db:
        db.execute("INSERT INTO revocations (batch_id, revoked_at, user_did, device_id, reason, selector) "
                   "VALUES ('b', '2026-11-29T17:00:00Z', 'did:plc:a', 'd', NULL, 'x')")
        db.execute("INSERT INTO batch_operations (batch_id, seq, operation) VALUES ('b', 0, ?)", (stored,))
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "log", "--db", "r.sqlite", "--batch", "b", "--ops", ops],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 3 and "not what the tool wrote" in result.stderr, result.stderr
    assert "FORGED" not in result.stdout + result.stderr and "\x1b" not in result.stdout + result.stderr
    assert not Path("ops.jsonl").exists()


@pytest.mark.parametrize("argv", [["vault-tool", "keygen", "-o", b"k\xfe.nsec"],
                                  ["device-revoker", "registry", "init", "--db", b"r\xff.sqlite"],
                                  ["vault-tool", "inspect", "--key-file", "k.nsec", b"bad\xff.vault"],
                                  ["recovery-sheet", "generate", "--key-file", "k.nsec", "-o", b"s\xc3.png"]],
                         ids=["keygen", "registry-init", "inspect", "generate"])
def test_an_argument_not_in_utf8_is_refused_never_taken_for_another_name(tmp_path, argv):
    """A hostile trial: arguments decoded with repair named another file (`keygen -o
    $'k\\xfe.nsec'` wrote the key to `k\\u{fffd}.nsec`). Refused (64), its bytes shown."""
    parent_workspace(tmp_path)
    (tmp_path / "bad\ufffd.vault").write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    before = sorted(os.listdir(tmp_path))
    result = subprocess.run([str(BIN / argv[0]).encode(), *[a if isinstance(a, bytes) else a.encode() for a in argv[1:]]],
                            capture_output=True, timeout=60, cwd=tmp_path)
    message = result.stderr.decode(errors="replace")
    assert result.returncode == 64 and "is not valid UTF-8" in message and "\\x{" in message, message
    assert sorted(os.listdir(tmp_path)) == before


def test_a_census_reports_a_file_named_not_in_utf8_and_reads_no_other_for_it(tmp_path):
    os.chdir(tmp_path)
    os.mkdir(b"f")
    Path(os.fsdecode(b"f/inv\xff\xfeutf.vault")).write_bytes((FIXTURES / "testkit" / "ok-household.vault").read_bytes())
    Path("f/inv\ufffd\ufffdutf.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    result = subprocess.run([str(BIN / "vault-tool"), "census", "--json", "f"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["files"] == 2 and report["vaults"] == 1, report
    assert [entry["path"] for entry in report["notVaults"]] == ["inv\\x{ff}\\x{fe}utf.vault"], report


def test_a_journal_sqlite_keeps_and_a_log_left_by_another_writer_are_read(tmp_path):
    """What SQLite itself leaves beside a database is still its own: a journal it keeps
    (PERSIST: its header zeroed over old pages) and a write-ahead log with its index."""
    import sqlite3
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    with sqlite3.connect("r.sqlite", isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=PERSIST")
        db.execute("CREATE TABLE zz(x)")
        db.execute("INSERT INTO zz VALUES (randomblob(100))")
        db.execute("UPDATE zz SET x = randomblob(200)")
    assert Path("r.sqlite-journal").stat().st_size > 512
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "devices", "--db", "r.sqlite"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_well_formed_operation_added_by_hand_is_found_by_the_batchs_digest(tmp_path):
    """A re-trial: a removal appended to a batch's stored operations, well formed, was written
    out by `registry log --ops`; the batch's chained record holds their digest."""
    import sqlite3
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    revoked = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:parent#ipad-1",
                              "--reason", "lost", "--force", "--batch-id", "B1", "--ops", "first.jsonl"], capture_output=True, text=True, timeout=60)
    assert revoked.returncode == 0, revoked.stderr
    again = subprocess.run([str(BIN / "device-revoker"), "registry", "log", "--db", "r.sqlite", "--batch", "B1", "--ops", "again.jsonl"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and Path("again.jsonl").read_text() == Path("first.jsonl").read_text(), again.stderr
    with sqlite3.connect("r.sqlite") as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'batch_operations'").fetchall():
            db.execute(f"DROP TRIGGER {name}")
        db.execute("UPDATE batch_operations SET operation = operation || ? WHERE batch_id = 'B1'",
                   ('\n{"op":"mls.remove","convo":"family","member":"did:plc:child#ipad-9"}',))
    forged = subprocess.run([str(BIN / "device-revoker"), "registry", "log", "--db", "r.sqlite", "--batch", "B1", "--ops", "forged.jsonl"],
                            capture_output=True, text=True, timeout=60)
    assert forged.returncode == 3 and "changed after the batch was recorded" in forged.stderr, forged.stderr
    assert not Path("forged.jsonl").exists()


@pytest.mark.parametrize("command", [
    ["device-revoker", "registry", "revoke", "--db", "r.sqlite", "--reason", "lost", "--force", "--devices-file", "list.txt"],
    ["device-revoker", "registry", "revoke", "--db", "r.sqlite", "--reason", "lost", "--force", "--signature-keys-file", "list.txt"],
    ["device-revoker", "vault", "--key-file", "k.nsec", "--vault", "work.vault", "--devices-file", "list.txt", "-o", "out.vault", "--ops", "o.jsonl"],
], ids=["registry-devices", "registry-keys", "vault"])
def test_a_list_line_not_in_utf8_is_refused_never_matched_as_another_name(tmp_path, command):
    """A re-trial: a devices file's `Den\\xfe`, decoded with repair, revoked a device named
    `Den\\u{fffd}`. The line is refused by number (exit 2), nothing changed."""
    parent_workspace(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", str(CORPUS / "import" / "devices.jsonl"),
                    "--members", str(CORPUS / "import" / "members.jsonl")], check=True, capture_output=True)
    Path("list.txt").write_bytes(b"# the lost ones\nDen\xfe\n")
    before = (Path("r.sqlite").read_bytes(), Path("work.vault").read_bytes())
    result = subprocess.run([str(BIN / command[0]), *command[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "line 2 of the" in result.stderr and "not valid UTF-8" in result.stderr, result.stderr
    assert (Path("r.sqlite").read_bytes(), Path("work.vault").read_bytes()) == before
    assert not Path("out.vault").exists() and not Path("o.jsonl").exists()


def test_an_imported_row_without_its_registration_is_never_registered_after_its_own_times(tmp_path):
    """A re-trial: a revoked row without `registered_at` was stored as registered at the
    import's time, after its revocation: a row the same import refuses when given so."""
    import sqlite3
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    row = {"user_did": "did:plc:a", "device_id": "d1", "device_mls_did": "did:plc:a#d1", "signature_public_key": "ab" * 32,
           "is_active": False, "revoked_at": "2026-01-01T00:00:00Z", "last_seen": "2025-06-01T00:00:00Z"}
    seen = dict(row, device_id="d2", device_mls_did="did:plc:a#d2", signature_public_key="cd" * 32, is_active=True, revoked_at=None,
                last_seen="2025-07-01T00:00:00Z")
    Path("d.jsonl").write_text(json.dumps(row) + "\n" + json.dumps({k: v for k, v in seen.items() if v is not None}) + "\n")
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "import", "--db", "r.sqlite", "--devices", "d.jsonl"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect("r.sqlite") as db:
        rows = db.execute("SELECT device_id, registered_at, last_seen, revoked_at FROM user_devices ORDER BY device_id").fetchall()
    assert [(r[0], r[1][:10]) for r in rows] == [("d1", "2025-06-01"), ("d2", "2025-07-01")], rows
    assert all(r[1] <= r[2] and (r[3] is None or r[1] <= r[3]) for r in rows), rows


def test_seal_refuses_a_vault_no_command_would_read(tmp_path):
    """A hostile trial: a 13.5 MB document (under the 16 MiB a document may be) sealed into a
    16.8 MB vault, which every other command then refused as too large. Seal refuses it first,
    writing nothing; the vault of the same document a little smaller seals and opens."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    opened = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", str(FIXTURES / "testkit" / "ok-v2-household.vault")],
                            capture_output=True, text=True, check=True, timeout=60)
    document = json.loads(opened.stdout)
    template = next(d for d in document["devices"] if not d["isPrimary"] and d["status"] == "active")
    for count, expected in ((50_000, 2), (30_000, 0)):
        extra = [dict(template, deviceId=f"{i:08X}-0000-4000-8000-{i:012X}", deviceName=f"iPad {i}", isPrimary=False) for i in range(count)]
        Path("big.json").write_text(json.dumps(dict(document, devices=document["devices"] + extra), separators=(",", ":")))
        sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "-o", f"big-{count}.vault", "big.json"],
                                capture_output=True, text=True, timeout=120)
        assert sealed.returncode == expected, sealed.stderr
        if expected:
            assert "16 MiB" in sealed.stderr and not Path(f"big-{count}.vault").exists()
        else:
            assert subprocess.run([str(BIN / "vault-tool"), "inspect", "--key-file", "k.nsec", f"big-{count}.vault"], capture_output=True,
                                  timeout=120).returncode == 0


@pytest.mark.parametrize("kind", ["vault-key-hex", "words", "nsec", "hex-in-text"])
def test_a_recovery_code_for_a_user_id_that_is_a_secret_is_refused_unshown(tmp_path, kind):
    """A hostile trial: `code new --user-id <64 hex>` said "recovery code for <the key>", and
    printed it on the sheet and in the blob. A user id that reads as a key, words or a share is
    refused (exit 64) before anything is written, and not shown."""
    os.chdir(tmp_path)
    Path("mk.hex").write_text(os.urandom(32).hex() + "\n")
    Path("mk.hex").chmod(0o600)
    secret = {"vault-key-hex": os.urandom(32).hex(), "words": " ".join(["abandon"] * 23 + ["art"]), "nsec": PARENT.nsec,
              "hex-in-text": "user-" + os.urandom(32).hex()}[kind]
    result = subprocess.run([str(BIN / "recovery-sheet"), "code", "new", "--master-key-file", "mk.hex", "--user-id", secret, "-o", "b.json",
                             "--sheet", "s.pdf"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 64, result.stderr
    assert secret not in result.stdout + result.stderr and not Path("b.json").exists() and not Path("s.pdf").exists()


@pytest.mark.parametrize("spelling", ["xxd-p", "raw", "raw-newline", "base64-wrapped", "json-bytes", "colon-hex", "0x-hex-lines", "label-groups",
                                      "label-halves", "xxd", "xxd-i", "base32", "dash-groups"])
def test_a_bare_key_as_other_tools_write_it_is_never_replaced(tmp_path, spelling):
    """A hostile trial: a key written by `xxd -p` (60 digits, then 4 on a second line), as its
    32 raw bytes, as base64 wrapped over lines or as a JSON array of its bytes was replaced by
    `open -o`. Each is a key file now; two UUIDs (64 hex digits with dashes) are not."""
    os.chdir(tmp_path)
    Path("k.nsec").write_text((FIXTURES / "keys" / "parent.nsec").read_text())
    Path("k.nsec").chmod(0o600)
    key = os.urandom(32)
    while len(set(key)) < 16:
        key = os.urandom(32)
    text = {"xxd-p": (key.hex()[:60] + "\n" + key.hex()[60:] + "\n").encode(), "raw": key, "raw-newline": key + b"\n",
            "base64-wrapped": b"\n".join(base64.b64encode(key)[i:i + 20] for i in range(0, 44, 20)) + b"\n",
            "json-bytes": json.dumps(list(key)).encode() + b"\n", "colon-hex": ":".join(f"{b:02x}" for b in key).encode() + b"\n",
            "0x-hex-lines": b"0x" + key.hex()[:32].encode() + b"\n" + key.hex()[32:].encode() + b"\n",
            # Under a label line (a hostile trial: each was replaced), in groups of four or halves.
            "label-groups": ("parent key:\n" + "".join(" ".join(key.hex()[i + j:i + j + 4] for j in range(0, 16, 4)) + "\n" for i in range(0, 64, 16))).encode(),
            "label-halves": ("notes\n" + key.hex()[:32] + "\n" + key.hex()[32:] + "\n").encode(),
            # As xxd dumps it, as `xxd -i` and `base32` write it, grouped by dashes (a hostile trial).
            "xxd": subprocess.run(["xxd"], input=key, capture_output=True, check=True).stdout,
            "xxd-i": subprocess.run(["xxd", "-i"], input=key, capture_output=True, check=True).stdout,
            "base32": base64.b32encode(key) + b"\n",
            "dash-groups": "-".join(key.hex()[i:i + 4] for i in range(0, 64, 4)).encode() + b"\n"}[spelling]
    Path("out.json").write_bytes(text)
    result = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "-o", "out.json", str(FIXTURES / "testkit" / "ok-household.vault")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "holds a key" in result.stderr, result.stderr
    assert Path("out.json").read_bytes() == text
    # Files that only look alike are replaced as before (a hostile review): two UUIDs, 32 bytes
    # of UTF-8 text, a small struct of integers, a list of 32 scores.
    ordinary = {"ids.txt": b"6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01\nB3E9A410-0D4A-4C55-9E1B-2A7F3C9D8E02\n",
                "greeting.txt": "Grüße aus München, liebe Leu\n".encode(), "struct.bin": struct.pack("<8I", 1, 2, 3, 4, 5, 6, 7, 8),
                "scores.json": json.dumps([i % 10 for i in range(32)]).encode()}
    assert len(ordinary["greeting.txt"]) == 32 and len(ordinary["struct.bin"]) == 32
    for name, contents in ordinary.items():
        Path(name).write_bytes(contents)
        replaced = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "-o", name, str(FIXTURES / "testkit" / "ok-household.vault")],
                                  capture_output=True, text=True, timeout=60)
        assert replaced.returncode == 0, (name, replaced.stderr)


@pytest.mark.parametrize("spelling", ["halves", "colons", "spaced", "upper", "hex-of-nsec-halves", "nsec-in-four"])
def test_a_key_commands_answer_repeated_on_its_standard_error_is_withheld(tmp_path, spelling):
    """A hostile review: a key command that printed its key and wrote it to standard error in
    halves, with colons or spaces, was relayed in clear (only the verbatim spelling was caught).
    A line repeating the answer in any of these spellings is withheld; other lines are shown."""
    os.chdir(tmp_path)
    vault_key = (FIXTURES / "keys" / "parent.vaultkey").read_text().strip()
    # The answer a key: its hex, or (the last two) the parent's nsec, whose 32 bytes are given
    # as hex halves on two lines or cut in four pieces of 16 (a hostile trial).
    nsec = (FIXTURES / "keys" / "parent.nsec").read_text().strip()
    parent = nip19_decode(nsec, "nsec").hex()
    shown = {"halves": f"first {vault_key[:32]}\nsecond {vault_key[32:]}", "colons": ":".join(vault_key[i:i + 2] for i in range(0, 64, 2)),
             "spaced": " ".join(vault_key[i:i + 4] for i in range(0, 64, 4)), "upper": vault_key.upper(),
             "hex-of-nsec-halves": f"h1 {parent[:32]}\nh2 {parent[32:]}", "nsec-in-four": "\n".join(nsec[i:i + 16] for i in range(0, 64, 16))}[spelling]
    answer = nsec if spelling in ("hex-of-nsec-halves", "nsec-in-four") else vault_key
    option = "--key-command" if answer == nsec else "--vault-key-command"
    Path("kc.sh").write_text(f"#!/bin/sh\nprintf '%s\\n' '{shown}' >&2\necho 'a plain note' >&2\necho {answer}\n")
    Path("kc.sh").chmod(0o700)
    result = subprocess.run([str(BIN / "vault-tool"), "inspect", option, str(tmp_path / "kc.sh"), str(FIXTURES / "testkit" / "ok-v2-household.vault")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    digits = "".join(c for c in result.stderr.lower() if c in "0123456789abcdef")
    for secret in (vault_key, parent):
        assert secret[:32] not in digits and secret[32:] not in digits, result.stderr
    assert not any(nsec[i:i + 16] in result.stderr for i in range(0, 64, 16)), result.stderr
    assert "not shown" in result.stderr


def test_a_census_names_links_and_other_entries_it_does_not_read(tmp_path):
    """A hostile trial: a folder census passed over a symbolic link to a vault and a FIFO without
    a word (a folder of only links was "nothing to count"), so a manifest built from its list
    missed those households. Each is listed among the files that are not vaults, never read."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    vault = (FIXTURES / "testkit" / "ok-household.vault").read_bytes()
    (tmp_path / "elsewhere.vault").write_bytes(vault)
    (folder / "real.vault").write_bytes(vault)
    os.symlink("../elsewhere.vault", folder / "linked.vault")
    os.mkfifo(folder / "pipe.vault")
    result = subprocess.run([str(BIN / "vault-tool"), "census", "--json", str(folder)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    census = json.loads(result.stdout)
    assert census["files"] == 3 and census["vaults"] == 1, census
    assert census["notVaults"] == [{"path": "linked.vault", "reason": "a symbolic link, not followed"},
                                   {"path": "pipe.vault", "reason": "not a regular file, not read"}]


def test_a_name_that_holds_a_key_is_not_shown_in_a_report(tmp_path):
    """A file named by the key it holds (`nsec1….vault`, `backup-nsec1…`) was printed whole in
    the census's human report (errors withheld it): the one renderer of untrusted text now
    withholds any text holding an nsec1…/ncryptsec1… in every table and report line, as a
    message's quote is withheld; a vault's 64-digit name is public and stays shown."""
    os.chdir(tmp_path)
    household = Household(bytes(range(1, 33)))
    os.mkdir("f")
    for name in (f"{household.nsec}.vault", f"backup-{household.nsec.upper()}", "n-s-e-c-1 is not a key"):
        Path("f", name).write_bytes(b"junk")
    Path("f", f"{household.household_id.hex()}.bak").write_bytes(b"junk")
    result = subprocess.run([str(BIN / "vault-tool"), "census", "f"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert household.nsec[5:25] not in result.stdout.lower() + result.stderr.lower(), result.stdout
    assert result.stdout.count("(not shown: it reads as a key") == 2, result.stdout
    assert "n-s-e-c-1 is not a key" in result.stdout and f"{household.household_id.hex()}.bak" in result.stdout
    # And as JSON, the report's other form (a trial found it printed there).
    for listing in (["census", "--json", "f"], ["census", "--list", "--json", "f"]):
        result = subprocess.run([str(BIN / "vault-tool"), *listing], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and household.nsec[5:25] not in result.stdout.lower(), result.stdout
    assert json.loads(subprocess.run([str(BIN / "vault-tool"), "census", "--json", "f"], capture_output=True, text=True).stdout)["files"] == 4


TWELVE_WORDS = "jump abandon ability able about above absent absorb abstract absurd abuse access".split()


SPELLINGS = {
    "bom": lambda: "\ufeff" + "".join(f"{w}\n" for w in TWELVE_WORDS),
    "pairs joined by #": lambda: "".join(f"{TWELVE_WORDS[i]}#{TWELVE_WORDS[i + 1]}\n" for i in range(0, 12, 2)),
    "full-width numbers": lambda: "".join(f"{chr(0xFF10 + (i + 1) % 10)}. {w}\n" for i, w in enumerate(TWELVE_WORDS)),
    "soft hyphens": lambda: "".join(f"{w[:2]}\u00ad{w[2:]}\n" for w in TWELVE_WORDS),
    "zero-width joiners and ideographic spaces": lambda: "".join(f"{i + 1}.\u3000{w[:1]}\u200d{w[1:]}\n" for i, w in enumerate(TWELVE_WORDS)),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("option", ["--devices-file", "--signature-keys-file"])
def test_recovery_words_as_a_reader_reads_them_are_never_quoted(tmp_path, spelling, option):
    """A hostile trial: a words file that starts with a BOM (as Notepad writes it), numbers them
    in full-width digits, hides soft hyphens in them, or joins them in pairs by `#` passed the
    words check and was quoted, word by word, in the refusal or the not-found list."""
    os.chdir(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    Path("words.txt").write_text(SPELLINGS[spelling](), encoding="utf-8")
    result = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", "r.sqlite", option, "words.txt", "--dry-run"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "holds recovery words or a share" in result.stderr, result.stderr
    said = (result.stdout + result.stderr).lower()
    assert not any(word in said for word in ("jump", "abandon", "absurd", "access")), said


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.mark.parametrize("spelling", ["upper", "braces", "no hyphens", "urn"])
def test_a_family_medical_device_revived_in_another_spelling_breaks_the_log(tmp_path, spelling):
    """A hostile trial: on SQLite, a revoked Family Medical device made active again with its
    id written in upper case (or in braces, which PostgreSQL's uuid also reads) passed
    `log --verify`: it is the same UUID, and the device the log revoked. The registry now
    refuses any id not in its one spelling; with its guards dropped, the log still finds it."""
    import sqlite3
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    devices = [{"device_id": f"00000000-0000-4000-8000-0abc0000000{d}", "user_id": "00000000-0000-4000-8000-000000001000",
                "device_name": f"iPad {d}", "device_type": "ipad", "first_seen_at": "2025-01-01T00:00:00Z",
                "last_seen_at": f"2025-0{d + 1}-05T00:00:00Z"} for d in range(4)]
    for arguments in (["init", "--schema", "family-medical"], ["import", "--devices", write_jsonl(tmp_path / "fm.jsonl", devices)],
                      ["revoke", "--device", "00000000-0000-4000-8000-000000001000#00000000-0000-4000-8000-0abc00000001", "--force"]):
        subprocess.run([revoker, "registry", arguments[0], "--db", "f.sqlite", *arguments[1:]], check=True, capture_output=True)
    assert subprocess.run([revoker, "registry", "log", "--db", "f.sqlite", "--verify"], capture_output=True).returncode == 0
    written = {"upper": "upper(device_id)", "braces": "'{' || device_id || '}'", "no hyphens": "replace(device_id, '-', '')",
               "urn": "'urn:uuid:' || device_id"}[spelling]
    revive = f"UPDATE user_devices SET device_id = {written}, is_active = 1 WHERE device_id = '00000000-0000-4000-8000-0abc00000001'"
    with pytest.raises(sqlite3.IntegrityError, match="UUID kept in lower case"):
        with sqlite3.connect("f.sqlite") as db:
            db.execute(revive)
    with sqlite3.connect("f.sqlite") as db:
        db.execute("DROP TRIGGER user_devices_ids_are_lower_case_update")
        db.execute(revive)
    verified = subprocess.run([revoker, "registry", "log", "--db", "f.sqlite", "--verify"], capture_output=True, text=True)
    assert verified.returncode == 3 and "is active again" in verified.stderr, verified.stderr


def test_a_revoked_device_back_in_a_conversation_breaks_the_log(tmp_path):
    """A hostile trial: with the registry's trigger dropped, a revoked device's membership was
    opened again by hand, and `log --verify` still said ok."""
    import sqlite3
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    devices = [{"user_did": f"did:plc:u{u}", "device_id": f"d{d}", "device_mls_did": f"did:plc:u{u}#d{d}", "device_name": f"device {u}{d}",
                "signature_public_key": f"u{u}d{d}".encode().hex().rjust(64, "0"), "registered_at": "2024-01-01T00:00:00Z"}
               for u in range(2) for d in range(3)]
    members = [{"convo_id": "convo-1", "member_mls_did": f"did:plc:u{u}#d{d}", "user_did": f"did:plc:u{u}", "device_id": f"d{d}",
                "joined_at": "2024-06-01T00:00:00Z", "is_admin": d == 1} for u in range(2) for d in range(3)]
    for arguments in (["init"], ["import", "--devices", write_jsonl(tmp_path / "d.jsonl", devices), "--members", write_jsonl(tmp_path / "m.jsonl", members)],
                      ["revoke", "--device", "did:plc:u0#d0", "--force", "--ops", "ops.jsonl"]):
        result = subprocess.run([revoker, "registry", arguments[0], "--db", "r.sqlite", *arguments[1:]], capture_output=True, text=True)
        assert result.returncode == 0, (arguments, result.stderr)
    assert subprocess.run([revoker, "registry", "log", "--db", "r.sqlite", "--verify"], capture_output=True).returncode == 0
    with sqlite3.connect("r.sqlite") as db:
        db.execute("DROP TRIGGER members_need_an_active_device_update")
        db.execute("UPDATE members SET left_at = NULL WHERE user_did = 'did:plc:u0' AND device_id = 'd0'")
    verified = subprocess.run([revoker, "registry", "log", "--db", "r.sqlite", "--verify"], capture_output=True, text=True)
    assert verified.returncode == 3 and "is a member of conversation 'convo-1' again" in verified.stderr, verified.stderr


@pytest.mark.parametrize("change", ["DROP TRIGGER members_need_an_active_device_update", "DROP TRIGGER revocations_are_append_only_update"])
def test_a_verification_that_finds_a_guard_gone_gives_no_verdict_and_says_so(tmp_path, change):
    """`log --verify` of a log whose rows verify but whose guards were dropped is refused (exit
    3): whoever dropped one could have edited the log unseen. A reader changes nothing either
    way, so it says it gives no verdict, not a writer's "nothing was changed" (a trial)."""
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    devices = [{"user_did": "did:plc:u0", "device_id": f"d{d}", "device_mls_did": f"did:plc:u0#d{d}", "signature_public_key": f"d{d}".encode().hex().rjust(64, "0"),
                "registered_at": "2024-01-01T00:00:00Z"} for d in range(2)]
    for arguments in (["init"], ["import", "--devices", write_jsonl(tmp_path / "d.jsonl", devices)], ["revoke", "--device", "did:plc:u0#d0", "--force"]):
        result = subprocess.run([revoker, "registry", arguments[0], "--db", "r.sqlite", *arguments[1:]], capture_output=True, text=True)
        assert result.returncode == 0, (arguments, result.stderr)
    with sqlite3.connect("r.sqlite") as db:
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?", (change.split()[-1],)).fetchone()[0] == 1
        db.execute(change)
    verified = subprocess.run([revoker, "registry", "log", "--db", "r.sqlite", "--verify"], capture_output=True, text=True)
    assert verified.returncode == 3 and "missing guards" in verified.stderr and change.split()[-1] in verified.stderr, verified.stderr
    assert "no verdict is given on the log" in verified.stderr and "nothing was changed" not in verified.stderr, verified.stderr
    # A writer refused by the same finding says what it left.
    refused = subprocess.run([revoker, "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:u0#d1", "--force"],
                             capture_output=True, text=True)
    assert refused.returncode == 3 and "nothing was changed" in refused.stderr, refused.stderr


def test_names_that_read_alike_are_told_apart_in_a_listing(tmp_path):
    """A support agent's trial: devices named "iPad 1" and "iPad<no-break space>1" were listed
    alike, one revoked and one active. A space that is not the space is shown escaped."""
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    devices = [{"user_did": "did:plc:u0", "device_id": f"d{d}", "device_mls_did": f"did:plc:u0#d{d}", "device_name": name,
                "signature_public_key": f"d{d}".encode().hex().rjust(64, "0"), "registered_at": "2024-01-01T00:00:00Z"}
               for d, name in enumerate(["iPad 1", "iPad\u00a01", "iPad\u20071", "iPad\u30001"])]
    for arguments in (["init"], ["import", "--devices", write_jsonl(tmp_path / "d.jsonl", devices)]):
        subprocess.run([revoker, "registry", arguments[0], "--db", "r.sqlite", *arguments[1:]], check=True, capture_output=True)
    listed = subprocess.run([revoker, "registry", "devices", "--db", "r.sqlite"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    for shown in ("iPad 1", "iPad\\u{a0}1", "iPad\\u{2007}1", "iPad\\u{3000}1"):
        assert shown in listed.stdout, listed.stdout


def test_a_streamed_json_report_withholds_a_key_as_a_whole_one_does(tmp_path):
    """`registry revoke --json` writes its batch a device at a time (a registry's batch is too
    large to hold): a device id holding a key was printed there whole, where every report
    held whole withholds it."""
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    household = Household(bytes(range(1, 33)))
    devices = [{"user_did": "did:plc:u0", "device_id": device, "device_mls_did": f"did:plc:u0#{device}", "device_name": "phone",
                "signature_public_key": f"k{n}".encode().hex().rjust(64, "0"), "registered_at": "2024-01-01T00:00:00Z"}
               for n, device in enumerate([f"old-{household.nsec}", "d1", "d2"])]
    for arguments in (["init"], ["import", "--devices", write_jsonl(tmp_path / "d.jsonl", devices)]):
        result = subprocess.run([revoker, "registry", arguments[0], "--db", "r.sqlite", *arguments[1:]], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    report = subprocess.run([revoker, "registry", "revoke", "--db", "r.sqlite", "--user", "did:plc:u0", "--force", "--dry-run", "--json"],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert household.nsec[5:25] not in report.stdout.lower() + report.stderr.lower(), report.stdout
    assert len(json.loads(report.stdout)["batchDevices"]) == 3
    # In words too, each line as it was around what stands for the key (its indent kept).
    text = subprocess.run([revoker, "registry", "revoke", "--db", "r.sqlite", "--user", "did:plc:u0", "--force", "--dry-run"],
                          capture_output=True, text=True)
    assert text.returncode == 0 and household.nsec[5:25] not in text.stdout.lower(), text.stdout
    assert "\n  (not shown: it reads as a key" in text.stdout and "\n  did:plc:u0#d1\n" in text.stdout, text.stdout


def test_a_key_in_full_width_letters_is_withheld_as_the_key_it_reads_as(tmp_path):
    """A device named by the parent key in full-width letters (`ｎｓｅｃ１…`, the same key in
    NFKC, copied by anyone who reads it) was listed whole, as text and as JSON (a trial)."""
    os.chdir(tmp_path)
    revoker = str(BIN / "device-revoker")
    household = Household(bytes(range(1, 33)))
    wide = "".join(chr(ord(c) + 0xFEE0) for c in household.nsec)
    devices = [{"user_did": "did:plc:u0", "device_id": "d0", "device_mls_did": "did:plc:u0#d0", "device_name": wide,
                "signature_public_key": "k0".encode().hex().rjust(64, "0"), "registered_at": "2024-01-01T00:00:00Z"}]
    for arguments in (["init"], ["import", "--devices", write_jsonl(tmp_path / "d.jsonl", devices)]):
        result = subprocess.run([revoker, "registry", arguments[0], "--db", "r.sqlite", *arguments[1:]], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    for listing in (["devices"], ["devices", "--json"]):
        shown = subprocess.run([revoker, "registry", *listing, "--db", "r.sqlite"], capture_output=True, text=True)
        assert shown.returncode == 0 and wide[5:25] not in shown.stdout and "not shown" in shown.stdout, shown.stdout


@pytest.mark.parametrize("mark", [" ", "-", ":", "_", ".", ",", "  ", " - ", "/", "|", ";"])
@pytest.mark.parametrize("width", [4, 8])
def test_a_key_typed_in_groups_after_a_word_is_never_quoted_back(tmp_path, mark, width):
    """A hostile trial: the vault key in groups of four after a word (`--device "ipad d727 917d
    …"`) was quoted back whole by every device and registry command that said it was not found,
    and by a devices file's comment. Any one mark between groups of any one width."""
    parent_workspace(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    Path("vk").write_text(VAULT_KEY_HEX + "\n")
    Path("vk").chmod(0o600)
    for hex_text in (VAULT_KEY_HEX, PARENT.secret.hex()):
        grouped = mark.join(hex_text[i:i + width] for i in range(0, 64, width))
        Path("list.txt").write_text(f"did:plc:josh#a1b2 # {grouped}\nx{grouped}\n")
        for argv in (["device-revoker", "vault", "--vault-key-file", "vk", "--vault", "work.vault", "--device", f"ipad {grouped}", "--dry-run"],
                     ["vault-tool", "device", "promote", "--vault-key-file", "vk", "work.vault", f"ipad {grouped}", "--dry-run", "--log-format", "json"],
                     ["device-revoker", "registry", "revoke", "--db", "r.sqlite", "--device", f"did:plc:josh#{grouped}", "--dry-run"],
                     ["device-revoker", "registry", "rejoin-plan", "--db", "r.sqlite", "--device", f"did:plc:josh#dev-{grouped}"],
                     ["device-revoker", "registry", "revoke", "--db", "r.sqlite", "--devices-file", "list.txt", "--dry-run"],
                     ["device-revoker", "registry", "members", "--db", "r.sqlite", "--convo", f"team {grouped}"]):
            result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
            said = result.stdout + result.stderr
            assert result.returncode != 0 or "would revoke 0" in said, (argv, said)
            assert hex_text[8:16] not in said.replace(mark, "") and grouped[:2 * width] not in said, (argv, said)


@pytest.mark.parametrize(("command", "target"), [
    (command, target) for command in ["device-revoker-vault", "registry-revoke", "open-reveal", "device-promote-ops", "seal", "device-rename"]
    for target in ["vault", "household-log", "registry", "other-sqlite"]
    if not (target == "vault" and command in ("seal", "device-rename"))  # a vault's own output: the control below
])
def test_an_output_never_replaces_a_vault_a_log_or_a_database_with_other_content(tmp_path, command, target):
    """A hostile trial: `--ops keep.vault` replaced a family's vault with operations (exit 0), and
    `--ops other.sqlite` a database. An output replaces a vault or a log only with its own kind,
    and a database never: refused (exit 4), nothing written, the file as it was."""
    import sqlite3
    parent_workspace(tmp_path)
    subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "r.sqlite"], check=True, capture_output=True)
    if target == "vault":
        Path("target").write_bytes(Path("work.vault").read_bytes())
    elif target == "household-log":
        subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "3", "-o", "v3.vault", "work.vault"],
                       check=True, capture_output=True)
        Path("target").write_bytes(Path("v3.log").read_bytes())
    elif target == "registry":
        subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", "target"], check=True, capture_output=True)
    else:
        with sqlite3.connect("target") as db:
            db.execute("CREATE TABLE t(x)")
    before = Path("target").read_bytes()
    opened = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", "work.vault"], capture_output=True,
                            check=True, timeout=60)
    Path("doc.json").write_bytes(opened.stdout)
    argv = {
        "device-revoker-vault": ["device-revoker", "vault", "--key-file", "k.nsec", "--vault", "work.vault", "--device", "Bedroom iPad",
                                 "-o", "new.vault", "--ops", "target"],
        "registry-revoke": ["device-revoker", "registry", "revoke", "--db", "r.sqlite", "--user", "did:plc:nobody", "--allow-unmatched",
                            "--force", "--ops", "target"],
        "open-reveal": ["vault-tool", "open", "--key-file", "k.nsec", "work.vault", "-o", "target", "--force"],
        "device-promote-ops": ["vault-tool", "device", "add", "--key-file", "k.nsec", "--id", "NEW-DEVICE-1", "--name", "Den tablet", "work.vault",
                               "-o", "new.vault", "--ops", "target"],
        "seal": ["vault-tool", "seal", "--key-file", "k.nsec", "-o", "target", "doc.json", "--force"],
        "device-rename": ["vault-tool", "device", "rename", "--key-file", "k.nsec", "work.vault", "Bedroom iPad", "Den", "-o", "target"],
    }[command]
    result = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "would replace it with other content" in result.stderr, (argv, result.stderr)
    assert Path("target").read_bytes() == before
    assert not Path("new.vault").exists()


@pytest.mark.parametrize("argv", [
    ["device-revoker", "vault", "--key-file", "k.nsec", "--vault", "work.vault", "--device", "Bedroom iPad", "-o", "new.vault", "--ops", "o.jsonl"],
    ["vault-tool", "device", "rename", "--key-file", "k.nsec", "work.vault", "Bedroom iPad", "Den", "-o", "new.vault"],
    ["vault-tool", "migrate", "vault", "--key-file", "k.nsec", "--to", "3", "-o", "new.vault", "work.vault"],
], ids=["device-revoker-vault", "device-rename", "migrate"])
def test_a_negative_revision_is_refused_as_an_option_and_in_a_document(tmp_path, argv):
    """A hostile trial: `--expect-revision=-1` was taken (and said "someone else changed it"),
    and a document of revision -3 sealed into a vault `check` refuses, which writes raised."""
    parent_workspace(tmp_path)
    result = subprocess.run([str(BIN / argv[0]), *argv[1:], "--expect-revision=-1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 and "0 or more" in result.stderr, result.stderr
    assert not Path("new.vault").exists()
    opened = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", "work.vault"], capture_output=True, text=True,
                            check=True, timeout=60)
    Path("neg.json").write_text(json.dumps(dict(json.loads(opened.stdout), revision=-3)))
    sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "-o", "neg.vault", "neg.json"], capture_output=True, text=True, timeout=60)
    assert sealed.returncode != 0 and "revision -3" in sealed.stderr and not Path("neg.vault").exists(), sealed.stderr


def test_a_vault_output_still_replaces_a_vault_and_a_log_its_log(tmp_path):
    """The control: `seal -o` over a vault (with --force), and a v3 vault's device command, whose
    log is rewritten in place, work as before."""
    parent_workspace(tmp_path)
    opened = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "k.nsec", "--reveal-secrets", "work.vault"], capture_output=True,
                            check=True, timeout=60)
    Path("doc.json").write_bytes(opened.stdout)
    Path("old.vault").write_bytes(Path("work.vault").read_bytes())
    sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "k.nsec", "-o", "old.vault", "doc.json", "--force"], capture_output=True,
                            text=True, timeout=60)
    assert sealed.returncode == 0 and Path("old.vault").read_bytes() != Path("work.vault").read_bytes(), sealed.stderr
    subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "3", "-o", "v3.vault", "work.vault"],
                   check=True, capture_output=True)
    events = Path("v3.log").read_text().count("\n")
    renamed = subprocess.run([str(BIN / "vault-tool"), "device", "rename", "--key-file", "k.nsec", "v3.vault", "Bedroom iPad", "Den", "--in-place"],
                             capture_output=True, text=True, timeout=60)
    assert renamed.returncode == 0 and Path("v3.log").read_text().count("\n") == events + 1, renamed.stderr


@pytest.mark.parametrize("piece", ["nsec-50", "nsec-12-upper", "parent-hex-20", "vault-key-hex-16-spaced"])
def test_a_piece_of_a_key_the_run_holds_is_never_shown(tmp_path, piece):
    """A hostile trial: a key command that said 50 of its nsec's 52 characters (or 47 of its hex
    digits) on its standard error was relayed, and the key found from them in eleven tries; a
    devices file's line holding them was quoted as an unknown id. A piece of a key the run holds
    (12 hex digits, 10 of an nsec's characters, any case, however split) is withheld, in text
    and in JSON logs."""
    parent_workspace(tmp_path)
    nsec = (FIXTURES / "keys" / "parent.nsec").read_text().strip()
    parent = nip19_decode(nsec, "nsec").hex()
    vault_key = (FIXTURES / "keys" / "parent.vaultkey").read_text().strip()
    shown = {"nsec-50": nsec[5:55], "nsec-12-upper": nsec[20:32].upper(), "parent-hex-20": parent[10:30],
             "vault-key-hex-16-spaced": " ".join(vault_key[8:24][i:i + 4] for i in range(0, 16, 4))}[piece]
    Path("vk").write_text(vault_key + "\n")
    Path("vk").chmod(0o600)
    answer, option = (vault_key, "--vault-key-command") if piece.startswith("vault-key") else (nsec, "--key-command")
    Path("kc.sh").write_text(f"#!/bin/sh\necho 'loaded key {shown}' >&2\necho 'a plain note' >&2\necho {answer}\n")
    Path("kc.sh").chmod(0o700)
    for log_format in ("text", "json"):
        result = subprocess.run([str(BIN / "vault-tool"), "check", option, str(tmp_path / "kc.sh"), "--log-format", log_format, "work.vault"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and shown not in result.stderr and "not shown" in result.stderr, result.stderr
    key_option = ["--vault-key-file", "vk"] if piece.startswith("vault-key") else ["--key-file", "k.nsec"]
    Path("list.txt").write_text(f"did:plc:x#{shown}\n")
    listed = subprocess.run([str(BIN / "device-revoker"), "vault", *key_option, "--vault", "work.vault", "--devices-file", "list.txt", "--dry-run"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode != 0 and shown not in listed.stdout + listed.stderr and "not shown" in listed.stdout + listed.stderr, listed.stderr


def test_an_exclusive_output_left_by_a_run_whose_report_was_lost_is_taken_back(tmp_path):
    """A trial: `rotation-planner plan -o plan.json 2>/dev/full` wrote the plan and exited 1,
    and the same command then refused the plan it had left ("already exists"). An output the
    same command would refuse is taken back with the lost report; the run again completes."""
    parent_workspace(tmp_path)
    subprocess.run([str(BIN / "vault-tool"), "keygen", "-o", "new.nsec"], check=True, capture_output=True)
    argv = [str(BIN / "rotation-planner"), "plan", "--vault", "work.vault", "--key-file", "k.nsec", "--new-key-file", "new.nsec", "-o", "plan.json"]
    with open("/dev/full", "w") as full:
        lost = subprocess.run(argv, stdout=subprocess.PIPE, stderr=full, timeout=60)
    assert lost.returncode == 1 and not Path("plan.json").exists()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and Path("plan.json").exists(), again.stderr


@pytest.mark.parametrize("target", ["vault", "household-log"])
def test_a_migration_journal_named_onto_a_vault_or_a_log_is_refused_as_any_output_is(tmp_path, target):
    """A trial: `migrate batch --journal h.vault` failed with SQLite's "file is not a database",
    exit 1. A vault or a log named as the journal is refused as any output over one is (exit 4),
    the file as it was."""
    parent_workspace(tmp_path)
    if target == "vault":
        Path("target").write_bytes(Path("work.vault").read_bytes())
    else:
        subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "3", "-o", "v3.vault", "work.vault"],
                       check=True, capture_output=True)
        Path("target").write_bytes(Path("v3.log").read_bytes())
    before = Path("target").read_bytes()
    Path("manifest.jsonl").write_text('{"vault": "work.vault", "keyFile": "k.nsec"}\n')
    result = subprocess.run([str(BIN / "vault-tool"), "migrate", "batch", "--manifest", "manifest.jsonl", "--to", "2", "--out-dir", "out",
                             "--journal", "target"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "not a migration journal" in result.stderr, result.stderr
    assert Path("target").read_bytes() == before and not Path("out").exists()


def test_starting_a_log_where_one_is_points_to_its_verification_never_to_moving_it(tmp_path):
    """A tired operator's trial: `log start` that finished as it was killed, run again, said
    "move the old file away first" of the household's signed log. It says the log is there and
    how to check it; the log as it was (exit 4)."""
    parent_workspace(tmp_path)
    subprocess.run([str(BIN / "vault-tool"), "migrate", "vault", "--key-file", "k.nsec", "--to", "3", "-o", "v3.vault", "work.vault"],
                   check=True, capture_output=True)
    before = Path("v3.log").read_bytes()
    again = subprocess.run([str(BIN / "vault-tool"), "log", "start", "--key-file", "k.nsec", "v3.vault"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 4 and "log verify" in again.stderr and "move" not in again.stderr, again.stderr
    assert Path("v3.log").read_bytes() == before
