"""A fleet's keys from a command (issue 38): `--vault-key-command CMD` of `migrate --source` and
`check --source`, as restic's --password-command, instead of a folder of key files.

Against the SeaweedFS server scripts/test starts, with boto3 and the independent vault reference
(vaultref.py, through s3fleet) making the fleet. The command here is a small Python program
that reads the household id from HVT_HOUSEHOLD, prints that household's key from a folder, exits
66 when it holds none, and logs each run (its argv and household) so the tests see how often it
ran and with what. The contract (docs/fleet.md): printed key → used; exit 66 → `no-key`; any
other failure → the run stops with exit 78 before it opens another vault, quoting nothing the
command printed; never run for --help.
"""
import json
import os
import stat
import subprocess
import sys

import pytest

import s3fleet
from s3fleet import Fleet, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")

LOOKUP = """import os, sys
household = os.environ["HVT_HOUSEHOLD"]
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"argv": sys.argv, "household": household}) + "\\n")
path = os.path.join(sys.argv[2], household + ".vaultkey")
if not os.path.exists(path):
    sys.exit(66)
sys.stdout.write(open(path).read())
"""


@pytest.fixture
def fleet(tmp_path):
    """12 households, 3 of them without a key in keys/; the lookup program beside them."""
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 12, tmp_path / "keys", without_keys=3)
    (tmp_path / "lookup.py").write_text("import json\n" + LOOKUP)
    return fleet, tmp_path


def run(arguments, cwd):
    result = subprocess.run([VAULT_TOOL, *arguments], env=tool_environment(), cwd=cwd, capture_output=True, timeout=600)
    return result.returncode, report_lines(result.stdout), result.stderr.decode()


def lookup_command(folder, keys="keys"):
    return f"{sys.executable} lookup.py {folder / 'runs.jsonl'} {keys}"


def runs(folder):
    path = folder / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def secrets(fleet):
    return [h.vault_key.hex() for h in fleet.households]


def test_a_key_command_checks_a_fleet_as_its_key_folder_does_asking_once_a_household(fleet):
    fleet, folder = fleet
    source = f"s3://{fleet.bucket}/vaults/"
    code, by_folder, stderr = run(["check", "--source", source, "--vault-key-dir", "keys"], folder)
    assert code == 0, stderr
    code, by_command, stderr = run(["check", "--source", source, "--vault-key-command", lookup_command(folder)], folder)
    assert code == 0, stderr
    status = lambda lines: {line["object"]: line["status"] for line in lines}
    assert status(by_command) == status(by_folder)
    assert sorted(status(by_command).values()) == ["no-key"] * 3 + ["ok"] * 9
    # Once per household, the household in HVT_HOUSEHOLD, never on the command line.
    asked = runs(folder)
    assert sorted(run["household"] for run in asked) == sorted(h.household_id.hex() for h in fleet.households)
    for secret in secrets(fleet):
        assert secret not in stderr and all(secret not in argument for entry in asked for argument in entry["argv"])


def test_workers_meeting_one_households_vaults_together_run_its_command_once(fleet):
    """Four copies of each household's vault and 16 workers: the copies of one household are met
    together, and the lookup takes a while (as a secrets manager's does), so every worker but the
    first asks while the command runs; each must wait for that answer, not run its own."""
    fleet, folder = fleet
    for h in fleet.households:
        for copy in range(3):
            fleet.s3.copy_object(Bucket=fleet.bucket, Key=h.vault_path.replace(".vault", f"-copy{copy}.vault"),
                                 CopySource={"Bucket": fleet.bucket, "Key": h.vault_path})
    slow = folder / "slow-lookup.py"
    slow.write_text("import json, time\ntime.sleep(0.3)\n" + LOOKUP)
    command = f"{sys.executable} slow-lookup.py {folder / 'runs.jsonl'} keys"
    code, lines, stderr = run(["check", "bucket", "--source", f"s3://{fleet.bucket}/vaults/", "--vault-key-command", command,
                               "--jobs", "16"], folder)
    assert code == 0, stderr
    assert len(lines) == 4 * len(fleet.households)
    asked = [entry["household"] for entry in runs(folder)]
    assert sorted(asked) == sorted(h.household_id.hex() for h in fleet.households), "a household's command ran more than once"


def test_a_key_command_migrates_a_fleet_in_place_and_keyless_households_are_no_key(fleet):
    fleet, folder = fleet
    code, lines, stderr = run(["migrate", "--source", f"s3://{fleet.bucket}/vaults/", "--to", "2", "--in-place",
                               "--vault-key-command", lookup_command(folder)], folder)
    assert code == 0, stderr
    by_path = {line["vault"].removeprefix(f"s3://{fleet.bucket}/"): line["status"] for line in lines}
    assert by_path == {h.vault_path: "no-key" if h.vault_path in fleet.keyless else "migrated" for h in fleet.households}
    for h in fleet.households:
        sealed, _, schema = fleet.read(h.vault_path)
        assert schema == (1 if h.vault_path in fleet.keyless else 2), h.vault_path
    assert len(runs(folder)) == len(fleet.households)
    assert all(secret not in stderr for secret in secrets(fleet))


def test_a_command_that_holds_no_key_of_the_fleet_is_exit_66_as_a_foreign_folder(fleet):
    fleet, folder = fleet
    (folder / "empty").mkdir()
    code, lines, stderr = run(["check", "--source", f"s3://{fleet.bucket}/vaults/", "--vault-key-command", lookup_command(folder, "empty")], folder)
    assert code == 66, stderr
    assert "none of the 12 vaults has its key in the vault-key command" in stderr, stderr
    assert {line["status"] for line in lines} == {"no-key"}


def failing_commands(folder):
    (folder / "printer.py").write_text("import sys; sys.stdout.write(sys.argv[1]); sys.exit(int(sys.argv[2]))")
    (folder / "not-executable").write_text("#!/bin/sh\necho 00\n")
    (folder / "not-executable").chmod(0o644)
    (folder / "killer.py").write_text("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    garbage = "nsec1-no-vault-key-" + "q" * 40
    return [
        ("no-such-hvt-key-command", "could not be run (no such file or directory)"),
        (str(folder / "not-executable"), "could not be run (permission denied)"),
        (f"{sys.executable} printer.py {'a' * 64} 1", "exited with status 1"),
        (f"{sys.executable} killer.py", "was killed by signal 9"),
        (f"{sys.executable} printer.py {garbage} 0", "printed no vault key (64 hex digits)"),
        ("true", "printed nothing"),
    ], garbage


@pytest.mark.parametrize("mode", ["check", "migrate"])
def test_a_failing_key_command_stops_the_run_with_78_before_another_vault_and_quotes_nothing(fleet, mode):
    fleet, folder = fleet
    source = f"s3://{fleet.bucket}/vaults/"
    cases, garbage = failing_commands(folder)
    before = {h.vault_path: fleet.read(h.vault_path)[1] for h in fleet.households}
    for command, problem in cases:
        arguments = (["check", "--source", source] if mode == "check" else ["migrate", "--source", source, "--to", "2", "--in-place"])
        code, lines, stderr = run([*arguments, "--jobs", "1", "--vault-key-command", command], folder)
        assert code == 78, (command, stderr)
        program = command.split()[0]
        assert f"the vault-key command '{program}' {problem} for household " in stderr, (command, stderr)
        assert "the run stopped before opening another vault" in stderr
        assert "exit 66 when it holds none" in stderr
        # One object read, no vault opened or reported: the run stopped at the first household.
        assert lines == [], (command, lines)
        assert garbage not in stderr and "a" * 64 not in stderr
    # Not one vault was written.
    assert {h.vault_path: fleet.read(h.vault_path)[1] for h in fleet.households} == before


def test_a_key_command_is_not_run_for_help_nor_beside_a_key_folder(fleet):
    fleet, folder = fleet
    marker = folder / "ran"
    source = f"s3://{fleet.bucket}/vaults/"
    for arguments in (["check", "--source", source], ["migrate", "--source", source, "--to", "2", "--in-place"]):
        result = subprocess.run([VAULT_TOOL, *arguments, "--vault-key-command", f"touch {marker}", "--help"], env=tool_environment(),
                                cwd=folder, capture_output=True, timeout=120)
        assert result.returncode == 0 and b"--vault-key-command" in result.stdout and not marker.exists(), result.stderr
        code, lines, stderr = run([*arguments, "--vault-key-command", f"touch {marker}", "--vault-key-dir", "keys"], folder)
        assert code == 64 and lines == [] and "give --vault-key-dir or --vault-key-command, not both" in stderr and not marker.exists(), stderr
