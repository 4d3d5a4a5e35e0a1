"""Mistakes stop a fleet run (issue 38): a key folder mounted wrong, keys of another fleet, a
mistyped prefix and another batch's journal each end the run with their own exit code and a
message naming what was wrong, before anything is written to the bucket and without leaving a
journal; `--allow-no-keys` and `--allow-empty` accept the cases an operator expects.

Against the SeaweedFS server scripts/test starts, through s3fleet.CountingProxy, which records
every request: a refusal "before any work" is one that sent none (or, for a prefix, only its
listing).
"""
import hashlib
import json
import sqlite3
import subprocess

import pytest

import s3fleet
from s3fleet import Fleet, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")


def run(arguments, proxy, cwd):
    result = subprocess.run([VAULT_TOOL, *arguments], env=tool_environment(endpoint=proxy.endpoint), cwd=cwd,
                            capture_output=True, timeout=600)
    return result.returncode, report_lines(result.stdout), result.stderr.decode()


def methods(proxy):
    with proxy.lock:
        return [method for method, *_ in proxy.requests]


def stray_key(folder, seed=b"another fleet"):
    """A vault key of a household that is not in the bucket, named as a key folder names it."""
    path = folder / (hashlib.sha256(seed).hexdigest() + ".vaultkey")
    path.write_text(hashlib.sha256(seed + b" key").hexdigest() + "\n")
    path.chmod(0o600)
    return path


def unchanged(s3, bucket, fleet):
    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))
    return listed == sorted(fleet.uploaded) and all(s3.head_object(Bucket=bucket, Key=k)["ETag"] == e for k, e in fleet.uploaded.items())


def key_folder_mistake(case, tmp_path):
    """(the folder to name, what the message says of it)."""
    folder = tmp_path / "mounted"
    if case == "missing":
        return folder, "does not exist"
    if case == "a-file":
        folder.write_text("not a folder\n")
        return folder, "is not a folder"
    folder.mkdir()
    if case == "empty":
        return folder, "is empty"
    if case == "secret-volume-without-files":
        # What an empty Kubernetes Secret's volume holds: its bookkeeping, no key.
        (folder / "..2026_11_26_02_30_00.000000000").mkdir()
        (folder / "..data").symlink_to("..2026_11_26_02_30_00.000000000")
        return folder, "is empty"
    if case == "other-kinds-of-key":
        (folder / "parent.nsec").write_text("nsec1...\n")
        (folder / (hashlib.sha256(b"x").hexdigest().upper() + ".vaultkey")).write_text("00\n")
        (folder / "household.vaultkey").write_text("00\n")
        return folder, "holds no <household id>.vaultkey file (3 other entries)"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["missing", "a-file", "empty", "secret-volume-without-files", "other-kinds-of-key"])
def test_a_key_folder_mounted_wrong_is_refused_before_any_request(s3, proxy, tmp_path, case):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 3, tmp_path / "keys")
    folder, problem = key_folder_mistake(case, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    source = f"s3://{bucket}/vaults/"
    for arguments in (["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", str(folder)],
                      ["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", str(folder), "--dry-run"],
                      ["migrate", "--source", source, "--to", "2", "--out", f"s3://{bucket}/v2/", "--vault-key-dir", str(folder),
                       "--shard", "1/4", "--allow-no-keys", "--allow-empty"],
                      ["check", "--source", source, "--subset", "auto/7", "--vault-key-dir", str(folder)]):
        proxy.reset()
        code, report, stderr = run(arguments, proxy, work)
        assert code == 64, (arguments, stderr)
        assert f"the vault-key folder '{folder}' {problem}: expected <household id>.vaultkey files" in stderr, stderr
        assert "--vault-key-dir" in stderr  # the hint names the option
        assert report == [] and methods(proxy) == [], (arguments, methods(proxy))
        assert list(work.iterdir()) == []  # no journal
    assert unchanged(s3, bucket, fleet)


def test_keys_of_another_fleet_end_the_run_with_66_unless_allowed(s3, proxy, tmp_path):
    """Every vault no-key: the migration and the check exit 66 naming the folder, the bucket is
    as it was and no journal is left; --allow-no-keys passes with a warning. A fleet where some
    households have keys keeps its no-key vaults as before (exit 0)."""
    bucket, fleet, other, work, source = fleet_beside_other_keys(s3, tmp_path, 5)
    for arguments in (["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", str(other)],
                      ["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", str(other), "--dry-run"],
                      ["check", "--source", source, "--vault-key-dir", str(other)]):
        proxy.reset()
        code, report, stderr = run(arguments, proxy, work)
        assert code == 66, (arguments, stderr)
        assert f"none of the 5 vaults has its key in the vault-key folder '{other}': no vault was opened" in stderr, stderr
        assert "--allow-no-keys" in stderr
        assert {line["status"] for line in report} == {"no-key"} and len(report) == 5
        assert list(work.iterdir()) == [], list(work.iterdir())
        assert unchanged(s3, bucket, fleet)
        code, report, stderr = run(arguments + ["--allow-no-keys"], proxy, work)
        assert code == 0 and "warning: none of the 5 vaults has its key" in stderr, stderr
        assert {line["status"] for line in report} == {"no-key"}
        for leftover in work.iterdir():
            leftover.unlink()
    assert unchanged(s3, bucket, fleet)
    # One household with its key beside four without: no-key as today, and exit 0.
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    first = fleet.households[0].household_id.hex() + ".vaultkey"
    (mixed / first).write_bytes((tmp_path / "keys" / first).read_bytes())
    code, report, stderr = run(["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", str(mixed)], proxy, work)
    assert code == 0, stderr
    assert sorted(line["status"] for line in report) == ["migrated"] + ["no-key"] * 4


def test_a_prefix_that_lists_nothing_is_refused_unless_allowed_and_an_empty_shard_is_not_a_mistake(s3, proxy, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 2, tmp_path / "keys")
    keys = ["--vault-key-dir", str(tmp_path / "keys")]
    work = tmp_path / "work"
    work.mkdir()
    typo = f"s3://{bucket}/vualts/"
    for arguments, message in (
        (["migrate", "--source", typo, "--to", "2", "--in-place", *keys], f"no *.vault object under {typo}: nothing to do, and nothing was written"),
        (["migrate", "--source", typo, "--to", "2", "--in-place", *keys, "--dry-run"], f"no *.vault object under {typo}"),
        (["migrate", "--source", typo, "--to", "2", "--in-place", *keys, "--shard", "3/4"], f"no *.vault object under {typo}"),
        (["check", "--source", typo, *keys], f"no object under {typo}: nothing to do"),
        (["check", "--source", typo, *keys, "--subset", "2/7"], f"no object under {typo}"),
    ):
        proxy.reset()
        code, report, stderr = run(arguments, proxy, work)
        assert code == 64 and message in stderr and "--allow-empty" in stderr, (arguments, stderr)
        assert report == [] and set(methods(proxy)) == {"GET"}, methods(proxy)  # listings only
        assert list(work.iterdir()) == []
        code, report, stderr = run(arguments + ["--allow-empty"], proxy, work)
        assert code == 0 and report == [], (arguments, stderr)
        assert "PUT" not in methods(proxy) and "DELETE" not in methods(proxy)  # nothing to write: no probe either
        assert list(work.iterdir()) == []  # nor a journal that would refuse the corrected prefix
    # Two vaults in four shards: the shards without one pass, since the prefix is not empty.
    seen = []
    for index in range(1, 5):
        code, report, stderr = run(["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", *keys,
                                    "--shard", f"{index}/4", "--journal", str(tmp_path / f"s{index}.sqlite")], proxy, work)
        assert code == 0, stderr
        seen += [line["vault"] for line in report if line["status"] == "migrated"]
    assert sorted(seen) == sorted(f"s3://{bucket}/{path}" for path in fleet.uploaded)
    # A census of an empty prefix counts it, and warns.
    result = subprocess.run([VAULT_TOOL, "census", typo], env=tool_environment(), capture_output=True, timeout=120)
    assert result.returncode == 0 and result.stdout.decode().startswith("0 files, 0 vaults under")
    assert f"warning: nothing to count under {typo}: no file or object there" in result.stderr.decode()


def test_a_journal_names_the_command_it_belongs_to(s3, proxy, tmp_path):
    """A corrected prefix given the mistyped run's journal is told which command that journal
    is for; a journal of an earlier version (no command recorded) is refused as before."""
    bucket = s3fleet.new_bucket(s3)
    Fleet(s3, bucket, 2, tmp_path / "keys")
    keys = ["--vault-key-dir", str(tmp_path / "keys")]
    journal = tmp_path / "j.sqlite"
    code, _, stderr = run(["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", *keys,
                           "--shard", "1/1", "--journal", str(journal)], proxy, tmp_path)
    assert code == 0, stderr
    code, _, stderr = run(["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--out", f"s3://{bucket}/v2/", *keys,
                           "--journal", str(journal)], proxy, tmp_path)
    assert code == 4, stderr
    assert (f"the journal '{journal}' belongs to another batch: `migrate --source s3://{bucket}/vaults/ --in-place --to 2 --shard 1/1`"
            in stderr), stderr
    assert "run the command the journal belongs to, or give this one a new --journal" in stderr
    # As an earlier version left it: no command column.
    with sqlite3.connect(journal) as db:
        db.execute("ALTER TABLE run DROP COLUMN command")
        db.execute("DELETE FROM grdb_migrations WHERE identifier = 'bucket-v2'")
    code, _, stderr = run(["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "1", "--in-place", *keys,
                           "--journal", str(journal)], proxy, tmp_path)
    assert code == 4 and f"the journal '{journal}' belongs to another batch (another manifest or target version)" in stderr, stderr


def test_a_folder_batch_journal_names_its_command(tmp_path):
    """The folder batch's journal too; its key files are checked line by line before it exists."""
    import vaultref
    from vaultref import Household
    household = Household(hashlib.sha256(b"folder batch").digest())
    document = {"version": 1, "parentPubkey": household.pubkey, "parentWrapKey": "00" * 32, "childProfiles": [], "devices": [],
                "groupMemberships": [], "createdAt": "2025-11-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z"}
    (tmp_path / "h.vault").write_bytes(vaultref.seal_document(household, document))
    (tmp_path / "h.vaultkey").write_text(household.vault_key.hex() + "\n")
    (tmp_path / "jobs.jsonl").write_text(json.dumps({"vault": "h.vault", "vaultKeyFile": "h.vaultkey"}) + "\n")
    base = [VAULT_TOOL, "migrate", "--manifest", "jobs.jsonl", "--out-dir", "out", "--journal", "j.sqlite"]
    first = subprocess.run(base + ["--to", "2"], cwd=tmp_path, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr.decode()
    other = subprocess.run(base + ["--to", "1"], cwd=tmp_path, capture_output=True, timeout=120)
    assert other.returncode == 4
    assert "belongs to another batch: `migrate --manifest jobs.jsonl --to 2 --out-dir out`" in other.stderr.decode(), other.stderr.decode()


def test_a_bucket_manifest_naming_a_missing_key_file_is_refused_by_line_before_any_request(s3, proxy, tmp_path):
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 2, tmp_path / "keys")
    lines = [{"vault": f"s3://{bucket}/{h.vault_path}", "vaultKeyFile": f"keys/{h.household_id.hex()}.vaultkey"} for h in fleet.households]
    lines[1]["vaultKeyFile"] = "keys/missing.vaultkey"
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for arguments in (["migrate", "--manifest", "jobs.jsonl", "--to", "2", "--in-place", "--journal", "j.sqlite"],
                      ["check", "--manifest", "jobs.jsonl"]):
        proxy.reset()
        code, report, stderr = run(arguments, proxy, tmp_path)
        assert code == 1 and "manifest line 2: cannot read the vault-key file 'keys/missing.vaultkey'" in stderr, stderr
        assert report == [] and methods(proxy) == []
        assert not (tmp_path / "j.sqlite").exists()
    assert unchanged(s3, bucket, fleet)


def test_an_inventory_that_lists_no_current_vault_is_refused_unless_allowed(s3, proxy, tmp_path):
    """Only a non-vault object and an old version of a vault: nothing to migrate (exit 64,
    naming the inventory), with no write and no journal; --allow-empty passes."""
    from test_s3_inventory import csv_gz, publish, row
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 2, tmp_path / "keys")
    inventory = s3fleet.new_bucket(s3)
    rows = [row(bucket, "vaults/notes.txt"), row(bucket, fleet.households[0].vault_path, latest=False)]
    manifest = publish(s3, inventory, bucket, [csv_gz(rows)])
    arguments = ["migrate", "--inventory", manifest, "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys")]
    work = tmp_path / "work"
    work.mkdir()
    code, report, stderr = run(arguments, proxy, work)
    assert code == 64 and f"the inventory {manifest} lists no current *.vault object: nothing to do" in stderr, stderr
    assert report == [] and set(methods(proxy)) == {"GET"} and list(work.iterdir()) == []
    code, report, stderr = run(arguments + ["--allow-empty"], proxy, work)
    assert code == 0 and report == [], stderr
    assert "PUT" not in methods(proxy) and unchanged(s3, bucket, fleet) and list(work.iterdir()) == []


def test_a_completion_report_that_could_not_be_written_is_refused_before_the_bucket_changes(s3, proxy):
    """As 'nobody', `--completion-report ro/report.csv` in a folder that cannot be written: the
    run migrated the bucket and only then failed to write its report. Now refused first (exit 1
    naming the option): no request that writes, no journal."""
    import os
    import shutil
    import tempfile
    from pathlib import Path
    if os.geteuid() != 0:
        pytest.fail("run as root: the test runs the tool as another user")
    root = Path(tempfile.mkdtemp(prefix="hvt-report-"))
    work = root / "work"
    (work / "ro").mkdir(parents=True)
    try:
        root.chmod(0o755)
        bucket = s3fleet.new_bucket(s3)
        fleet = Fleet(s3, bucket, 2, root / "keys")
        # The credentials where 'nobody' may read them (the server's folder is root's alone).
        shutil.copy(s3fleet.CREDENTIALS_FILE, root / "credentials")
        for path in [root, *root.rglob("*")]:
            os.chown(path, 65534, 65534)
        (work / "ro").chmod(0o555)
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", VAULT_TOOL, "migrate", "bucket",
                   "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(root / "keys"),
                   "--completion-report", "ro/report.csv"]
        environment = tool_environment(endpoint=proxy.endpoint, credentials_file=str(root / "credentials"))
        result = subprocess.run(command, env=environment, cwd=work, capture_output=True, text=True, timeout=600)
        assert result.returncode == 1 and "--completion-report 'ro/report.csv' there" in result.stderr and "permission denied" in result.stderr, result.stderr
        assert set(methods(proxy)) <= {"GET", "HEAD"} and unchanged(s3, bucket, fleet)
        assert sorted(path.name for path in work.iterdir()) == ["ro"] and list((work / "ro").iterdir()) == []
    finally:
        (work / "ro").chmod(0o755)
        shutil.rmtree(root)


def one_vault_manifest(folder):
    """jobs.jsonl naming a.vault, the example household at version 1, and its key."""
    import shutil
    from workspace import ROOT
    shutil.copy(ROOT / "Examples" / "household.nsec", folder / "parent.nsec")
    (folder / "parent.nsec").chmod(0o600)
    subprocess.run([str(VAULT_TOOL), "seal", "--key-file", "parent.nsec", "-o", "a.vault", str(ROOT / "Examples" / "household.json")],
                   cwd=folder, check=True, capture_output=True)
    (folder / "jobs.jsonl").write_text('{"vault": "a.vault", "keyFile": "parent.nsec"}\n')


def test_a_journal_in_a_folder_not_yet_made_is_made_and_a_run_again_resumes(tmp_path):
    """`--journal j/deep/run.sqlite`, whose folders do not exist: they are made, as --out-dir's
    are (the run failed with "cannot open the journal … no such file or directory", exit 1),
    and the same command run again finds the finished work there."""
    one_vault_manifest(tmp_path)
    arguments = [str(VAULT_TOOL), "migrate", "batch", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--journal", "j/deep/run.sqlite"]
    first = subprocess.run(arguments, cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert first.returncode == 0 and "migrated 1," in first.stderr, first.stderr
    assert (tmp_path / "j" / "deep" / "run.sqlite").is_file() and (tmp_path / "out" / "a.vault").is_file()
    again = subprocess.run(arguments, cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert again.returncode == 0 and "done earlier 1," in again.stderr, again.stderr


def test_a_run_that_made_the_journal_but_lost_its_lock_removes_nothing(tmp_path):
    """Two runs at once: the first makes the journal, the second opens it and takes its lock
    before the first can. The first is refused (exit 4) and must not remove the file, which is
    the other run's now (it removed it, and the other's rollback file and folders with it). The
    lost race is made at the system call: flock fails as another holder makes it fail."""
    one_vault_manifest(tmp_path)
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=flock", "-e", "inject=flock:error=EAGAIN",
               str(VAULT_TOOL), "migrate", "batch", "--manifest", "jobs.jsonl", "--to", "2", "--out-dir", "out", "--journal", "j/run.sqlite"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 4 and "another migration run is using the journal" in result.stderr, result.stderr
    assert (tmp_path / "j" / "run.sqlite").exists()
    # Nor the output folder both runs may have made at once: the winner writes into it.
    assert (tmp_path / "out").is_dir()


def test_a_journal_named_dash_is_a_usage_error_and_no_file_is_made(tmp_path):
    """`--journal -`: a journal is a SQLite database, never a stream. A refusal's hint once
    suggested '-', and following it made a journal file named '-' in the current folder."""
    (tmp_path / "m.jsonl").write_text("")
    result = subprocess.run([str(VAULT_TOOL), "migrate", "--manifest", "m.jsonl", "--to", "2", "--out-dir", "out", "--journal", "-"],
                            capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 64, result.stderr
    assert "journal" in result.stderr and not (tmp_path / "-").exists() and not (tmp_path / "out").exists()


def test_a_slice_of_one_vault_without_its_key_is_said_not_refused(s3, proxy, tmp_path):
    """A nightly slice may hold only the vaults of households whose keys are not here (the
    image's walk-through failed so, one run in a dozen): one or two such vaults are a warning,
    three or more, or a whole run, still exit 66."""
    _, _, other, work, source = fleet_beside_other_keys(s3, tmp_path / "one", 1)
    code, report, stderr = run(["check", "--source", source, "--subset", "1/1", "--vault-key-dir", str(other)], proxy, work)
    assert code == 0 and "warning: none of the 1 vaults has its key" in stderr, stderr
    code, report, stderr = run(["check", "--source", source, "--vault-key-dir", str(other)], proxy, work)
    assert code == 66, stderr
    _, _, other, work, source = fleet_beside_other_keys(s3, tmp_path / "three", 3)
    code, report, stderr = run(["check", "--source", source, "--subset", "1/1", "--vault-key-dir", str(other)], proxy, work)
    assert code == 66 and "none of the 3 vaults has its key" in stderr, stderr


def fleet_beside_other_keys(s3, folder, households):
    """A fleet of `households` in a new bucket, and a key folder holding another fleet's key:
    (bucket, fleet, that folder, an empty work folder, the fleet's prefix)."""
    folder.mkdir(exist_ok=True)
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, households, folder / "keys")
    other = folder / "other-keys"
    other.mkdir()
    stray_key(other)
    work = folder / "work"
    work.mkdir()
    return bucket, fleet, other, work, f"s3://{bucket}/vaults/"
