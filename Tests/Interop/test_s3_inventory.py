"""A fleet run from an S3 Inventory report: `vault-tool migrate --inventory s3://…/manifest.json`.

Against the SeaweedFS server scripts/test starts, the test writes an inventory in the published
layout (S3InventoryReport_CSV_20161130: a manifest.json naming the source bucket, the fileSchema
and gzip CSV files; every field quoted, keys URL-encoded, no header) with Python's gzip, csv and
urllib, as S3 would, and checks that two shards migrate every current vault it lists exactly
once, skipping old versions and delete markers, and that what is not in the layout is refused.
"""
import csv
import gzip
import hashlib
import io
import json
import subprocess
import urllib.parse

import pytest

import s3fleet
import vaultref
from s3fleet import Fleet, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")
SCHEMA = ["Bucket", "Key", "VersionId", "IsLatest", "IsDeleteMarker", "Size", "LastModifiedDate", "ETag"]


def csv_gz(rows, members=1):
    text = io.StringIO()
    csv.writer(text, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    data = text.getvalue().encode()
    # S3 writes one gzip member; `cat a.gz b.gz` makes two, which gzip readers take in turn.
    cut = len(data) // members
    parts = [data[:cut], data[cut:]] if members == 2 else [data]
    return b"".join(gzip.compress(part) for part in parts)


def publish(s3, inventory_bucket, source_bucket, files, file_format="CSV", schema=SCHEMA):
    """Writes the CSV files and their manifest.json where S3 puts them; returns its s3:// name."""
    base = f"inventory/{source_bucket}/vaults-daily/2026-11-25T00-00Z"
    entries = []
    for index, body in enumerate(files):
        key = f"inventory/{source_bucket}/vaults-daily/data/{index:04d}.csv.gz"
        s3.put_object(Bucket=inventory_bucket, Key=key, Body=body)
        entries.append({"key": key, "size": len(body), "MD5checksum": hashlib.md5(body).hexdigest()})
    manifest = {"sourceBucket": source_bucket, "destinationBucket": f"arn:aws:s3:::{inventory_bucket}", "version": "2016-11-30",
                "creationTimestamp": "1795564800000", "fileFormat": file_format, "fileSchema": ", ".join(schema), "files": entries}
    s3.put_object(Bucket=inventory_bucket, Key=f"{base}/manifest.json", Body=json.dumps(manifest).encode())
    return f"s3://{inventory_bucket}/{base}/manifest.json"


def row(bucket, key, latest=True, delete_marker=False, size=1000):
    return [bucket, urllib.parse.quote_plus(key, safe="/"), "v1", "true" if latest else "false",
            "true" if delete_marker else "false", str(size), "2026-11-24T10:00:00.000Z", "0123456789abcdef0123456789abcdef"]


def migrate(arguments, cwd):
    result = subprocess.run([VAULT_TOOL, "migrate", *arguments], env=tool_environment(), cwd=cwd, capture_output=True, timeout=600)
    return result.returncode, report_lines(result.stdout), result.stderr.decode()


def test_two_shards_migrate_every_current_vault_an_inventory_lists_exactly_once(tmp_path):
    s3 = s3fleet.client()
    source = s3fleet.new_bucket(s3)
    inventory = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, source, 60, tmp_path / "keys")
    # A vault under a name with a space (URL-encoded as + in the report), not its household's.
    copied = "vaults/family copy.vault"
    s3.put_object(Bucket=source, Key=copied, Body=s3.get_object(Bucket=source, Key=fleet.households[0].vault_path)["Body"].read())
    s3.put_object(Bucket=source, Key="vaults/notes.txt", Body=b"not a vault")
    current = [row(source, path) for path in fleet.by_path] + [row(source, copied), row(source, "vaults/notes.txt")]
    gone = "vaults/" + "ab" * 32 + ".vault"  # deleted: its delete marker and an old version are listed
    stale = [row(source, gone, latest=False), row(source, gone, delete_marker=True), row(source, fleet.households[1].vault_path, latest=False)]
    rows = current + stale
    manifest = publish(s3, inventory, source, [csv_gz(rows[:30], members=2), csv_gz(rows[30:])])

    seen = []
    for shard in ("1/2", "2/2"):
        code, lines, stderr = migrate(["--inventory", manifest, "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                                       "--shard", shard], cwd=tmp_path)
        assert code == 0, stderr
        assert {line["status"] for line in lines} <= {"migrated"}, lines
        seen += [line["vault"] for line in lines]
    expected = [f"s3://{source}/{path}" for path in fleet.by_path] + [f"s3://{source}/{copied}"]
    assert sorted(seen) == sorted(expected)
    for path in list(fleet.by_path) + [copied]:
        assert s3.get_object(Bucket=source, Key=path, Range="bytes=9-9")["Body"].read() == b"\x02", path


@pytest.mark.parametrize("case, message", [
    ("orc", "only CSV inventories are read"),
    ("no-key-column", "its fileSchema has no Key column"),
    ("truncated-gzip", "ends in the middle of its gzip data"),
    ("not-gzip", "is not gzip data zlib can inflate"),
    ("unquoted-quote", "a quote inside an unquoted field"),
    ("wrong-field-count", "has 3 fields, its fileSchema 8"),
])
def test_an_inventory_out_of_the_published_layout_is_refused_naming_what(tmp_path, case, message):
    s3 = s3fleet.client()
    source = s3fleet.new_bucket(s3)
    inventory = s3fleet.new_bucket(s3)
    good = csv_gz([row(source, "vaults/" + "cd" * 32 + ".vault")])
    files, file_format, schema = [good], "CSV", SCHEMA
    if case == "orc":
        file_format = "ORC"
    elif case == "no-key-column":
        schema = ["Bucket", "Size"]
    elif case == "truncated-gzip":
        files = [good[:-12]]
    elif case == "not-gzip":
        files = [b"this is not gzip at all, just text\n"]
    elif case == "unquoted-quote":
        files = [gzip.compress(f'{source},vaults/a"b.vault,v1,true,false,1,x,y\n'.encode())]
    elif case == "wrong-field-count":
        files = [gzip.compress(f'"{source}","vaults/x.vault","v1"\n'.encode())]
    manifest = publish(s3, inventory, source, files, file_format=file_format, schema=schema)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / ("ab" * 32 + ".vaultkey")).write_text("00" * 32 + "\n")  # an empty folder is refused first (exit 64)
    code, lines, stderr = migrate(["--inventory", manifest, "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys")], cwd=tmp_path)
    assert code == 2 and lines == [], (code, stderr)
    assert message in stderr, stderr
    assert not list(tmp_path.glob("*.sqlite")), "a refused inventory starts no journal"


@pytest.mark.parametrize("arguments, message", [
    (["--inventory", "s3://family-vaults/inv/manifest.json", "--source", "s3://family-vaults/vaults/"], "one of --source, --inventory and --manifest"),
    (["--inventory", "s3://family-vaults/inv/manifest.json"], "--inventory needs --vault-key-dir"),
    (["--inventory", "s3://family-vaults/inv/", "--vault-key-dir", "keys"], "the report's manifest.json"),
    (["--inventory", "inv/manifest.json", "--vault-key-dir", "keys"], "--inventory takes s3://"),
])
def test_a_mistyped_inventory_run_is_a_usage_error(tmp_path, arguments, message):
    code, lines, stderr = migrate([*arguments, "--to", "2", "--in-place"], cwd=tmp_path)
    assert code == 64 and lines == [] and message in stderr, (code, stderr)


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_a_line_of_another_bucket_refuses_the_whole_report_before_any_work(tmp_path, position):
    """Issue 37: a line naming a bucket other than the report's sourceBucket was migrated in place.
    Now the whole report is refused (exit 2) naming the line, and no vault is touched, even those
    listed before it."""
    s3 = s3fleet.client()
    source = s3fleet.new_bucket(s3)
    foreign = s3fleet.new_bucket(s3)
    inventory = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, source, 4, tmp_path / "keys")
    # The other bucket holds a vault the operator's keys open: migrating it would succeed.
    stranger = fleet.households[0]
    s3.put_object(Bucket=foreign, Key=stranger.vault_path, Body=s3.get_object(Bucket=source, Key=stranger.vault_path)["Body"].read())
    rows = [row(source, path) for path in fleet.by_path]
    at = {"first": 0, "middle": 2, "last": len(rows)}[position]
    rows.insert(at, row(foreign, stranger.vault_path))
    manifest = publish(s3, inventory, source, [csv_gz(rows)])
    before = {(bucket, path): s3.get_object(Bucket=bucket, Key=path)["Body"].read()
              for bucket, path in [(source, p) for p in fleet.by_path] + [(foreign, stranger.vault_path)]}

    code, lines, stderr = migrate(["--inventory", manifest, "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys")], cwd=tmp_path)
    assert code == 2 and lines == [], (code, stderr)
    assert f"0000.csv.gz line {at + 1} lists an object in bucket '{foreign}', not in the report's sourceBucket '{source}'" in stderr, stderr
    assert not list(tmp_path.glob("*.sqlite")), "a refused inventory starts no journal"
    for (bucket, path), body in before.items():
        assert s3.get_object(Bucket=bucket, Key=path)["Body"].read() == body, (bucket, path)


@pytest.mark.parametrize("destination", ["in-place", "out"])
def test_a_key_listed_twice_is_one_job(tmp_path, destination):
    """The same current key on two lines (here in two files of the report) is migrated once: one
    report line, one write, and the vault then decrypts to the input's values at version 2."""
    s3 = s3fleet.client()
    source = s3fleet.new_bucket(s3)
    inventory = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, source, 3, tmp_path / "keys")
    paths = list(fleet.by_path)
    twice = paths[1]
    manifest = publish(s3, inventory, source, [csv_gz([row(source, p) for p in paths]), csv_gz([row(source, twice)])])
    before = s3.get_object(Bucket=source, Key=twice)["Body"].read()
    where = ["--in-place"] if destination == "in-place" else ["--out", f"s3://{source}/v2/"]
    code, lines, stderr = migrate(["--inventory", manifest, "--to", "2", *where, "--vault-key-dir", str(tmp_path / "keys")], cwd=tmp_path)
    assert code == 0, stderr
    assert sorted(line["vault"] for line in lines) == sorted(f"s3://{source}/{p}" for p in paths), lines
    assert {line["status"] for line in lines} == {"migrated"}, lines
    # The vault, decrypted by the reference, is the input at version 2 and nothing else.
    out_key = twice if destination == "in-place" else "v2/" + twice.split("/")[-1]
    key = fleet.by_path[twice].vault_key
    after = s3.get_object(Bucket=source, Key=out_key)["Body"].read()
    old = vaultref.reveal_document(key, vaultref.open_envelope(before, key))
    new = vaultref.reveal_document(key, vaultref.open_envelope(after, key))
    assert new == dict(old, version=2, revision=1, keyHistory=[])
