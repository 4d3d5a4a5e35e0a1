"""Secrets typed on a terminal (issue 12): `--passphrase-file -` on a terminal asks for the
passphrase without echo (twice for a new one), in a real pseudo-terminal that is the tool's
controlling terminal."""
import os
import pty
import select
import shutil
import time

from vaultref import Household, nip19_decode
from workspace import BIN, FIXTURES

PARENT = Household(nip19_decode((FIXTURES / "keys" / "parent.nsec").read_text().strip(), "nsec"))


def converse(argv, cwd, answers, timeout=30):
    """Runs argv on a new pseudo-terminal; each time the screen shows a prompt from `answers`
    (in order), types its answer. Returns the exit code and everything the terminal showed."""
    pid, terminal = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execv(argv[0], argv)
    shown, pending, deadline = b"", list(answers), time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([terminal], [], [], 0.2)
        if not ready and status is None:
            finished, code = os.waitpid(pid, os.WNOHANG)
            if finished:
                status = code
                continue
        if not ready and status is not None:
            break
        if ready:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        if pending and shown.rstrip().endswith(pending[0][0].encode()):
            os.write(terminal, pending[0][1].encode() + b"\n")
            pending.pop(0)
            shown += b"<answered>"
    if status is None:
        _, status = os.waitpid(pid, 0)
    os.close(terminal)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


def test_a_new_passphrase_is_asked_twice_without_echo_and_opens_the_sheet(tmp_path):
    shutil.copy(FIXTURES / "keys" / "parent.nsec", tmp_path / "parent.nsec")
    (tmp_path / "parent.nsec").chmod(0o600)
    phrase = "tall green ladder 42"
    status, shown = converse([str(BIN / "recovery-sheet"), "generate", "--key-file", "parent.nsec", "--passphrase-file", "-", "--log-n", "8",
                              "--dpi", "100", "-o", "sheet.png"], tmp_path, [("passphrase:", phrase), ("passphrase again:", phrase)])
    assert status == 0, shown
    assert phrase not in shown, "the passphrase was echoed"
    status, shown = converse([str(BIN / "recovery-sheet"), "scan", "sheet.png", "--passphrase-file", "-", "-o", "restored.nsec"], tmp_path,
                             [("passphrase:", phrase)])
    assert status == 0, shown
    assert (tmp_path / "restored.nsec").read_text().strip() == PARENT.nsec
    assert phrase not in shown


def test_two_different_passphrases_write_nothing(tmp_path):
    shutil.copy(FIXTURES / "keys" / "parent.nsec", tmp_path / "parent.nsec")
    (tmp_path / "parent.nsec").chmod(0o600)
    status, shown = converse([str(BIN / "recovery-sheet"), "generate", "--key-file", "parent.nsec", "--passphrase-file", "-", "--log-n", "8",
                              "-o", "sheet.png"], tmp_path, [("passphrase:", "one"), ("passphrase again:", "two")])
    assert status == 2 and "differ" in shown, shown
    assert not (tmp_path / "sheet.png").exists()


def test_a_plan_shown_on_a_terminal_or_kept_in_a_file_cannot_reorder_it(tmp_path):
    """A device named with a right-to-left override (U+202E), a line separator, a zero-width
    space, a BOM, DEL and a C1 control: `plan` writes them as \\u escapes on a terminal and in
    the file (a hostile trial: `cat plan.json` showed them raw), the same plan to any reader,
    with one planId, and `apply` takes the file."""
    import json
    import subprocess
    for name in ("parent.nsec", "other.nsec"):
        shutil.copy(FIXTURES / "keys" / name, tmp_path / name)
        os.chmod(tmp_path / name, 0o600)
    opened = subprocess.run([str(BIN / "vault-tool"), "open", "--key-file", "parent.nsec", "--reveal-secrets", "--force", "-o", "doc.json",
                             str(FIXTURES / "testkit" / "ok-v2-household.vault")], capture_output=True, text=True, cwd=tmp_path)
    assert opened.returncode == 0, opened.stderr
    document = json.loads((tmp_path / "doc.json").read_text())
    document["devices"][0]["deviceName"] = "iPad\u202eevil\u2028two\u200b\ufeff\x7f\x9b"
    (tmp_path / "doc.json").write_text(json.dumps(document))
    sealed = subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "parent.nsec", "-o", "h.vault", "doc.json"], capture_output=True,
                            text=True, cwd=tmp_path)
    assert sealed.returncode == 0, sealed.stderr
    argv = [str(BIN / "rotation-planner"), "plan", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "other.nsec",
            "--now", "2026-11-20T00:00:00Z"]
    code, shown = converse(argv, tmp_path, [])
    assert code == 0, shown
    assert "\u202e" not in shown and "\u2028" not in shown and "\\u202e" in shown, shown
    kept = subprocess.run(argv + ["-o", "plan.json"], capture_output=True, text=True, cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    text = (tmp_path / "plan.json").read_text()
    for character in "\u202e\u2028\u200b\ufeff\x7f\x9b":
        assert character not in text and f"\\u{ord(character):04x}" in text
    on_screen = json.loads(shown[shown.index("{"):shown.rindex("}") + 1])
    assert on_screen["planId"] == json.loads(text)["planId"]
    assert any(device.get("deviceName") == document["devices"][0]["deviceName"] for device in json.loads(text)["devices"])
    applied = subprocess.run([str(BIN / "rotation-planner"), "apply", "plan.json", "--vault", "h.vault", "--key-file", "parent.nsec",
                              "--new-key-file", "other.nsec", "--out-dir", "applied"], capture_output=True, text=True, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
