"""No output replaces a file that holds a key, whatever the flags (issue 37): every output of
every writing command (the nothing-lost sweep's table), given the name of a file that holds a
key in any of the forms the suite writes or a person types, is refused with exit 4 and the key
file is left as it was, with --force too where the command has it. A file that holds no key is
still replaced as before, so the refusal is about the key, not about the name."""
import json
import os
import random
import subprocess

import pytest

from workspace import BIN, ROOT

from test_nothing_lost import (REFUSED, WRITERS, assert_unchanged, fifos, leaf_commands, snapshot, template, tool,  # noqa: F401
                               workspace)

# Files of the workspace that hold a key, in every form: a parent key (nsec), a master key (hex),
# an encrypted key typed in groups of four, recovery words, a share's words, a code's words.
KEY_FILES = ["keys/parent.nsec", "keys/parent.vaultkey", "mk.hex", "typed-ncryptsec.txt", "words.txt",
             "tshares/share-1-of-2.txt", "code.words"]


def key_cases():
    generator = random.Random(37)
    cases = []
    for writer in WRITERS:
        for output in writer.outputs():
            # Outputs the command also reads (a database, a vault migrated in place) and files
            # named by the tool are not names a person gives for an output.
            if output in writer.derived or writer.kind(output) != "out":
                continue
            key = generator.choice(KEY_FILES)
            cases.append(pytest.param(writer, output, key, id=f"{writer.id}:{output}<-{key}"))
    return cases


CASES = key_cases()


def force_flag(writer):
    options = leaf_commands().get(writer.command, {})
    return ["--force"] if "force" in options else []


def assert_never_replaced(workspace, writer, output, source, mode):
    """The writer's `output`, named onto a copy of `source` of that mode, is refused (exit 4)
    and nothing in the workspace changes, with --force too where the command has it."""
    values = writer.defaults()
    values[output] = "held.key"
    (workspace / "held.key").write_bytes((workspace / source).read_bytes())
    (workspace / "held.key").chmod(mode)
    argv = writer.render(values, workspace) + force_flag(writer)
    before = snapshot(workspace)
    result = tool(writer.tool, argv, workspace)
    assert result.returncode == REFUSED, f"{writer.tool} {' '.join(argv)} over a copy of {source}: {result}"
    assert "held.key" in result.message, result
    assert "holds a key" in result.message or "a key file is never replaced" in result.message, result
    assert_unchanged(workspace, before, what=f"{writer.tool} {' '.join(argv)}")


@pytest.mark.parametrize("writer,output,key", CASES)
def test_no_output_replaces_a_key_file(workspace, writer, output, key):
    assert_never_replaced(workspace, writer, output, key, 0o600)


# Pictures the suite reads a key from: a passphrase sheet, a code's sheet, a pairing code.
PICTURES = ["esheet.png", "csheet.png", "pair.png"]


@pytest.mark.parametrize("writer,output,key", CASES)
def test_no_output_replaces_a_picture_that_may_hold_a_key(workspace, writer, output, key):
    """A sheet, a code or a link copied without the suite's mark and made readable by others
    (downloaded, mailed, `chmod 644`): its key is in its QR code, so every picture or page the
    suite reads keys from is held as one (a hostile trial replaced such copies through 13
    outputs of four tools)."""
    assert_never_replaced(workspace, writer, output, PICTURES[sum(map(ord, key + output)) % len(PICTURES)], 0o644)


# Outputs that replace an existing file (the others are always new: keys, shares, plans).
REPLACING = ["vault-tool-seal", "vault-tool-open", "vault-tool-migrate-vault", "recovery-sheet-generate", "device-link-create",
             "vault-tool-merge"]


@pytest.mark.parametrize("writer", [w for w in WRITERS if w.id in REPLACING], ids=lambda w: w.id)
def test_a_file_without_a_key_is_replaced_as_before(workspace, writer):
    """The same outputs over a file of ordinary text are written: the refusal is the key's."""
    values = writer.defaults()
    values["o"] = "held" + os.path.splitext(values["o"])[1]  # the format follows the name
    (workspace / values["o"]).write_text("notes, not a key\n")
    result = tool(writer.tool, writer.render(values, workspace), workspace)
    assert result.returncode == 0, result
    assert (workspace / values["o"]).read_bytes() != b"notes, not a key\n"


def test_the_sweep_covers_every_writer():
    assert len([w for w in WRITERS if w.id in REPLACING]) == len(REPLACING)
    assert len(CASES) >= 30, len(CASES)
    assert {case.values[0].command for case in CASES} >= {w.command for w in WRITERS if any(
        n not in w.derived and w.kind(n) == "out" for n in w.outputs())}


def test_an_operations_file_is_replaced_again_whatever_its_members_dids_spell(tmp_path):
    """An operations file names members as USER_DID#DEVICE_ID; a did:key DID can end in a chunk
    that spells a secret's label ("…Sk") right before the '#' and a 64-hex device id. Such a file
    is the registry's own output, written again by `registry log --ops` (a second trial found it
    refused as a key file once '#' read as a label's end)."""
    revoker = str(BIN / "device-revoker")
    user = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGtaSk"
    device = os.urandom(32).hex()

    def run(*arguments):
        return subprocess.run([revoker, "registry", *arguments], capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert run("init", "--db", "r.sqlite").returncode == 0
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"user_did": user, "device_id": d, "device_mls_did": f"{user}#{d}", "signature_public_key": k})
                                              + "\n" for d, k in [(device, "01"), ("other", "02")]))
    (tmp_path / "m.jsonl").write_text(json.dumps({"convo_id": "c1", "member_mls_did": f"{user}#{device}", "user_did": user, "device_id": device})
                                      + "\n" + json.dumps({"convo_id": "c1", "member_mls_did": f"{user}#other", "user_did": user, "device_id": "other",
                                                           "is_admin": True}) + "\n")
    assert run("import", "--db", "r.sqlite", "--devices", "d.jsonl", "--members", "m.jsonl", "--now", "2026-11-22T10:00:00Z").returncode == 0
    revoked = run("revoke", "--db", "r.sqlite", "--device", f"{user}#{device}", "--force", "--batch-id", "B1", "--ops", "ops.jsonl",
                  "--now", "2026-11-22T10:00:00Z")
    assert revoked.returncode == 0, revoked.stderr
    first = (tmp_path / "ops.jsonl").read_text()
    assert device in first
    again = run("log", "--db", "r.sqlite", "--batch", "B1", "--ops", "ops.jsonl")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "ops.jsonl").read_text() == first


def test_a_document_of_a_household_with_many_devices_is_replaced_again(tmp_path):
    """Every device's `"isPrimary": false` (and a theme like "ocean") is one recovery-list word
    on a line of its own: twelve devices made `vault-tool open -o` refuse its own earlier output
    as a file holding recovery words (a third trial). A JSON member's single word is a field."""
    import copy
    import shutil
    import uuid
    shutil.copy(ROOT / "Examples" / "household.nsec", tmp_path / "p.nsec")
    os.chmod(tmp_path / "p.nsec", 0o600)
    document = json.loads((ROOT / "Examples" / "household.json").read_text())
    for index in range(12):
        device = copy.deepcopy(document["devices"][-1])
        device.update(deviceId=str(uuid.uuid4()).upper(), deviceName=f"Old {index}", status="revoked", isPrimary=False)
        document["devices"].append(device)
    (tmp_path / "big.json").write_text(json.dumps(document, indent=2))
    vault_tool = str(BIN / "vault-tool")

    def run(*arguments):
        return subprocess.run([vault_tool, *arguments], capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert run("seal", "--key-file", "p.nsec", "-o", "big.vault", "big.json").returncode == 0
    for _ in range(2):
        opened = run("open", "--key-file", "p.nsec", "-o", "big-open.json", "big.vault")
        assert opened.returncode == 0, opened.stderr
    assert len(json.loads((tmp_path / "big-open.json").read_text())["devices"]) == len(document["devices"])
