"""Interop: vault-tool against the independent Python reference (vaultref.py), on random keys.

Run by scripts/test after `swift build`; VAULT_TOOL names the binary. Both directions are
checked: what vault-tool seals, Python opens; what Python seals, vault-tool opens.
"""
import json
import os
import secrets
import subprocess

import pytest

import vaultref
from vaultref import Household, nip19_encode
from workspace import VAULT_TOOL

ROUNDS = int(os.environ.get("INTEROP_ROUNDS", "12"))


def run(*args, stdin=None, expect=0):
    result = subprocess.run([VAULT_TOOL, *args], input=stdin, capture_output=True)
    assert result.returncode == expect, result.stderr.decode()
    return result.stdout


def random_household(tmp_path, as_hex=False):
    secret = secrets.token_bytes(32)
    household = Household(secret)
    key_file = tmp_path / f"{household.pubkey[:8]}.key"
    key_file.write_text((secret.hex().upper() if as_hex else household.nsec) + "\n")
    key_file.chmod(0o600)
    return household, key_file


def random_document(household):
    device_ids = [f"{secrets.token_hex(4)}-ipad" for _ in range(secrets.randbelow(5) + 1)]
    children = []
    for index in range(secrets.randbelow(4)):
        child_secret = secrets.token_bytes(32)
        child = {"profileId": f"child-{index}", "name": f"Kid {index} ñ", "theme": "ocean"}
        if secrets.randbelow(2):
            child["avatarData"] = vaultref.base64.b64encode(secrets.token_bytes(secrets.randbelow(40))).decode()
        child.update({"mlsGroupIds": [], "nsec": nip19_encode("nsec", child_secret),
                      "npub": nip19_encode("npub", bytes.fromhex(vaultref.xonly_pubkey(child_secret)))})
        children.append(child)
    return {
        "version": 1, "parentPubkey": household.pubkey, "parentWrapKey": secrets.token_hex(32),
        "childProfiles": children,
        "devices": [{"deviceId": d, "deviceName": f"iPad {d}", "isPrimary": i == 0,
                     "subkeyPublicKey": household.subkey_pubkey(d), "addedAt": "2025-11-01T09:00:00Z",
                     "lastSeenAt": "2025-11-19T10:00:00.5Z", "status": "active" if i < 3 else "revoked"}
                    for i, d in enumerate(device_ids)],
        "groupMemberships": [{"mlsGroupId": "g1", "groupName": "Friends",
                              "memberPubkeys": [household.subkey_pubkey(device_ids[0])], "createdAt": "2025-11-02T00:00:00Z"}],
        "createdAt": "2025-11-01T09:00:00Z", "updatedAt": "2025-11-19T10:00:00Z",
    }


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_derivations_agree(tmp_path, round_):
    household, key_file = random_household(tmp_path, as_hex=round_ % 2 == 1)
    device_ids = [secrets.token_hex(8), "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "tablet é"]
    args = ["derive", "--key-file", str(key_file), "--show-vault-key", "--json"]
    for device_id in device_ids:
        args += ["--device-id", device_id]
    derived = json.loads(run(*args))
    assert derived["npub"] == household.npub
    assert derived["pubkey"] == household.pubkey
    assert derived["householdId"] == household.household_id.hex()
    assert derived["vaultPath"] == household.vault_path
    assert derived["vaultKey"] == household.vault_key.hex()
    assert derived["devices"] == [{"deviceId": d, "subkeyPublicKey": household.subkey_pubkey(d)} for d in device_ids]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_vault_tool_seals_python_opens(tmp_path, round_):
    household, key_file = random_household(tmp_path)
    document = random_document(household)
    (tmp_path / "doc.json").write_text(json.dumps(document))
    run("seal", "--key-file", str(key_file), "-o", str(tmp_path / "v.vault"), str(tmp_path / "doc.json"))
    data = (tmp_path / "v.vault").read_bytes()
    assert data[:10] == b"MTVAULT\x01\x01\x01" and data[10:42] == household.household_id
    sealed = vaultref.open_envelope(data, household.vault_key)
    assert "parentWrapKey" not in sealed and all("nsec" not in c for c in sealed["childProfiles"])
    assert vaultref.reveal_document(household.vault_key, sealed) == document


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_python_seals_vault_tool_opens(tmp_path, round_):
    household, key_file = random_household(tmp_path)
    document = random_document(household)
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(household, document))
    revealed = json.loads(run("open", "--key-file", str(key_file), "--reveal-secrets", str(tmp_path / "v.vault")))
    assert revealed == document
    vault_key_file = tmp_path / "vk"
    vault_key_file.write_text(household.vault_key.hex())
    vault_key_file.chmod(0o600)
    # The vault key opens the document, its secrets sealed (revealing needs the parent key):
    # the reference reveals what the tool wrote out to the same document.
    sealed = json.loads(run("open", "--vault-key-file", str(vault_key_file), str(tmp_path / "v.vault")))
    assert vaultref.reveal_document(household.vault_key, sealed) == document
    assert run("check", "--key-file", str(key_file), str(tmp_path / "v.vault")).endswith(b"ok: every rule holds\n")


def test_a_python_vault_under_another_key_is_refused(tmp_path):
    household, _ = random_household(tmp_path)
    _, other_key = random_household(tmp_path)
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(household, random_document(household)))
    run("open", "--key-file", str(other_key), str(tmp_path / "v.vault"), expect=3)


def merge_base(household, rng):
    """A v2 household: five active devices (the first primary), one revoked, groups of some of
    the active subkeys and a stranger's key."""
    ids = [f"{rng.getrandbits(32):08x}-device-{i}" for i in range(6)]
    keys = [household.subkey_pubkey(d) for d in ids]
    stranger = vaultref.xonly_pubkey(secrets.token_bytes(32))
    return {
        "version": 2, "revision": rng.randint(1, 20), "parentPubkey": household.pubkey, "parentWrapKey": secrets.token_hex(32),
        "childProfiles": [],
        "devices": [{"deviceId": d, "deviceName": f"iPad {i}", "isPrimary": i == 0, "subkeyPublicKey": keys[i],
                     "addedAt": "2025-11-01T09:00:00Z", "lastSeenAt": "2025-11-19T10:00:00Z", "status": "active" if i < 5 else "revoked",
                     **({"revokedAt": "2025-11-19T10:00:00Z"} if i == 5 else {})} for i, d in enumerate(ids)],
        "groupMemberships": [{"mlsGroupId": f"g{g}", "groupName": f"Group {g}",
                              "memberPubkeys": [k for k in keys[:5] if rng.random() < 0.5] + [stranger], "createdAt": "2025-11-02T00:00:00Z"}
                             for g in range(rng.randint(1, 6))],
        "createdAt": "2025-11-01T09:00:00Z", "updatedAt": "2025-11-19T10:00:00Z", "keyHistory": [],
    }


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("addition", ["existing-group", "renamed-and-added", "new-group", "long-revoked"])
def test_a_merge_never_brings_a_revoked_device_back_into_a_group(tmp_path, seed, addition):
    """Issue 37: one copy revokes a device (out of every group), the other adds its subkey to a
    group (an existing one, with a rename, or a new one; or re-adds a device revoked long ago).
    In both orders the merge leaves it out and reports it, `check` passes, and the result,
    decrypted by the reference, is the revoking copy plus the other's intended changes only."""
    import copy
    import random
    rng = random.Random(seed)
    household, key_file = random_household(tmp_path)
    base = merge_base(household, rng)
    target = base["devices"][5] if addition == "long-revoked" else base["devices"][rng.randint(1, 4)]
    key = target["subkeyPublicKey"]

    revoking = copy.deepcopy(base)
    revoking["revision"] += 1
    revoking["updatedAt"] = "2025-11-20T08:00:00Z"
    if addition != "long-revoked":
        device = next(d for d in revoking["devices"] if d["deviceId"] == target["deviceId"])
        device.update(status="revoked", revokedAt="2025-11-20T08:00:00Z", revocationReason="stolen")
        for group in revoking["groupMemberships"]:
            group["memberPubkeys"] = [k for k in group["memberPubkeys"] if k != key]
    adding = copy.deepcopy(base)
    adding["revision"] += rng.randint(1, 3)
    adding["updatedAt"] = "2025-11-20T09:00:00Z"
    expected = copy.deepcopy(revoking)
    if addition == "new-group":
        adding["groupMemberships"].append({"mlsGroupId": "g-new", "groupName": "New", "memberPubkeys": [key], "createdAt": "2025-11-20T09:00:00Z"})
        expected["groupMemberships"].append({"mlsGroupId": "g-new", "groupName": "New", "memberPubkeys": [], "createdAt": "2025-11-20T09:00:00Z"})
        added_to = ["g-new"]
    else:
        outside = [g for g in adding["groupMemberships"] if key not in g["memberPubkeys"]]
        added_to = [g["mlsGroupId"] for g in outside]
        for group in outside:
            group["memberPubkeys"].append(key)
        if addition == "renamed-and-added":
            # Renamed by the adding copy only: a revoked device keeps the name it was revoked
            # under (a rename would free that name for a new device the same revocation, run
            # again, would revoke), said as a conflict below.
            next(d for d in adding["devices"] if d["deviceId"] == target["deviceId"])["deviceName"] = "Maya's old iPad"
    expected["revision"] = max(revoking["revision"], adding["revision"]) + 1
    expected["updatedAt"] = "2025-11-20T09:00:00Z"

    for label, doc in [("base", base), ("revoking", revoking), ("adding", adding)]:
        (tmp_path / f"{label}.vault").write_bytes(vaultref.seal_document(household, doc))
    for ours, theirs in [("revoking", "adding"), ("adding", "revoking")]:
        out = tmp_path / f"merged-{ours}.vault"
        report = json.loads(run("merge", "--key-file", str(key_file), "--base", str(tmp_path / "base.vault"), "--ours", str(tmp_path / f"{ours}.vault"),
                                "--theirs", str(tmp_path / f"{theirs}.vault"), "-o", str(out), "--json"))
        merged = vaultref.reveal_document(household.vault_key, vaultref.open_envelope(out.read_bytes(), household.vault_key))
        assert merged == expected, (ours, addition)
        left_out = [c for c in report["conflicts"] if c["rule"].startswith("a revoked device is in no group")]
        assert sorted(c["record"] for c in left_out) == sorted(f"group '{g}'" for g in added_to), report
        assert all(c["taken"] == ("ours" if ours == "revoking" else "theirs") for c in left_out), report
        kept_name = [c for c in report["conflicts"] if c["rule"] == "a revoked device keeps the name it was revoked under"]
        assert [c["taken"] for c in kept_name] == ([("ours" if ours == "revoking" else "theirs")] if addition == "renamed-and-added" else []), report
        assert run("check", "--key-file", str(key_file), str(out)).endswith(b"ok: every rule holds\n")


def test_check_fails_a_vault_whose_revoked_device_is_still_in_a_group(tmp_path):
    import random
    household, key_file = random_household(tmp_path)
    doc = merge_base(household, random.Random(37))
    revoked = doc["devices"][5]
    doc["groupMemberships"][0]["memberPubkeys"].append(revoked["subkeyPublicKey"])
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(household, doc))
    result = subprocess.run([VAULT_TOOL, "check", "--key-file", str(key_file), str(tmp_path / "v.vault")], capture_output=True, text=True)
    assert result.returncode == 3, result.stderr
    assert (f"group 'g0': revoked-member: memberPubkeys holds the subkey of device '{revoked['deviceId']}' (iPad 5), which is revoked\n"
            in result.stdout), result.stdout
    assert result.stdout.endswith("1 finding\n")
