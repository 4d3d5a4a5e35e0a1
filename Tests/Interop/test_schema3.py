"""Schema 3 (issue 45, docs/vault-format.md §9) against the independent Python reference: the
vault key support holds opens the household's structure and never a child's key or the wrap
key; the parent key reveals them byte for byte; children may have no key.
"""
import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
from vaultref import (Household, hkdf, nip19_decode, nip19_encode, open_envelope, open_field, seal_envelope, seal_field)
from workspace import BIN, FIXTURES

PARENT_NSEC = (FIXTURES / "keys" / "parent.nsec").read_text().strip()
PARENT = Household(nip19_decode(PARENT_NSEC, "nsec"))
SECRETS_KEY = hkdf(PARENT.secret, b"mytube:secrets:v1", PARENT.pubkey.encode())


def tool(name, *arguments, cwd):
    return subprocess.run([str(BIN / name), *arguments], capture_output=True, text=True, errors="replace", cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def support_key(folder, allow="revoke,merge", vault="v3.vault"):
    """Support's own key, made as an agent makes it, and the parent's grant of `allow` to it in
    the household log beside `vault` (docs/vault-format.md §10)."""
    made = tool("vault-tool", "keygen", "-o", "agent.nsec", cwd=folder)
    assert made.returncode == 0, made.stderr
    npub = next(word for word in made.stderr.split() if word.startswith("npub1"))
    granted = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", npub, "--allow", allow, "--until", "2099-01-01",
                   "--label", "support", vault, cwd=folder)
    assert granted.returncode == 0, granted.stderr
    return npub


@pytest.fixture
def household(tmp_path):
    """A folder with the parent key, its vault key alone, and the testkit's v2 household."""
    (tmp_path / "parent.nsec").write_text(PARENT_NSEC + "\n")
    (tmp_path / "support.vaultkey").write_text(PARENT.vault_key.hex() + "\n")
    for name in ("parent.nsec", "support.vaultkey"):
        (tmp_path / name).chmod(0o600)
    (tmp_path / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    return tmp_path


def v2_secrets():
    """The v2 household's secrets as the reference opens them: the wrap key and each child's key."""
    document = open_envelope((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes(), PARENT.vault_key)
    wrap = open_field(PARENT.vault_key, document["parentWrapKeyEncrypted"], b"mytube:v2:wrap-key")
    children = {child["profileId"]: open_field(PARENT.vault_key, child["nsecEncrypted"], b"mytube:v2:child-nsec:" + child["profileId"].encode())
                for child in document["childProfiles"]}
    return wrap, children


def encodings(secret: bytes):
    """Every way a 32-byte secret could show in text."""
    return [secret.hex(), secret.hex().upper(), nip19_encode("nsec", secret), base64.b64encode(secret).decode(),
            base64.urlsafe_b64encode(secret).decode().rstrip("=")]


def test_the_vault_key_opens_the_structure_and_no_secret(household):
    upgraded = tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=household)
    assert upgraded.returncode == 0, upgraded.stderr
    data = (household / "v3.vault").read_bytes()
    assert data[9] == 3
    # The reference opens the envelope with the vault key: the whole structure is there.
    document = open_envelope(data, PARENT.vault_key)
    assert document["version"] == 3 and document["childProfiles"] and document["devices"]
    plaintext = json.dumps(document)
    wrap, children = v2_secrets()
    for secret in [wrap, *children.values()]:
        assert not any(form in plaintext for form in encodings(secret))
    # No sealed field opens under the vault key, with either binding; each opens under the
    # secrets key with v3's, to the very bytes v2 held.
    fields = [(document["parentWrapKeyEncrypted"], b"wrap-key", wrap)] + [
        (child["nsecEncrypted"], b"child-nsec:" + child["profileId"].encode(), children[child["profileId"]]) for child in document["childProfiles"]]
    for blob, place, expected in fields:
        for key, prefix in [(PARENT.vault_key, b"mytube:v3:"), (PARENT.vault_key, b"mytube:v2:"), (PARENT.vault_key, b"")]:
            with pytest.raises(Exception):
                open_field(key, blob, prefix + place if prefix else b"")
        assert open_field(SECRETS_KEY, blob, b"mytube:v3:" + place) == expected


def test_the_parent_key_reveals_every_secret_byte_for_byte_and_the_vault_key_is_refused(household):
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=household).returncode == 0
    revealed = tool("vault-tool", "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "r.json", "v3.vault", cwd=household)
    assert revealed.returncode == 0, revealed.stderr
    document = json.loads((household / "r.json").read_text())
    wrap, children = v2_secrets()
    assert bytes.fromhex(document["parentWrapKey"]) == wrap
    assert {child["profileId"]: nip19_decode(child["nsec"], "nsec") for child in document["childProfiles"]} == children
    refused = tool("vault-tool", "open", "--vault-key-file", "support.vaultkey", "--reveal-secrets", "-o", "s.json", "v3.vault", cwd=household)
    assert refused.returncode == 64 and "parent key" in refused.stderr and "--key-file" in refused.stderr
    assert not (household / "s.json").exists()


def test_support_works_a_whole_call_with_the_vault_key_and_never_sees_a_secret(household):
    """inspect, check, revoke by name, diff, merge: every output, and every file written; each
    change signed by support's own key under the parent's grant."""
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=household).returncode == 0
    support_key(household)
    document = open_envelope((household / "v3.vault").read_bytes(), PARENT.vault_key)
    device = next(d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"])
    said = ""
    for argv in [
        ["vault-tool", "inspect", "--vault-key-file", "support.vaultkey", "v3.vault"],
        ["vault-tool", "inspect", "--json", "--vault-key-file", "support.vaultkey", "v3.vault"],
        ["vault-tool", "check", "--vault-key-file", "support.vaultkey", "v3.vault"],
        ["vault-tool", "open", "--vault-key-file", "support.vaultkey", "-o", "sealed.json", "v3.vault"],
        ["device-revoker", "vault", "--vault-key-file", "support.vaultkey", "--signer-key-file", "agent.nsec", "--vault", "v3.vault",
         "--device", device["deviceName"], "--reason", "lost", "-o", "revoked.vault"],
        ["vault-tool", "diff", "--vault-key-file", "support.vaultkey", "v3.vault", "revoked.vault"],
        ["vault-tool", "merge", "--vault-key-file", "support.vaultkey", "--signer-key-file", "agent.nsec", "--base", "v3.vault",
         "--ours", "revoked.vault", "--theirs", "v3.vault", "-o", "merged.vault"],
        ["vault-tool", "log", "verify", "merged.vault"],
        ["vault-tool", "log", "show", "merged.vault"],
    ]:
        result = tool(*argv, cwd=household)
        assert result.returncode == 0, (argv, result.stderr)
        said += result.stdout + result.stderr
    assert "not checked" in said or "skipped child-key" in said
    written = "".join(open_envelope((household / name).read_bytes(), PARENT.vault_key).__repr__() for name in ("revoked.vault", "merged.vault"))
    written += (household / "sealed.json").read_text()
    wrap, children = v2_secrets()
    for secret in [wrap, *children.values()]:
        assert not any(form in said or form in written for form in encodings(secret))
    # What support wrote carries every sealed field byte for byte, and the parent still reads it.
    revoked = open_envelope((household / "revoked.vault").read_bytes(), PARENT.vault_key)
    assert revoked["parentWrapKeyEncrypted"] == document["parentWrapKeyEncrypted"]
    assert [c["nsecEncrypted"] for c in revoked["childProfiles"]] == [c["nsecEncrypted"] for c in document["childProfiles"]]
    assert next(d for d in revoked["devices"] if d["deviceId"] == device["deviceId"])["status"] == "revoked"
    check = tool("vault-tool", "check", "--key-file", "parent.nsec", "merged.vault", cwd=household)
    assert check.returncode == 0, check.stdout + check.stderr


def reference_v3_vault(keyless_child: bool):
    """A version 3 vault the reference writes from the v2 household, one child without a key."""
    document = open_envelope((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes(), PARENT.vault_key)
    wrap, children = v2_secrets()
    document["version"] = 3
    document["parentWrapKeyEncrypted"] = seal_field(SECRETS_KEY, wrap, ad=b"mytube:v3:wrap-key")
    for index, child in enumerate(document["childProfiles"]):
        if keyless_child and index == 0:
            del child["nsecEncrypted"], child["npub"]
        else:
            child["nsecEncrypted"] = seal_field(SECRETS_KEY, children[child["profileId"]], ad=b"mytube:v3:child-nsec:" + child["profileId"].encode())
    return document, seal_envelope(json.dumps(document, indent=2).encode(), PARENT.household_id, PARENT.vault_key, schema=3)


def test_a_vault_the_reference_writes_is_read_checked_and_keyless_children_are_kept_or_dropped_only_when_allowed(household):
    document, data = reference_v3_vault(keyless_child=True)
    (household / "ref3.vault").write_bytes(data)
    keyless = document["childProfiles"][0]["profileId"]
    check = tool("vault-tool", "check", "--key-file", "parent.nsec", "ref3.vault", cwd=household)
    assert check.returncode == 0, check.stdout + check.stderr
    inspected = tool("vault-tool", "inspect", "--json", "--vault-key-file", "support.vaultkey", "ref3.vault", cwd=household)
    assert inspected.returncode == 0, inspected.stderr
    shown = {c["profileId"]: c["npub"] for c in json.loads(inspected.stdout)["document"]["children"]}
    assert shown[keyless] is None and all(npub for profile, npub in shown.items() if profile != keyless)
    # Support revokes around the keyless child with the vault key and its own granted key; the
    # parent's check holds. The reference's vault has no log: the parent starts one.
    started = tool("vault-tool", "log", "start", "--key-file", "parent.nsec", "ref3.vault", cwd=household)
    assert started.returncode == 0, started.stderr
    support_key(household, vault="ref3.vault")
    device = next(d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"])
    revoked = tool("device-revoker", "vault", "--vault-key-file", "support.vaultkey", "--signer-key-file", "agent.nsec", "--vault", "ref3.vault",
                   "--device", device["deviceId"], "--reason", "lost", "-o", "ref3-revoked.vault", cwd=household)
    assert revoked.returncode == 0, revoked.stderr
    after = open_envelope((household / "ref3-revoked.vault").read_bytes(), PARENT.vault_key)
    assert "nsecEncrypted" not in after["childProfiles"][0] and "npub" not in after["childProfiles"][0]
    assert [c.get("nsecEncrypted") for c in after["childProfiles"]] == [c.get("nsecEncrypted") for c in document["childProfiles"]]
    assert tool("vault-tool", "check", "--key-file", "parent.nsec", "ref3-revoked.vault", cwd=household).returncode == 0
    refused = tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "2", "-o", "down.vault", "ref3.vault", cwd=household)
    assert refused.returncode == 4 and keyless in refused.stderr and not (household / "down.vault").exists()
    allowed = tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "2", "--allow-lossy", "-o", "down.vault", "ref3.vault", cwd=household)
    assert allowed.returncode == 0, allowed.stderr
    down = open_envelope((household / "down.vault").read_bytes(), PARENT.vault_key)
    assert down["version"] == 2 and keyless not in [c["profileId"] for c in down["childProfiles"]]
    assert all(g.get("childProfileId") != keyless for g in down["groupMemberships"])


@pytest.mark.parametrize("argv", [
    ["vault-tool", "migrate", "vault", "--vault-key-file", "support.vaultkey", "--to", "3", "-o", "x.vault", "v2.vault"],
    ["vault-tool", "migrate", "--vault-key-file", "support.vaultkey", "--to", "3", "--in-place", "v2.vault"],
    ["vault-tool", "migrate", "bucket", "--source", "s3://fleet/vaults/", "--vault-key-dir", ".", "--to", "3", "--in-place"],
    ["vault-tool", "migrate", "--source", "s3://fleet/vaults/", "--vault-key-dir", ".", "--to", "3", "--out", "s3://fleet/v3/"],
])
def test_a_migration_to_3_without_the_parent_key_is_refused_before_anything_is_read(household, argv):
    before = (household / "v2.vault").read_bytes()
    result = tool(*argv, cwd=household)
    assert result.returncode == 64, result.stderr
    assert "parent key" in result.stderr
    assert (household / "v2.vault").read_bytes() == before and not (household / "x.vault").exists()


def test_a_batch_to_3_is_refused_before_any_folder_or_journal_since_it_writes_no_logs(household):
    (household / "m.jsonl").write_text(json.dumps({"vault": "v2.vault", "keyFile": "parent.nsec"}) + "\n")
    before = sorted(os.listdir(household))
    result = tool("vault-tool", "migrate", "--manifest", "m.jsonl", "--to", "3", "--out-dir", "out", cwd=household)
    assert result.returncode == 4, result.stderr
    assert "household log" in result.stderr and "vault-tool migrate vault --key-file" in result.stderr
    assert sorted(os.listdir(household)) == before


def test_a_batch_to_3_with_a_vault_key_line_is_refused_before_any_folder_or_journal(household):
    (household / "other.vault").write_bytes((household / "v2.vault").read_bytes())
    (household / "m.jsonl").write_text(json.dumps({"vault": "v2.vault", "keyFile": "parent.nsec"}) + "\n"
                                       + json.dumps({"vault": "other.vault", "vaultKeyFile": "support.vaultkey"}) + "\n")
    before = sorted(os.listdir(household))
    result = tool("vault-tool", "migrate", "--manifest", "m.jsonl", "--to", "3", "--out-dir", "out", cwd=household)
    assert result.returncode == 64, result.stderr
    assert "manifest line 2" in result.stderr and "parent key" in result.stderr
    assert sorted(os.listdir(household)) == before


@pytest.mark.parametrize("forgery", ["own device in every group", "child's key swapped", "member added to a group", "device renamed with a control character",
                                     "child dropped", "active device dropped", "group added", "group given to another child",
                                     "device renamed as another", "forgery in base"])
def test_a_merge_by_the_vault_key_brings_in_nothing_only_the_parent_makes(household, forgery):
    """A hostile trial: support, granted `merge`, sealed a copy itself with the vault key
    (its own device in every group, its key as a child's) and merged it in: exit 0, the log
    said "merged another copy in (0 conflicts)" and verified. A vault-key merge may bring in
    nothing only the parent key makes; the parent's own merge of the same copy still works
    where the result is sound."""
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=household).returncode == 0
    support_key(household)
    vault = (household / "v3.vault").read_bytes()
    document = open_envelope(vault, PARENT.vault_key)
    agent = Household(nip19_decode((household / "agent.nsec").read_text().strip(), "nsec"))
    theirs = json.loads(json.dumps(document))
    if forgery == "own device in every group":
        theirs["devices"].append(dict(theirs["devices"][0], deviceId="11111111-2222-4333-8444-555555555555", deviceName="Support's",
                                      isPrimary=False, subkeyPublicKey=agent.pubkey))
        for group in theirs["groupMemberships"]:
            group["memberPubkeys"].append(agent.pubkey)
    elif forgery == "child's key swapped":
        child = next(c for c in theirs["childProfiles"] if c.get("npub"))
        child["npub"] = nip19_encode("npub", bytes.fromhex(agent.pubkey))
    elif forgery == "member added to a group":
        theirs["groupMemberships"][0]["memberPubkeys"].append(agent.pubkey)
    elif forgery == "device renamed with a control character":
        theirs["devices"][0]["deviceName"] = "Kitchen\x1b[2J iPad"
    elif forgery == "child dropped":
        theirs["childProfiles"].pop()
    elif forgery == "active device dropped":
        gone = next(d for d in theirs["devices"] if d["status"] == "active" and not d["isPrimary"])
        theirs["devices"].remove(gone)
    elif forgery == "group added":
        theirs["groupMemberships"].append(dict(theirs["groupMemberships"][0], mlsGroupId="grp-support-" + agent.pubkey[:8]))
    elif forgery == "group given to another child":
        group = next(g for g in theirs["groupMemberships"] if g.get("childProfileId"))
        group["childProfileId"] = next(c["profileId"] for c in theirs["childProfiles"] if c["profileId"] != group["childProfileId"])
    elif forgery == "device renamed as another":
        actives = [d for d in theirs["devices"] if d["status"] == "active"]
        actives[1]["deviceName"] = actives[0]["deviceName"].upper()
    else:
        # The forged device in base, ours and theirs as they are: the merge takes base's.
        pass
    (household / "theirs.vault").write_bytes(seal_envelope(json.dumps(theirs).encode(), PARENT.household_id, PARENT.vault_key, schema=3))
    if forgery == "forgery in base":
        forged = json.loads(json.dumps(document))
        forged["devices"].append(dict(forged["devices"][0], deviceId="11111111-2222-4333-8444-555555555555", deviceName="Support's",
                                      isPrimary=False, subkeyPublicKey=agent.pubkey))
        (household / "theirs.vault").write_bytes(seal_envelope(json.dumps(forged).encode(), PARENT.household_id, PARENT.vault_key, schema=3))
        (household / "base.vault").write_bytes(seal_envelope(json.dumps(forged).encode(), PARENT.household_id, PARENT.vault_key, schema=3))
    before = sorted(p.name for p in household.iterdir())
    base = "base.vault" if forgery == "forgery in base" else "v3.vault"
    merged = tool("vault-tool", "merge", "--vault-key-file", "support.vaultkey", "--signer-key-file", "agent.nsec", "--base", base,
                  "--ours", "v3.vault", "--theirs", "theirs.vault", "-o", "merged.vault", cwd=household)
    if forgery == "forgery in base":
        # Base and theirs forged alike, ours without: the merge reads ours as having dropped
        # the device, and nothing forged comes in.
        assert merged.returncode == 0, merged.stderr
        result = open_envelope((household / "merged.vault").read_bytes(), PARENT.vault_key)
        assert agent.pubkey not in json.dumps(result)
        return
    assert merged.returncode in (4, 64) and any(said in merged.stderr for said in ("needs the parent key", "holds a control", "would then name")), merged.stderr
    assert merged.returncode != 0 and sorted(p.name for p in household.iterdir()) == before


def test_a_device_named_like_a_key_is_still_revoked_renamed_and_promoted(household):
    """A hostile trial: a device named with an nsec (a thief's stolen iPad may be) could not be
    revoked, renamed or promoted, by the parent either (exit 64: the event's sentence held a
    key), while the dry run said it would be. The event records what stands for the name."""
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=household).returncode == 0
    rogue = Household(os.urandom(32))
    assert tool("vault-tool", "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "doc.json", "v3.vault", cwd=household).returncode == 0
    document = json.loads((household / "doc.json").read_text())
    victim = next(d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"])
    victim["deviceName"] = rogue.nsec
    (household / "doc2.json").write_text(json.dumps(document))
    (household / "doc.json").unlink()
    assert tool("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "v3.vault", "doc2.json", cwd=household).returncode == 0
    (household / "doc2.json").unlink()
    for argv in [["vault-tool", "device", "promote", "--key-file", "parent.nsec", "--in-place", "v3.vault", victim["deviceId"]],
                 ["vault-tool", "device", "rename", "--key-file", "parent.nsec", "--in-place", "v3.vault", victim["deviceId"], "Stolen iPad"]]:
        result = tool(*argv, cwd=household)
        assert result.returncode == 0, (argv, result.stderr)
        assert rogue.nsec not in result.stdout + result.stderr
    # Named so again, then revoked.
    assert tool("vault-tool", "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "doc.json", "v3.vault", cwd=household).returncode == 0
    document = json.loads((household / "doc.json").read_text())
    next(d for d in document["devices"] if d["deviceId"] == victim["deviceId"])["deviceName"] = rogue.nsec
    other = next(d for d in document["devices"] if d["deviceId"] != victim["deviceId"] and d["status"] == "active")
    for d in document["devices"]:
        d["isPrimary"] = d["deviceId"] == other["deviceId"]
    (household / "doc2.json").write_text(json.dumps(document))
    assert tool("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "v3.vault", "doc2.json", cwd=household).returncode == 0
    revoked = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v3.vault", "--device", victim["deviceId"], "-o", "r.vault",
                   "--ops", "r.ops", cwd=household)
    assert revoked.returncode == 0, revoked.stderr
    assert rogue.nsec not in revoked.stdout + revoked.stderr + (household / "r.log").read_text()
    assert tool("vault-tool", "log", "verify", "r.vault", cwd=household).returncode == 0


def test_a_migration_to_3_in_place_says_its_backup_still_opens_to_the_vault_key(household):
    """A hostile trial: `migrate --to 3 --in-place` left the schema 2 vault as its backup, from
    which the vault key alone opens every child's key, without a word."""
    result = tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", "v2.vault", cwd=household)
    assert result.returncode == 0, result.stderr
    assert (household / "v2.vault.bak").exists() and "opens every child's key" in result.stderr and "rm 'v2.vault.bak'" in result.stderr


def test_a_schema_2_copy_put_back_beside_the_log_is_tampering_to_every_reader_and_writer(household):
    """A hostile trial: a schema 2 copy put in place of the schema 3 vault, its log beside, was
    revoked from with no signer and no event (exit 0), and `log verify` said "migrate it first"
    (exit 4). Both now say the vault was put back over the one the log records (exit 3)."""
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", "--no-backup", "v2.vault", cwd=household).returncode == 0
    (household / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    assert (household / "v2.log").exists()
    verify = tool("vault-tool", "log", "verify", "v2.vault", cwd=household)
    assert verify.returncode == 3 and "put back" in verify.stderr, verify.stderr
    shown = tool("vault-tool", "log", "verify", "--json", "v2.vault", cwd=household)
    assert shown.returncode == 3 and json.loads(shown.stdout)["ok"] is False, shown.stdout
    document = open_envelope((household / "v2.vault").read_bytes(), PARENT.vault_key)
    device = next(d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"])
    before = sorted(p.name for p in household.iterdir())
    # Readers too, and a log damaged after its first event is still a log.
    with open(household / "v2.log", "a") as log:
        log.write("x")
    for argv in [["device-revoker", "vault", "--vault-key-file", "support.vaultkey", "--vault", "v2.vault", "--device", device["deviceId"], "-o", "r.vault", "--ops", "r.ops"],
                 ["vault-tool", "device", "rename", "--key-file", "parent.nsec", "-o", "r.vault", "v2.vault", device["deviceId"], "Renamed"],
                 ["vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "r.vault", "v2.vault"],
                 ["vault-tool", "inspect", "--vault-key-file", "support.vaultkey", "v2.vault"],
                 ["vault-tool", "check", "--vault-key-file", "support.vaultkey", "v2.vault"],
                 ["vault-tool", "diff", "--vault-key-file", "support.vaultkey", "v2.vault", "v2.vault"],
                 ["rotation-planner", "plan", "--vault", "v2.vault", "--key-file", "parent.nsec", "--new-key-file", "parent.nsec", "-o", "plan.json"]]:
        result = tool(*argv, cwd=household)
        assert result.returncode == 3 and "put back" in result.stderr, (argv, result.stderr)
    assert sorted(p.name for p in household.iterdir()) == before


def test_a_schema_2_copy_put_back_beside_the_log_is_refused_whatever_log_is_named(household):
    """A hostile trial: with `--log` naming another file (absent, or elsewhere), the log beside
    the schema 2 copy put back was not looked at: `device-revoker vault` revoked from it with
    the vault key alone, unsigned (exit 0), and `migrate --to 3 --in-place` left the household's
    log beside a vault it no longer names. The log beside is asked whatever `--log` says."""
    assert tool("vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", "--no-backup", "v2.vault", cwd=household).returncode == 0
    (household / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    document = open_envelope((household / "v2.vault").read_bytes(), PARENT.vault_key)
    device = next(d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"])
    (household / "elsewhere").mkdir()
    before = sorted(p.name for p in household.rglob("*"))
    for named in ("none.log", "elsewhere/v2.log"):
        for argv in [["device-revoker", "vault", "--vault-key-file", "support.vaultkey", "--vault", "v2.vault", "--device", device["deviceId"], "-o", "r.vault",
                      "--ops", "r.ops", "--log", named],
                     ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v2.vault", "--device", device["deviceId"], "-o", "r.vault",
                      "--ops", "r.ops", "--log", named, "--dry-run"],
                     ["vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", "--log", named, "v2.vault"],
                     ["vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", "--log", named, "--dry-run", "v2.vault"],
                     ["vault-tool", "device", "limit", "--key-file", "parent.nsec", "--log", named, "-o", "r.vault", "v2.vault", "9"]]:
            result = tool(*argv, cwd=household)
            assert result.returncode == 3 and "put back" in result.stderr, (argv, result.returncode, result.stderr)
    assert sorted(p.name for p in household.rglob("*")) == before


@pytest.mark.parametrize("content", ["", "\n", "# my notes\n", '{"kind": 1}\n', "plain text\r\n"])
def test_a_schema_2_vault_beside_a_file_that_is_no_household_log_is_read(household, content):
    """A tired operator's trial: an empty file at the log's name beside a schema 2 vault was
    taken for a household log and the vault refused as put back (exit 3). Only a household
    log (its first line an event of kind 4801) says so."""
    (household / "v2.log").write_text(content)
    result = tool("vault-tool", "inspect", "--key-file", "parent.nsec", "v2.vault", cwd=household)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("label", ["", " ", "\u200b", "\u0301", "\x1b[2J", "a\nb", "\ue000", "Sup\\u{202e}",
                                   "Support Co) revoke, merge, device until 2099-01-01T00:00:00Z" + " " * 90 + "("])
def test_a_grant_labelled_as_nobody_is_refused(household, label):
    """A review: `log grant --label ""` (or a zero-width space) was recorded, and `log show`
    named the grant's holder as "()". The rule of the registry's operator: exit 64, nothing
    written, the log as it was."""
    folder = household
    assert tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "v3.vault", "v2.vault", cwd=folder).returncode == 0
    made = tool("vault-tool", "keygen", "-o", "agent.nsec", cwd=folder)
    npub = next(word for word in made.stderr.split() if word.startswith("npub1"))
    before = (folder / "v3.log").read_bytes()
    refused = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", npub, "--allow", "revoke", "--until", "2099-01-01", "--label", label,
                   "v3.vault", cwd=folder)
    assert refused.returncode == 64 and "--label" in refused.stderr, (refused.returncode, refused.stderr)
    assert (folder / "v3.log").read_bytes() == before
