"""Rotation plans checked by independent code, and the plan time at the issue's scale.

The plan id is recomputed in Python as SHA-256 of RFC 8785 canonical JSON (for a plan's
integers and strings, json.dumps with sorted keys, no whitespace and ensure_ascii=False is
exactly JCS), and both BIP-340 signatures are verified with coincurve. A household of 50 devices
and 500 groups of 10 members is planned; the time is printed for docs/performance.md (goal: under 1 s).
"""
import hashlib
import json
import secrets
import subprocess
import time

from coincurve import PublicKeyXOnly

import vaultref
from vaultref import Household, nip19_encode
from workspace import ROTATION_PLANNER


def key_file(path, household):
    path.write_text(household.nsec + "\n")
    path.chmod(0o600)
    return str(path)


def big_household(household, devices=50, groups=500, members=10):
    ids = [f"{secrets.token_hex(4).upper()}-DEVICE-{i}" for i in range(devices)]
    subkeys = [household.subkey_pubkey(d) for d in ids]
    strangers = [vaultref.xonly_pubkey(secrets.token_bytes(32)) for _ in range(200)]
    child_secret = secrets.token_bytes(32)
    return {
        "version": 1, "parentPubkey": household.pubkey, "parentWrapKey": secrets.token_hex(32),
        "childProfiles": [{"profileId": "kid", "name": "Kid", "theme": "ocean", "mlsGroupIds": [],
                           "nsec": nip19_encode("nsec", child_secret),
                           "npub": nip19_encode("npub", bytes.fromhex(vaultref.xonly_pubkey(child_secret)))}],
        "devices": [{"deviceId": d, "deviceName": f"iPad {i}", "isPrimary": i == 0, "subkeyPublicKey": subkeys[i],
                     "addedAt": "2025-01-01T00:00:00Z", "lastSeenAt": "2025-11-01T00:00:00Z",
                     "status": "revoked" if i % 10 == 9 else "active"} for i, d in enumerate(ids)],
        "groupMemberships": [{"mlsGroupId": f"group-{g}", "groupName": f"Group {g}",
                              "memberPubkeys": [subkeys[(g + m) % devices] for m in range(members // 2)]
                              + [strangers[(g * 7 + m) % 200] for m in range(members - members // 2)],
                              "createdAt": "2025-02-01T00:00:00Z"} for g in range(groups)],
        "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z",
    }


def test_plan_is_signed_over_canonical_json_and_scales(tmp_path):
    old, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(old, big_household(old)))
    args = [ROTATION_PLANNER, "plan", "--vault", str(tmp_path / "v.vault"), "--key-file", key_file(tmp_path / "old.nsec", old),
            "--new-key-file", key_file(tmp_path / "new.nsec", new), "--mode", "compromise", "-o", str(tmp_path / "plan.json")]
    start = time.monotonic()
    result = subprocess.run(args, capture_output=True)
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stderr.decode()
    print(f"\nplan for 50 devices and 500 groups: {elapsed:.3f} s")

    plan = json.loads((tmp_path / "plan.json").read_text())
    body = {k: v for k, v in plan.items() if k not in ("planId", "signatures")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    plan_id = hashlib.sha256(canonical).digest()
    assert plan["planId"] == plan_id.hex()
    assert PublicKeyXOnly(bytes.fromhex(old.pubkey)).verify(bytes.fromhex(plan["signatures"]["old"]), plan_id)
    assert PublicKeyXOnly(bytes.fromhex(new.pubkey)).verify(bytes.fromhex(plan["signatures"]["new"]), plan_id)
    assert plan["household"]["new"]["vaultPath"] == new.vault_path and plan["household"]["old"]["householdId"] == old.household_id.hex()
    assert plan["source"] == {"schemaVersion": 1, "migratedInMemory": True, "revision": 0,
                              "sha256": hashlib.sha256((tmp_path / "v.vault").read_bytes()).hexdigest()}
    devices = {d["deviceId"]: d for d in plan["devices"]}
    assert len(devices) == 50 and sum(d["action"] == "relink" for d in devices.values()) == 45
    assert all(d["newSubkeyPublicKey"] == new.subkey_pubkey(i) for i, d in devices.items())
    assert len(plan["groups"]) == 500 and all(len(g["add"]) == 45 and len(g["remove"]) == 5 for g in plan["groups"])
    assert plan["children"][0]["action"] == "replace" and plan["wrapKey"]["action"] == "replace"
    assert [s["id"] for s in plan["steps"]][-2:] == ["notify-families", "new-family-shares"]
    assert not any(x in (tmp_path / "plan.json").read_text() for x in (old.nsec, new.nsec, old.secret.hex(), old.vault_key.hex()))


def test_a_plan_keeps_no_name_that_reads_as_a_key(tmp_path):
    """A plan holds no secret and is shown to whoever approves it: a device, child or group
    name in the vault that holds a key (a thief's name for a stolen iPad, a vault sealed by
    another program), in any spelling, stays out of it (a hostile trial found the parent key,
    spelled nsec_1…, in a 0644 plan and in `show`)."""
    old, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    document = big_household(old, devices=4, groups=2, members=2)
    rest = old.nsec[len("nsec1"):]
    document["devices"][0]["deviceName"] = f"Bed nsec_1{rest}"
    document["devices"][1]["deviceName"] = f"iPad {old.nsec.upper()}"
    document["childProfiles"][0]["name"] = f"Leo nsec1.{rest}"
    document["groupMemberships"][0]["groupName"] = f"grp-{old.nsec}"
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(old, document))
    plan_path = tmp_path / "plan.json"
    made = subprocess.run([ROTATION_PLANNER, "plan", "--vault", str(tmp_path / "v.vault"), "--key-file", key_file(tmp_path / "old.nsec", old),
                           "--new-key-file", key_file(tmp_path / "new.nsec", new), "--mode", "compromise", "-o", str(plan_path)], capture_output=True)
    assert made.returncode == 0, made.stderr.decode()
    shown = subprocess.run([ROTATION_PLANNER, "show", str(plan_path)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    for text in (plan_path.read_text(), shown.stdout + shown.stderr, made.stdout.decode() + made.stderr.decode()):
        assert rest[:20] not in text.lower(), text
    # two devices, their two relink steps, the child and the group
    assert plan_path.read_text().count("a name not recorded") == 6


def test_operations_name_every_group_and_device_as_the_vault_does(tmp_path):
    """Operations are for the app to apply, not a report: a group or device id that reads as a
    key (a vault written by another program) was written as a withheld placeholder, an
    operation on nothing, with exit 0 (a trial). Every id goes as the vault holds it."""
    old, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    document = big_household(old, devices=3, groups=2, members=2)
    odd_group = "NSEC1/" + old.nsec[len("nsec1"):].upper()
    document["groupMemberships"][1]["mlsGroupId"] = odd_group
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(old, document))
    keys = ["--key-file", key_file(tmp_path / "old.nsec", old), "--new-key-file", key_file(tmp_path / "new.nsec", new)]
    made = subprocess.run([ROTATION_PLANNER, "plan", "--vault", str(tmp_path / "v.vault"), *keys, "--mode", "routine",
                           "-o", str(tmp_path / "plan.json")], capture_output=True)
    assert made.returncode == 0, made.stderr.decode()
    applied = subprocess.run([ROTATION_PLANNER, "apply", str(tmp_path / "plan.json"), "--vault", str(tmp_path / "v.vault"), *keys,
                              "--out-dir", str(tmp_path / "out"), "--ops", str(tmp_path / "ops.jsonl")], capture_output=True)
    assert applied.returncode == 0, applied.stderr.decode()
    operations = [json.loads(line) for line in (tmp_path / "ops.jsonl").read_text().splitlines()]
    groups = {op["group"] for op in operations if "group" in op}
    assert groups == {g["mlsGroupId"] for g in document["groupMemberships"]}, groups
    assert "not shown" not in (tmp_path / "ops.jsonl").read_text()


import os  # noqa: E402
import pytest  # noqa: E402


@pytest.mark.parametrize("ops_there", [True, False], ids=["ops-replaced", "ops-new"])
@pytest.mark.parametrize("standard_output", ["full", "closed pipe"])
def test_an_applys_report_lost_on_standard_output_publishes_nothing(tmp_path, standard_output, ops_there):
    """A trial: `apply --json` with a full standard output wrote both vaults and replaced the
    `--ops` file (exit 1), and the report it lost could never be made again (the rerun says the
    plan was applied). The report is staged with the vaults and published first: a failure
    there leaves nothing written, and the same command run again applies the plan."""
    old, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(old, big_household(old, devices=3, groups=2, members=2)))
    keys = ["--key-file", key_file(tmp_path / "old.nsec", old), "--new-key-file", key_file(tmp_path / "new.nsec", new)]
    made = subprocess.run([ROTATION_PLANNER, "plan", "--vault", str(tmp_path / "v.vault"), *keys, "--mode", "routine", "-o", str(tmp_path / "plan.json")],
                          capture_output=True)
    assert made.returncode == 0, made.stderr.decode()
    if ops_there:
        (tmp_path / "ops.jsonl").write_text("old\n")
    (tmp_path / "out").mkdir()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    command = [ROTATION_PLANNER, "apply", str(tmp_path / "plan.json"), "--vault", str(tmp_path / "v.vault"), *keys, "--out-dir", str(tmp_path / "out"),
               "--ops", str(tmp_path / "ops.jsonl"), "--json"]
    if standard_output == "full":
        with open("/dev/full", "wb") as full:
            lost = subprocess.run(command, stdout=full, stderr=subprocess.PIPE)
    else:
        reading, writing = os.pipe()
        os.close(reading)
        lost = subprocess.run(command, stdout=writing, stderr=subprocess.PIPE)
        os.close(writing)
    assert lost.returncode == 1 and b"standard output" in lost.stderr, (lost.returncode, lost.stderr)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    again = subprocess.run(command, capture_output=True)
    assert again.returncode == 0, again.stderr.decode()
    report = json.loads(again.stdout)
    assert report["alreadyApplied"] is False and report["operations"] == len((tmp_path / "ops.jsonl").read_text().splitlines())


@pytest.mark.parametrize("whose", ["the new key", "the old key", "the old vault key", "the old secrets key"])
def test_a_plans_reason_keeps_no_key(tmp_path, whose):
    """A trial: `plan --reason "leak nsec1…"` wrote the new key into the plan (exit 0), and 14
    hex digits of the old keys too. A plan's reason is a record: refused (exit 64), no plan."""
    old, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(old, big_household(old, devices=3, groups=2, members=2)))
    keys = ["--key-file", key_file(tmp_path / "old.nsec", old), "--new-key-file", key_file(tmp_path / "new.nsec", new)]
    reason = {"the new key": f"leak {new.nsec}", "the old key": f"leak {old.secret.hex()[10:24]}",
              "the old vault key": f"vk {old.vault_key.hex()[:14]}", "the old secrets key": f"sk {old.secrets_key.hex()[30:46].upper()}"}[whose]
    made = subprocess.run([ROTATION_PLANNER, "plan", "--vault", str(tmp_path / "v.vault"), *keys, "--mode", "routine", "--reason", reason,
                           "-o", str(tmp_path / "plan.json")], capture_output=True)
    assert made.returncode == 64 and b"holds a key" in made.stderr, (made.returncode, made.stderr)
    assert not (tmp_path / "plan.json").exists()
