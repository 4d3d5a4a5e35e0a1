"""The rolling integrity check of a fleet in a bucket: `vault-tool check --source s3://… --subset`.

Against the SeaweedFS server scripts/test starts, with boto3 and the independent vault reference
(vaultref.py) making the fleet and the damage: over N nights (`--subset auto/N` with `--now`) every
object is read once and only once; damaged, truncated, foreign and misnamed objects are found and
named; households without a key are `no-key`; a night with damage exits 1; the slices follow the
documented rule (household id ranges for `<id>.vault`, SHA-256 of the key for anything else).
"""
import datetime
import hashlib
import json
import subprocess

import pytest

import s3fleet
from s3fleet import Fleet, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")
NIGHTS = 3
FIRST_NIGHT = datetime.datetime(2026, 11, 23, 2, 0, tzinfo=datetime.timezone.utc)


def check(arguments, cwd):
    result = subprocess.run([VAULT_TOOL, "check", *arguments], env=tool_environment(), cwd=cwd, capture_output=True, timeout=600)
    return result.returncode, report_lines(result.stdout), result.stderr.decode()


def expected_slice(key, count, prefix="vaults/"):
    """The documented rule, computed here: slice k of N starts after PREFIX + the 16 hex digits
    of ceil((k-1) * 2^64 / N) and runs through the next slice's start, in byte order, so a vault
    named after its household falls in its household's range and any other key where it sorts."""
    starts = [prefix + format(-(-k * 2**64 // count), "016x") for k in range(1, count)]
    return 1 + sum(1 for start in starts if start.encode() < key.encode())


@pytest.fixture
def damaged_fleet(s3, tmp_path):
    """60 households (5 without a key here) and, beside them, one object of each kind of damage."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 60, tmp_path / "keys", without_keys=5)
    with_keys = [h for h in fleet.households if h.vault_path not in fleet.keyless]
    body = lambda h: s3.get_object(Bucket=bucket, Key=h.vault_path)["Body"].read()
    flipped = bytearray(body(with_keys[0]))
    flipped[len(flipped) // 2] ^= 0x01
    s3.put_object(Bucket=bucket, Key=with_keys[0].vault_path, Body=bytes(flipped))
    s3.put_object(Bucket=bucket, Key=with_keys[1].vault_path, Body=body(with_keys[1])[:120])
    s3.put_object(Bucket=bucket, Key="vaults/README.txt", Body=b"the vaults of the family app\n")
    s3.put_object(Bucket=bucket, Key="vaults/empty.vault", Body=b"")
    # A household's vault stored under another household's name.
    misnamed = "vaults/" + hashlib.sha256(b"nobody").hexdigest() + ".vault"
    s3.put_object(Bucket=bucket, Key=misnamed, Body=body(with_keys[2]))
    expected = {h.vault_path: "ok" for h in with_keys}
    expected.update({h.vault_path: "no-key" for h in fleet.households if h.vault_path in fleet.keyless})
    expected.update({with_keys[0].vault_path: "damaged", with_keys[1].vault_path: "truncated", "vaults/README.txt": "foreign",
                     "vaults/empty.vault": "foreign", misnamed: "damaged"})
    return bucket, tmp_path, expected, misnamed


def test_over_n_nights_every_object_is_checked_once_and_the_damage_is_named(damaged_fleet):
    bucket, folder, expected, misnamed = damaged_fleet
    seen = {}
    for night in range(NIGHTS):
        now = FIRST_NIGHT + datetime.timedelta(days=night)
        code, lines, stderr = check(["--source", f"s3://{bucket}/vaults/", "--subset", f"auto/{NIGHTS}", "--vault-key-dir", "keys",
                                     "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ")], cwd=folder)
        index = int(now.timestamp()) // 86_400 % NIGHTS + 1
        for line in lines:
            key = line["object"].removeprefix(f"s3://{bucket}/")
            assert key not in seen, f"{key} checked on two nights"
            seen[key] = line
            assert expected_slice(key, NIGHTS) == index, key
            assert line["subset"] == f"{index}/{NIGHTS}" and line["subsetFrom"] == f"auto/{NIGHTS} on {now:%Y-%m-%d}"
        damage = [line for line in lines if line["status"] in ("damaged", "truncated")]
        assert code == (1 if damage else 0), stderr
        assert f"checked {len(lines)} objects of slice auto/{NIGHTS} on {now:%Y-%m-%d}" in stderr
        vaults = sum(1 for line in lines if line["status"] != "foreign")
        if vaults:
            assert "census of the slice: format 1, suite 1, schema 1: " in stderr
    assert {key: line["status"] for key, line in seen.items()} == expected
    assert "does not start with MTVAULT" in seen["vaults/README.txt"]["reason"]
    assert seen["vaults/empty.vault"]["reason"] == "empty"
    assert "named for household" in seen[misnamed]["reason"]
    truncated = next(line for line in seen.values() if line["status"] == "truncated")
    assert truncated["size"] == 120 and "less than the smallest vault" in truncated["reason"]
    for line in seen.values():
        if line["status"] in ("ok", "no-key"):
            assert line["schemaVersion"] == 1 and line["householdId"] in line["object"] and "reason" not in line
        if line["status"] != "gone":
            assert line["size"] > 0 or line["status"] == "foreign"


def test_the_slices_of_one_count_cover_the_fleet_whatever_the_night(damaged_fleet):
    bucket, folder, expected, _ = damaged_fleet
    covered = []
    for index in range(1, 5):
        # Each slice lists only its own keys, so the four together are one listing.
        code, lines, stderr = check(["--source", f"s3://{bucket}/vaults/", "--subset", f"{index}/4", "--vault-key-dir", "keys"], cwd=folder)
        assert code == (1 if any(line["status"] in ("damaged", "truncated") for line in lines) else 0), stderr
        keys = [line["object"].removeprefix(f"s3://{bucket}/") for line in lines]
        assert all(expected_slice(key, 4) == index for key in keys), keys
        covered += keys
    assert sorted(covered) == sorted(expected)
    code, lines, _ = check(["--source", f"s3://{bucket}/vaults/", "--vault-key-dir", "keys"], cwd=folder)
    assert code == 1 and sorted(line["object"].removeprefix(f"s3://{bucket}/") for line in lines) == sorted(expected)


def test_a_manifest_names_the_objects_and_their_keys(damaged_fleet):
    bucket, folder, expected, _ = damaged_fleet
    sound = sorted(key for key, status in expected.items() if status == "ok")[:6]
    (folder / "objects.jsonl").write_text("".join(
        json.dumps({"vault": f"s3://{bucket}/{key}", "vaultKeyFile": f"keys/{key[len('vaults/'):-len('.vault')]}.vaultkey"}) + "\n"
        for key in sound))
    code, lines, stderr = check(["--manifest", "objects.jsonl"], cwd=folder)
    assert code == 0, stderr
    assert sorted(line["object"] for line in lines) == [f"s3://{bucket}/{key}" for key in sound]
    assert {line["status"] for line in lines} == {"ok"}


@pytest.mark.parametrize("arguments, message", [
    (["--source", "s3://family-vaults/vaults/", "--subset", "0/3"], "1 ≤ I ≤ N"),
    (["--source", "s3://family-vaults/vaults/", "--subset", "4/3"], "1 ≤ I ≤ N"),
    (["--source", "s3://family-vaults/vaults/", "--subset", "auto"], "auto/N"),
    (["--source", "s3://family-vaults/vaults/", "--subset", "auto/0"], "auto/N"),
    (["--subset", "1/3", "--key-file", "k.nsec", "v.vault"], "--subset and --key-file belong to different modes of 'check'"),
    (["--source", "s3://family-vaults/vaults/", "--json"], "--json is for one vault"),
    (["--source", "s3://family-vaults/vaults/", "v.vault"], "VAULT 'v.vault' is for one vault ('vault-tool check vault')"),
    (["--source", "s3://family-vaults/vaults/", "--manifest", "m.jsonl"], "not both"),
])
def test_a_mistyped_fleet_check_is_a_usage_error_that_says_what(arguments, message, tmp_path):
    code, lines, stderr = check(arguments, cwd=tmp_path)
    assert lines == []
    assert message in stderr, stderr
    assert code == 64, (code, stderr)


def test_what_a_nightly_check_cannot_read_fails_it_and_a_large_object_is_named_unread(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 6, tmp_path / "keys")
    # An object past the largest vault: named from its first bytes, never read whole.
    s3.put_object(Bucket=bucket, Key="vaults/backup.tar", Body=b"\0" * (17 << 20))
    big_vault = b"MTVAULT" + b"\1\1\1" + b"\0" * (17 << 20)
    s3.put_object(Bucket=bucket, Key="vaults/huge.vault", Body=big_vault)
    code, lines, stderr = check(["--source", f"s3://{bucket}/vaults/", "--vault-key-dir", "keys"], cwd=tmp_path)
    by_key = {line["object"].rsplit("/", 1)[-1]: line for line in lines}
    assert by_key["backup.tar"]["status"] == "foreign" and "larger than any vault" in by_key["backup.tar"]["reason"]
    assert by_key["huge.vault"]["status"] == "damaged" and by_key["huge.vault"]["size"] == len(big_vault)
    assert code == 1 and sum(1 for line in lines if line["status"] == "ok") == 6, stderr
    # A key file the check cannot read is the operator's to mend: the run fails, naming it.
    unreadable = tmp_path / "keys" / f"{fleet.households[0].household_id.hex()}.vaultkey"
    unreadable.write_bytes(b"not a vault key\n")
    s3.delete_object(Bucket=bucket, Key="vaults/huge.vault")
    code, lines, stderr = check(["--source", f"s3://{bucket}/vaults/", "--vault-key-dir", "keys"], cwd=tmp_path)
    statuses = {line["object"].rsplit("/", 1)[-1]: line["status"] for line in lines}
    assert statuses[fleet.households[0].vault_path.rsplit("/", 1)[-1]] == "key-unreadable"
    assert code == 1 and "whose key file cannot be read" in stderr, stderr
    # A mistyped key folder would make every vault no-key: refused before anything is listed.
    code, lines, stderr = check(["--source", f"s3://{bucket}/vaults/", "--vault-key-dir", "kyes"], cwd=tmp_path)
    assert code == 64 and lines == [] and "the vault-key folder 'kyes' does not exist" in stderr, stderr
