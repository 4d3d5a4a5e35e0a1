"""The workspace every black-box test of the command-line tools starts from (issues 8 and 16).

One folder holds every input the writers read: the test keys, the testkit's vaults, a
recovery sheet, a code blob and its sheet, a device-link QR, a rotation plan, a registry and
a batch manifest. Tests copy it and run the tools inside the copy.
"""
import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

# The one place the tests find the tools: scripts/test names the debug build's vault-tool in
# VAULT_TOOL, and the others sit beside it.
BIN = Path(os.environ.get("VAULT_TOOL", ".build/debug/vault-tool")).parent.absolute()
VAULT_TOOL = str(BIN / "vault-tool")
RECOVERY_SHEET = str(BIN / "recovery-sheet")
ROTATION_PLANNER = str(BIN / "rotation-planner")
DEVICE_REVOKER = str(BIN / "device-revoker")
DEVICE_LINK = str(BIN / "device-link")
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests" / "Fixtures"
CORPUS = ROOT / "Fuzz" / "Corpus"
# The family of the workspace's Family Medical registry (medical.sqlite).
MEDICAL_USER = "00000000-0000-4000-8000-00000000a001"
URL = "https://minio.example/b/vaults/0a92686c7aa4ac0f39bf3a8c6cc4078ef7683ed020866e18320156f952336b4e.vault"


TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]


def command_tree(shown_only=False):
    """Every command of every tool as (path, description), parents before their subcommands,
    from the tools' own `--experimental-dump-help` (the tool info swift-argument-parser gives its
    manual and documentation plug-ins): the sweeps enumerate commands from here, so a command
    added tomorrow is swept without editing a test. `shown_only` leaves out hidden commands
    (recovery-sheet's `_read-pdf`: the tool's own plumbing)."""
    found = []
    for tool in TOOLS:
        result = subprocess.run([str(BIN / tool), "--experimental-dump-help"], capture_output=True, timeout=20)
        assert result.returncode == 0, result.stderr

        def walk(command, path):
            found.append((path, command))
            for sub in command.get("subcommands") or []:
                if not shown_only or sub.get("shouldDisplay", True):
                    walk(sub, path + [sub["commandName"]])

        walk(json.loads(result.stdout)["command"], [tool])
    return found


def run(tool, arguments, **options):
    return subprocess.run([str(BIN / tool), *arguments.split()], capture_output=True, **options)


# How a run killed with SIGKILL under strace ends (strace ends itself with its tracee's signal).
KILLED = (-9, 137)


def killed_at(syscalls, call):
    """The strace command line that kills what follows it with SIGKILL at its `call`th call of
    any of `syscalls` (comma-separated), as test_faults.py kills: at a moment named by a system
    call, never by a clock. strace counts the calls of each thread on its own."""
    return ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscalls}", "-e", f"inject={syscalls}:signal=KILL:when={call}"]


def calls_of(syscalls, argv, **options):
    """How many calls of `syscalls` a whole run of argv makes, every thread together (strace -c)."""
    counted = subprocess.run(["strace", "-f", "-c", "-U", "name,calls", "-e", f"trace={syscalls}", *map(str, argv)],
                             capture_output=True, text=True, **options)
    assert counted.returncode == 0, counted.stderr
    return sum(int(line.split()[1]) for line in counted.stderr.splitlines() if line.split()[:1] and line.split()[0] in syscalls.split(","))


def wait_until(condition, what, timeout=300):
    """Waits for an event the test sees (a count reached, a line read), not for a time to pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.01)


def timed(argv, statistics):
    """argv run under GNU time, which writes its figures to `statistics` (read by peak_kib)."""
    return ["/usr/bin/time", "-v", "-o", str(statistics), *map(str, argv)]


def peak_kib(statistics):
    """The peak resident memory, in KiB, of the command `timed` ran; the figures are removed."""
    text = Path(statistics).read_text()
    Path(statistics).unlink()
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))


def catbird_registry(path, devices):
    """A Catbird registry of `devices` devices made by device-revoker and filled by SQL as
    scripts/bench-registry fills it: five devices a user (did:plc:uU#dI, user U = I / 5), each
    in five conversations of ten whose first member is the admin, last seen over the 1,000
    days before 2026."""
    made = subprocess.run([str(BIN / "device-revoker"), "registry", "init", "--db", str(path)], capture_output=True)
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(path) as db:
        db.executescript(f"""
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {devices} - 1)
            INSERT INTO user_devices (user_did, device_id, device_mls_did, device_name, signature_public_key, key_packages_available,
                                      last_seen, registered_at)
            SELECT 'did:plc:u' || (i / 5), 'd' || i, 'did:plc:u' || (i / 5) || '#d' || i, 'Device ' || i, randomblob(32), 3,
                   strftime('%Y-%m-%dT%H:%M:%SZ', '2026-01-01', '-' || ((i * 7919) % 1000) || ' days'), '2022-01-01T00:00:00Z' FROM n;
            WITH RECURSIVE n(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM n WHERE j < {devices * 5} - 1),
            picked(convo, k, device) AS (SELECT j / 10, j % 10, ((j / 10) * 10 + (j % 10) * 100003) % {devices} FROM n)
            INSERT INTO members (convo_id, member_mls_did, user_did, device_id, joined_at, is_admin)
            SELECT 'c' || convo, 'did:plc:u' || (device / 5) || '#d' || device, 'did:plc:u' || (device / 5), 'd' || device,
                   '2024-01-01T00:00:00Z', k = 0 FROM picked;
            """)
    return path


# System call numbers /proc/PID/syscall names, on the machines the suite is built for.
SYSTEM_CALLS = {"x86_64": {"read": 0, "write": 1}, "aarch64": {"read": 63, "write": 64}}[platform.machine()]


def in_system_call(pid, name, descriptor):
    """Whether `pid` is blocked in system call `name` ("read", "write") on `descriptor`: its
    /proc syscall line, the call's number and then its first argument."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == str(SYSTEM_CALLS[name]) and int(fields[1], 16) == descriptor


def make_template(folder):
    """Fills `folder` with every input the writers read, and returns it."""
    shutil.copytree(FIXTURES / "testkit", folder / "testkit")
    shutil.copytree(FIXTURES / "keys", folder / "keys")
    for key in (folder / "keys").iterdir():
        key.chmod(0o600)
    shutil.copy(FIXTURES / "testkit" / "ok-v2-household.vault", folder / "work.vault")
    shutil.copy(FIXTURES / "testkit" / "ok-household.vault", folder / "work-v1.vault")
    (folder / "mk.hex").write_text("11" * 32 + "\n")
    (folder / "mk.hex").chmod(0o600)
    steps = [
        ("recovery-sheet", "generate --key-file keys/parent.nsec --dpi 100 -o sheet.png"),
        ("recovery-sheet", "code new --master-key-file mk.hex --user-id u -o blob.json --sheet code.png"),
        ("recovery-sheet", "words --key-file keys/parent.nsec -o words.txt"),
        ("device-link", f"create --key-file keys/parent.nsec --vault-url {URL} --now 2026-01-01T00:00:00Z -o link.png"),
        ("rotation-planner", "plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec -o plan.json"),
        # A schema 3 vault with its household log (v3.log), and a grant to the other test key.
        ("vault-tool", "migrate --key-file keys/parent.nsec --to 3 -o v3.vault work.vault"),
        ("vault-tool", f"log grant --key-file keys/parent.nsec --to {(FIXTURES / 'keys' / 'other.npub').read_text().strip()} --allow revoke "
                       "--until 2099-01-01 v3.vault"),
        ("device-revoker", "registry init --db registry.sqlite"),
        # Family Medical's registry (seed 002): one family's devices, two of them iPads.
        ("device-revoker", "registry init --db medical.sqlite --schema family-medical"),
        ("device-revoker", "registry import --db medical.sqlite --devices medical-devices.jsonl --now 2026-01-01T00:00:00Z"),
        ("device-revoker", f"registry import --db registry.sqlite --devices {CORPUS}/import/devices.jsonl --members {CORPUS}/import/members.jsonl"),
    ]
    (folder / "medical-devices.jsonl").write_text("".join(
        f'{{"device_id": "00000000-0000-4000-8000-00000000d00{i}", "user_id": "{MEDICAL_USER}", "device_name": "{name}", '
        f'"first_seen_at": "2025-01-01T00:00:00Z", "last_seen_at": "2025-06-0{i + 1}T00:00:00Z"}}\n'
        for i, name in enumerate(["iPhone", "iPad", "Kitchen iPad"])))
    (folder / "more-medical.jsonl").write_text("".join(
        f'{{"device_id": "00000000-0000-4000-8000-0000000e{i:04x}", "user_id": "{MEDICAL_USER}", "device_name": "Mac {i}"}}\n' for i in range(20)))
    for tool, arguments in steps:
        result = run(tool, arguments, cwd=folder)
        assert result.returncode == 0, result.stderr
    (folder / "more-devices.jsonl").write_text("".join(
        f'{{"user_did": "did:plc:new", "device_id": "n{i}", "device_mls_did": "did:plc:new#n{i}", "signature_public_key": "{i:064x}", '
        f'"key_packages_available": 2}}\n'
        for i in range(50)))
    for index in range(3):
        shutil.copy(FIXTURES / "testkit" / "ok-household.vault", folder / f"batch-{index}.vault")
    (folder / "manifest.jsonl").write_text("".join(f'{{"vault": "batch-{i}.vault", "keyFile": "keys/parent.nsec"}}\n' for i in range(3)))
    return folder
