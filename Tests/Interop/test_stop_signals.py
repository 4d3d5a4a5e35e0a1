"""SIGTERM during a folder batch (issue 38): sent by strace at the journal write halfway through
the run, not by a timer. The group of vaults in flight finishes and is recorded, no other group
starts, the summary is printed and the batch exits 75 (a job engine reruns it); the rerun
finishes the rest, and every output is there once, each the migration of its vault."""
import json
import shutil
import sqlite3
import subprocess

from workspace import BIN, FIXTURES

COUNT = 300


def prepare(folder):
    (folder / "keys").mkdir()
    shutil.copy(FIXTURES / "keys" / "parent.nsec", folder / "keys" / "parent.nsec")
    (folder / "keys" / "parent.nsec").chmod(0o600)
    for i in range(COUNT):
        shutil.copy(FIXTURES / "testkit" / "ok-household.vault", folder / f"batch-{i}.vault")
    (folder / "manifest.jsonl").write_text("".join(f'{{"vault": "batch-{i}.vault", "keyFile": "keys/parent.nsec"}}\n' for i in range(COUNT)))


ARGUMENTS = ["migrate", "--to", "2", "--manifest", "manifest.jsonl", "--out-dir", "out", "--jobs", "1"]


def test_sigterm_stops_a_folder_batch_between_groups_and_the_rerun_finishes_it(tmp_path):
    twin, folder = tmp_path / "twin", tmp_path / "run"
    for place in (twin, folder):
        place.mkdir()
        prepare(place)
    counted = subprocess.run(["strace", "-f", "-c", "-U", "name,calls", "-e", "trace=pwrite64", str(BIN / "vault-tool"), *ARGUMENTS],
                             capture_output=True, cwd=twin, text=True, timeout=600)
    calls = [int(line.split()[1]) for line in counted.stderr.splitlines() if line.strip().startswith("pwrite64")]
    assert counted.returncode == 0 and calls and calls[0] > 10, counted.stderr
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64", "-e", f"inject=pwrite64:signal=TERM:when={calls[0] // 2}",
               str(BIN / "vault-tool"), *ARGUMENTS]
    result = subprocess.run(command, capture_output=True, cwd=folder, timeout=600)
    stderr = result.stderr.decode()
    assert result.returncode == 75, stderr
    report = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert 0 < len(report) < COUNT and {line["status"] for line in report} == {"migrated"}, stderr
    assert f"stopped by SIGTERM after the vaults in flight; {COUNT - len(report)} vaults were not started" in stderr, stderr
    assert f"migrated {len(report)}, " in stderr
    journal = sqlite3.connect(folder / "out.migrate-journal.sqlite")
    done = journal.execute("SELECT count(*) FROM job WHERE state = 'done'").fetchone()[0]
    journal.close()
    assert done == len(report)
    assert len(list((folder / "out").iterdir())) == len(report)

    rerun = subprocess.run([str(BIN / "vault-tool"), *ARGUMENTS], capture_output=True, cwd=folder, timeout=600)
    assert rerun.returncode == 0, rerun.stderr.decode()
    lines = [json.loads(line) for line in rerun.stdout.decode().splitlines()]
    assert sorted(line["status"] for line in lines) == sorted(["previously-done"] * len(report) + ["migrated"] * (COUNT - len(report)))
    outputs = sorted(path.name for path in (folder / "out").iterdir())
    assert outputs == sorted(path.name for path in (twin / "out").iterdir()) and len(outputs) == COUNT
