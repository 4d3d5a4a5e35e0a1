"""Retries as the AWS SDKs' standard mode, and a run that stops when the store goes away.

Through a counting proxy (s3fleet.CountingProxy) in front of the SeaweedFS server scripts/test
starts: the attempts of a request are counted at the proxy, not timed. `AWS_MAX_ATTEMPTS` and
`AWS_RETRY_MODE`, or the profile's `max_attempts` and `retry_mode`, set them (3 by default, 5 in
legacy mode); a store that drops every connection stops a bucket run after 5 vaults in a row,
the rest left pending in the journal, exit 75, and the rerun migrates every vault exactly once.
"""
import sqlite3
import subprocess

import pytest

import s3fleet
from s3fleet import Fleet, finish, migrate, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")


@pytest.mark.parametrize("setting, profile, attempts", [
    ({}, None, 3),
    ({"AWS_MAX_ATTEMPTS": "1"}, None, 1),
    ({"AWS_MAX_ATTEMPTS": "4"}, None, 4),
    ({"AWS_RETRY_MODE": "legacy"}, None, 5),
    ({"AWS_RETRY_MODE": "adaptive"}, None, 3),
    ({}, "max_attempts = 2\nretry_mode = standard\n", 2),
    ({"AWS_MAX_ATTEMPTS": "4"}, "max_attempts = 2\n", 4),
])
def test_the_attempts_of_a_request_are_the_sdks(s3, proxy, tmp_path, setting, profile, attempts):
    """A store that throttles every request: the listing of a census is sent exactly as many
    times as the mode and the attempts say, and the run exits 75 naming the count."""
    bucket = s3fleet.new_bucket(s3)
    env = tool_environment(endpoint=proxy.endpoint)
    if profile is not None:
        (tmp_path / "config").write_text("[default]\n" + profile)
        env["AWS_CONFIG_FILE"] = str(tmp_path / "config")
    env.update(setting)
    proxy.slow_down(None)
    result = subprocess.run([VAULT_TOOL, "census", f"s3://{bucket}/vaults/"], env=env, capture_output=True, timeout=300)
    stderr = result.stderr.decode()
    assert result.returncode == 75, stderr
    assert len(proxy.throttled()) == attempts, (proxy.throttled(), stderr)
    assert f"answered HTTP 503 SlowDown to {attempts} attempt{'s' if attempts > 1 else ''} while reading" in stderr


def test_a_store_that_recovers_within_the_attempts_is_not_a_failure(s3, proxy, tmp_path):
    """Two 503s, then the store answers: the third attempt gets through and the vault migrates."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 1, tmp_path / "keys")
    env = tool_environment(endpoint=proxy.endpoint)
    (path,) = fleet.by_path
    proxy.slow_down(2, when=lambda method, p: p.endswith(path))
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir",
                                             str(tmp_path / "keys"), "--journal", str(tmp_path / "j.sqlite")], env=env, cwd=tmp_path))
    assert status == 0, stderr
    assert [line["status"] for line in report] == ["migrated"]
    assert len(proxy.throttled()) == 2 and fleet.read(path)[2] == 2


def test_a_store_that_goes_away_stops_the_run_and_the_rerun_finishes_it(s3, proxy, tmp_path):
    """Every connection for a vault is closed unanswered (a store that died): after 5 vaults in a
    row failed, the run stops, says the store went away and how many vaults were not started,
    and exits 75; those are not in the journal. With the store back, the same command migrates
    every vault exactly once (journal completions 1 each) and redoes none."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 40, tmp_path / "keys")
    env = tool_environment(endpoint=proxy.endpoint)
    arguments = ["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                 "--journal", str(tmp_path / "journal.sqlite"), "--jobs", "2"]
    proxy.drop(lambda method, path: path.endswith(".vault"))
    status, report, stderr = finish(migrate(arguments, env=env, cwd=tmp_path))
    assert status == 75, stderr
    assert 5 <= len(report) <= 5 + 1 and {line["status"] for line in report} == {"failed"}, report
    assert all(line["exit"] == 75 and "could not reach the object store" in line["error"] for line in report), report[:2]
    assert "the object store went away, so the run stopped" in stderr and f"{40 - len(report)} vaults were not started" in stderr, stderr
    # Each failed vault's read was tried 3 times (the standard mode), and no other vault was read;
    # libcurl itself sends a request once more when a kept-alive connection turns out closed
    # (at most once a worker, the first time its connection from the listing is reused).
    dropped = proxy.dropped()
    assert 3 * len(report) <= len(dropped) <= 3 * len(report) + 2 and len(set(dropped)) == len(report), (len(dropped), len(report))
    journal = sqlite3.connect(tmp_path / "journal.sqlite")
    rows = journal.execute("SELECT state, count(*) FROM object GROUP BY state").fetchall()
    journal.close()
    assert rows == [("failed", len(report))], rows

    proxy.drop(None)
    status, report, stderr = finish(migrate(arguments, env=env, cwd=tmp_path))
    assert status == 0, stderr
    assert len(report) == 40 and {line["status"] for line in report} == {"migrated"}
    assert all(fleet.read(path)[2] == 2 for path in fleet.by_path)
    journal = sqlite3.connect(tmp_path / "journal.sqlite")
    assert journal.execute("SELECT count(*) FROM object WHERE state = 'done' AND completions = 1").fetchone()[0] == 40
    journal.close()


def test_an_answer_that_no_retry_mends_stops_the_run_at_once_with_78(s3, proxy, tmp_path):
    """A bucket run whose vaults are denied (403 AccessDenied for every vault, as a bucket policy
    would): the first answer stops the run, exit 78 (EX_CONFIG), no retries of it."""
    bucket = s3fleet.new_bucket(s3)
    Fleet(s3, bucket, 20, tmp_path / "keys")
    env = tool_environment(endpoint=proxy.endpoint)
    proxy.deny(lambda method, path: path.endswith(".vault"))
    status, report, stderr = finish(migrate(["--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir",
                                             str(tmp_path / "keys"), "--journal", str(tmp_path / "j.sqlite"), "--jobs", "2"],
                                            env=env, cwd=tmp_path))
    assert status == 78, stderr
    assert 1 <= len(report) <= 2 and all(line["exit"] == 78 for line in report), report
    assert "refused access" in stderr and "(AccessDenied)" in stderr
    assert len(proxy.denied()) == len(report)


def pwrite_calls(arguments, env, cwd):
    """How many pwrite64 calls (the journal's writes) a whole run makes."""
    counted = subprocess.run(["strace", "-f", "-c", "-U", "name,calls", "-e", "trace=pwrite64", VAULT_TOOL, "migrate", *arguments],
                             capture_output=True, cwd=cwd, env=env, text=True, timeout=600)
    calls = [int(line.split()[1]) for line in counted.stderr.splitlines() if line.strip().startswith("pwrite64")]
    assert calls and calls[0] > 10, counted.stderr
    return calls[0]


def test_sigterm_stops_the_run_between_vaults_and_the_rerun_finishes_it(s3, tmp_path):
    """SIGTERM (how an engine stops a pod), sent by strace at the journal write halfway through a
    run, not by a timer: the vault in flight finishes and is recorded, no other starts, the
    summary is printed and the run exits 75; nothing is left `writing` in the journal, and the
    rerun migrates the rest, every vault exactly once."""
    bucket = s3fleet.new_bucket(s3)
    env = tool_environment()
    # The same run on a twin fleet counts the journal's writes.
    twin = s3fleet.new_bucket(s3)
    Fleet(s3, twin, 30, tmp_path / "keys")
    fleet = Fleet(s3, bucket, 30, tmp_path / "keys")

    def arguments(name, journal):
        return ["--source", f"s3://{name}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
                "--journal", str(tmp_path / journal), "--jobs", "1"]

    halfway = pwrite_calls(arguments(twin, "twin.sqlite"), env, tmp_path) // 2
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64", "-e", f"inject=pwrite64:signal=TERM:when={halfway}",
               VAULT_TOOL, "migrate", *arguments(bucket, "journal.sqlite")]
    result = subprocess.run(command, capture_output=True, cwd=tmp_path, env=env, timeout=600)
    stderr = result.stderr.decode()
    assert result.returncode == 75, stderr
    report = report_lines(result.stdout)
    assert 0 < len(report) < 30 and {line["status"] for line in report} == {"migrated"}, report
    assert f"stopped by SIGTERM after the vaults in flight; {30 - len(report)} vaults were not started" in stderr, stderr
    assert f"migrated {len(report)}, " in stderr  # the summary
    journal = sqlite3.connect(tmp_path / "journal.sqlite")
    assert journal.execute("SELECT state, count(*) FROM object GROUP BY state").fetchall() == [("done", len(report))]
    journal.close()

    status, rerun, stderr = finish(migrate(arguments(bucket, "journal.sqlite"), env=env, cwd=tmp_path))
    assert status == 0, stderr
    assert sorted(line["status"] for line in rerun) == sorted(["previously-done"] * len(report) + ["migrated"] * (30 - len(report)))
    assert all(fleet.read(path)[2] == 2 for path in fleet.by_path)
    journal = sqlite3.connect(tmp_path / "journal.sqlite")
    assert journal.execute("SELECT count(*) FROM object WHERE state = 'done' AND completions = 1").fetchone()[0] == 30
    journal.close()


def test_log_format_json_makes_both_streams_merged_json_lines(s3, proxy, tmp_path):
    """--log-format json with standard output and error in one pipe (2>&1, as a container log
    merges them): every line parses as JSON; the report lines are unchanged, and the summary,
    the error and its hint are events with an RFC 3339 time, a level and the tool's name. The
    rolling check and the census take it too."""
    import datetime
    import json
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 6, tmp_path / "keys")
    throttled = sorted(fleet.by_path)[0]
    proxy.slow_down(None, when=lambda method, path: path.endswith(throttled))
    env = tool_environment(endpoint=proxy.endpoint)
    env["AWS_MAX_ATTEMPTS"] = "1"
    runs = [
        ["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place", "--vault-key-dir", str(tmp_path / "keys"),
         "--journal", str(tmp_path / "j.sqlite"), "--log-format", "json"],
        ["check", "--source", f"s3://{bucket}/vaults/", "--vault-key-dir", str(tmp_path / "keys"), "--log-format", "json"],
        ["census", "--json", f"s3://{bucket}/vaults/", "--log-format", "json"],
    ]
    for arguments in runs:
        result = subprocess.run([VAULT_TOOL, *arguments], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        text = result.stdout.decode()
        if arguments[0] == "census":
            # Its report is one pretty JSON document; its messages alone are JSON Lines.
            result = subprocess.run([VAULT_TOOL, *arguments], env=env, cwd=tmp_path, capture_output=True, timeout=300)
            text = result.stderr.decode()
        lines = [json.loads(line) for line in text.splitlines()]
        events = [line for line in lines if "event" in line]
        for event in events:
            assert set(event) >= {"time", "level", "event", "tool", "message"}, event
            assert event["level"] in ("info", "warning", "error") and event["tool"] == "vault-tool", event
            datetime.datetime.fromisoformat(event["time"].replace("Z", "+00:00"))
        if arguments[0] == "migrate":
            assert result.returncode == 75, text
            report = [line for line in lines if "vault" in line]
            assert len(report) == 6 and sum(line["status"] == "failed" for line in report) == 1
            assert [e["event"] for e in events] == ["summary", "error"], events
            assert events[0]["message"].startswith("migrated 5, ") and events[1]["level"] == "error"
            assert "hint" in events[1] and "run the same command again later" in events[1]["hint"]
        elif arguments[0] == "check":
            assert result.returncode == 75, text
            assert events and events[-1]["event"] == "error", events
        else:
            assert result.returncode == 75 and events[-1]["event"] == "error", text
