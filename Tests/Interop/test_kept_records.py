"""What a kept record may hold, and what a writer may replace beside it (issue 44, after a
hostile trial of the household log): no signed, append-only record (a household log's event, a
registry batch, a vault's revocation) holds a key in any spelling, and no public-key option takes
a secret the run holds; a log beside an output is replaced only by one that keeps all of it; the
vault key never signs; ids are checked as ids. Each case with its variants: spellings, commands,
names.
"""
import json
import os
import shutil
import subprocess

import pytest
from vaultref import Household, nip19_decode, xonly_pubkey
from workspace import BIN, FIXTURES

PARENT = Household(nip19_decode((FIXTURES / "keys" / "parent.nsec").read_text().strip(), "nsec"))
OTHER = Household(nip19_decode((FIXTURES / "keys" / "other.nsec").read_text().strip(), "nsec"))
WORDS = " ".join(["abandon"] * 11 + ["about"])


def tool(name, *arguments, cwd):
    return subprocess.run([str(BIN / name), *arguments], capture_output=True, text=True, errors="replace", cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def secret_spellings(household):
    """Ways a person pastes a household's secrets: the parent key and the vault key."""
    hex_key, vault_hex = household.secret.hex(), household.vault_key.hex()
    return {
        "nsec": household.nsec, "nsec upper case": household.nsec.upper(), "nsec in an export": f"export NSEC={household.nsec}",
        "parent key hex": hex_key, "parent key HEX": hex_key.upper(), "parent key 0x": "0x" + hex_key,
        "parent key in a sentence": f"key {hex_key} lost", "vault key hex": vault_hex, "vault key in a sentence": f"vk {vault_hex}",
        "recovery words": WORDS,
    }


def leaks(result, household):
    text = result.stdout + result.stderr
    return any(secret in text.lower() for secret in (household.secret.hex(), household.vault_key.hex(), household.nsec.lower(),
                                                      household.secret.hex()[:16], household.vault_key.hex()[:16]))


@pytest.fixture
def house(tmp_path):
    for name in ("parent.nsec", "parent.vaultkey", "other.nsec"):
        shutil.copy(FIXTURES / "keys" / name, tmp_path / name)
        os.chmod(tmp_path / name, 0o600)
    (tmp_path / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    migrated = tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "--now", "2025-12-01T00:00:00Z", "-o", "h.vault", "v2.vault",
                    cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    return tmp_path


def snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("spelling", sorted(secret_spellings(PARENT)))
def test_no_grant_names_a_secret_as_its_key_nor_keeps_one_in_its_label(house, spelling):
    secret = secret_spellings(PARENT)[spelling]
    before = snapshot(house)
    grant = ["vault-tool", "log", "grant", "--key-file", "parent.nsec", "--allow", "revoke", "--until", "2026-06-01", "--now", "2026-01-01T00:00:00Z"]
    as_key = tool(*grant, "--to", secret, "h.vault", cwd=house)
    assert as_key.returncode == 64, (spelling, as_key.stderr)
    assert not leaks(as_key, PARENT), (spelling, as_key.stderr)
    as_label = tool(*grant, "--to", OTHER.npub, "--label", secret, "h.vault", cwd=house)
    assert as_label.returncode == 64 and "not shown" in as_label.stderr, (spelling, as_label.stderr)
    assert not leaks(as_label, PARENT)
    as_reason = tool("vault-tool", "log", "withdraw", "--key-file", "parent.nsec", "--grant", OTHER.npub, "--reason", secret, "h.vault", cwd=house)
    assert as_reason.returncode != 0 and not leaks(as_reason, PARENT)
    assert snapshot(house) == before


def test_the_vault_keys_own_public_key_is_never_granted_and_the_vault_key_never_signs(house):
    vault_key_npub = xonly_pubkey(PARENT.vault_key)
    refused = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", vault_key_npub, "--allow", "revoke", "--until", "2026-06-01",
                   "--now", "2026-01-01T00:00:00Z", "h.vault", cwd=house)
    assert refused.returncode == 64 and "vault key" in refused.stderr
    before = snapshot(house)
    for command in (["device-revoker", "vault", "--vault-key-file", "parent.vaultkey", "--signer-key-file", "parent.vaultkey", "--vault", "h.vault",
                     "--device", "bedroom ipad", "--ops", "ops.jsonl", "-o", "next.vault"],
                    ["device-revoker", "vault", "--key-file", "parent.nsec", "--signer-key-file", "parent.vaultkey", "--vault", "h.vault",
                     "--device", "bedroom ipad", "--ops", "ops.jsonl", "-o", "next.vault"]):
        result = tool(*command, cwd=house)
        assert result.returncode == 4 and "vault key" in result.stderr, result.stderr
        assert not leaks(result, PARENT)
    assert snapshot(house) == before


@pytest.mark.parametrize("spelling", ["nsec", "nsec in an export", "parent key hex", "vault key hex", "recovery words"])
def test_no_revocation_keeps_a_secret_as_its_reason_or_operator(house, spelling):
    secret = secret_spellings(PARENT)[spelling]
    before = snapshot(house)
    vault = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "--reason", secret,
                 "--ops", "ops.jsonl", "-o", "next.vault", cwd=house)
    assert vault.returncode == 64 and not leaks(vault, PARENT), vault.stderr
    assert snapshot(house) == before
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    registry = house / "r.sqlite"
    recorded = registry.read_bytes()
    for option in ("--reason", "--operator"):
        result = tool("device-revoker", "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:a#d1", option, secret, cwd=house)
        assert result.returncode == 64 and not leaks(result, PARENT), (option, result.stderr)
        assert registry.read_bytes() == recorded


@pytest.mark.parametrize("output", ["h", "./h", "h.log.vault"])
def test_an_output_whose_log_is_the_inputs_log_is_refused_and_the_log_kept(house, output):
    """`-o h` beside `h.vault`: the output's log would be `h.log`, the input's own."""
    before = (house / "h.log").read_bytes()
    for command in (["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "--ops", "ops.jsonl"],
                    ["vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "h.vault"]):
        result = tool(*command, "-o", output, cwd=house)
        if output == "h.log.vault":
            # Its log is h.log.log: nothing in the way; the run may go ahead.
            assert (house / "h.log").read_bytes() == before
            continue
        assert result.returncode == 4, (command, result.stderr)
        assert (house / "h.log").read_bytes() == before


def test_another_households_log_or_another_life_beside_the_output_is_never_replaced(house):
    # Another household's log, at the name the output's log takes.
    fleet = tool("vault-tool", "sample-fleet", "--households", "1", "--schema-version", "3", "--out-dir", "fleet", cwd=house)
    assert fleet.returncode == 0, fleet.stderr
    foreign = next((house / "fleet" / "vaults").glob("*.log")).read_bytes()
    # This household's other life: two changes from the same vault, kept in a log elsewhere.
    first = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "--ops", "a.jsonl",
                 "-o", "a.vault", cwd=house)
    assert first.returncode == 0, first.stderr
    other_life = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "a.vault", "--device", "kitchen ipad", "--allow-empty",
                      "--ops", "b.jsonl", "-o", "b.vault", cwd=house)
    assert other_life.returncode == 0, other_life.stderr
    for name, log in (("another household's", foreign), ("another life's", (house / "b.log").read_bytes()), ("not a log", b"notes\n")):
        for command in (["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "old ipad", "--ops", "c.jsonl",
                         "-o", "out.vault"],
                        ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "--ops", "d.jsonl",
                         "-o", "out.vault"],
                        ["vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "out.vault", "h.vault"],
                        ["vault-tool", "merge", "--key-file", "parent.nsec", "--base", "h.vault", "--ours", "h.vault", "--theirs", "a.vault",
                         "-o", "out.vault"]):
            (house / "out.log").write_bytes(log)
            result = tool(*command, cwd=house)
            assert result.returncode == 4, (name, command, result.stderr)
            assert (house / "out.log").read_bytes() == log and not (house / "out.vault").exists(), (name, command)


def test_a_rotated_households_old_key_cannot_give_up_the_rotation(house):
    """With the vault from before the move put back beside the old log, the old key's change
    would drop the `rotate` event and go on in the old household: refused, whatever the change."""
    new_secret = os.urandom(32)
    new = Household(new_secret)
    (house / "new.nsec").write_text(new.nsec + "\n")
    os.chmod(house / "new.nsec", 0o600)
    assert tool("rotation-planner", "plan", "--mode", "compromise", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec",
                "-o", "plan.json", cwd=house).returncode == 0
    applied = tool("rotation-planner", "apply", "plan.json", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec",
                   "--out-dir", "rotated", "--ops", "ops.jsonl", cwd=house)
    assert applied.returncode == 0, applied.stderr
    old_log = house / "rotated" / PARENT.vault_path.replace(".vault", ".log")
    rotated = old_log.read_bytes()
    for command in (["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--log", str(old_log), "--device", "old ipad",
                     "--ops", "x.jsonl", "-o", "x.vault"],
                    ["vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "--log", str(old_log), "-o", "y.vault", "h.vault"]):
        result = tool(*command, cwd=house)
        assert result.returncode != 0 and "moved" in result.stderr, (command, result.stderr)
    assert old_log.read_bytes() == rotated
    assert not (house / "x.vault").exists() and not (house / "y.vault").exists()


@pytest.mark.parametrize("value", ["zz", "", "g" * 12, "abc", "0" * 65, "12345678901x", " " + "a" * 12])
def test_an_id_that_is_not_hex_is_a_usage_error_not_a_tampering(house, value):
    assert tool("vault-tool", "log", "verify", f"--expect-event={value}", "h.vault", cwd=house).returncode == 64
    assert tool("vault-tool", "log", "withdraw", "--key-file", "parent.nsec", f"--grant={value}", "h.vault", cwd=house).returncode == 64
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    assert tool("device-revoker", "registry", "log", "--db", "r.sqlite", "--verify", f"--expect-head={value}", cwd=house).returncode == 64


def test_a_grant_is_recorded_once_and_names_each_action_once(house):
    grant = ["vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", OTHER.npub, "--until", "2026-06-01", "--now", "2026-01-01T00:00:00Z"]
    for allow in ("revoke,revoke", "revoke, merge,revoke", "revoke,", ",revoke", "start"):
        assert tool(*grant, "--allow", allow, "h.vault", cwd=house).returncode == 64, allow
    assert tool(*grant, "--allow", "revoke", "h.vault", cwd=house).returncode == 0
    once = (house / "h.log").read_bytes()
    again = tool(*grant, "--allow", "revoke", "h.vault", cwd=house)
    assert again.returncode == 0 and "already" in again.stderr
    assert (house / "h.log").read_bytes() == once
    long = tool(*grant, "--allow", "merge", "--until", "2099-01-01", "h.vault", cwd=house)
    assert long.returncode == 0 and "warning" in long.stderr


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_log_that_is_not_a_regular_file_is_refused_alike(house, kind):
    path = {"directory": "dir.log", "fifo": "fifo.log", "device": "/dev/null"}[kind]
    if kind == "directory":
        (house / path).mkdir()
    elif kind == "fifo":
        os.mkfifo(house / path)
    result = tool("vault-tool", "log", "verify", "--log", path, "h.vault", cwd=house)
    assert result.returncode == 2, result.stderr


def test_a_last_line_without_its_newline_is_a_log_cut_off(house):
    text = (house / "h.log").read_bytes()
    (house / "cut.log").write_bytes(text.rstrip(b"\n"))
    result = tool("vault-tool", "log", "verify", "--log", "cut.log", "h.vault", cwd=house)
    assert result.returncode == 3 and "at event 1" in result.stderr


def test_signer_options_on_a_vault_without_a_log_are_said_to_be_unused(house):
    result = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--signer-key-file", "other.nsec", "--vault", "v2.vault",
                  "--device", "bedroom ipad", "--ops", "ops.jsonl", "-o", "next.vault", cwd=house)
    assert result.returncode == 0, result.stderr
    assert "--signer-key-file not used" in result.stderr


@pytest.mark.parametrize("packages", [0, None, 1, 3])
def test_a_rejoin_plan_names_only_a_device_the_server_can_add(house, packages):
    """Seed 003's addMember adds a device only `WHERE key_packages_available > 0`: a plan for a
    device with none is empty, and says which conversations it will join once it has some."""
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    device = {"user_did": "did:plc:u", "device_id": "new", "device_mls_did": "did:plc:u#new", "signature_public_key": "ab"}
    if packages is not None:
        device["key_packages_available"] = packages
    old = {"user_did": "did:plc:u", "device_id": "old", "device_mls_did": "did:plc:u#old", "signature_public_key": "cd", "key_packages_available": 1}
    (house / "d.jsonl").write_text(json.dumps(old) + "\n" + json.dumps(device) + "\n")
    (house / "m.jsonl").write_text("".join(json.dumps({"convo_id": c, "member_mls_did": "did:plc:u#old", "user_did": "did:plc:u", "device_id": "old",
                                                       "joined_at": "2025-01-01T00:00:00Z"}) + "\n" for c in ("c1", "c2")))
    imported = tool("device-revoker", "registry", "import", "--db", "r.sqlite", "--devices", "d.jsonl", "--members", "m.jsonl", cwd=house)
    assert imported.returncode == 0, imported.stderr
    plan = tool("device-revoker", "registry", "rejoin-plan", "--db", "r.sqlite", "--device", "did:plc:u#new", cwd=house)
    assert plan.returncode == 0, plan.stderr
    if packages:
        assert [json.loads(line)["convo"] for line in plan.stdout.splitlines()] == ["c1", "c2"]
    else:
        assert plan.stdout == "" and "key packages" in plan.stderr and "c1, c2" in plan.stderr


def test_a_revocations_group_removals_are_never_dropped(house):
    """Without --ops they go to standard output (or into --json's report); with the vault on
    standard output and neither, the run is refused: the app must make them."""
    base = ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v2.vault", "--device", "bedroom ipad"]
    plain = tool(*base, "-o", "a.vault", cwd=house)
    assert plain.returncode == 0, plain.stderr
    removals = [json.loads(line) for line in plain.stdout.splitlines()]
    assert removals and all(r["op"] == "mls.remove" for r in removals) and "standard output" in plain.stderr
    with_json = tool(*base, "-o", "b.vault", "--json", cwd=house)
    assert with_json.returncode == 0 and json.loads(with_json.stdout)["groupRemovals"] == removals
    to_file = tool(*base, "-o", "c.vault", "--ops", "ops.jsonl", cwd=house)
    assert to_file.returncode == 0 and to_file.stdout == "" and [json.loads(l) for l in (house / "ops.jsonl").read_text().splitlines()] == removals
    refused = subprocess.run([str(BIN / "device-revoker"), *base[1:], "-o", "-", "--force"], capture_output=True, cwd=house, stdin=subprocess.DEVNULL)
    assert refused.returncode == 64 and refused.stdout == b""


def rotated(house):
    """The household moved to a new key into rotated/; h.vault and h.log stay as before it."""
    (house / "new.nsec").write_text(Household(os.urandom(32)).nsec + "\n")
    os.chmod(house / "new.nsec", 0o600)
    assert tool("rotation-planner", "plan", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec", "-o", "plan.json",
                cwd=house).returncode == 0
    assert tool("rotation-planner", "apply", "plan.json", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec",
                "--out-dir", "rotated", "--ops", "ops.jsonl", cwd=house).returncode == 0
    return house / "rotated" / PARENT.vault_path


def test_a_moved_households_tombstone_is_never_written_over_and_its_log_never_dropped(house):
    tombstone = rotated(house)
    kept = tombstone.read_bytes(), tombstone.with_suffix(".log").read_bytes()
    assert tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "2", "-o", "v2copy.vault", "h.vault", cwd=house).returncode == 0
    for command in (["vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "2", "-o", str(tombstone), "h.vault"],
                    ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v2copy.vault", "--device", "bedroom ipad", "--ops", "o.jsonl",
                     "-o", str(tombstone)],
                    ["vault-tool", "merge", "--key-file", "parent.nsec", "--base", "v2copy.vault", "--ours", "v2copy.vault", "--theirs", "v2copy.vault",
                     "-o", str(tombstone)]):
        result = tool(*command, cwd=house)
        assert result.returncode == 4 and "moved" in result.stderr, (command, result.stderr)
    # The rotated log beside an old copy: no change, not even a migration down, goes ahead.
    shutil.copy(house / "h.vault", house / "pre.vault")
    shutil.copy(tombstone.with_suffix(".log"), house / "pre.log")
    down = tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "2", "-o", "down.vault", "pre.vault", cwd=house)
    assert down.returncode == 4 and not (house / "down.vault").exists()
    # Nor is the rotation dropped from a log copied beside another output.
    (house / "t2").mkdir()
    shutil.copy(tombstone.with_suffix(".log"), house / "t2" / "x.log")
    renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "-o", "t2/x.vault", "h.vault", "bedroom ipad", "Z", cwd=house)
    assert renamed.returncode == 4 and (house / "t2" / "x.log").read_bytes() == kept[1]
    assert (tombstone.read_bytes(), tombstone.with_suffix(".log").read_bytes()) == kept


def test_another_change_of_the_same_signer_beside_the_output_is_kept(house):
    assert tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "-o", "a.vault", "h.vault", "bedroom ipad", "Branch A",
                cwd=house).returncode == 0
    (house / "a.vault").rename(house / "a.vault.moved")
    shutil.copy(house / "a.log", house / "x.log")
    branch = (house / "x.log").read_bytes()
    result = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "-o", "x.vault", "h.vault", "bedroom ipad", "Branch B", cwd=house)
    assert result.returncode == 4 and (house / "x.log").read_bytes() == branch


@pytest.mark.parametrize("target", ["/dev/stdout", "link-to-fd-1"])
def test_an_output_that_is_standard_output_by_another_name_is_refused(house, target):
    if target == "link-to-fd-1":
        os.symlink("/proc/self/fd/1", house / target)
    with open(house / "captured", "wb") as captured:
        for command in (["vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", "N7", "--name", "N7", "-o", target, "h.vault"],
                        ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "-o", target]):
            result = subprocess.run([str(BIN / command[0]), *command[1:]], stdout=captured, stderr=subprocess.PIPE, cwd=house, stdin=subprocess.DEVNULL)
            assert result.returncode == 4 and b"standard output" in result.stderr, (command, result.stderr)
    assert (house / "captured").read_bytes() == b"" and not os.path.exists("/dev/stdout.log")


def held_spellings(household):
    hex_key, vault_hex = household.secret.hex(), household.vault_key.hex()
    return {
        "hex split by colons": ":".join(hex_key[i:i + 2] for i in range(0, 64, 2)),
        "vault key in groups of eight": " ".join(vault_hex[i:i + 8] for i in range(0, 64, 8)),
        "hex in two halves on two lines": hex_key[:32] + "\n" + hex_key[32:],
        "hex with zero-width spaces": "\u200b".join(hex_key),
        "nsec without its prefix": household.nsec[len("nsec1"):],
        "nsec in full-width letters": "".join(chr(ord(c) + 0xFEE0) for c in household.nsec),
        "words joined by underscores": "_".join(WORDS.split()),
    }


@pytest.mark.parametrize("spelling", sorted(held_spellings(PARENT)))
def test_a_secret_written_any_way_is_kept_in_no_record(house, spelling):
    secret = "lost " + held_spellings(PARENT)[spelling]
    before = snapshot(house)
    grant = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", OTHER.npub, "--allow", "revoke", "--until", "2026-06-01",
                 "--now", "2026-01-01T00:00:00Z", "--label", secret, "h.vault", cwd=house)
    assert grant.returncode == 64, grant.stderr
    reason = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v2.vault", "--device", "bedroom ipad", "--reason", secret,
                  "--ops", "o.jsonl", "-o", "n.vault", cwd=house)
    assert reason.returncode == 64, reason.stderr
    name = tool("vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", "N1", "--name", secret[:100], "--ops", "o.jsonl", "-o", "n.vault",
                "h.vault", cwd=house)
    assert name.returncode == 64, name.stderr
    assert snapshot(house) == before
    # The registry's commands hold no household key: there, a key is known by its shape alone
    # (a hex key split by colons behind a word is not one, to a run that does not hold it).
    if spelling not in ("nsec in full-width letters", "words joined by underscores"):
        return
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    for option in ("--batch-id", "--operator", "--reason"):
        result = tool("device-revoker", "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:a#d1", "--force", option, secret, cwd=house)
        assert result.returncode == 64, (option, result.stderr)


@pytest.mark.parametrize("device_id,name", [("B3E9A410", "New"), ("b3e9a410-77c2-4f0e-8d65-1c2b3a4d5e6f", "New"), ("N2", "6F1C2B7E"),
                                            ("N3", "b3e9"), ("Bedroom iPad", "New"), ("N4", "KITCHEN  ipad"), ("N5", "Ｋitchen iPad"),
                                            ("N6", "Kitchen iPad\ufe0f"), ("N7", "\u3164")])
def test_an_added_device_never_makes_another_one_unnameable(house, device_id, name):
    before = snapshot(house)
    result = tool("vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", device_id, "--name", name, "--ops", "o.jsonl", "-o", "n.vault",
                  "h.vault", cwd=house)
    assert result.returncode in (4, 64), result.stderr
    assert snapshot(house) == before


def test_a_key_in_two_halves_between_words_with_hex_letters_is_kept_in_no_record(house):
    hex_key = PARENT.secret.hex()
    before = snapshot(house)
    for text in (f"part 1: {hex_key[:32]} part 2: {hex_key[32:]}", f"see code {hex_key[:16]} face {hex_key[16:40]} bad {hex_key[40:]}"):
        result = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", OTHER.npub, "--allow", "revoke", "--until", "2026-06-01",
                      "--now", "2026-01-01T00:00:00Z", "--label", text, "h.vault", cwd=house)
        assert result.returncode == 64, (text, result.stderr)
    assert snapshot(house) == before


@pytest.mark.parametrize("signer", ["missing.nsec", "fifo", "words"])
def test_a_registry_dry_run_refuses_the_signer_the_real_run_refuses(house, signer):
    """A hostile trial: `registry revoke --dry-run --signer-key-file /nonexistent` passed
    (exit 0) where the real run failed: the dry run did not read the signer's key. It does now,
    and refuses alike; the registry is untouched either way."""
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    if signer == "fifo":
        os.mkfifo(house / "fifo")
    if signer == "words":
        (house / "words").write_text(" ".join(["abandon"] * 23 + ["art"]) + "\n")
        (house / "words").chmod(0o600)
    recorded = (house / "r.sqlite").read_bytes()
    codes = []
    for extra in (["--dry-run"], []):
        result = tool("device-revoker", "registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:a#d1", "--reason", "lost", "--force",
                      "--allow-unmatched", "--signer-key-file", signer, *extra, cwd=house)
        codes.append(result.returncode)
        assert result.returncode != 0 and not leaks(result, PARENT), result.stderr
    assert codes[0] == codes[1]
    assert (house / "r.sqlite").read_bytes() == recorded


LINKED_VAULT_COMMANDS = {
    "log verify": ("vault-tool", "log", "verify"),
    "log show": ("vault-tool", "log", "show"),
    "device rename": ("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--in-place", "{vault}", "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F", "Hall"),
    "device limit dry run": ("vault-tool", "device", "limit", "--key-file", "parent.nsec", "--dry-run", "--in-place", "{vault}", "9"),
    "revoke": ("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "{vault}", "--device", "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F",
               "-o", "new.vault", "--ops", "ops.jsonl"),
}


@pytest.mark.parametrize("link", ["h.vault", "ln/h.vault"])
@pytest.mark.parametrize("command", list(LINKED_VAULT_COMMANDS))
def test_a_vault_named_through_a_link_away_from_its_log_says_where_it_leads(house, command, link):
    """A trial: a schema 3 vault named by a symbolic link in another folder (`h.vault` →
    `data/h.vault`, its log `data/h.log`) was refused by every command that reads its log
    as having none at `h.log`, with a hint to start a new log. Logs are looked for beside the
    name given (as writers keep them), so the refusal stays (exit 3, nothing written), and
    says where the link leads and to name the vault by that path; named so, the command runs."""
    folder = house / "w"
    (folder / "data").mkdir(parents=True)
    for name in ("h.vault", "h.log"):
        os.replace(house / name, folder / "data" / name)
    for name in ("parent.nsec",):
        shutil.copy(house / name, folder / name)
    (folder / link).parent.mkdir(exist_ok=True)
    os.symlink(os.path.relpath(folder / "data" / "h.vault", (folder / link).parent), folder / link)
    program, *arguments = LINKED_VAULT_COMMANDS[command]
    if "{vault}" not in arguments:
        arguments.append("{vault}")
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}
    refused = tool(program, *[link if a == "{vault}" else a for a in arguments], cwd=folder)
    assert refused.returncode == 3, (refused.returncode, refused.stderr)
    target = str(folder / "data" / "h.vault")
    assert f"leads through a symbolic link to '{target}'" in refused.stderr and f"name the vault by the path of its own file: '{target}'" in refused.stderr, refused.stderr
    assert "log start" not in refused.stderr, refused.stderr
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()} == before
    named = tool(program, *["data/h.vault" if a == "{vault}" else a for a in arguments], cwd=folder)
    assert named.returncode == 0, (named.returncode, named.stderr)


@pytest.mark.parametrize("spelling", ["nsec", "hex", "signer's hex"])
def test_a_batch_records_its_selection_only_when_it_holds_no_secret(house, spelling):
    """A registry batch keeps its selection for good (`revocations.selector`), beside its reason
    and operator, which were already held to the record rule: a user's DID that reads as a key
    (the app's text, so its devices must still be revoked) is recorded as what stands for it,
    and a plain one as it is."""
    import sqlite3
    other = nip19_decode((house / "other.nsec").read_text().strip(), "nsec")
    signer = Household(os.urandom(32))
    (house / "signer.nsec").write_text(signer.nsec + "\n")
    os.chmod(house / "signer.nsec", 0o600)
    key = {"nsec": (house / "other.nsec").read_text().strip(), "hex": other.hex(), "signer's hex": signer.secret.hex()}[spelling]
    users = [f"did:plc:{key}", "did:plc:plain"]
    assert tool("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=house).returncode == 0
    (house / "d.jsonl").write_text("".join(json.dumps({"user_did": u, "device_id": d, "device_mls_did": f"{u}#{d}", "signature_public_key": f"{i:02x}{j:02x}",
                                                       "key_packages_available": 1}) + "\n" for i, u in enumerate(users) for j, d in enumerate(("a", "b"))))
    imported = tool("device-revoker", "registry", "import", "--db", "r.sqlite", "--devices", "d.jsonl", cwd=house)
    assert imported.returncode == 0, imported.stderr
    for user in users:
        revoked = tool("device-revoker", "registry", "revoke", "--db", "r.sqlite", "--user", user, "--force", "--reason", "lost",
                       "--signer-key-file", "signer.nsec", "--ops", f"ops-{user[-5:]}.jsonl", cwd=house)
        assert revoked.returncode == 0, revoked.stderr
    with sqlite3.connect(house / "r.sqlite") as db:
        selectors = {row[0]: row[1] for row in db.execute("SELECT user_did, selector FROM revocations")}
    assert selectors["did:plc:plain"] == "user did:plc:plain"
    assert key not in selectors[users[0]] and "not recorded" in selectors[users[0]], selectors
