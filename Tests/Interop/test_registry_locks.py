"""A registry command keeps no lock on a SQLite registry while it waits on a pipe, and a refused
revoke changes nothing, not even the file's pages (a hostile review of issue 48's streaming).

The app (Python's sqlite3, as the chat app writes) must be able to write while `registry revoke
--devices-file -` waits for its list, and while `registry log --ops -` or `revoke --ops -` wait
for a reader of their operations; each tool is caught in the named system call (read on
descriptor 0, write on descriptor 1, from /proc), never by a clock. A revoke refused by a guard
rail while another connection reads answers at once, with its report, and leaves the file's
bytes as they were. A list on standard input is named as such in its refusals.
"""
import hashlib
import os
import sqlite3
import subprocess

from workspace import DEVICE_REVOKER, catbird_registry, in_system_call, wait_until

NOW = "2026-11-22T10:00:00Z"


def registry(folder):
    return catbird_registry(folder / "r.sqlite", 600)


def app_writes(db):
    """The app's write, waiting at most a second for a lock: True when it committed."""
    try:
        with sqlite3.connect(db, timeout=1) as app:
            app.execute("UPDATE user_devices SET last_seen = '2026-11-01T00:00:00Z' WHERE device_id = 'd1'")
        return True
    except sqlite3.OperationalError as error:
        assert "locked" in str(error), error
        return False


def test_a_list_read_from_a_pipe_holds_no_lock_on_the_registry(tmp_path):
    db = registry(tmp_path)
    revoke = subprocess.Popen([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--devices-file", "-", "--reason", "lost",
                               "--force", "--now", NOW], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        revoke.stdin.write(b"did:plc:u0#d0\n")
        revoke.stdin.flush()
        wait_until(lambda: in_system_call(revoke.pid, "read", 0), "the revoke to wait for the rest of its list")
        assert app_writes(db), "the app could not write while the revoke waited for its list"
        revoke.stdin.write(b"did:plc:u1#d7\n")
        revoke.stdin.close()
        revoke.stdin = None
        out, err = revoke.communicate(timeout=120)
    finally:
        revoke.kill()
    assert revoke.returncode == 0, err
    assert "did:plc:u0#d0" in out.decode() and "did:plc:u1#d7" in out.decode()


def stream_operations(db, argv):
    """Runs a command that writes operations to standard output, with nobody reading until it
    is caught writing to a full pipe; checks the app can write meanwhile; returns what it wrote."""
    reader, writer = os.pipe()
    command = subprocess.Popen(argv, stdout=writer, stderr=subprocess.PIPE)
    os.close(writer)
    try:
        wait_until(lambda: in_system_call(command.pid, "write", 1), "the operations to fill the pipe")
        assert app_writes(db), "the app could not write while the operations waited for a reader"
        with os.fdopen(reader, "rb") as out:
            written = out.read()
        command.wait(timeout=120)
    finally:
        command.kill()
    assert command.returncode == 0, command.stderr.read()
    return written


def test_operations_written_to_a_slow_reader_hold_no_lock_on_the_registry(tmp_path):
    db = registry(tmp_path)
    ops = tmp_path / "ops.jsonl"
    # Every device but each user's first: more operations than a pipe holds (64 KiB).
    listed = tmp_path / "devices.txt"
    listed.write_text("".join(f"did:plc:u{i // 5}#d{i}\n" for i in range(600) if i % 5))
    first = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--devices-file", str(listed), "--reason", "lost",
                            "--force", "--expect-revocations", "480", "--batch-id", "B1", "--ops", str(ops), "--now", NOW], capture_output=True)
    assert first.returncode == 0, first.stderr
    stored = ops.read_bytes()
    assert len(stored) > 1 << 16
    again = stream_operations(db, [DEVICE_REVOKER, "registry", "log", "--db", str(db), "--batch", "B1", "--ops", "-"])
    assert again == stored


def test_a_refused_revoke_beside_a_reader_answers_at_once_and_changes_no_byte(tmp_path):
    db = registry(tmp_path)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    # Another connection in the middle of a read, as the app's own reads are.
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM user_devices").fetchone()
    try:
        # Every device of user 0: left without a device, and refused.
        refused = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--user", "did:plc:u0", "--reason", "lost",
                                  "--now", NOW], capture_output=True, text=True, timeout=30)
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert refused.returncode == 4, refused.stderr
    assert "refused" in refused.stdout and "nothing was changed" in refused.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before, "a refused revoke changed the registry's file"
    listed = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--user", "did:plc:u0", "--reason", "lost", "--json",
                             "--now", NOW], capture_output=True, text=True)
    assert listed.returncode == 4 and '"deviceId": "d0"' in listed.stdout, "a refused run's JSON lists the batch it refused"


def test_a_list_on_standard_input_that_lists_nothing_is_named_as_standard_input(tmp_path):
    """Quoted, "standard input" read as two recovery words and was withheld as a secret."""
    db = registry(tmp_path)
    for text in [b"", b"# nothing today\n\n"]:
        empty = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--devices-file", "-", "--reason", "lost", "--now", NOW],
                               input=text, capture_output=True, text=False)
        message = empty.stderr.decode()
        assert empty.returncode == 2, message
        assert "devices file standard input lists nothing" in message and "not shown" not in message, message


def test_a_refusal_whose_report_cannot_be_written_is_still_a_refusal(tmp_path):
    """A closed pipe on standard output (the text report, the JSON report) leaves the refusal
    its exit code 4 and its message, with the report's loss said beside it."""
    db = registry(tmp_path)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for form in [[], ["--json"]]:
        reader, writer = os.pipe()
        os.close(reader)
        refused = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", str(db), "--user", "did:plc:u0", "--reason", "lost", *form,
                                  "--now", NOW], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60)
        os.close(writer)
        assert refused.returncode == 4, refused.stderr
        assert "left with no active device" in refused.stderr and "nothing was changed" in refused.stderr, refused.stderr
        assert "the report could not be written" in refused.stderr, refused.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
