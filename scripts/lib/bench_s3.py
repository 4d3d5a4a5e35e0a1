"""Inputs and peers of scripts/bench-s3 (issue 15), with boto3 against the throwaway server.

  bench_s3.py fleet WORK BUCKET COUNT      seal COUNT v1 vaults (one household each) into
                                           WORK/fleet/, their keys into WORK/keys/
  bench_s3.py upload WORK BUCKET           (re)write every vault of WORK/fleet/ to the bucket as
                                           vaults/<household id>.vault, 32 at a time (untimed)
  bench_s3.py census-fill BUCKET COUNT     COUNT header-and-tag objects under vaults/ (untimed)
  bench_s3.py loop WORK BUCKET TOOL        the peer of the fleet migration: for each object,
                                           download, `vault-tool migrate` in its own process,
                                           upload with If-Match, as an operator would script it
  bench_s3.py census-peer BUCKET           the peer of the census: list, and read each object's
                                           first 66 bytes with a ranged GET, one after another
  bench_s3.py list-fill BUCKET COUNT       COUNT small objects named vaults/<64 hex>.log: keys to
                                           list, none of them a vault (untimed)
  bench_s3.py check-peer WORK BUCKET I N   the peer of the rolling check: list slice I of N (the
                                           shards' runs of keys, with StartAfter), read each
                                           object and decrypt it with its key (PyNaCl), 16 at a
                                           time, as an operator would script it with boto3

The endpoint and credentials come from the AWS_* variables scripts/bench-s3 sets.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from botocore.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import vaultref  # noqa: E402
from vaultref import Household  # noqa: E402


def client():
    return boto3.client("s3", config=Config(s3={"addressing_style": "path"}, max_pool_connections=64,
                                            retries={"max_attempts": 8, "mode": "standard"}))


def household_document(h):
    return {
        "version": 1, "parentPubkey": h.pubkey,
        "parentWrapKey": hashlib.sha256(b"wrap " + h.pubkey.encode()).hexdigest(),
        "childProfiles": [],
        "devices": [{"deviceId": d, "deviceName": f"iPad {d}", "isPrimary": d == "kitchen", "subkeyPublicKey": h.subkey_pubkey(d),
                     "addedAt": "2025-11-01T00:00:00Z", "lastSeenAt": "2025-11-01T00:00:00Z", "status": "active"}
                    for d in ("kitchen", "bedroom")],
        "groupMemberships": [],
        "createdAt": "2025-11-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z",
    }


def fleet(work, bucket, count):
    folder, keys = work / "fleet", work / "keys"
    folder.mkdir(parents=True, exist_ok=True)
    keys.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        h = Household(hashlib.sha256(f"bench fleet {index}".encode()).digest())
        (folder / f"{h.household_id.hex()}.vault").write_bytes(vaultref.seal_document(h, household_document(h)))
        key = keys / f"{h.household_id.hex()}.vaultkey"
        key.write_text(h.vault_key.hex() + "\n")
        key.chmod(0o600)
    client().create_bucket(Bucket=bucket)


def upload(work, bucket):
    s3 = client()
    files = sorted((work / "fleet").iterdir())
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda path: s3.put_object(Bucket=bucket, Key=f"vaults/{path.name}", Body=path.read_bytes()), files))


def census_fill(bucket, count):
    s3 = client()
    s3.create_bucket(Bucket=bucket)
    body = os.urandom(200)

    def put(index):
        household = hashlib.sha256(f"census {index}".encode()).digest()
        schema = 2 if index % 3 == 0 else 1
        s3.put_object(Bucket=bucket, Key=f"vaults/{household.hex()}.vault", Body=b"MTVAULT" + bytes([1, 1, schema]) + household + body)

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(put, range(count)))


def loop(work, bucket, tool):
    s3 = client()
    keys = work / "keys"
    with tempfile.TemporaryDirectory() as scratch:
        source, target = Path(scratch) / "in.vault", Path(scratch) / "out.vault"
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="vaults/"):
            for entry in page.get("Contents", []):
                got = s3.get_object(Bucket=bucket, Key=entry["Key"])
                source.write_bytes(got["Body"].read())
                household = entry["Key"].rsplit("/", 1)[1][:-len(".vault")]
                subprocess.run([tool, "migrate", "--vault-key-file", str(keys / f"{household}.vaultkey"), "--to", "2", "-o", str(target),
                                str(source)], check=True, capture_output=True)
                s3.put_object(Bucket=bucket, Key=entry["Key"], Body=target.read_bytes(), IfMatch=got["ETag"])
                target.unlink()


def census_peer(bucket):
    s3 = client()
    counts = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="vaults/"):
        for entry in page.get("Contents", []):
            header = s3.get_object(Bucket=bucket, Key=entry["Key"], Range="bytes=0-65")["Body"].read()
            kind = tuple(header[7:10]) if header.startswith(b"MTVAULT") else None
            counts[kind] = counts.get(kind, 0) + 1
    print(counts)


def list_fill(bucket, count):
    s3 = client()
    s3.create_bucket(Bucket=bucket)
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda index: s3.put_object(Bucket=bucket, Key=f"vaults/{hashlib.sha256(f'list {index}'.encode()).hexdigest()}.log",
                                                  Body=b"x"), range(count)))


def check_peer(work, bucket, index, count):
    s3 = client()
    keys = work / "keys"

    def start(position):  # the first 16 hex digits of slice position's lowest household id
        return f"vaults/{-(-position * 2**64 // count):016x}"

    after = start(index - 1) if index > 1 else None
    through = start(index) if index < count else None
    names = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="vaults/", **({"StartAfter": after} if after else {})):
        names += [entry["Key"] for entry in page.get("Contents", []) if through is None or entry["Key"] <= through]
        if through is not None and page.get("Contents") and page["Contents"][-1]["Key"] > through:
            break

    def check(key):
        data = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        household = key.rsplit("/", 1)[1][:-len(".vault")]
        vaultref.open_envelope(data, bytes.fromhex((keys / f"{household}.vaultkey").read_text().strip()))
        return True

    with ThreadPoolExecutor(16) as pool:
        print(sum(pool.map(check, names)), "ok")


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "fleet":
        fleet(Path(arguments[0]), arguments[1], int(arguments[2]))
    elif command == "upload":
        upload(Path(arguments[0]), arguments[1])
    elif command == "census-fill":
        census_fill(arguments[0], int(arguments[1]))
    elif command == "loop":
        loop(Path(arguments[0]), arguments[1], arguments[2])
    elif command == "census-peer":
        census_peer(arguments[0])
    elif command == "list-fill":
        list_fill(arguments[0], int(arguments[1]))
    elif command == "check-peer":
        check_peer(Path(arguments[0]), arguments[1], int(arguments[2]), int(arguments[3]))
    else:
        sys.exit(f"unknown command {command}")
