"""A fleet migration on a bucket where the families' devices keep writing (issue 15).

Against the SeaweedFS server scripts/test starts, with boto3 and the independent vault reference
(vaultref.py) playing the app: no update the app makes while the migration runs is lost; a run
killed at named system calls and resumed migrates every vault exactly once; a server stopped in the
middle makes a run report failures and a rerun complete; two shards cover the fleet exactly once;
and configuration mistakes say what failed without the secret.
"""
import json
import os
import signal
import sqlite3
import subprocess

import pytest

import s3fleet
from s3fleet import App, Fleet, PrivateServer, finish, migrate, report_lines, tool_environment
from workspace import DEVICE_REVOKER, KILLED, VAULT_TOOL, killed_at, wait_until

pytestmark = pytest.mark.usefixtures("s3_server")


def all_at_version(fleet, version):
    return {path: fleet.read(path)[2] for path in fleet.by_path} == {path: version for path in fleet.by_path}


@pytest.mark.long
def test_no_update_is_lost_while_the_fleet_migrates(s3, tmp_path):
    """2,000 vaults; the app renames devices in random vaults with conditional writes all the
    while. Afterwards every vault is at v2 and holds every name the app committed."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 2000, tmp_path / "keys")
    app = App(fleet)
    app.run(threads=6)
    wait_until(lambda: app.changes >= 20, "the app's first 20 changes")
    changes_before = app.changes
    process = migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                       "--journal", str(tmp_path / "journal.sqlite")])
    status, report, stderr = finish(process)
    changes_during = app.changes - changes_before
    # Changes on v2 vaults after the run are kept too.
    wait_until(lambda: app.changes >= changes_before + changes_during + 20, "20 app changes after the migration")
    app.finish()
    assert status == 0, stderr
    assert changes_during > 50, f"the app made only {changes_during} changes during the migration; the test proves nothing"
    statuses = [line["status"] for line in report]
    assert len(report) == 2000 and set(statuses) <= {"migrated", "unchanged"}, stderr
    for path in fleet.by_path:
        sealed, _, schema = fleet.read(path)
        assert schema == 2 and sealed["version"] == 2, path
        names = {device["deviceId"]: device["deviceName"] for device in sealed["devices"]}
        for device, name in app.committed.get(path, {}).items():
            assert names[device] == name, f"{path}: the app's change '{name}' to {device} was lost"
    print(f"\n{changes_during} app changes during the migration, {app.retries} app retries")


def test_a_killed_run_resumes_and_migrates_every_vault_exactly_once(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 400, tmp_path / "keys")
    arguments = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                 "--journal", str(tmp_path / "journal.sqlite"), "--jobs", "4"]
    # Eight runs, each killed where a worker is at about its fifth vault (strace: SIGKILL at a
    # system call of one of its threads) and each resuming the one before: at the request that
    # reads a vault and at the two sends of the conditional write (sendto), once that write was
    # answered (the report line, write), and at consecutive writes of the journal (pwrite64).
    # Each worker has more vaults than that, so every kill comes before the run ends.
    for syscalls, call in [("sendto", 13), ("sendto", 14), ("sendto", 15), ("write", 5),
                           ("pwrite64", 21), ("pwrite64", 22), ("pwrite64", 23), ("pwrite64", 24)]:
        result = subprocess.run([*killed_at(syscalls, call), VAULT_TOOL, "migrate", *arguments], env=tool_environment(),
                                capture_output=True, timeout=600)
        assert result.returncode in KILLED, f"the kill at {syscalls} {call} never came: {result.stderr.decode()}"
    status, report, stderr = finish(migrate(arguments))
    assert status == 0, stderr
    assert len(report) == 400
    assert {line["status"] for line in report} <= {"migrated", "previously-done"}
    assert all_at_version(fleet, 2)

    journal = sqlite3.connect(tmp_path / "journal.sqlite")
    rows = journal.execute("SELECT source, state, completions, etagBefore, etagAfter FROM object").fetchall()
    assert len(rows) == 400
    for source, state, completions, before, after in rows:
        path = source.split("/", 3)[3]
        assert (state, completions) == ("done", 1), source
        # Read as uploaded (never a version this batch wrote), and now what it wrote.
        assert before == fleet.uploaded[path], source
        assert after == s3.head_object(Bucket=bucket, Key=path)["ETag"], source


@pytest.mark.long
def test_a_server_stopped_mid_run_fails_vaults_by_name_and_a_rerun_completes(tmp_path):
    server = PrivateServer(tmp_path / "server")
    try:
        s3 = server.start()
        bucket = s3fleet.new_bucket(s3)
        fleet = Fleet(s3, bucket, 300, tmp_path / "keys")
        env = tool_environment(endpoint=server.endpoint)
        arguments = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                     "--journal", str(tmp_path / "journal.sqlite"), "--jobs", "4"]
        process = migrate(arguments, env=env)
        # The server goes once 30 vaults are done (their report lines read), with the run held
        # still meanwhile: whatever the machine's load, it stops in the middle of the run.
        done = [process.stdout.readline() for _ in range(30)]
        assert all(done), "the run ended before its 30th vault"
        process.send_signal(signal.SIGSTOP)
        server.stop()
        process.send_signal(signal.SIGCONT)
        status, report, stderr = finish(process)
        report = report_lines(b"".join(done)) + report
        # Every failure was the store's: EX_TEMPFAIL, for a job engine's retry policy.
        assert status == 75, stderr
        failed = [line for line in report if line["status"] == "failed"]
        assert failed, stderr
        assert all("could not reach the object store" in line["error"] and line["exit"] == 75 for line in failed), failed[:3]
        # The breaker stopped it after 5 vaults in a row (4 in flight): the rest was never started
        # and is not in the journal, so the rerun takes it up.
        assert "the object store went away, so the run stopped" in stderr and "run the same command again later" in stderr
        assert 5 <= len(failed) <= 5 + 3, len(failed)
        journal = sqlite3.connect(tmp_path / "journal.sqlite")
        recorded = journal.execute("SELECT count(*) FROM object").fetchone()[0]
        journal.close()
        # Each part on its own, so that a failure says which. (This failed under load while the
        # report was read through a buffered pipe: lines read ahead of `readline` were lost.)
        assert recorded == len(report), (recorded, len(report), stderr)
        assert len(report) < 300 and f"{300 - len(report)} vaults were not started" in stderr, (len(report), stderr)

        s3 = server.start()
        fleet.s3 = s3
        status, report, stderr = finish(migrate(arguments, env=env))
        assert status == 0, stderr
        assert len(report) == 300 and {line["status"] for line in report} <= {"migrated", "previously-done"}
        assert all_at_version(fleet, 2)
        journal = sqlite3.connect(tmp_path / "journal.sqlite")
        assert journal.execute("SELECT count(*) FROM object WHERE state = 'done' AND completions = 1").fetchone()[0] == 300
    finally:
        server.stop()


def test_two_shards_in_parallel_cover_the_fleet_exactly_once(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 400, tmp_path / "keys")
    shards = [migrate(["--source", f"s3://{bucket}/vaults", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                       "--shard", f"{i}/2", "--jobs", "4"], cwd=tmp_path) for i in (1, 2)]
    results = [finish(process) for process in shards]
    seen = []
    notes = ["(shard 1/2: the keys from the first through vaults/8000000000000000)",
             "(shard 2/2: the keys after vaults/8000000000000000 to the last)"]
    for (status, report, stderr), note in zip(results, notes):
        assert status == 0, stderr
        assert note in stderr
        seen.append({line["vault"] for line in report if line["status"] == "migrated"})
    assert seen[0] and seen[1] and not seen[0] & seen[1]
    assert seen[0] | seen[1] == {f"s3://{bucket}/{path}" for path in fleet.by_path}
    assert all_at_version(fleet, 2)
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == [f"{bucket}.shard-1-of-2.migrate-journal.sqlite",
                                                                 f"{bucket}.shard-2-of-2.migrate-journal.sqlite"]


def test_shards_from_the_engines_environment_cover_the_fleet_exactly_once(s3, tmp_path):
    """`--shard auto` in the pods of a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, 0-based, with
    --shard-count) and in the tasks of a Cloud Run job: the same ranges as --shard I/N, each
    report line saying its shard and the variables it came from; a pod whose engine gave no
    index is a usage error naming the variables, with nothing migrated."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 300, tmp_path / "keys")
    common = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"), "--jobs", "4"]
    missing = subprocess.run([VAULT_TOOL, "migrate", *common, "--shard", "auto", "--shard-count", "3"], env=tool_environment(),
                             capture_output=True, cwd=tmp_path)
    assert missing.returncode == 64 and b"JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX" in missing.stderr
    assert missing.stdout == b"" and all_at_version(fleet, 1)
    pods = [migrate([*common, "--shard", "auto", "--shard-count", "3", "--journal", str(tmp_path / f"pod-{i}.sqlite")],
                    env={**tool_environment(), "JOB_COMPLETION_INDEX": str(i)}, cwd=tmp_path) for i in range(2)]
    pods.append(migrate([*common, "--shard", "auto", "--journal", str(tmp_path / "task-2.sqlite")],
                        env={**tool_environment(), "CLOUD_RUN_TASK_INDEX": "2", "CLOUD_RUN_TASK_COUNT": "3"}, cwd=tmp_path))
    seen = []
    for number, (status, report, stderr) in enumerate(finish(pod) for pod in pods):
        assert status == 0, stderr
        migrated = [line for line in report if line["status"] == "migrated"]
        assert migrated and {line["shard"] for line in report} == {f"{number + 1}/3"}
        origin = f"JOB_COMPLETION_INDEX={number}, --shard-count 3" if number < 2 else "CLOUD_RUN_TASK_INDEX=2, CLOUD_RUN_TASK_COUNT=3"
        assert {line["shardFrom"] for line in report} == {origin}
        seen.append({line["vault"] for line in migrated})
    assert sum(map(len, seen)) == len(set().union(*seen)) == 300
    assert all_at_version(fleet, 2)


def test_vaults_without_a_key_are_counted_and_left_for_the_app(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 30, tmp_path / "keys", without_keys=7)
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place",
                                             "--vault-key-dir", str(tmp_path / "keys"), "--journal", str(tmp_path / "j.sqlite")]))
    assert status == 0, stderr
    by_status = {}
    for line in report:
        by_status.setdefault(line["status"], set()).add(line["vault"].split("/", 3)[3])
    assert by_status["no-key"] == fleet.keyless
    assert len(by_status["migrated"]) == 23
    assert "no key 7" in stderr and "left for the app" in stderr
    for path in fleet.keyless:
        assert fleet.read(path)[2] == 1 and s3.head_object(Bucket=bucket, Key=path)["ETag"] == fleet.uploaded[path]


def test_a_dry_run_and_a_migration_to_another_prefix_leave_the_sources_alone(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 20, tmp_path / "keys")
    common = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--vault-key-dir", str(tmp_path / "keys")]
    status, report, stderr = finish(migrate(common + ["--in-place", "--dry-run"], cwd=tmp_path))
    assert status == 0, stderr
    assert {line["status"] for line in report} == {"would-migrate"} and len(report) == 20
    assert list(tmp_path.glob("*.sqlite")) == []  # a dry run writes nothing, not even a journal

    status, report, stderr = finish(migrate(common + ["--out", f"s3://{bucket}/migrated/", "--journal", str(tmp_path / "j.sqlite")]))
    assert status == 0, stderr
    assert {line["status"] for line in report} == {"migrated"}
    for path, etag in fleet.uploaded.items():
        assert s3.head_object(Bucket=bucket, Key=path)["ETag"] == etag
        name = path.split("/")[-1]
        data = s3.get_object(Bucket=bucket, Key=f"migrated/{name}")["Body"].read()
        assert data[9] == 2
    # Run again: nothing is redone, nothing under migrated/ is replaced.
    status, report, stderr = finish(migrate(common + ["--out", f"s3://{bucket}/migrated/", "--journal", str(tmp_path / "j.sqlite")]))
    assert status == 0 and {line["status"] for line in report} == {"previously-done"}, stderr


def test_census_of_a_bucket_counts_by_version(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 40, tmp_path / "keys")
    s3.put_object(Bucket=bucket, Key="vaults/notes.txt", Body=b"not a vault")
    s3.put_object(Bucket=bucket, Key="vaults/empty.vault", Body=b"")
    # Cut-off copies: the census reads only the 66-byte header, so what it says of the rest
    # comes from the listing's lengths.
    whole = s3.get_object(Bucket=bucket, Key=fleet.households[0].vault_path)["Body"].read()
    for length in (40, 66, 70, 200):
        s3.put_object(Bucket=bucket, Key=f"vaults/cut-{length}.vault", Body=whole[:length])
    result = subprocess.run([s3fleet.VAULT_TOOL, "census", "--json", f"s3://{bucket}/vaults/"], env=tool_environment(), capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    census = json.loads(result.stdout)
    assert census["files"] == 46 and census["vaults"] == 40
    assert [(k["schemaVersion"], k["count"]) for k in census["kinds"]] == [(1, 40)]
    assert census["notVaults"] == [{"path": "empty.vault", "reason": "empty"}, {"path": "notes.txt", "reason": "does not start with MTVAULT"}]
    assert census["truncated"] == [
        {"path": "cut-200.vault", "reason": "200 bytes, less than the smallest vault (301 bytes)"},
        {"path": "cut-40.vault", "reason": "40 bytes, less than a header and a tag"},
        {"path": "cut-66.vault", "reason": "66 bytes, less than a header and a tag"},
        {"path": "cut-70.vault", "reason": "70 bytes, less than a header and a tag"},
    ]


def test_keys_with_control_characters_are_listed_as_they_are(s3, tmp_path):
    """A hostile trial: a vault whose key held an escape (`vaults/\\x1b[31mRED.vault`) came back
    from the listing as U+FFFD, which names no object: the census said it was removed while
    counting, `check bucket` that it was gone (exit 0, never read) and `migrate` that it did not
    exist. Listed URL-encoded, it is checked, migrated and counted as the vault it is, and its
    name shown escaped."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 3, tmp_path / "keys")
    whole = s3.get_object(Bucket=bucket, Key=fleet.households[0].vault_path)["Body"].read()
    hostile = {"vaults/\x1b[31mRED\x1b[0m.vault", "vaults/bell\x07 and tab\t.vault", "vaults/a+b c%41.vault"}
    for key in hostile:
        s3.put_object(Bucket=bucket, Key=key, Body=whole)
    env = tool_environment()
    census = subprocess.run([s3fleet.VAULT_TOOL, "census", "--json", f"s3://{bucket}/vaults/"], env=env, capture_output=True)
    assert census.returncode == 0, census.stderr.decode()
    counted = json.loads(census.stdout)
    assert counted["files"] == 6 and counted["vaults"] == 6, counted
    check = subprocess.run([s3fleet.VAULT_TOOL, "check", "bucket", "--source", f"s3://{bucket}/vaults/", "--vault-key-dir", str(tmp_path / "keys")],
                           env=env, capture_output=True)
    lines = report_lines(check.stdout)
    assert check.returncode == 0 and len(lines) == 6 and {line["status"] for line in lines} == {"ok"}, check.stderr.decode() + check.stdout.decode()
    assert b"\x1b" not in check.stdout + check.stderr and b"\x07" not in check.stdout + check.stderr
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                                             "--journal", str(tmp_path / "j.sqlite")]))
    assert status == 0 and {line["status"] for line in report} == {"migrated"} and len(report) == 6, stderr
    for key in hostile:
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read()[9] == 2


@pytest.mark.parametrize("case", ["bad-secret", "missing-bucket", "wrong-endpoint", "no-credentials", "unknown-host", "tls", "retry-setting"])
def test_configuration_mistakes_name_what_failed_and_never_the_secret(s3, tmp_path, case):
    bucket = s3fleet.new_bucket(s3)
    secret = "not-the-secret-" + os.urandom(8).hex()
    env = tool_environment()
    if case == "bad-secret":
        credentials = tmp_path / "credentials"
        credentials.write_text(f"[default]\naws_access_key_id = hvtwrongkey\naws_secret_access_key = {secret}\n")
        credentials.chmod(0o600)
        env["AWS_SHARED_CREDENTIALS_FILE"] = str(credentials)
        expected = "refused access"
    elif case == "missing-bucket":
        bucket = "no-such-bucket-" + os.urandom(4).hex()
        expected = f"the bucket '{bucket}' does not exist"
    elif case == "wrong-endpoint":
        env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{s3fleet.free_port()}"
        expected = "could not reach the object store"
    elif case == "unknown-host":
        env["AWS_ENDPOINT_URL"] = "http://no-such-store.invalid:9000"
        expected = "could not use the object store at http://no-such-store.invalid:9000"
    elif case == "tls":
        env["AWS_ENDPOINT_URL"] = s3fleet.ENDPOINT.replace("http://", "https://")
        expected = "could not use the object store at https://"
    elif case == "retry-setting":
        env["AWS_MAX_ATTEMPTS"] = "0"
        expected = "the retry setting AWS_MAX_ATTEMPTS is not a number of attempts from 1 to 20"
    else:
        env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
        env["HOME"] = str(tmp_path)
        expected = "no credentials"
    # A key folder a run accepts: an empty one is refused before the store is asked anything.
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / ("ab" * 32 + ".vaultkey")).write_text("00" * 32 + "\n")
    for arguments in (["census", f"s3://{bucket}/vaults/"], ["inspect", f"s3://{bucket}/vaults/x.vault"],
                      ["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(keys),
                       "--journal", str(tmp_path / "j.sqlite")]):
        result = subprocess.run([s3fleet.VAULT_TOOL, *arguments], env=env, capture_output=True, timeout=120)
        message = result.stderr.decode()
        # A refused connection is worth a retry (75, EX_TEMPFAIL); the other mistakes are
        # configuration no retry mends (78, EX_CONFIG).
        assert result.returncode == (75 if case == "wrong-endpoint" else 78), (arguments, message)
        assert expected in message, (arguments, message)
        assert secret not in message and secret not in result.stdout.decode()


def test_a_manifest_of_objects_names_each_vault_with_its_key(s3, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 12, tmp_path / "keys")
    chosen = sorted(fleet.by_path)[:8]
    manifest = tmp_path / "jobs.jsonl"
    manifest.write_text("".join(json.dumps({"vault": f"s3://{bucket}/{path}",
                                            "vaultKeyFile": f"keys/{fleet.by_path[path].household_id.hex()}.vaultkey"}) + "\n"
                                for path in chosen))
    status, report, stderr = finish(migrate(["--manifest", str(manifest), "--to", "2", "--in-place", "--journal", str(tmp_path / "j.sqlite")]))
    assert status == 0, stderr
    assert sorted(line["vault"] for line in report if line["status"] == "migrated") == [f"s3://{bucket}/{path}" for path in chosen]
    for path in fleet.by_path:
        assert fleet.read(path)[2] == (2 if path in chosen else 1), path
    # Into a local folder it is refused, naming the line: objects are migrated in the bucket.
    status, report, stderr = finish(migrate(["--manifest", str(manifest), "--to", "2", "--out-dir", str(tmp_path / "out")]))
    assert status == 2 and "manifest line 1 names an object" in stderr and "--in-place" in stderr, stderr
    assert not (tmp_path / "out").exists()
    # And the other way round: a bucket run refuses a line naming a file, and two lines that
    # would write one output, by line, before anything is written.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(manifest.read_text() + json.dumps({"vault": "local.vault", "vaultKeyFile": "keys/x.vaultkey"}) + "\n")
    status, report, stderr = finish(migrate(["--manifest", str(mixed), "--to", "2", "--in-place", "--journal", str(tmp_path / "k.sqlite")]))
    assert status == 2 and "manifest line 9 names" in stderr and "local.vault', which is not an object" in stderr and "--out-dir" in stderr, stderr
    twice = tmp_path / "twice.jsonl"
    line = manifest.read_text().splitlines()[0]
    twice.write_text(line + "\n" + line.replace(f"s3://{bucket}/vaults/", f"s3://{bucket}/elsewhere/") + "\n")
    status, report, stderr = finish(migrate(["--manifest", str(twice), "--to", "2", "--out", f"s3://{bucket}/v2/", "--journal", str(tmp_path / "t.sqlite")]))
    assert status == 2 and "manifest lines 1 and 2 would both write" in stderr, stderr
    assert not (tmp_path / "k.sqlite").exists() and not (tmp_path / "t.sqlite").exists()


def test_a_journal_that_is_another_database_is_refused_and_left_as_it_was(s3, tmp_path):
    """A registry given as a bucket run's --journal once had its tables added, and was switched
    to WAL before any check: it is refused, and its bytes, journal mode and neighbours stay."""
    bucket = s3fleet.new_bucket(s3)
    Fleet(s3, bucket, 3, tmp_path / "keys")
    registry = tmp_path / "registry.sqlite"
    subprocess.run([DEVICE_REVOKER, "registry", "init", "--db", str(registry)], check=True, capture_output=True)
    before = registry.read_bytes()
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place",
                                             "--vault-key-dir", str(tmp_path / "keys"), "--journal", str(registry)]))
    assert status == 4, stderr
    assert "is not a migration journal" in stderr, stderr
    assert registry.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("registry")) == ["registry.sqlite"]
