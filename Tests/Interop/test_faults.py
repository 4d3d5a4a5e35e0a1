"""Fault injection (issue 8): every command that writes, hit by the faults a real machine has.

- SIGKILL at the two moments that matter, injected by strace at the system call: when the
  first output is flushed (fsync; its bytes are written but it has no name yet) and when it is
  given its name (linkat or rename). The registry is SQLite in WAL mode, which neither syncs
  nor renames on commit; it is killed at its first and at its last write instead.
- A file size limit (`ulimit -f`) smaller than the output.
- An output folder that may not be written.
- An input that vanishes (strace makes open(2) of it fail with ENOENT, as if it was deleted
  just before the tool read it).

After each: every input is byte for byte as it was, no output and no temporary file exists
(only folders, and the side files a command is documented to keep, such as a batch journal), the exit code
and message say what happened, and the same command run again without the fault succeeds.
"""
import fcntl
import hashlib
import os
import resource
import shutil
import sqlite3
import subprocess
import signal
import tempfile
import time
from pathlib import Path

import pytest

from workspace import BIN, CORPUS, URL, make_template, run

# (name, tool, arguments, side files a killed run may leave). Every command writes into the
# workspace; its outputs are whatever new files appear.
WRITERS = [
    ("seal", "vault-tool", "seal --key-file keys/parent.nsec -o out.vault testkit/ok-household.revealed.json", []),
    ("migrate", "vault-tool", "migrate --key-file keys/parent.nsec --to 2 -o out.vault testkit/ok-household.vault", []),
    ("migrate-in-place", "vault-tool", "migrate --key-file keys/parent.nsec --to 2 --in-place --no-backup work-v1.vault", []),
    ("migrate-batch", "vault-tool", "migrate --to 2 --manifest manifest.jsonl --out-dir batch", ["batch", "batch.migrate-journal.sqlite",
                                                                                                 "batch.migrate-journal.sqlite-journal"]),
    ("merge", "vault-tool", "merge --key-file keys/parent.nsec --base work.vault --ours work.vault --theirs work.vault -o out.vault", []),
    ("keygen", "vault-tool", "keygen -o out.nsec", []),
    ("derive", "vault-tool", "derive --key-file keys/parent.nsec --vault-key-out out.vaultkey -o out.txt", []),
    ("sheet", "recovery-sheet", "generate --key-file keys/parent.nsec --dpi 100 -o out.png", []),
    ("scan", "recovery-sheet", "scan sheet.png -o out.nsec", []),
    ("words", "recovery-sheet", "words --key-file keys/parent.nsec -o out.txt", []),
    ("code-new", "recovery-sheet", "code new --master-key-file mk.hex --user-id u -o out.json --sheet out.png", []),
    ("code-unwrap", "recovery-sheet", "code unwrap --blob blob.json --sheet code.png -o out.hex", []),
    ("code-rotate", "recovery-sheet", "code rotate --blob blob.json --sheet code.png --sheet out.png -o out.json", []),
    ("words-decode", "recovery-sheet", "words --decode words.txt -o out.nsec", []),
    ("link-read", "device-link", "read link.png --now 2026-01-01T00:00:00Z -o out.nsec", []),
    ("link", "device-link", f"create --key-file keys/parent.nsec --vault-url {URL} -o out.png", []),
    ("pairing", "device-link", "pairing create --share-url https://icloud.example/s --parent-device-id 6F9619FF-8B86-D011-B42D-00C04FC964FF "
                                  "--shared-zone-id Z -o out.png", []),
    ("plan", "rotation-planner", "plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec -o out.json", []),
    ("apply", "rotation-planner", "apply plan.json --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --out-dir rotated",
     ["rotated"]),
    ("revoke-vault", "device-revoker", "vault --key-file keys/parent.nsec --vault work.vault --device B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F -o out.vault", []),
    ("registry-init", "device-revoker", "registry init --db out.sqlite", []),
    ("registry-import", "device-revoker", "registry import --db registry.sqlite --devices more-devices.jsonl",
     ["registry.sqlite", "registry.sqlite-journal"]),
    ("registry-revoke", "device-revoker", "registry revoke --db registry.sqlite --device did:plc:parent#ipad-1 --reason lost --force",
     ["registry.sqlite", "registry.sqlite-journal"]),
]
IDS = [name for name, *_ in WRITERS]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A workspace with every input the writers read, made once."""
    return make_template(tmp_path_factory.mktemp("faults"))


@pytest.fixture
def workspace(template, tmp_path):
    folder = tmp_path / "w"
    shutil.copytree(template, folder, symlinks=True)
    return folder


def snapshot(folder):
    """Every file under the folder with its SHA-256."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


def assert_nothing_lost(folder, before, side):
    after = snapshot(folder)
    changed = [name for name, digest in before.items() if after.get(name) != digest]
    assert not changed, f"inputs changed or vanished: {changed}"
    new = sorted(name for name in set(after) - set(before) - set(side) if after[name] != "dir")
    assert not new, f"a faulty run left files behind: {new}"


def assert_rerun_succeeds(folder, tool, arguments):
    result = run(tool, arguments, cwd=folder)
    assert result.returncode == 0, f"after the fault, the command no longer runs: {result.stderr.decode()}"


@pytest.mark.parametrize("name,tool,arguments,side", WRITERS, ids=IDS)
@pytest.mark.parametrize("moment", ["fsync,fdatasync", "linkat,rename,renameat,renameat2"], ids=["at-flush", "at-naming"])
def test_sigkill(workspace, name, tool, arguments, side, moment):
    before = snapshot(workspace)
    injection = f"inject={moment}:signal=KILL"
    if name in ("registry-revoke", "registry-import"):
        moment = "pwrite64"
        injection = f"inject=pwrite64:signal=KILL:when={1 if 'fsync' in injection else last_write(workspace, tool, arguments)}"
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={moment}", "-e", injection, str(BIN / tool), *arguments.split()]
    result = subprocess.run(command, capture_output=True, cwd=workspace)
    assert result.returncode in (-9, 137), f"the kill point was never reached (exit {result.returncode}): {result.stderr.decode()}"
    if name in ("registry-revoke", "registry-import"):
        # The database is the input and the output. A kill after the commit may land in the
        # checkpoint, so the file may differ; what counts is all or nothing, and no damage.
        del before["registry.sqlite"]
        with sqlite3.connect(workspace / "registry.sqlite") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            if name == "registry-revoke":
                state = (db.execute("SELECT is_active FROM user_devices WHERE device_id = 'ipad-1'").fetchone()[0],
                         db.execute("SELECT count(*) FROM revocations").fetchone()[0])
                assert state in [(1, 0), (0, 1)], f"a partial revocation: active {state[0]}, {state[1]} log rows"
            else:
                imported = db.execute("SELECT count(*) FROM user_devices WHERE user_did = 'did:plc:new'").fetchone()[0]
                assert imported in (0, 50), f"a partial import: {imported} of 50 rows"
                if imported == 50:
                    return  # killed after its commit: done, and an import is not repeated
    assert_nothing_lost(workspace, before, side)
    assert_rerun_succeeds(workspace, tool, arguments)


def last_write(folder, tool, arguments):
    """How many pwrite64 calls a run makes, counted on a copy of the workspace."""
    copy = folder.parent / "count"
    shutil.copytree(folder, copy)
    counted = subprocess.run(["strace", "-f", "-c", "-U", "name,calls", "-e", "trace=pwrite64", str(BIN / tool), *arguments.split()],
                             capture_output=True, cwd=copy, text=True)
    shutil.rmtree(copy)
    calls = [int(line.split()[1]) for line in counted.stderr.splitlines() if line.strip().startswith("pwrite64")]
    assert calls and calls[0] > 1, counted.stderr
    return calls[0]


def limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (32, 32))


@pytest.mark.parametrize("name,tool,arguments,side", WRITERS, ids=IDS)
def test_file_size_limit(workspace, name, tool, arguments, side):
    before = snapshot(workspace)
    result = run(tool, arguments, cwd=workspace, preexec_fn=limit_file_size)
    message = result.stderr.decode()
    if name == "migrate-batch":
        # The journal is the first thing written; a batch that cannot keep one does not start.
        assert result.returncode == 1 and "journal" in message, message
    elif name in ("registry-revoke", "registry-import"):
        # SQLite reports a failed write as a disk I/O error, without the system's reason.
        assert result.returncode == 1 and "disk I/O error" in message, message
    else:
        assert result.returncode == 1, message
        assert "file too large" in message, message
    assert f"{tool}: error:" in message
    assert_nothing_lost(workspace, before, side)
    assert_rerun_succeeds(workspace, tool, arguments)


# Commands whose output is their input: there is no output folder to take away.
IN_PLACE = ("registry-revoke", "registry-import", "migrate-in-place")


def as_other_user(folder):
    """Root ignores permissions, so as root the tool runs as 'nobody', who then owns the
    workspace. Returns the command prefix that does so."""
    if os.geteuid() != 0:
        return []
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.mark.parametrize("name,tool,arguments,side", [w for w in WRITERS if w[0] not in IN_PLACE], ids=[
    i for i in IDS if i not in IN_PLACE])
def test_output_folder_not_writable(template, name, tool, arguments, side):
    # Not under pytest's own temporary folder: that one only its owner may enter.
    workspace = Path(tempfile.mkdtemp(prefix="hvt-faults-")) / "w"
    shutil.copytree(template, workspace, symlinks=True)
    workspace.parent.chmod(0o755)
    prefix = as_other_user(workspace)
    (workspace / "ro").mkdir()
    if prefix:
        os.chown(workspace / "ro", 65534, 65534)
    moved = arguments.replace("-o out.", "-o ro/out.").replace("--sheet out.", "--sheet ro/out.").replace("--out-dir batch", "--out-dir ro/batch") \
        .replace("--out-dir rotated", "--out-dir ro/rotated").replace("--vault-key-out out.", "--vault-key-out ro/out.") \
        .replace("--db out.", "--db ro/out.")
    assert moved != arguments, "the command's output was not moved into the read-only folder"
    (workspace / "ro").chmod(0o555)
    before = snapshot(workspace)
    result = subprocess.run([*prefix, str(BIN / tool), *moved.split()], capture_output=True, cwd=workspace)
    message = result.stderr.decode()
    assert result.returncode == 1, message
    assert "permission denied" in message and "ro" in message, message
    assert_nothing_lost(workspace, before, [])
    (workspace / "ro").chmod(0o755)
    shutil.rmtree(workspace.parent)


# (tool, arguments, the input that vanishes)
READERS = [
    ("vault-tool", "migrate --key-file keys/parent.nsec --to 2 -o out.vault testkit/ok-household.vault", "testkit/ok-household.vault"),
    ("vault-tool", "open --key-file keys/parent.nsec testkit/ok-household.vault", "keys/parent.nsec"),
    ("recovery-sheet", "scan sheet.png -o out.nsec", "sheet.png"),
    ("rotation-planner", "apply plan.json --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --out-dir rotated",
     "plan.json"),
    ("device-revoker", "vault --key-file keys/parent.nsec --vault work.vault --device B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F -o out.vault", "work.vault"),
]


@pytest.mark.parametrize("tool,arguments,vanishing", READERS, ids=[r[2] for r in READERS])
def test_input_vanishes(workspace, tool, arguments, vanishing):
    before = snapshot(workspace)
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-P", vanishing, "-e", "trace=open,openat",
               "-e", "inject=open,openat:error=ENOENT", str(BIN / tool), *arguments.split()]
    result = subprocess.run(command, capture_output=True, cwd=workspace)
    message = result.stderr.decode()
    assert result.returncode == 1, message
    assert vanishing in message and "no such file" in message, message
    assert_nothing_lost(workspace, before, [])


def test_batch_vault_vanishes_mid_run(workspace):
    """One vault of a batch disappears while the batch runs: that job fails by name, the
    others complete, and a second run after it is back finishes the batch."""
    arguments = "migrate --to 2 --manifest manifest.jsonl --out-dir batch"
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-P", "batch-1.vault", "-e", "trace=open,openat",
               "-e", "inject=open,openat:error=ENOENT", str(BIN / "vault-tool"), *arguments.split()]
    result = subprocess.run(command, capture_output=True, cwd=workspace)
    message = result.stderr.decode()
    assert result.returncode == 1, message
    assert "batch-1.vault" in message, message
    assert sorted(p.name for p in (workspace / "batch").glob("*.vault")) == ["batch-0.vault", "batch-2.vault"]
    again = run("vault-tool", arguments, cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (workspace / "batch").glob("*.vault")) == ["batch-0.vault", "batch-1.vault", "batch-2.vault"]


# Writers that replace a file that is there: the output is given a temporary name first
# (link(2)), then renamed over the old file. A kill between the two leaves the old file whole
# and the temporary beside it, which no kill can avoid; the rerun must take it back.
REPLACERS = [
    ("migrate-in-place", "vault-tool", "migrate --key-file keys/parent.nsec --to 2 --in-place --no-backup work-v1.vault", None),
    # With its backup, published first: the rerun finds it holding the vault as it still is.
    ("migrate-in-place-backup", "vault-tool", "migrate --key-file keys/parent.nsec --to 2 --in-place work-v1.vault", None),
    ("seal-over", "vault-tool", "seal --key-file keys/parent.nsec -o out.vault testkit/ok-household.revealed.json", "out.vault"),
    ("revoke-over", "device-revoker", "vault --key-file keys/parent.nsec --vault work.vault --device B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F "
                                      "-o out.vault", "out.vault"),
    ("pairing-over", "device-link", "pairing create --share-url https://icloud.example/s --parent-device-id "
                                    "6F9619FF-8B86-D011-B42D-00C04FC964FF --shared-zone-id Z -o out.png", "out.png"),
]


@pytest.mark.parametrize("name,tool,arguments,existing", REPLACERS, ids=[r[0] for r in REPLACERS])
def test_sigkill_between_temporary_and_rename(workspace, name, tool, arguments, existing):
    if existing:
        (workspace / existing).write_bytes(b"an older output, replaced by the run\n")
    before = snapshot(workspace)
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
               "inject=rename,renameat,renameat2:signal=KILL:when=1", str(BIN / tool), *arguments.split()]
    result = subprocess.run(command, capture_output=True, cwd=workspace)
    assert result.returncode in (-9, 137), f"the kill point was never reached (exit {result.returncode}): {result.stderr.decode()}"
    after = snapshot(workspace)
    assert {k: v for k, v in after.items() if k in before} == before, "the old file was not left whole"
    left = sorted(set(after) - set(before) - {"work-v1.vault.bak"})
    assert len(left) == 1 and left[0].startswith(".hvt-") and left[0].endswith(".tmp"), left
    assert_rerun_succeeds(workspace, tool, arguments)
    assert not [path.name for path in workspace.rglob(".hvt-*")], "the rerun left the killed run's temporary behind"
    assert snapshot(workspace) != before, "the rerun wrote nothing"


def test_a_live_runs_temporary_is_not_taken(workspace):
    """A temporary by the output's name that a running process holds (locked) is not removed:
    the writer takes another name, and the other file stays."""
    (workspace / "out.vault").write_bytes(b"older\n")
    killed = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
                             "inject=rename,renameat,renameat2:signal=KILL:when=1", str(BIN / "vault-tool"), "seal", "--key-file",
                             "keys/parent.nsec", "-o", "out.vault", "testkit/ok-household.revealed.json"], capture_output=True, cwd=workspace)
    assert killed.returncode in (-9, 137)
    own = next(workspace.glob(".hvt-*.tmp"))
    with open(own, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = run("vault-tool", "seal --key-file keys/parent.nsec -o out.vault testkit/ok-household.revealed.json", cwd=workspace)
        assert result.returncode == 0, result.stderr.decode()
        assert own.exists(), "a temporary another process holds was removed"
    assert [path.name for path in workspace.glob(".hvt-*")] == [own.name]


def test_a_key_at_an_outputs_temporary_name_is_never_taken(workspace):
    """The next run takes back only a temporary that holds no key: a key written at that name
    by hand (keygen -o .hvt-….tmp) was removed (a re-trial)."""
    name = ".hvt-" + hashlib.sha256(b"out.vault").hexdigest()[:8] + ".tmp"
    (workspace / "out.vault").write_bytes(b"older\n")
    made = run("vault-tool", f"keygen -o {name}", cwd=workspace)
    assert made.returncode == 0, made.stderr.decode()
    key = (workspace / name).read_bytes()
    result = run("vault-tool", "seal --key-file keys/parent.nsec -o out.vault testkit/ok-household.revealed.json", cwd=workspace)
    assert result.returncode == 0, result.stderr.decode()
    assert (workspace / name).read_bytes() == key


# MARK: A new output is named by link(2), made with its mode (issue 48)

@pytest.mark.parametrize("umask", [0o027, 0o000, 0o077])
@pytest.mark.parametrize("name,tool,arguments,side", [w for w in WRITERS if w[0] not in IN_PLACE], ids=[
    name for name, *_ in WRITERS if name not in IN_PLACE])
def test_a_new_output_has_its_mode_whatever_the_umask(workspace, name, tool, arguments, side, umask):
    """A new output is made unnamed with the mode it is to have and is given no other after:
    a public one 0666 less the umask, as a shell redirection makes it, a secret 0600 whatever
    the umask (0000 included). A key the suite writes is never more open than 0600."""
    before = snapshot(workspace)
    result = subprocess.run([str(BIN / tool), *arguments.split()], capture_output=True, cwd=workspace, preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr.decode()
    made = [path for path in workspace.rglob("*") if str(path.relative_to(workspace)) not in before and path.is_file()]
    assert made, "the command wrote nothing"
    for path in made:
        mode = path.stat().st_mode & 0o7777
        assert mode in (0o666 & ~umask, 0o600), (path.name, oct(mode))
        if path.suffix in (".nsec", ".vaultkey", ".hex"):
            assert mode == 0o600, (path.name, oct(mode))


@pytest.mark.parametrize("arguments,outputs", [
    ("vault-tool seal --key-file keys/parent.nsec -o out.vault testkit/ok-household.revealed.json", ["out.vault"]),
    ("recovery-sheet words --key-file keys/parent.nsec -o out.txt", ["out.txt"]),
    ("vault-tool migrate --to 2 --manifest manifest.jsonl --out-dir batch", None),
])
def test_a_name_taken_after_it_was_found_free_is_replaced_as_any_output(workspace, arguments, outputs):
    """A new output is named by link(2), which never replaces: a file given that name after the
    output was resolved (strace makes the first link fail as if one had) is replaced by the
    rename every replacing write makes, and no temporary is left."""
    tool, *rest = arguments.split()
    clean = workspace.parent / "clean"
    shutil.copytree(workspace, clean, symlinks=True)
    assert subprocess.run([str(BIN / tool), *rest], capture_output=True, cwd=clean).returncode == 0
    expected = sorted(str(p.relative_to(clean)) for p in clean.rglob("*") if p.is_file())
    result = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=linkat", "-e", "inject=linkat:error=EEXIST:when=1",
                             str(BIN / tool), *rest], capture_output=True, cwd=workspace)
    assert result.returncode == 0, result.stderr.decode()
    assert sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*") if p.is_file()) == expected
    assert not list(workspace.rglob(".hvt-*"))
    for output in outputs or []:
        assert (workspace / output).stat().st_size == (clean / output).stat().st_size


def test_a_key_output_whose_name_is_taken_meanwhile_is_refused(workspace):
    """`keygen` never replaces a file: a name taken after it was found free (the first link
    fails as if one had) refuses the key (exit 4), and nothing is left."""
    result = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=linkat", "-e", "inject=linkat:error=EEXIST:when=1",
                             str(BIN / "vault-tool"), "keygen", "-o", "new.nsec"], capture_output=True, cwd=workspace)
    assert result.returncode == 4, result.stderr.decode()
    assert b"new.nsec" in result.stderr and not (workspace / "new.nsec").exists()
    assert not list(workspace.rglob(".hvt-*"))


def stopped_at(moment, tool, arguments, cwd, path=None, when=1):
    """The tool run under strace, which stops it (SIGSTOP, injected) at the `when`th of the
    system calls `moment` names (on `path` only, if given): (strace's process, the tool's pid)
    once strace has said the tool is stopped by that signal (its own trace's "stopped by
    SIGSTOP", after the call has returned)."""
    trace = Path(cwd).parent / f"stop-{time.monotonic_ns()}.trace"
    only = ["-P", path] if path else []
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(trace), *only, "-e", f"trace={moment}", "-e", f"inject={moment}:signal=STOP:when={when}",
                               str(BIN / tool), *arguments], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = 60 * 1_000_000_000 + time.monotonic_ns()
    while time.monotonic_ns() < deadline:
        assert tracer.poll() is None, f"the tool ended before {moment}: {tracer.communicate()}"
        stopped = [line for line in (trace.read_text() if trace.exists() else "").splitlines() if line.endswith("--- stopped by SIGSTOP ---")]
        if stopped:
            return tracer, int(stopped[0].split()[0])
        os.sched_yield()
    tracer.kill()
    raise AssertionError(f"the tool never stopped at {moment}")


def resumed(tracer, pid):
    """Continues a tool `stopped_at` held, until it ends (SIGCONT, sent again should the first
    come before strace has passed the stop on). (strace's stdout, stderr)."""
    for _ in range(600):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        try:
            return tracer.communicate(timeout=0.2)
        except subprocess.TimeoutExpired:
            continue
    tracer.kill()
    raise AssertionError("the tool did not end once continued")


IN_PLACE_CHANGES = {
    "migrate-up": ("vault-tool", "migrate vault --key-file keys/parent.nsec --to 3 --in-place work.vault", "work.vault"),
    "migrate-down": ("vault-tool", "migrate vault --key-file keys/parent.nsec --to 1 --allow-lossy --in-place --no-backup work.vault", "work.vault"),
    "limit": ("vault-tool", "device limit --key-file keys/parent.nsec --in-place work.vault 9", "work.vault"),
    "rename-v3": ("vault-tool", "device rename --key-file keys/parent.nsec --in-place v3.vault B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F Hall", "v3.vault"),
    "rename-v3-log": ("vault-tool", "device rename --key-file keys/parent.nsec --in-place v3.vault B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F Hall", "v3.log"),
}


@pytest.mark.parametrize("how", ["rewritten", "replaced", "removed"])
@pytest.mark.parametrize("moment", ["read", "fsync,fdatasync", "link,linkat,rename,renameat,renameat2"], ids=["reading", "staged", "naming"])
@pytest.mark.parametrize("change", list(IN_PLACE_CHANGES))
def test_a_file_changed_after_it_was_read_is_never_replaced(template, workspace, change, moment, how):
    """A trial: a vault saved over the one `--in-place` had read, while the change was made,
    was replaced and lost (exit 0). A file a run read is replaced only while it is still the
    file read, as read (a compare-and-swap, as an object's write is): changed in place, saved
    over by a rename, or removed once the run has read it (the run stopped by strace while it
    reads the file, as it stages its outputs, or as it names the first), the run refuses (exit 4), and the file there
    is what was put there; no backup, log or temporary is left by it; run again, it succeeds.
    A vault's log is published before its vault: a vault changed after its log was named
    is past what a check can take back, so the schema 3 vault is changed while staged only."""
    tool, arguments, target = IN_PLACE_CHANGES[change]
    if change == "rename-v3" and moment.startswith("link"):
        moment = "fsync,fdatasync"
    before = snapshot(workspace)
    other = (workspace / "work-v1.vault").read_bytes()
    # While read: held at the read(2) that finds the file's end, its bytes read (a hostile
    # trial: a change there was missed, the file stat'ed after the read). Which read that is
    # (a key check reads the file first) is found by running the command once in a copy.
    when = 1
    if moment == "read":
        probe = workspace.parent / "probe"
        shutil.copytree(workspace, probe, symlinks=True)
        traced = subprocess.run(["strace", "-f", "-qq", "-o", str(probe / "reads.txt"), "-P", target, "-e", "trace=read", str(BIN / tool), *arguments.split()],
                                capture_output=True, cwd=probe)
        assert traced.returncode == 0, traced.stderr.decode()
        reads = [line for line in (probe / "reads.txt").read_text().splitlines() if " read(" in line]
        when = next(number for number, line in enumerate(reads, 1) if line.rstrip().endswith("= 0"))
        shutil.rmtree(probe)
    tracer, pid = stopped_at(moment, tool, arguments.split(), workspace, *((target, when) if moment == "read" else ()))
    path = workspace / target
    if how == "rewritten":
        with open(path, "r+b") as file:
            file.write(other)
            file.truncate()
    elif how == "replaced":
        (workspace / "saved.tmp").write_bytes(other)
        os.replace(workspace / "saved.tmp", path)
    else:
        path.unlink()
    _, stderr = resumed(tracer, pid)
    # A log changed while it is read may be found, when compared with the new one before it is
    # staged, to be one the change would not keep: refused as well, before the check at publishing.
    said = [b"changed since it was read"] + ([b"would not keep it"] if target.endswith(".log") else [])
    assert tracer.returncode == 4 and any(words in stderr for words in said), (tracer.returncode, stderr.decode())
    if how == "removed":
        assert not path.exists()
        del before[target]
    else:
        assert path.read_bytes() == other
        before[target] = hashlib.sha256(other).hexdigest()
    assert snapshot(workspace) == before
    assert not list(workspace.rglob(".hvt-*"))
    # Put back as it was, the same command runs to its end.
    for name in ("work.vault", "v3.vault", "v3.log"):
        shutil.copy(template / name, workspace / name)
    assert_rerun_succeeds(workspace, tool, arguments)


@pytest.mark.parametrize("appeared", ["v3.log", "v3.vault"])
def test_a_store_saved_at_a_new_outputs_name_meanwhile_is_never_replaced(workspace, appeared):
    """A hostile trial: a household log saved where a migration to 3 in place was to begin its
    own, after the run found the name free, was replaced by the new log without a word (exit 0).
    A vault, a household log or a database that appears at a new output's name is compared
    with nothing: refused (exit 4), kept, and nothing of the run is left."""
    before = snapshot(workspace)
    tracer, pid = stopped_at("fsync,fdatasync", "vault-tool", "migrate vault --key-file keys/parent.nsec --to 3 --in-place work.vault".split(), workspace)
    (workspace / "work.log").write_bytes((workspace / appeared).read_bytes())
    _, stderr = resumed(tracer, pid)
    assert tracer.returncode == 4 and b"work.log" in stderr, (tracer.returncode, stderr.decode())
    assert (workspace / "work.log").read_bytes() == (workspace / appeared).read_bytes()
    before["work.log"] = hashlib.sha256((workspace / appeared).read_bytes()).hexdigest()
    assert snapshot(workspace) == before
    assert not list(workspace.rglob(".hvt-*"))


LOGGED_IN_PLACE = {
    "rename": "device rename --key-file keys/parent.nsec --in-place v3.vault B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F Hall",
    "limit": "device limit --key-file keys/parent.nsec --in-place v3.vault 9",
    "limit-none": "device limit --key-file keys/parent.nsec --in-place v3.vault none",
}


@pytest.mark.parametrize("how", ["rewritten", "replaced"])
@pytest.mark.parametrize("change", list(LOGGED_IN_PLACE))
def test_a_vault_changed_after_its_log_was_written_says_the_log_was(template, workspace, change, how):
    """The one window the compare-and-swap leaves (a review): a schema 3 vault changed after its
    new log was named and before its own rename was refused with "nothing was written", while
    the log already held the new event. The refusal (exit 4) says the vault was not replaced
    and the log had been written; the vault is what was put there; and with the vault as it
    was put back, the same change runs again and the log verifies."""
    arguments = LOGGED_IN_PLACE[change].split()
    other = (workspace / "work-v1.vault").read_bytes()
    # The log is published first: held as its rename returns, before the vault's.
    tracer, pid = stopped_at("rename,renameat,renameat2", "vault-tool", arguments, workspace)
    path = workspace / "v3.vault"
    if how == "rewritten":
        with open(path, "r+b") as file:
            file.write(other)
            file.truncate()
    else:
        (workspace / "saved.tmp").write_bytes(other)
        os.replace(workspace / "saved.tmp", path)
    _, stderr = resumed(tracer, pid)
    said = stderr.decode()
    assert tracer.returncode == 4, (tracer.returncode, said)
    assert "'v3.vault' changed since it was read and was not replaced" in said and "'v3.log' had been written before it" in said, said
    assert "nothing was written" not in said, said
    assert path.read_bytes() == other
    assert not list(workspace.rglob(".hvt-*"))
    shutil.copy(template / "v3.vault", path)
    assert_rerun_succeeds(workspace, "vault-tool", LOGGED_IN_PLACE[change])
    verified = run("vault-tool", "log verify v3.vault", cwd=workspace)
    assert verified.returncode == 0, verified.stderr.decode()
