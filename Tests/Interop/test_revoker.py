"""device-revoker's vault mode re-checked by independent code (issue 6).

Households of up to 50 devices and 500 groups are generated and sealed by the Python reference;
device-revoker revokes with every selector form; the output is decrypted by the Python
reference and compared with the input: nothing may differ but the intended changes.
"""
import json
import secrets
import subprocess

import pytest

import vaultref
from vaultref import Household, nip19_encode
from workspace import DEVICE_REVOKER

NOW = "2026-11-22T10:00:00Z"


def household(h, devices, groups, version):
    ids = [f"dev-{i:02d}-{secrets.token_hex(2)}" for i in range(devices)]
    subkeys = {d: h.subkey_pubkey(d) for d in ids}
    strangers = [vaultref.xonly_pubkey(secrets.token_bytes(32)) for _ in range(20)]
    doc = {"version": version}
    if version == 2:
        doc["revision"] = 3
    doc.update({
        "parentPubkey": h.pubkey, "parentWrapKey": secrets.token_hex(32), "childProfiles": [],
        "devices": [{"deviceId": d, "deviceName": f"iPad {i}", "isPrimary": i == 0, "subkeyPublicKey": subkeys[d],
                     "addedAt": "2025-01-01T00:00:00Z", "lastSeenAt": f"2025-{1 + i % 12:02d}-15T00:00:00Z", "status": "active"}
                    for i, d in enumerate(ids)],
        "groupMemberships": [{"mlsGroupId": f"g{g}", "groupName": f"Group {g}",
                              "memberPubkeys": [subkeys[ids[(g + k) % devices]] for k in range(min(4, devices))] + [strangers[g % 20]],
                              "createdAt": "2025-02-01T00:00:00Z"} for g in range(groups)],
        "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z",
    })
    if version == 2:
        doc["keyHistory"] = []
    return doc, ids


def expected_after(doc, revoked, promote, reason):
    out = json.loads(json.dumps(doc))
    keys = {d["subkeyPublicKey"] for d in out["devices"] if d["deviceId"] in revoked}
    for device in out["devices"]:
        if device["deviceId"] in revoked:
            device["status"] = "revoked"
            device["isPrimary"] = False
            if doc["version"] == 2:
                device["revokedAt"] = NOW
                if reason:
                    device["revocationReason"] = reason
        if device["deviceId"] == promote:
            device["isPrimary"] = True
    for group in out["groupMemberships"]:
        group["memberPubkeys"] = [k for k in group["memberPubkeys"] if k not in keys]
    if doc["version"] == 2:
        out["revision"] = doc["revision"] + 1
    out["updatedAt"] = NOW
    return out


@pytest.mark.parametrize("selector", ["device", "devices-file", "not-seen-since", "all-except"])
@pytest.mark.parametrize("version", [1, 2])
def test_only_the_intended_changes(tmp_path, selector, version):
    h = Household(secrets.token_bytes(32))
    devices = 50 if selector != "device" else 12
    doc, ids = household(h, devices, 500 if version == 2 else 60, version)
    (tmp_path / "v.vault").write_bytes(vaultref.seal_document(h, doc))
    (tmp_path / "k.nsec").write_text(h.nsec)
    (tmp_path / "k.nsec").chmod(0o600)
    args = [DEVICE_REVOKER, "vault", "--key-file", str(tmp_path / "k.nsec"), "--vault", str(tmp_path / "v.vault"),
            "--now", NOW, "-o", str(tmp_path / "out.vault"), "--ops", str(tmp_path / "ops.jsonl")]
    promote = None
    if selector == "device":
        revoked = {ids[3], ids[5]}
        args += ["--device", ids[3], "--device", ids[5], "--reason", "lost"]
    elif selector == "devices-file":
        revoked = set(ids[10:30])
        (tmp_path / "list.txt").write_text("# lost batch\n" + "\n".join(sorted(revoked)) + "\n")
        args += ["--devices-file", str(tmp_path / "list.txt")]
    elif selector == "not-seen-since":
        revoked = {d["deviceId"] for d in doc["devices"] if d["lastSeenAt"] < "2025-04-01"}
        promote = ids[5]
        args += ["--not-seen-since", "2025-04-01", "--promote", promote]
    else:
        revoked = set(ids[1:])
        args += ["--all-except", ids[0]]
    result = subprocess.run(args, capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    reason = "lost" if selector == "device" else None
    opened = vaultref.reveal_document(h.vault_key, vaultref.open_envelope((tmp_path / "out.vault").read_bytes(), h.vault_key))
    assert opened == expected_after(doc, revoked, promote, reason)
    ops = [json.loads(line) for line in (tmp_path / "ops.jsonl").read_text().splitlines()]
    removed = {(g["mlsGroupId"], k) for g in doc["groupMemberships"] for k in g["memberPubkeys"]
               if k in {d["subkeyPublicKey"] for d in doc["devices"] if d["deviceId"] in revoked}}
    assert {(op["group"], op["member"]) for op in ops} == removed and all(op["op"] == "mls.remove" for op in ops)
