"""What a fleet run on a bucket gives the job engines that run it in shards.

Against the SeaweedFS server scripts/test starts, through a counting proxy (s3fleet.CountingProxy):
each shard lists only its own run of keys, so N shards list the bucket about once between them and
cover every vault exactly once, the vaults not named after their household included; a run whose
failures were all the store's (503 SlowDown through every attempt) exits 75, and one with a
damaged vault exits 1; the CSV completion report says what the JSON Lines report says.
"""
import csv
import hashlib
import io
import subprocess

import pytest

import s3fleet
from s3fleet import Fleet, finish, migrate, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")


def lowest_leading(position, count):
    """⌈position · 2⁶⁴ / count⌉: the first 8 bytes of the lowest household id of shard position+1."""
    return -(-position * 2**64 // count)


def shard_of(household_hex, count):
    """The 1-based shard of a household, by its first 8 bytes (as --shard I/N documents)."""
    return int(household_hex[:16], 16) * count // 2**64 + 1


@pytest.mark.long
def test_each_shard_lists_only_its_range_and_the_shards_cover_the_fleet_once(s3, proxy, tmp_path):
    """4,000 vaults named after their households and four that are not (below the first id,
    between the digits and the letters, in a folder, after the last): an unsharded dry run and
    then each of 4 shards' through the proxy. The shards' listings start after their first key,
    stop past their last, and carry within 5% of the keys one full listing does; every vault is
    in exactly one shard's report, each named one in its household's shard."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 4000, tmp_path / "keys")
    body = s3.get_object(Bucket=bucket, Key=fleet.households[0].vault_path)["Body"].read()
    odd = ["vaults/-first.vault", "vaults/Family.vault", f"vaults/old/{fleet.households[1].household_id.hex()}.vault", "vaults/zz-last.vault"]
    for key in odd:
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    everything = {f"s3://{bucket}/{path}" for path in fleet.by_path} | {f"s3://{bucket}/{key}" for key in odd}
    # A key of no household here: every vault is no-key, which this run expects (--allow-no-keys).
    empty = tmp_path / "no-keys"
    empty.mkdir()
    (empty / (hashlib.sha256(b"no household here").hexdigest() + ".vaultkey")).write_text("00" * 32 + "\n")
    common = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(empty), "--dry-run", "--jobs", "8",
              "--allow-no-keys"]
    env = tool_environment(endpoint=proxy.endpoint)

    status, report, stderr = finish(migrate(common, env=env, cwd=tmp_path))
    assert status == 0, stderr
    assert {line["vault"] for line in report} == everything and len(report) == len(everything)
    full = proxy.listings()
    full_keys = sum(keys for _, keys in full)
    assert full_keys == len(everything) and len(full) == 5
    assert all("start-after" not in query for query, _ in full)

    count = 4
    seen, listed_keys, pages = [], 0, 0
    for index in range(1, count + 1):
        proxy.reset()
        status, report, stderr = finish(migrate([*common, "--shard", f"{index}/{count}"], env=env, cwd=tmp_path))
        assert status == 0, stderr
        listings = proxy.listings()
        start = f"vaults/{lowest_leading(index - 1, count):016x}" if index > 1 else None
        assert listings[0][0].get("start-after") == start
        assert all("start-after" not in query for query, _ in listings[1:])  # the pages after go on by token
        listed_keys += sum(keys for _, keys in listings)
        pages += len(listings)
        vaults = {line["vault"] for line in report}
        assert len(vaults) == len(report) and {line["status"] for line in report} == {"no-key"}
        for vault in vaults:
            name = vault.rsplit("/", 1)[1].removesuffix(".vault")
            if len(name) == 64 and vault.startswith(f"s3://{bucket}/vaults/{name}"):
                assert shard_of(name, count) == index, vault
        seen.append(vaults)
    # Exactly once: nothing in two shards, nothing in none.
    assert sum(map(len, seen)) == len(everything) and set().union(*seen) == everything
    # The key below every id goes to the first shard; the folder and the key after every id to the last.
    assert f"s3://{bucket}/vaults/-first.vault" in seen[0]
    assert {f"s3://{bucket}/{odd[2]}", f"s3://{bucket}/vaults/zz-last.vault"} <= seen[-1]
    # 'F' sorts between '9' and 'a': the shard whose run holds 9fff… and a000… (the third of 4).
    assert f"s3://{bucket}/vaults/Family.vault" in seen[2]
    # Listing split: the keys the server sent all shards together are within 5% of one full
    # listing's; each shard's last page is sized to what it still expects, so the pages are at
    # most about two per shard more than the full listing's.
    print(f"listing split: {count} shards were sent {listed_keys} keys in {pages} pages; one full listing {full_keys} in {len(full)}")
    assert listed_keys <= full_keys * 1.05, (listed_keys, full_keys)
    assert pages <= len(full) + 2 * count, (pages, len(full))


def vault_requests(method, path):
    """A request for a vault object (not the listing, not the conditional-write probe)."""
    return path.endswith(".vault")


def check_completion_report(text, report, bucket):
    """The CSV completion report, read with Python's csv module, against the JSON Lines report:
    one row per line, in S3 Batch Operations' row layout."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(report) and all(len(row) == 7 for row in rows)
    by_vault = {f"s3://{row[0]}/{row[1]}": row for row in rows}
    assert len(by_vault) == len(rows) and all(row[0] == bucket for row in rows)
    for line in report:
        _, _, version, task, http, code, message = by_vault[line["vault"]]
        assert version == "" and http == "200"
        if line["status"] in ("failed", "conflict"):
            assert task == "failed" and message == line["error"]
            assert code == ("TemporaryFailure" if line["exit"] == 75 else "PermanentFailure"), (line, code)
        else:
            assert (task, code, message) == ("succeeded", "", line["status"])
    return rows


def test_a_throttling_store_makes_the_run_exit_75_and_a_retry_finishes_it(s3, proxy, tmp_path):
    """Every request for a vault answered 503 SlowDown: each is tried 3 times (the standard
    retry mode), fails by name with exit 75 in its line; after 5 vaults in a row the run stops
    (the store went away: the vaults in flight finish, the rest are not started) and exits 75
    (EX_TEMPFAIL) with its CSV completion report written to the bucket; once the store is back,
    the same command finishes every vault. A listing throttled through every attempt exits 75
    too, before any vault."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 12, tmp_path / "keys")
    env = tool_environment(endpoint=proxy.endpoint)
    arguments = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                 "--journal", str(tmp_path / "journal.sqlite"), "--jobs", "4",
                 "--completion-report", f"s3://{bucket}/reports/run.csv"]
    proxy.slow_down(None, when=vault_requests)
    status, report, stderr = finish(migrate(arguments, env=env, cwd=tmp_path))
    assert status == 75, stderr
    assert 5 <= len(report) <= 5 + 3 and {line["status"] for line in report} == {"failed"}, report
    assert all(line["exit"] == 75 and "503 SlowDown" in line["error"] for line in report), report[:2]
    assert "the object store went away, so the run stopped" in stderr and "run the same command again later" in stderr
    assert f"{12 - len(report)} vaults were not started" in stderr, stderr
    throttled = proxy.throttled()
    assert len(throttled) == len(report) * 3 and len(set(throttled)) == len(report)
    csv_text = s3.get_object(Bucket=bucket, Key="reports/run.csv")["Body"].read().decode()
    rows = check_completion_report(csv_text, report, bucket)
    assert {row[5] for row in rows} == {"TemporaryFailure"}

    proxy.slow_down(0)
    status, report, stderr = finish(migrate(arguments, env=env, cwd=tmp_path))
    assert status == 0, stderr
    assert len(report) == 12 and {line["status"] for line in report} == {"migrated"}
    assert all(fleet.read(path)[2] == 2 for path in fleet.by_path)
    csv_text = s3.get_object(Bucket=bucket, Key="reports/run.csv")["Body"].read().decode()
    assert {row[3] for row in check_completion_report(csv_text, report, bucket)} == {"succeeded"}

    proxy.slow_down(None)
    listing = migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                       "--journal", str(tmp_path / "other.sqlite")], env=env, cwd=tmp_path)
    status, report, stderr = finish(listing)
    assert status == 75 and report == [], stderr
    assert "answered HTTP 503 SlowDown to 3 attempts while reading" in stderr


def test_a_damaged_vault_makes_the_run_exit_1_even_when_the_rest_is_worth_a_retry(s3, proxy, tmp_path):
    """One vault damaged (a flipped bit in its ciphertext) and another throttled: the damaged one
    fails for good (exit 3 in its line), the throttled one for now (75), and the run exits 1, as
    a retry cannot fix everything; the CSV completion report, a file, says the same per vault."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 10, tmp_path / "keys")
    damaged, throttled = sorted(fleet.by_path)[:2]
    body = bytearray(s3.get_object(Bucket=bucket, Key=damaged)["Body"].read())
    body[-5] ^= 0x01
    s3.put_object(Bucket=bucket, Key=damaged, Body=bytes(body))
    proxy.slow_down(None, when=lambda method, path: path.endswith(throttled))
    env = tool_environment(endpoint=proxy.endpoint)
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir",
                                             str(tmp_path / "keys"), "--jobs", "4", "--completion-report", str(tmp_path / "report.csv")],
                                            env=env, cwd=tmp_path))
    assert status == 1, stderr
    lines = {line["vault"].split("/", 3)[3]: line for line in report}
    assert lines[damaged]["status"] == "failed" and lines[damaged]["exit"] == 3
    assert lines[throttled]["status"] == "failed" and lines[throttled]["exit"] == 75
    assert {line["status"] for path, line in lines.items() if path not in (damaged, throttled)} == {"migrated"}
    assert "error: 2 vaults failed (1 of the failures only because of the object store); they are in the report and the journal" in stderr
    assert "hint: fix them and run the same command again (finished vaults are not redone), or accept them with --skip-failed" in stderr
    rows = {row[1]: row for row in check_completion_report((tmp_path / "report.csv").read_text(), report, bucket)}
    assert rows[damaged][3:6] == ["failed", "200", "PermanentFailure"] and rows[throttled][3:6] == ["failed", "200", "TemporaryFailure"]
    assert list(rows) == sorted(rows)


def test_a_completion_report_is_refused_where_it_cannot_be_written(s3, tmp_path):
    """A dry run writes nothing, standard output carries the JSON Lines report, and the report may
    not be the run's journal: each is refused before anything is read or written."""
    bucket = s3fleet.new_bucket(s3)
    Fleet(s3, bucket, 3, tmp_path / "keys")
    common = [VAULT_TOOL, "migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys")]
    for extra, status, words in [(["--dry-run", "--completion-report", "r.csv"], 64, "not written by a dry run"),
                                 (["--completion-report", "-"], 64, "standard output carries the JSON Lines report"),
                                 (["--journal", "j.sqlite", "--completion-report", "j.sqlite"], 4, "--completion-report")]:
        result = subprocess.run([*common, *extra], env=tool_environment(), capture_output=True, cwd=tmp_path)
        assert result.returncode == status and words in result.stderr.decode(), (extra, result.stderr)
        assert result.stdout == b"" and not (tmp_path / "r.csv").exists() and not (tmp_path / "j.sqlite").exists()
