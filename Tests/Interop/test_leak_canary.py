"""The secret-leak canary (a start on issue 8's hardening).

Every subcommand runs with canary secrets: the parent key, the vault key, a child's key, the
wrap key, a new parent key, a Master Key and a recovery code. Every byte a command writes to
stdout, stderr and files is searched for each canary in every encoding (raw, hex in either
case, base64, NIP-19 and the BIP-39 words), except the outputs whose purpose is to hold a
secret (a key file, a revealed document, a printed sheet, ...), which are listed per command.
"""
import base64
import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from mnemonic import Mnemonic

import vaultref
from vaultref import Household, nip19_encode
from workspace import BIN


def encodings(secret: bytes, nip19: bool = True):
    forms = [secret, secret.hex().encode(), secret.hex().upper().encode(), base64.b64encode(secret),
             base64.b64encode(secret).rstrip(b"=")]
    if nip19:
        forms.append(nip19_encode("nsec", secret).encode())
    if len(secret) == 32:
        forms.append(" ".join(Mnemonic("english").to_mnemonic(secret).split()[:6]).encode())
    return forms


def test_no_secret_leaks(tmp_path):
    os.chdir(tmp_path)
    parent, new_parent = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    child, wrap, master = secrets.token_bytes(32), secrets.token_bytes(32), secrets.token_bytes(32)
    canaries = {"parent key": encodings(parent.secret), "vault key": encodings(parent.vault_key, False),
                "child key": encodings(child), "wrap key": encodings(wrap, False), "new parent key": encodings(new_parent.secret),
                "master key": encodings(master, False)}
    device = "CANARY-IPAD"
    doc = {"version": 1, "parentPubkey": parent.pubkey, "parentWrapKey": wrap.hex(),
           "childProfiles": [{"profileId": "kid", "name": "Kid", "theme": "t", "mlsGroupIds": ["g"], "nsec": nip19_encode("nsec", child),
                              "npub": nip19_encode("npub", bytes.fromhex(vaultref.xonly_pubkey(child)))}],
           "devices": [{"deviceId": device, "deviceName": "iPad", "isPrimary": True, "subkeyPublicKey": parent.subkey_pubkey(device),
                        "addedAt": "2025-01-01T00:00:00Z", "lastSeenAt": "2025-01-01T00:00:00Z", "status": "active"},
                       {"deviceId": "OLD", "deviceName": "Old", "isPrimary": False, "subkeyPublicKey": parent.subkey_pubkey("OLD"),
                        "addedAt": "2025-01-01T00:00:00Z", "lastSeenAt": "2025-01-01T00:00:00Z", "status": "active"}],
           "groupMemberships": [{"mlsGroupId": "g", "groupName": "G", "memberPubkeys": [parent.subkey_pubkey(device)], "childProfileId": "kid",
                                 "createdAt": "2025-01-01T00:00:00Z"}],
           "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-02T00:00:00Z"}
    for name, text in [("parent.nsec", parent.nsec), ("new.nsec", new_parent.nsec), ("vk", parent.vault_key.hex()), ("mk", master.hex()),
                       ("revealed.json", json.dumps(doc)), ("pass.txt", "canary passphrase 7 violet drums")]:
        Path(name).write_text(text + "\n")
        Path(name).chmod(0o600)
    inputs = set(os.listdir("."))
    url = f"https://minio.example/b/{parent.vault_path}"
    commands = [  # (tool, arguments, outputs meant to hold a secret)
        ("vault-tool", "seal --key-file parent.nsec -o v1.vault revealed.json", []),
        ("vault-tool", "derive --key-file parent.nsec --device-id X --json", []),
        ("vault-tool", "derive --key-file parent.nsec --vault-key-out vk.out -o derived.txt", ["vk.out"]),
        ("vault-tool", "keygen -o fresh.nsec", ["fresh.nsec"]),
        ("vault-tool", "open --key-file parent.nsec v1.vault", []),
        ("vault-tool", "open --key-file parent.nsec --reveal-secrets -o opened.json v1.vault", ["opened.json"]),
        ("vault-tool", "inspect --key-file parent.nsec --json v1.vault", []),
        ("vault-tool", "check --vault-key-file vk v1.vault", []),
        ("vault-tool", "migrate --key-file parent.nsec --to 2 -o v2.vault v1.vault", []),
        ("vault-tool", "migrate --key-file parent.nsec --to 1 --dry-run --json v2.vault", []),
        ("vault-tool", "diff --key-file parent.nsec --json v1.vault v2.vault", []),
        ("vault-tool", "merge --key-file parent.nsec --base v2.vault --ours v2.vault --theirs v2.vault -o merged.vault --json", []),
        ("vault-tool", "census .", []),
        ("vault-tool", "open --key-file new.nsec v1.vault", []),
        ("device-revoker", "vault --key-file parent.nsec --vault v2.vault --device OLD -o revoked.vault --ops ops.jsonl", []),
        ("device-revoker", "vault --vault-key-file vk --vault v2.vault --all-except nobody --dry-run --json", []),
        ("rotation-planner", "plan --vault v2.vault --key-file parent.nsec --new-key-file new.nsec --mode compromise -o plan.json", []),
        ("rotation-planner", "show plan.json", []),
        ("rotation-planner", "apply plan.json --vault v2.vault --key-file parent.nsec --new-key-file new.nsec --out-dir rotated --ops rot-ops.jsonl", []),
        ("recovery-sheet", "generate --key-file parent.nsec -o sheet.png --dpi 100", ["sheet.png"]),
        ("recovery-sheet", "generate --key-file parent.nsec --passphrase-file pass.txt --log-n 8 -o enc.png --dpi 100", ["enc.png"]),
        ("recovery-sheet", "scan sheet.png -o scanned.nsec", ["scanned.nsec"]),
        ("recovery-sheet", "scan enc.png", []),
        ("recovery-sheet", "verify sheet.png --vault v1.vault", []),
        ("recovery-sheet", "verify enc.png --passphrase-file pass.txt --key-file new.nsec", []),
        ("recovery-sheet", "words --key-file parent.nsec -o words.txt", ["words.txt"]),
        ("recovery-sheet", "words --decode words.txt -o decoded.nsec", ["decoded.nsec"]),
        ("recovery-sheet", "code new --master-key-file mk --user-id canary -o blob.json --sheet code.png --code-out code.txt", ["code.png", "code.txt"]),
        ("recovery-sheet", "code unwrap --blob blob.json --sheet code.png -o mk.out", ["mk.out"]),
        ("device-link", f"create --key-file parent.nsec --vault-url {url} -o link.png", ["link.png"]),
        ("device-link", "read link.png", []),
        ("device-link", "read link.png -o link.nsec", ["link.nsec"]),
        ("recovery-sheet", "split --key-file parent.nsec --threshold 2 --shares 3 --text --dpi 72 --iteration-exponent 0 -o shares", ['shares/share-1-of-3.png', 'shares/share-1-of-3.txt', 'shares/share-2-of-3.png', 'shares/share-2-of-3.txt', 'shares/share-3-of-3.png', 'shares/share-3-of-3.txt']),
        ("recovery-sheet", "combine shares/share-1-of-3.png shares/share-2-of-3.txt -o combined.nsec", ["combined.nsec"]),
        ("recovery-sheet", "combine shares/share-3-of-3.txt", []),
        ("recovery-sheet", "combine shares/share-3-of-3.txt typo.txt -o never.nsec", []),
        ("recovery-sheet", f"verify --shares shares/share-1-of-3.png shares/share-3-of-3.txt --npub {parent.npub}", []),
        ("recovery-sheet", f"verify --shares shares/share-1-of-3.png shares/share-3-of-3.txt --npub {new_parent.npub}", []),
        ("recovery-sheet", f"verify --share shares/share-2-of-3.png --npub {parent.npub}", []),
    ]
    exempt = set()
    for tool, arguments, meant in commands:
        result = subprocess.run([str(BIN / tool), *arguments.split()], capture_output=True)
        exempt.update(meant)
        code_words = Path("code.txt").read_bytes().strip() if Path("code.txt").exists() else None
        if arguments.startswith("split"):
            assert result.returncode == 0, result.stderr
            # Each share's words past its public first four (set, groups, index) are secret too.
            share_words = [Path(f"shares/share-{i}-of-3.txt").read_text().splitlines()[0].split() for i in (1, 2, 3)]
            canaries.update({f"share {i + 1}": [" ".join(words[4:10]).encode()] for i, words in enumerate(share_words)})
            typo = share_words[0][:7] + ["zzzz"] + share_words[0][8:]
            Path("typo.txt").write_text(" ".join(typo) + "\n")
            inputs.add("typo.txt")
        if arguments.startswith("combine shares/share-1"):
            assert result.returncode == 0 and Path("combined.nsec").read_text().strip() == parent.nsec, result.stderr
        if arguments.startswith("combine shares/share-3"):
            assert result.returncode == 2, result.stderr
        streams = {"stdout": result.stdout, "stderr": result.stderr}
        if tool == "recovery-sheet" and arguments.startswith("scan enc.png"):
            assert result.returncode == 64  # no passphrase given: refuses, and says nothing secret
        for label, data in streams.items():
            for name, forms in canaries.items():
                assert not any(form in data for form in forms), f"{tool} {arguments}: {name} in {label}"
            if code_words:
                assert code_words not in data and code_words[:30] not in data, f"{tool} {arguments}: the recovery code in {label}"
    for path in Path(".").rglob("*"):
        if path.is_file() and str(path) not in inputs and str(path) not in exempt:
            data = path.read_bytes()
            for name, forms in canaries.items():
                assert not any(form in data for form in forms), f"{name} found in {path}"
    assert Path("rotated").is_dir() and Path("revoked.vault").exists() and Path("blob.json").exists()


def child_key_hex():
    revealed = json.loads((Path(__file__).resolve().parents[1] / "Fixtures" / "testkit" / "ok-v2-household.revealed.json").read_text())
    return vaultref.nip19_decode(revealed["childProfiles"][0]["nsec"], "nsec").hex()


PARENT_FIXTURE = Household(vaultref.nip19_decode((Path(__file__).resolve().parents[1] / "Fixtures" / "keys" / "parent.nsec").read_text().strip(), "nsec"))
REFUSED_BEFORE_THE_KEY = {
    "an option's value argument-parser refuses": ("vault-tool", "device", "add", "--key-file", "parent.nsec", "h.vault", "--id", "dev1", "--name", "x", "--expect-revision", "{P}", "--dry-run"),
    "a migration's target": ("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "{P}", "--dry-run", "h.vault"),
    "a device given before its vault": ("vault-tool", "device", "promote", "--key-file", "parent.nsec", "--dry-run", "{P}", "h.vault"),
    "an output's missing folder": ("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "nodir/{P}.vault", "h.json"),
    "a derived device's id": ("vault-tool", "derive", "--key-file", "parent.nsec", "--device-id", "d-{P}"),
    "a revoker's revision": ("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "Bedroom iPad", "--expect-revision", "{P}", "--dry-run"),
    "a revoker's operations folder": ("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "Bedroom iPad", "-o", "n.vault", "--ops", "nodir/{P}"),
    "a plan's mode": ("rotation-planner", "plan", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "other.nsec", "--mode", "{P}", "-o", "plan.json"),
    "a sheet's resolution": ("recovery-sheet", "generate", "--key-file", "parent.nsec", "--dpi", "{P}", "-o", "sheet.pdf"),
    "a split's threshold": ("recovery-sheet", "split", "--key-file", "parent.nsec", "--threshold", "{P}", "--shares", "3", "-o", "shares"),
    "a link's lifetime": ("device-link", "create", "--key-file=parent.nsec", "--vault-url", "https://minio.example/b/vaults/x.vault", "--expires-in", "{P}", "-o", "link.png"),
    "a split's folder, written": ("recovery-sheet", "split", "--key-file", "parent.nsec", "--threshold", "2", "--shares", "3", "-o", "nodir/{P}/q"),
    "a revoker's operations folder, its vault given with =": ("device-revoker", "vault", "--key-file", "parent.nsec", "--vault=h.vault", "--device", "Bedroom iPad",
                                                                "-o", "n.vault", "--ops", "nodir/{P}"),
    "an output's missing folder, the vault after --": ("vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", "x1", "--name", "y", "-o", "nodir/{P}/v", "--", "-h.vault"),
}


@pytest.mark.parametrize(("case", "spelling"), [(case, spelling) for case in sorted(REFUSED_BEFORE_THE_KEY)
                                                 for spelling in ["14 hex digits", "upper case", "its nsec's middle", "the vault key's hex"]
                                                 + (["a child's key"] if any(part.endswith("h.vault") for part in REFUSED_BEFORE_THE_KEY[case]) else [])])
def test_a_message_said_before_the_key_is_read_holds_no_piece_of_it(tmp_path, case, spelling):
    """A hostile trial: a refusal made before a command read its key (argument-parser's "the
    value '…' is invalid", an output's folder missing, the order of a device and its vault, a
    device id derived) quoted a piece of the key typed there, and a folder said as written held
    one, in all five tools; the same text after the key was read was withheld. The keys a
    command line names by file are held before any message is said, and with a parent key the
    secrets of the vault named beside it (a child's key)."""
    fixtures = Path(__file__).resolve().parents[1] / "Fixtures"
    for name in ("parent.nsec", "other.nsec"):
        (tmp_path / name).write_bytes((fixtures / "keys" / name).read_bytes())
        os.chmod(tmp_path / name, 0o600)
    for name in ("h.vault", "-h.vault"):
        (tmp_path / name).write_bytes((fixtures / "testkit" / "ok-v2-household.vault").read_bytes())
    (tmp_path / "h.json").write_text("{}")
    key = PARENT_FIXTURE.secret.hex()
    piece = {"14 hex digits": key[10:24], "upper case": key[30:50].upper(), "its nsec's middle": PARENT_FIXTURE.nsec[12:26],
             "the vault key's hex": PARENT_FIXTURE.vault_key.hex()[5:21], "a child's key": child_key_hex()[8:24]}[spelling]
    program, *arguments = [part.replace("{P}", piece) for part in REFUSED_BEFORE_THE_KEY[case]]
    result = subprocess.run([str(BIN / program), *arguments], capture_output=True, text=True, errors="replace", cwd=tmp_path, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == (0 if case.endswith("written") else result.returncode) and (result.returncode != 0 or case.endswith("written")), (result.returncode, result.stderr)
    said = (result.stdout + result.stderr).lower()
    assert piece.lower() not in said, result.stderr


def test_files_that_only_begin_as_vaults_do_not_keep_the_vault_from_being_read_for_a_message(tmp_path):
    """A trial: four files beginning `MTVAULT` named as options' values used up the vaults a
    refusal opens to hold their secrets, and a piece of a child's key in an output's folder was
    quoted. Only vaults that open count; and the warning that a key file can be read by others,
    said before the key is read, withholds the file's name when it holds a piece of the key."""
    fixtures = Path(__file__).resolve().parents[1] / "Fixtures"
    key = PARENT_FIXTURE.secret.hex()
    (tmp_path / f"k-{key[:16]}.nsec").write_bytes((fixtures / "keys" / "parent.nsec").read_bytes())
    os.chmod(tmp_path / f"k-{key[:16]}.nsec", 0o644)
    (tmp_path / "h.vault").write_bytes((fixtures / "testkit" / "ok-v2-household.vault").read_bytes())
    for name in ("D1", "D2", "D3", "D4", "D5"):
        (tmp_path / name).write_bytes(b"MTVAULTjunk")
    piece = child_key_hex()[8:24]
    refused = subprocess.run([str(BIN / "vault-tool"), "device", "add", "--key-file", f"k-{key[:16]}.nsec", "--id", "D1", "--name", "D2", "--log", "D3", "--ops", "D4",
                              "-o", f"nodir/{piece}/v", "D5", "h.vault"], capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert refused.returncode != 0 and piece not in refused.stderr and key[:16] not in refused.stderr, (refused.returncode, refused.stderr)
    shown = subprocess.run([str(BIN / "vault-tool"), "inspect", "--key-file", f"k-{key[:16]}.nsec", "h.vault"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert shown.returncode == 0 and "can be read by other users" in shown.stderr and key[:16] not in shown.stderr, (shown.returncode, shown.stderr)
