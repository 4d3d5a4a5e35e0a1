"""Restarts with no local state: a Kubernetes Indexed Job whose pods are killed and replaced on a
fresh node, simulated against the SeaweedFS server scripts/test starts.

Four shard processes (`--shard auto` with JOB_COMPLETION_INDEX 0 to 3), each in its own new empty
folder, migrate 2,000 vaults in place while the simulated app (s3fleet.App, boto3 and the
independent vault reference) keeps changing them with conditional writes. The first eight pods (two
of each index) are killed with SIGKILL at a message they send (strace, at a seeded sendto) and
replaced by a new process with the same index in a new empty folder, never while the old one still
runs. The bucket keeps every version of every object, so the test reads the
whole write history: every vault ends at version 2, migrated by exactly one write (one 1→2
change per object and no other write than the upload, the app's and that one), and no change the
app made is lost.
"""
import random
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import s3fleet
from s3fleet import App, Fleet, report_lines, tool_environment
from workspace import KILLED, VAULT_TOOL, killed_at

pytestmark = pytest.mark.usefixtures("s3_server")
SHARDS = 4
VAULTS = 2000
KILLS = 8


@pytest.mark.long
def test_replaced_pods_with_empty_folders_migrate_every_vault_exactly_once(tmp_path):
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    fleet = Fleet(s3, bucket, VAULTS, tmp_path / "keys")
    app = App(fleet)
    app.run(threads=4)

    rng = random.Random(28)
    folders = iter(range(10_000))
    runs = {index: [] for index in range(SHARDS)}  # index → [(started, ended, exit code)]
    # The first KILLS pods die at a message they send (strace: SIGKILL at a sendto of one of
    # their threads, early enough that it always comes before their shard is done); the pods
    # started after them run to the end.
    kill_points = iter([rng.randint(2, 30) for _ in range(KILLS)])

    def start(index):
        folder = tmp_path / f"pod-{next(folders)}"
        folder.mkdir()  # a fresh node: nothing of an earlier pod's files
        env = {**tool_environment(), "JOB_COMPLETION_INDEX": str(index), "HVT_SHARD_COUNT": str(SHARDS)}
        kill_point = next(kill_points, None)
        strace = killed_at("sendto", kill_point) if kill_point else []
        # The pod's log: files, not pipes nobody reads while it runs.
        with open(folder / "report.jsonl", "wb") as stdout, open(folder / "stderr.txt", "wb") as stderr:
            process = subprocess.Popen([*strace, VAULT_TOOL, "migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place",
                                        "--vault-key-dir", str(tmp_path / "keys"), "--shard", "auto", "--jobs", "8"],
                                       env=env, cwd=folder, stdout=stdout, stderr=stderr)
        return process, folder, time.monotonic(), kill_point

    pods = {index: start(index) for index in range(SHARDS)}
    last_reports = {}
    kills = 0
    try:
        while pods:
            time.sleep(0.1)  # only how often the pods are looked at: each one's end is its own
            for index, (process, folder, started, kill_point) in list(pods.items()):
                if process.poll() is None:
                    continue
                runs[index].append((started, time.monotonic(), process.returncode))
                if kill_point:
                    assert process.returncode in KILLED, f"pod {folder.name} ended before its kill at sendto {kill_point}: {(folder / 'stderr.txt').read_text()}"
                    kills += 1
                    pods[index] = start(index)  # only once the old pod is gone, as podReplacementPolicy: Failed
                else:
                    assert process.returncode == 0, (folder / "stderr.txt").read_text()
                    last_reports[index] = report_lines((folder / "report.jsonl").read_bytes())
                    del pods[index]
    finally:
        app.finish()
        for process, _, _, _ in pods.values():
            process.kill()
            process.wait()

    # No two pods of one index ever ran at once, and some pods really were killed mid-shard.
    for index, intervals in runs.items():
        intervals.sort()
        assert all(earlier[1] <= later[0] for earlier, later in zip(intervals, intervals[1:])), index
    assert sum(1 for intervals in runs.values() for _, _, code in intervals if code in KILLED) == kills == KILLS
    # The last pod of each index finished its shard; together they saw every vault once.
    seen = [line["vault"] for report in last_reports.values() for line in report]
    assert sorted(seen) == sorted(f"s3://{bucket}/{path}" for path in fleet.by_path)
    assert {line["status"] for report in last_reports.values() for line in report} <= {"migrated", "unchanged"}

    # The write history of every vault: ListObjectVersions gives each key's versions newest
    # first (LastModified has only whole seconds), so reversed, oldest first.
    history = {path: [] for path in fleet.by_path}
    paginator = s3.get_paginator("list_object_versions")
    for page in paginator.paginate(Bucket=bucket, Prefix="vaults/"):
        assert "DeleteMarkers" not in page
        for version in page.get("Versions", []):
            # A pod killed during its conditional-write probe leaves the probe's object under
            # the prefix (docs/object-storage.md); it is no vault's history.
            if version["Key"].startswith("vaults/.hvt-conditional-write-check-"):
                continue
            history[version["Key"]].append(version["VersionId"])

    def schemas(path):
        """The schema version (header byte 9) of each version of `path`, oldest first."""
        return [s3.get_object(Bucket=bucket, Key=path, VersionId=v, Range="bytes=9-9")["Body"].read()[0] for v in reversed(history[path])]

    with ThreadPoolExecutor(16) as pool:
        by_path = dict(zip(history, pool.map(schemas, history)))
    for path, versions in by_path.items():
        # Uploaded at 1, maybe changed by the app at 1, migrated once, maybe changed at 2 since.
        assert versions[0] == 1 and versions[-1] == 2, (path, versions)
        assert sum(1 for a, b in zip(versions, versions[1:]) if (a, b) == (1, 2)) == 1, (path, versions)
        assert versions == sorted(versions), (path, versions)
    # Every write is the upload, one of the app's committed changes, or the one migration.
    assert sum(len(v) for v in by_path.values()) == VAULTS + app.changes + VAULTS

    # No change the app made was lost: each device carries the last name the app gave it.
    for path, names in app.committed.items():
        sealed, _, schema = fleet.read(path)
        assert schema == 2
        devices = {entry["deviceId"]: entry["deviceName"] for entry in sealed["devices"]}
        for device, name in names.items():
            assert devices[device] == name, (path, device)
    assert app.changes > 0
