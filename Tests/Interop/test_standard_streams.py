"""Standard output is an output like any file (issue 37): every command that writes to it is
run against a full disk (/dev/full) and a closed pipe. Each must fail with exit 1 and say so on
standard error (never exit 0 with the output lost, never die of SIGPIPE), and publish nothing,
or, where the command changes a shared store before it reports (a registry, a batch), leave a
state the same command finishes when run again. The table covers every leaf command of every
tool, read from the tools' own help, so a new command cannot escape the sweep."""
import os
import subprocess
from pathlib import Path

import pytest

from test_nothing_lost import (DEVICE, LOG_BATCH, NOW, PARENT_DEVICE, TIMEOUT, assert_unchanged, leaf_commands, snapshot,  # noqa: F401
                               template, tool, workspace)
from workspace import BIN, FIXTURES, URL

KEYS = "--key-file keys/parent.nsec"
ROTATION = "--key-file keys/parent.nsec --new-key-file keys/other.nsec"


class Entry:
    """A command writing to standard output. `publishes` names what it changes besides standard
    output (a file, a registry): a failure there must be finished by running it again."""
    def __init__(self, arguments, publishes=False, before=None):
        self.arguments, self.publishes, self.before = arguments, publishes, before

    def prepare(self, folder):
        """Runs what the entry needs first (a tool and its arguments), before any snapshot."""
        if self.before:
            result = tool(*self.before, folder)
            assert result.returncode == 0, result


STDOUT = {
    "vault-tool keygen": Entry("keygen"),
    "vault-tool derive": Entry(f"derive {KEYS}"),
    "vault-tool seal": Entry(f"seal {KEYS} testkit/ok-household.revealed.json"),
    "vault-tool open": Entry(f"open {KEYS} work.vault"),
    "vault-tool inspect": Entry(f"inspect {KEYS} work.vault --json"),
    "vault-tool check vault": Entry(f"check {KEYS} work.vault"),
    "vault-tool migrate vault": Entry(f"migrate {KEYS} --to 2 --dry-run work-v1.vault"),
    "vault-tool migrate batch": Entry("migrate --to 2 --manifest manifest.jsonl --out-dir batch", publishes=True),
    "vault-tool census": Entry("census testkit --json"),
    "vault-tool diff": Entry(f"diff {KEYS} work.vault base.vault"),
    "vault-tool merge": Entry(f"merge {KEYS} --base base.vault --ours ours.vault --theirs theirs.vault -o -"),
    "vault-tool log verify": Entry("log verify v3.vault"),
    # The operations go to standard output without --ops: a lost one publishes no vault.
    "vault-tool device add": Entry(f"device add {KEYS} --id N-STREAMS --name Streams --now {NOW} -o added.vault work.vault", publishes=True),
    "vault-tool device promote": Entry(f"device promote {KEYS} --json --ops ops.jsonl --now {NOW} -o promoted.vault work.vault B3E9A410",
                                       publishes=True),
    "vault-tool device rename": Entry(f"device rename {KEYS} --dry-run --json work.vault B3E9A410 Renamed"),
    "vault-tool device limit": Entry(f"device limit {KEYS} --json --ops ops.jsonl --now {NOW} -o limited.vault work.vault 5", publishes=True),
    "vault-tool log show": Entry("log show v3.vault"),
    "recovery-sheet generate": Entry(f"generate {KEYS} --dpi 100 --date 2026-01-01 --format png"),
    "recovery-sheet scan": Entry("scan sheet.png"),
    "recovery-sheet verify": Entry("verify sheet.png --vault work.vault --json"),
    "recovery-sheet words": Entry(f"words {KEYS}"),
    "recovery-sheet combine": Entry("combine tshares/share-1-of-2.png tshares/share-2-of-2.txt"),
    "recovery-sheet code new": Entry("code new --master-key-file mk.hex --user-id u --date 2026-01-01 --sheet new-code.png -o -"),
    "recovery-sheet code verify": Entry("code verify --blob blob.json --sheet code.png"),
    "recovery-sheet code unwrap": Entry("code unwrap --blob blob.json --sheet code.png"),
    "recovery-sheet code rotate": Entry("code rotate --blob blob.json --sheet code.png --sheet new-code.png --date 2026-01-01 -o -"),
    "rotation-planner plan": Entry(f"plan --vault work.vault {ROTATION}"),
    "rotation-planner show": Entry("show plan.json"),
    "rotation-planner apply": Entry(f"apply plan.json --vault work.vault {ROTATION} --out-dir rotated"),
    "rotation-planner verify": Entry(f"verify --out-dir applied {ROTATION} --json"),
    "device-revoker vault": Entry(f"vault {KEYS} --vault work.vault --device {DEVICE} --now {NOW} -o revoked.vault --ops -"),
    "device-revoker registry import": Entry(f"registry import --db registry.sqlite --devices more-devices.jsonl --now {NOW} --json"),
    "device-revoker registry devices": Entry("registry devices --db registry.sqlite --json"),
    "device-revoker registry revoke": Entry(f"registry revoke --db registry.sqlite --device did:plc:parent#ipad-1 --reason lost --force "
                                            f"--batch-id B-STREAMS --now {NOW}", publishes=True),
    "device-revoker registry members": Entry("registry members --db registry.sqlite --convo logconvo"),
    "device-revoker registry rejoin-plan": Entry("registry rejoin-plan --db registry.sqlite --device did:plc:new#n5",
                                                 before=("device-revoker", "registry import --db registry.sqlite --devices more-devices.jsonl "
                                                                           "--members more-members.jsonl")),
    "device-revoker registry log": Entry(f"registry log --db registry.sqlite --batch {LOG_BATCH}"),
    "device-link create": Entry(f"create {KEYS} --vault-url {URL} --now {NOW}"),
    "device-link read": Entry(f"read link.png --now {NOW}"),
    "device-link pairing create": Entry(f"pairing create --share-url https://icloud.example/s --parent-device-id {PARENT_DEVICE} "
                                        f"--shared-zone-id Z --now {NOW}"),
    "device-link pairing read": Entry(f"pairing read pair.png --now {NOW}"),
}

# Commands that write nothing to standard output, whatever they are given.
NO_STDOUT = {
    "vault-tool sample-fleet": "writes a folder; its summary goes to standard error",
    "recovery-sheet split": "writes a folder of sheets; its summary goes to standard error",
    "device-revoker registry init": "creates a registry; its note goes to standard error",
    "recovery-sheet _read-pdf": "the PDF reader's child side, run by scan, verify and combine (covered through them)",
    "vault-tool log start": "writes a household log beside the vault; its note goes to standard error",
    "vault-tool log grant": "writes the household log where it was read; its note goes to standard error",
    "vault-tool log withdraw": "writes the household log where it was read; its note goes to standard error",
}

# Commands that write standard output but need the S3 test server, which this sweep's workspace
# has not (issue 39 made them commands of their own): each names the test that sweeps it there.
ON_THE_OBJECT_STORE = {
    "vault-tool migrate bucket": "test_s3_standard_output.py::test_a_bucket_run_whose_standard_output_is_lost_fails_and_a_rerun_finishes",
    "vault-tool check bucket": "test_s3_standard_output.py::test_a_bucket_run_whose_standard_output_is_lost_fails_and_a_rerun_finishes",
}


def test_every_command_is_in_the_sweep():
    commands = set(leaf_commands())
    assert len(commands) >= 30, f"found only {sorted(commands)}: is --experimental-dump-help read correctly?"
    missing = sorted(commands - set(STDOUT) - set(NO_STDOUT) - set(ON_THE_OBJECT_STORE))
    assert not missing, f"commands neither swept nor said to write nothing to standard output: {missing}"
    unknown = sorted((set(STDOUT) | set(NO_STDOUT) | set(ON_THE_OBJECT_STORE)) - commands)
    for command, test in ON_THE_OBJECT_STORE.items():
        module, function = test.split("::")
        assert f"def {function}(" in (Path(__file__).parent / module).read_text(), f"{command}: no test {test}"
    assert not unknown, f"entries for commands the tools do not have: {unknown}"


def run(command, arguments, cwd, stdout):
    """Runs the command with `stdout` (a descriptor) as its standard output; returns (exit, stderr).
    Python restores SIGPIPE's default in the child, so a tool that did not ignore it dies of it."""
    process = subprocess.Popen([str(BIN / command.split()[0]), *arguments.split()], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=stdout, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"{command} did not finish in {TIMEOUT} s")
    return process.returncode, stderr.decode(errors="replace")


def closed_pipe():
    """A pipe whose reading end is closed before the tool starts: its first write is EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


def full_disk():
    return os.open("/dev/full", os.O_WRONLY)


@pytest.mark.parametrize("command", sorted(STDOUT))
@pytest.mark.parametrize("fault", ["full-disk", "closed-pipe"])
def test_a_lost_standard_output_fails_and_publishes_nothing(workspace, command, fault):
    entry = STDOUT[command]
    entry.prepare(workspace)
    before = snapshot(workspace)
    descriptor = full_disk() if fault == "full-disk" else closed_pipe()
    try:
        code, stderr = run(command, entry.arguments, workspace, descriptor)
    finally:
        os.close(descriptor)
    assert code == 1, f"{command} on a {fault}: exit {code} (SIGPIPE is -13); stderr: {stderr[-1500:]}"
    expected = "no space left on device" if fault == "full-disk" else "the reading end of the pipe was closed"
    assert f"could not write standard output" in stderr and expected in stderr, stderr[-1500:]
    if not entry.publishes:
        assert_unchanged(workspace, before, what=f"{command} with its standard output lost")
    # Whatever it did, the same command run again with a working standard output finishes.
    again = tool(command.split()[0], entry.arguments, workspace)
    assert again.returncode == 0, again
    assert again.stdout, f"{command} wrote nothing to standard output when run again"


@pytest.mark.parametrize("command", sorted(STDOUT))
def test_every_entry_writes_standard_output(workspace, command):
    """The sweep tests something: each entry, run normally, succeeds and writes to standard output."""
    STDOUT[command].prepare(workspace)
    result = tool(command.split()[0], STDOUT[command].arguments, workspace)
    assert result.returncode == 0, result
    assert result.stdout, f"{command} wrote nothing to standard output"


def test_a_lost_message_on_standard_error_fails_the_run(workspace):
    """A summary nobody got is no success: standard error on a full disk gives exit 1."""
    descriptor = full_disk()
    try:
        process = subprocess.run([str(BIN / "vault-tool"), "check", "--key-file", "keys/parent.nsec", "work.vault"], cwd=workspace,
                                 stdout=subprocess.DEVNULL, stderr=descriptor, timeout=TIMEOUT)
    finally:
        os.close(descriptor)
    # check writes its report to standard output: with nothing to say on standard error, a full
    # one changes nothing. A warning about the key file's mode is the message on standard error,
    # so the key is made readable by others next.
    assert process.returncode == 0
    os.chmod(workspace / "keys" / "parent.nsec", 0o644)
    descriptor = full_disk()
    try:
        process = subprocess.run([str(BIN / "vault-tool"), "check", "--key-file", "keys/parent.nsec", "work.vault"], cwd=workspace,
                                 stdout=subprocess.DEVNULL, stderr=descriptor, timeout=TIMEOUT)
    finally:
        os.close(descriptor)
    assert process.returncode == 1


def test_rotation_apply_with_operations_on_a_closed_pipe_then_run_again(workspace):
    """The operations on standard output go first: a closed pipe publishes neither vault, and the
    same command then applies the plan whole."""
    arguments = f"apply plan.json --vault work.vault {ROTATION} --out-dir rotated"
    descriptor = closed_pipe()
    try:
        code, stderr = run("rotation-planner apply", arguments, workspace, descriptor)
    finally:
        os.close(descriptor)
    assert code == 1, stderr
    assert not (workspace / "rotated").exists() or not any((workspace / "rotated").rglob("*.vault"))
    again = tool("rotation-planner", arguments, workspace)
    assert again.returncode == 0, again
    verify = tool("rotation-planner", f"verify --out-dir rotated {ROTATION}", workspace)
    assert verify.returncode == 0, verify


@pytest.mark.parametrize("moment", [2, 3])
def test_rotation_apply_killed_between_its_outputs_is_finished_by_running_it_again(workspace, moment):
    """SIGKILL at the new vault's publication (the second file named: the operations file is the
    first), or at the tombstone's (the third, with the new vault published): the rerun finishes
    the rotation, writing operations that match the new vault there. Each is a new file, named
    by link(2); a replaced one would be by rename(2)."""
    arguments = f"apply plan.json --vault work.vault {ROTATION} --out-dir rotated --ops ops.jsonl"
    call, when = "link,linkat,rename,renameat,renameat2", moment
    killed = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={when}",
                             str(BIN / "rotation-planner"), *arguments.split()], cwd=workspace, capture_output=True, timeout=TIMEOUT)
    assert killed.returncode != 0, killed.stderr
    again = tool("rotation-planner", arguments, workspace)
    assert again.returncode == 0, again
    verify = tool("rotation-planner", f"verify --out-dir rotated {ROTATION} --json", workspace)
    assert verify.returncode == 0, verify
    assert (workspace / "ops.jsonl").read_text().count("\n") > 0


# Commands whose report on standard output (--json) describes a file they write: the report is
# published first, so a lost report leaves no file behind, and the same command runs again.
REPORTS_BESIDE_A_FILE = [
    ("recovery-sheet scan", "scan sheet.png -o restored.nsec --json", "restored.nsec"),
    ("vault-tool merge", f"merge {KEYS} --base base.vault --ours ours.vault --theirs theirs.vault -o merged.vault --json", "merged.vault"),
    ("device-revoker vault", f"vault {KEYS} --vault work.vault --device {DEVICE} --now {NOW} -o revoked.vault --json", "revoked.vault"),
]


@pytest.mark.parametrize("command,arguments,written", REPORTS_BESIDE_A_FILE, ids=[r[0] for r in REPORTS_BESIDE_A_FILE])
@pytest.mark.parametrize("fault", ["full-disk", "closed-pipe"])
def test_a_lost_report_publishes_no_file_it_describes(workspace, command, arguments, written, fault):
    before = snapshot(workspace)
    descriptor = full_disk() if fault == "full-disk" else closed_pipe()
    try:
        code, stderr = run(command, arguments, workspace, descriptor)
    finally:
        os.close(descriptor)
    assert code == 1, stderr
    assert_unchanged(workspace, before, what=f"{command} with its report lost")
    again = tool(command.split()[0], arguments, workspace)
    assert again.returncode == 0, again
    assert (workspace / written).is_file() and again.stdout


# Two inputs named `-` read one stream as two files, the second getting what the first left (a
# trial: `--vault-key-file - --signer-key-file -` read both keys as one and said "should hold 64
# hex characters"). The write path's declaration of inputs refuses it for every command, before
# anything is read: exit 64, both options named, nothing written.
SIGNER = "--vault-key-file - --signer-key-file -"
TWO_FROM_STANDARD_INPUT = [
    ("vault-tool", f"device rename {SIGNER} -o out.vault h.vault Kitchen Den"),
    ("vault-tool", f"device promote {SIGNER} -o out.vault h.vault Bedroom"),
    ("vault-tool", f"device limit {SIGNER} -o out.vault h.vault 5"),
    ("vault-tool", "device add --key-file - --signer-key-file - --id 11111111-2222-4333-8444-555555555555 --name Den -o out.vault --ops ops.jsonl h.vault"),
    ("vault-tool", f"merge {SIGNER} --base h.vault --ours h.vault --theirs h.vault -o out.vault"),
    ("vault-tool", "check --vault-key-file - --log - h.vault"),
    ("device-revoker", f"vault {SIGNER} --vault h.vault --device Bedroom --now {NOW} -o out.vault"),
]


@pytest.mark.parametrize("program,arguments", TWO_FROM_STANDARD_INPUT, ids=[f"{p} {a.split(' --')[0]}" for p, a in TWO_FROM_STANDARD_INPUT])
def test_two_inputs_from_standard_input_are_refused_before_anything_is_read(tmp_path, program, arguments):
    keys = FIXTURES / "keys"
    made = subprocess.run([str(BIN / "vault-tool"), "migrate", "--key-file", str(keys / "parent.nsec"), "--to", "3", "-o", "h.vault",
                           str(FIXTURES / "testkit" / "ok-v2-household.vault")], cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    before = sorted(p.name for p in tmp_path.iterdir())
    result = subprocess.run([str(BIN / program), *arguments.split()], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
                            input=(keys / "parent.vaultkey").read_text() + (keys / "other.nsec").read_text())
    assert result.returncode == 64, (result.returncode, result.stderr)
    assert "only one input may read standard input" in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
