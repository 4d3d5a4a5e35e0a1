"""Generates the vault testkit (Tests/Fixtures) and the example household (Examples/).

Run once through scripts/make-testkit; the output is committed and tests never regenerate it.
Every vault is sealed by the independent Python reference (vaultref.py), so the Swift reader is
tested against a writer it shares no code with. Keys are derived from fixed labels: they are
test keys, published here, and must never hold real data.
"""
import base64
import hashlib
import json
import os
import sys

import vaultref
from vaultref import Household, nip19_encode, seal_envelope, seal_field, sealed_document

ROOT = sys.argv[1]
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")
TESTKIT = os.path.join(FIXTURES, "testkit")
KEYS = os.path.join(FIXTURES, "keys")
EXAMPLES = os.path.join(ROOT, "Examples")


def test_secret(label: str) -> bytes:
    return hashlib.sha256(("household-vault-tools test key: " + label).encode()).digest()


def write(path: str, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)


def child(label: str, profile_id: str, name: str, theme: str, groups, avatar: bytes = None) -> dict:
    secret = test_secret("child " + label)
    out = {"profileId": profile_id, "name": name, "theme": theme}
    if avatar is not None:
        out["avatarData"] = base64.b64encode(avatar).decode()
    out["mlsGroupIds"] = groups
    out["nsec"] = nip19_encode("nsec", secret)
    out["npub"] = nip19_encode("npub", bytes.fromhex(vaultref.xonly_pubkey(secret)))
    return out


def device(h: Household, device_id, name, primary, added, seen, status="active") -> dict:
    return {"deviceId": device_id, "deviceName": name, "isPrimary": primary,
            "subkeyPublicKey": h.subkey_pubkey(device_id), "addedAt": added, "lastSeenAt": seen, "status": status}


def other_member(label: str) -> str:
    return vaultref.xonly_pubkey(test_secret("other household member " + label))


def household_document(h: Household) -> dict:
    """A household with a bit of everything: unicode, an avatar, a revoked device, a shared group."""
    kitchen, bedroom, old = "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F", "0A9B8C7D-6E5F-4A3B-2C1D-0E9F8A7B6C5D"
    return {
        "version": 1,
        "parentPubkey": h.pubkey,
        "parentWrapKey": hashlib.sha256(b"wrap key of " + h.pubkey.encode()).hexdigest(),
        "childProfiles": [
            child("maya", "C1A2B3C4-D5E6-4F70-8192-A3B4C5D6E7F8", "Maya", "ocean", ["grp-maya-friends"], avatar=b"\x89PNG\r\n\x1a\n avatar"),
            child("leo", "D2B3C4D5-E6F7-4081-92A3-B4C5D6E7F809", "León 🦁", "forest", ["grp-cousins"]),
        ],
        "devices": [
            device(h, kitchen, "Kitchen iPad", True, "2025-09-01T08:00:00Z", "2025-11-19T10:00:00Z"),
            device(h, bedroom, "Bedroom iPad", False, "2025-09-14T19:30:00Z", "2025-11-18T21:15:30.25Z"),
            device(h, old, "Old iPad", False, "2025-09-02T12:00:00Z", "2025-10-01T07:45:00Z", "revoked"),
        ],
        "groupMemberships": [
            {"mlsGroupId": "grp-maya-friends", "groupName": "Maya & Friends",
             "memberPubkeys": [h.subkey_pubkey(kitchen), h.subkey_pubkey(bedroom), other_member("ana"), other_member("sam")],
             "childProfileId": "C1A2B3C4-D5E6-4F70-8192-A3B4C5D6E7F8", "createdAt": "2025-09-20T16:00:00Z"},
            {"mlsGroupId": "grp-cousins", "groupName": "Cousins",
             "memberPubkeys": [h.subkey_pubkey(kitchen), other_member("tia rosa")],
             "childProfileId": "D2B3C4D5-E6F7-4081-92A3-B4C5D6E7F809", "createdAt": "2025-10-02T09:10:00Z"},
        ],
        "createdAt": "2025-09-01T08:00:00Z",
        "updatedAt": "2025-11-19T10:00:00Z",
    }


def v2_document(h: Household) -> dict:
    """The household in schema v2, using every v2 field a live vault may have."""
    doc = household_document(h)
    out = {"version": 2, "revision": 7}
    for key, value in doc.items():
        if key != "version":
            out[key] = value
    out["devices"][2]["revokedAt"] = "2025-10-02T08:00:00Z"
    out["devices"][2]["revocationReason"] = "lost on a train"
    out["keyHistory"] = [{"parentPubkey": other_member("old parent key"), "retiredAt": "2025-08-31T12:00:00Z", "reason": "routine"}]
    out["deviceLimit"] = 5
    return out


def v3_document(h: Household) -> dict:
    """The v2 household in schema v3, with a third child that has no key of its own (seed 001)."""
    out = dict(v2_document(h), version=3)
    out["childProfiles"] = out["childProfiles"] + [
        {"profileId": "E3C4D5E6-F708-4192-A3B4-C5D6E7F8091A", "name": "Sofía", "theme": "space", "mlsGroupIds": []}]
    return out


def minimal_document(h: Household) -> dict:
    return {
        "version": 1, "parentPubkey": h.pubkey,
        "parentWrapKey": hashlib.sha256(b"minimal wrap key").hexdigest(),
        "childProfiles": [],
        "devices": [device(h, "first-ipad", "iPad", True, "2025-11-01T00:00:00Z", "2025-11-01T00:00:00Z")],
        "groupMemberships": [],
        "createdAt": "2025-11-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z",
    }


def plaintext(doc: dict) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def fixture(name: str, data: bytes, **expect):
    write(os.path.join(TESTKIT, name + ".vault"), data)
    lines = [f"{key.replace('_', '-')}: {value}" for key, value in expect.items()]
    write(os.path.join(TESTKIT, name + ".expect"), "\n".join(lines) + "\n")


def flip(data: bytes, offset: int, mask: int = 0x01) -> bytes:
    return data[:offset] + bytes([data[offset] ^ mask]) + data[offset + 1:]


def seeded_bytes():
    """Deterministic nonces for test data only: SHA-256 of a fixed label and a counter."""
    counter = [0]

    def next_bytes(count: int) -> bytes:
        out = b""
        while len(out) < count:
            counter[0] += 1
            out += hashlib.sha256(b"household-vault-tools testkit nonce %d" % counter[0]).digest()
        return out[:count]
    return next_bytes


def main():
    vaultref.random_bytes = seeded_bytes()
    parent, other = Household(test_secret("parent")), Household(test_secret("other household"))
    for name, h in (("parent", parent), ("other", other)):
        write(os.path.join(KEYS, name + ".nsec"), h.nsec + "\n", 0o600)
        write(os.path.join(KEYS, name + ".vaultkey"), h.vault_key.hex() + "\n", 0o600)
        write(os.path.join(KEYS, name + ".npub"), h.npub + "\n")

    household, minimal = household_document(parent), minimal_document(parent)
    sealed_household = sealed_document(parent, household)

    def envelope(doc: dict, h: Household = parent, **kw) -> bytes:
        kw.setdefault("schema", doc["version"])  # the header states the document's version
        return seal_envelope(plaintext(doc), h.household_id, h.vault_key, **kw)

    for name, doc in (("ok-household", household), ("ok-minimal", minimal)):
        write(os.path.join(TESTKIT, name + ".revealed.json"), plaintext(doc))
        fixture(name, envelope(sealed_document(parent, doc)), description="a valid vault",
                key="parent.nsec", open="ok", revealed=name + ".revealed.json", check="clean")

    base = envelope(sealed_document(parent, minimal))
    fixture("wrong-key", envelope(sealed_document(other, minimal_document(other)), other),
            description="another family's vault opened with this family's key", key="parent.nsec", open="keyMismatch")
    fixture("wrong-vault-key", base, description="opened with another family's vault key",
            key="other.vaultkey", open="authenticationFailed")
    fixture("tampered-header-nonce", flip(base, 50), description="one bit of the nonce flipped",
            key="parent.nsec", open="authenticationFailed")
    fixture("tampered-household-id", flip(base, 20), description="one bit of the household id flipped",
            key="parent.vaultkey", open="authenticationFailed")
    fixture("tampered-ciphertext", flip(base, 100), description="one bit of the ciphertext flipped",
            key="parent.nsec", open="authenticationFailed")
    fixture("tampered-tag", flip(base, len(base) - 1), description="one bit of the tag flipped",
            key="parent.nsec", open="authenticationFailed")
    fixture("truncated-header", base[:40], description="cut inside the header", key="parent.nsec", open="malformedEnvelope")
    fixture("truncated-tag", base[:-1], description="the last byte of the tag missing", key="parent.nsec", open="authenticationFailed")
    fixture("bad-magic", b"MTVAULX" + base[7:], description="wrong magic", key="parent.nsec", open="malformedEnvelope")
    fixture("unknown-format", envelope(sealed_document(parent, minimal), format_byte=2),
            description="envelope format 2", key="parent.nsec", open="unsupportedVersion")
    fixture("unknown-suite", envelope(sealed_document(parent, minimal), suite=9),
            description="cipher suite 9", key="parent.nsec", open="unsupportedVersion")
    fixture("unknown-schema", envelope(sealed_document(parent, minimal), schema=7),
            description="schema version 7", key="parent.nsec", open="unsupportedVersion")

    mismatch = dict(sealed_document(parent, minimal), version=2)
    fixture("schema-header-mismatch", envelope(mismatch, schema=1), description="header says schema 1, document says 2",
            key="parent.nsec", open="corruptVault")
    foreign = dict(sealed_document(parent, minimal), parentPubkey=other.pubkey)
    fixture("household-mismatch", envelope(foreign),
            description="document's parentPubkey is another household's", key="parent.nsec", open="corruptVault")
    fixture("not-json", seal_envelope(b"this is not JSON", parent.household_id, parent.vault_key),
            description="a valid envelope around text that is not JSON", key="parent.nsec", open="malformedDocument")
    fixture("unknown-field", envelope(dict(sealed_document(parent, minimal), nickname="x")),
            description="a field the schema does not have", key="parent.nsec", open="malformedDocument")

    bad_child = json.loads(json.dumps(sealed_household))
    bad_child["childProfiles"][1]["nsecEncrypted"] = seal_field(other.vault_key, test_secret("child leo"))
    fixture("child-nsec-wrong-key", envelope(bad_child),
            description="a child's nsec sealed under another vault key: opens sealed, not revealed",
            key="parent.nsec", open="ok", reveal="authenticationFailed", check="child-key")

    broken = json.loads(json.dumps(sealed_household))
    broken["devices"][1]["isPrimary"] = True
    broken["devices"].append(dict(broken["devices"][0], deviceName="Kitchen iPad (copy)", isPrimary=False))
    broken["devices"][0]["subkeyPublicKey"] = other_member("not a subkey")
    broken["childProfiles"][0]["npub"] = nip19_encode("npub", bytes.fromhex(other_member("impostor")))
    broken["childProfiles"][0]["mlsGroupIds"].append("grp-missing")
    broken["groupMemberships"][1]["childProfileId"] = "no-such-child"
    broken["updatedAt"] = "2025-01-01T00:00:00Z"
    fixture("check-findings", envelope(broken), description="opens, but breaks check rules", key="parent.nsec", open="ok",
            check="primary-device,unique-device-id,device-subkey,child-key,group-child-reference,child-group-reference,timestamps")

    # Schema v2 (issue 4): every v2 field; a blob moved to another profile; a lossy downgrade.
    v2 = v2_document(parent)
    write(os.path.join(TESTKIT, "ok-v2-household.revealed.json"), plaintext(v2))
    fixture("ok-v2-household", envelope(sealed_document(parent, v2)), description="a valid schema v2 vault with every v2 field",
            key="parent.nsec", open="ok", revealed="ok-v2-household.revealed.json", check="clean", downgrade="refused")
    moved = sealed_document(parent, v2)
    moved["childProfiles"][1]["nsecEncrypted"] = moved["childProfiles"][0]["nsecEncrypted"]
    fixture("v2-child-blob-moved", envelope(moved),
            description="v2: Maya's sealed nsec copied over Leo's; the v2 binding must refuse it",
            key="parent.nsec", open="ok", reveal="authenticationFailed", check="child-key")
    minimal_v2 = dict(minimal_document(parent), version=2, revision=1, keyHistory=[])
    fixture("ok-v2-minimal", envelope(sealed_document(parent, minimal_v2)), description="a minimal schema v2 vault",
            key="parent.nsec", open="ok", check="clean", downgrade="ok")
    v1_blob_in_v2 = sealed_document(parent, minimal_v2)
    v1_blob_in_v2["parentWrapKeyEncrypted"] = seal_field(parent.vault_key, hashlib.sha256(b"minimal wrap key").digest())
    fixture("v2-unbound-wrap-key", envelope(v1_blob_in_v2),
            description="v2 document whose wrap key was sealed without v2's associated data",
            key="parent.nsec", open="ok", reveal="authenticationFailed", check="wrap-key")

    # Schema v3 (issue 45): the secrets under the secrets key; a child without a key of its own.
    # Appended after every earlier fixture, so the seeded nonces of those stay as committed.
    v3 = v3_document(parent)
    write(os.path.join(TESTKIT, "ok-v3-household.revealed.json"), plaintext(v3))
    fixture("ok-v3-household", envelope(sealed_document(parent, v3)),
            description="a valid schema v3 vault: secrets under the secrets key, one child without a key",
            key="parent.nsec", open="ok", revealed="ok-v3-household.revealed.json", check="clean", downgrade="refused")
    under_vault_key = sealed_document(parent, v3)
    under_vault_key["parentWrapKeyEncrypted"] = seal_field(parent.vault_key, bytes.fromhex(v3["parentWrapKey"]), ad=b"mytube:v3:wrap-key")
    fixture("v3-wrap-key-under-vault-key", envelope(under_vault_key),
            description="v3 document whose wrap key was sealed under the vault key: only the secrets key may seal it",
            key="parent.nsec", open="ok", reveal="authenticationFailed", check="wrap-key")
    half = sealed_document(parent, v3)
    half["childProfiles"][2]["npub"] = nip19_encode("npub", bytes.fromhex(other_member("half a child key")))
    fixture("v3-npub-without-key", envelope(half),
            description="v3: a child with an npub but no nsecEncrypted, one without the other",
            key="parent.nsec", open="malformedDocument")

    example = Household(test_secret("example household (Garcia family)"))
    write(os.path.join(EXAMPLES, "household.nsec"), example.nsec + "\n", 0o600)
    write(os.path.join(EXAMPLES, "household.json"), plaintext(household_document(example)))


if __name__ == "__main__":
    main()
