"""What a fleet run on a bucket gives the job engines that run it in shards.

Against the SeaweedFS server scripts/test starts, through a counting proxy (s3fleet.CountingProxy):
each shard lists only its own run of keys, so N shards list the bucket about once between them and
cover every vault exactly once, the vaults not named after their household included.
"""
import pytest

import s3fleet
from s3fleet import CountingProxy, Fleet, migrate, report_lines, tool_environment

pytestmark = pytest.mark.usefixtures("s3_server")


@pytest.fixture
def s3():
    return s3fleet.client()


@pytest.fixture
def proxy():
    counting = CountingProxy()
    yield counting
    counting.close()


def finish(process, timeout=600):
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, report_lines(stdout), stderr.decode()


def lowest_leading(position, count):
    """⌈position · 2⁶⁴ / count⌉: the first 8 bytes of the lowest household id of shard position+1."""
    return -(-position * 2**64 // count)


def shard_of(household_hex, count):
    """The 1-based shard of a household, by its first 8 bytes (as --shard I/N documents)."""
    return int(household_hex[:16], 16) * count // 2**64 + 1


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
    empty = tmp_path / "no-keys"
    empty.mkdir()
    common = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(empty), "--dry-run", "--jobs", "8"]
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
    assert listed_keys <= full_keys * 1.05, (listed_keys, full_keys)
    assert pages <= len(full) + 2 * count, (pages, len(full))
