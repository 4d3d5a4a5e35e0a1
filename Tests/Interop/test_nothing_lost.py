"""Nothing lost, by construction (issue 16): black-box tests of every command that writes.

- The sweep. Every leaf command of the tools is found from `--experimental-dump-help`; every
  one that writes must have an entry in WRITERS (an invocation with named input and output
  slots), and every entry must name a command and options that exist. For each output, the
  sweep aliases it in turn to each input and each other output (the same path, another spelling
  of it, a symbolic link, a hard link, both `-`) and to things that are not regular files (a
  FIFO, a folder, a link to /dev/stdout while standard output is a pipe, /dev/null, /dev/full,
  a link to a character device). Every case must exit 4, name the output, and leave every file
  as it was: bytes, mode, link count, links still links, FIFOs and devices still what they were.
- Regressions, one named test for each finding of the issue: outputs onto inputs and onto each
  other, non-regular outputs, the registry's operations kept in the database, the order of
  `code rotate`'s outputs, dry runs, a second `apply`, integer overflow, size limits with
  measured memory, standard input in pipelines, terminal escapes in messages, and the smaller
  ones (read-only registry commands, NUL in imports, long output names, which input failed).

Devices: the tests never name /dev/null or /dev/full through a link, because a tool that
resolves the link and renames over its target would replace the machine's device. Links point
at device nodes made inside the workspace instead (as root; otherwise at /dev/null, which a
user cannot replace). A guard checks /dev/null, /dev/full and /dev/stdout after every test.
"""
import atexit
import functools
import hashlib
import io
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import pytest
import zxingcpp
from PIL import Image

import vaultref
from vaultref import Household, nip19_decode
from workspace import BIN, FIXTURES, MEDICAL_USER, URL, make_template, peak_kib, timed

TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]
NOW = "2026-01-01T00:00:00Z"
DEVICE = "B3E9A410-77C2-4F0E-8D65-1C2B3A4D5E6F"  # a device of ok-v2-household
PARENT_DEVICE = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
PARENT = Household(nip19_decode((FIXTURES / "keys" / "parent.nsec").read_text().strip(), "nsec"))
OTHER = Household(nip19_decode((FIXTURES / "keys" / "other.nsec").read_text().strip(), "nsec"))
INT_MAX = 9223372036854775807
TIMEOUT = 20  # a blocked open of a FIFO must fail the test, not hang it
REFUSED = 4
TRAPS = (132, 133, 134, 139, -4, -5, -6, -11)
MIB = 1024 * 1024


# MARK: Running the tools

class Outcome:
    def __init__(self, returncode, stdout, stderr, seconds):
        self.returncode, self.stdout, self.stderr, self.seconds = returncode, stdout, stderr, seconds

    @property
    def message(self):
        return self.stderr.decode(errors="replace")

    def __repr__(self):
        return f"exit {self.returncode}; stderr: {self.message[-2000:]!r}; stdout: {self.stdout[:300]!r}"


def execute(argv, cwd, stdin=None, timeout=TIMEOUT, preexec_fn=None):
    """Runs a command with standard output and error as pipes, killing its whole process group
    if it outlives `timeout` (the test then fails: a tool blocked on a FIFO must not hang CI)."""
    start = time.monotonic()
    process = subprocess.Popen([str(a) for a in argv], cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec_fn)
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{' '.join(map(str, argv))} did not finish in {timeout} s (blocked on a FIFO or device?); stderr: {stderr[-2000:]!r}")
    return Outcome(process.returncode, stdout, stderr, time.monotonic() - start)


def tool(name, arguments, cwd, stdin=None, **options):
    """`arguments` is a string split on spaces, or a list."""
    argv = arguments.split() if isinstance(arguments, str) else list(arguments)
    return execute([BIN / name, *argv], cwd, stdin=stdin, **options)


def ok(name, arguments, cwd, stdin=None):
    result = tool(name, arguments, cwd, stdin=stdin)
    assert result.returncode == 0, result
    return result


def secret(path, text):
    Path(path).write_text(text)
    Path(path).chmod(0o600)


# MARK: The workspace

PASSPHRASE = "correct horse battery staple"
SHARE_OPTIONS = "--dpi 72 --iteration-exponent 0 --text --date 2026-01-01"
SPLIT_OUT = tempfile.mkdtemp(prefix="hvt-split-")  # split writes a folder: outside the workspace, so pipelines leave it as it was
atexit.register(shutil.rmtree, SPLIT_OUT, True)  # it holds shares of a test key: gone when the run ends
LOG_BATCH = "B-LOG"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The shared workspace (test_faults' inputs) plus what these tests read besides: copies
    of a vault for three-way merges, an encrypted sheet, a code blob with its words in a file,
    device lists, import files, and a registry batch whose operations can be logged again."""
    folder = make_template(tmp_path_factory.mktemp("nothing-lost"))
    for name in ("base", "ours", "theirs"):
        shutil.copy(folder / "work.vault", folder / f"{name}.vault")
    secret(folder / "pass.txt", PASSPHRASE + "\n")
    (folder / "devices.txt").write_text(DEVICE + "\n")
    (folder / "revoke.txt").write_text("did:plc:parent#ipad-1\n")
    (folder / "more-members.jsonl").write_text("".join(
        f'{{"convo_id": "newconvo", "member_mls_did": "did:plc:new#n{i}", "user_did": "did:plc:new", "device_id": "n{i}", '
        f'"joined_at": "2025-01-01T00:00:00Z", "is_admin": {"true" if i == 0 else "false"}}}\n' for i in range(3)))
    (folder / "log-devices.jsonl").write_text("".join(
        f'{{"user_did": "did:plc:log", "device_id": "l{i}", "device_mls_did": "did:plc:log#l{i}", "signature_public_key": "aa0{i}"}}\n'
        for i in range(2)))
    (folder / "log-members.jsonl").write_text("".join(
        f'{{"convo_id": "logconvo", "member_mls_did": "did:plc:log#l{i}", "user_did": "did:plc:log", "device_id": "l{i}", '
        f'"joined_at": "2025-01-01T00:00:00Z", "is_admin": {"true" if i else "false"}}}\n' for i in range(2)))
    for arguments in [
        ("recovery-sheet", f"generate --key-file keys/parent.nsec --passphrase-file pass.txt --log-n 10 --dpi 100 --date 2026-01-01 -o esheet.png"),
        ("recovery-sheet", "code new --master-key-file mk.hex --user-id u -o cblob.json --sheet csheet.png --code-out code.words"),
        ("device-revoker", "registry import --db registry.sqlite --devices log-devices.jsonl --members log-members.jsonl"),
        ("device-revoker", f"registry revoke --db registry.sqlite --device did:plc:log#l0 --expect-revocations 1 --batch-id {LOG_BATCH} --now {NOW} "
                           "--ops log-ops.jsonl"),
        ("device-link", f"pairing create --share-url https://icloud.example/s --parent-device-id {PARENT_DEVICE} --shared-zone-id Z --now {NOW} "
                           "-o pair.png"),
        ("recovery-sheet", f"split --key-file keys/parent.nsec --threshold 2 --shares 2 {SHARE_OPTIONS} -o tshares"),
        ("recovery-sheet", f"split --key-file keys/parent.nsec --threshold 2 --shares 2 {SHARE_OPTIONS} --passphrase-file pass.txt -o pshares"),
        ("rotation-planner", "apply plan.json --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --out-dir applied"),
    ]:
        ok(*arguments, cwd=folder)
    # The encrypted sheet's key as a person types it from the page: in groups of four.
    ncryptsec = zxingcpp.read_barcodes(Image.open(folder / "esheet.png"))[0].text
    secret(folder / "typed-ncryptsec.txt", " ".join(ncryptsec[i:i + 4] for i in range(0, len(ncryptsec), 4)) + "\n")
    (folder / "sub").mkdir()
    return folder


@pytest.fixture
def workspace(template, tmp_path):
    folder = tmp_path / "w"
    shutil.copytree(template, folder, symlinks=True)
    return folder


def snapshot(folder, times=False):
    """Every entry under the folder: its type, mode, link count and SHA-256 (files), target
    (links), device number (devices); with `times`, every entry's and the folder's mtime."""
    state = {}
    for directory, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            kind = stat.S_IFMT(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                value = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as file:
                    value = ("file", stat.S_IMODE(info.st_mode), info.st_nlink, hashlib.sha256(file.read()).hexdigest())
            elif stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
                value = ("device", kind, info.st_rdev)
            else:
                value = ("dir" if stat.S_ISDIR(info.st_mode) else "fifo" if stat.S_ISFIFO(info.st_mode) else f"type {kind:o}",
                         stat.S_IMODE(info.st_mode))
            if times:
                value += (info.st_mtime_ns,)
            state[os.path.relpath(path, folder)] = value
    if times:
        state["."] = ("dir", os.lstat(folder).st_mtime_ns)
    return state


def assert_unchanged(folder, before, times=False, what="the run", writes=()):
    """Nothing under the folder changed but the files a command is there to write (`writes`)."""
    after = snapshot(folder, times)
    changed = sorted(name for name in before if after.get(name) != before[name] and name not in writes)
    created = sorted(set(after) - set(before) - set(writes))
    assert not changed and not created, (f"{what} changed {[(n, before[n], after.get(n)) for n in changed]} "
                                         f"and created {created}")


SYSTEM_DEVICES = {"/dev/null": os.makedev(1, 3), "/dev/full": os.makedev(1, 7)}


@pytest.fixture(autouse=True)
def system_devices_survive():
    """A tool that renames over a device breaks the machine for everyone: check after each
    test, and as root put it back (and fail the test)."""
    yield
    broken = []
    for path, device in SYSTEM_DEVICES.items():
        info = os.lstat(path) if os.path.lexists(path) else None
        if info is None or not stat.S_ISCHR(info.st_mode) or info.st_rdev != device:
            broken.append(path)
            if os.geteuid() == 0:
                if os.path.lexists(path):
                    os.remove(path)
                os.mknod(path, 0o666 | stat.S_IFCHR, device)
                os.chmod(path, 0o666)
    if not os.path.islink("/dev/stdout") or os.readlink("/dev/stdout") != "/proc/self/fd/1":
        broken.append("/dev/stdout")
        if os.geteuid() == 0:
            if os.path.lexists("/dev/stdout"):
                os.remove("/dev/stdout")
            os.symlink("/proc/self/fd/1", "/dev/stdout")
    assert not broken, f"a tool replaced {broken} (restored)"


def make_device(path):
    """A character device like /dev/null at `path`: a node of our own as root (so a tool that
    replaces it only replaces ours), else a link to /dev/null (which a user cannot replace)."""
    if os.geteuid() == 0:
        os.mknod(path, 0o666 | stat.S_IFCHR, SYSTEM_DEVICES["/dev/null"])
    else:
        os.symlink("/dev/null", path)


class Fifo:
    """A FIFO held open for reading and writing by the test, with a 1 MiB buffer, so that a
    tool that (wrongly) writes to it or reads from it does not block before its refusal is
    checked. Closed by the `fifos` fixture."""
    def __init__(self, path):
        os.mkfifo(path)
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        try:
            import fcntl
            fcntl.fcntl(self.fd, 1031, MIB)  # F_SETPIPE_SZ
        except OSError:
            pass


@pytest.fixture
def fifos():
    opened = []
    yield lambda path: opened.append(Fifo(path))
    for fifo in opened:
        os.close(fifo.fd)


# MARK: The table of writers

SLOT = re.compile(r"\{(in|out|io|dir):(\w+)=([^}]*)\}")
REFERENCE = re.compile(r"\{(\w+)\}")
MANIFEST = ('{"vault": "{in:v0=batch-0.vault}", "keyFile": "{in:k0=keys/parent.nsec}"}\n'
            '{"vault": "{in:v1=batch-1.vault}", "keyFile": "{k0}"}\n')
# A batch writes each vault to the output folder under the vault's file name.
BATCH_OUTPUTS = {f"job{i}": ("out", lambda s, i=i: s["out"] + "/" + os.path.basename(s[f"v{i}"])) for i in range(2)}
DATABASE_SIDE_FILES = {f"db{suffix.replace('-', '_')}": ("in", lambda s, suffix=suffix: s["db"] + suffix) for suffix in ("-wal", "-shm", "-journal")}
# A registry command that changes the database writes its side files too: outputs of the sweep.
WRITTEN_DATABASE_SIDE_FILES = {name: ("side", function) for name, (_, function) in DATABASE_SIDE_FILES.items()}


def journal_side_files(journal):
    """The files SQLite keeps beside a batch's journal, from a function of the slots giving the
    journal's path: outputs of the batch (SQLite writes and deletes them), which may exist or
    not after a run, so the sweep aliases them but does not expect them written (kind "side")."""
    return {f"journal{suffix.replace('-', '_')}": ("side", lambda s, suffix=suffix: journal(s) + suffix) for suffix in ("-wal", "-shm", "-journal")}


class Writer:
    """One invocation of a command that writes. `arguments` and `files` (file slot → content)
    hold slots: {in:NAME=PATH}, {out:NAME=PATH}, {io:NAME=PATH} (read and written, such as a
    database), {dir:NAME=PATH} (an output folder), and {NAME} to use a slot again. `derived`
    names files the command reads or writes whose paths follow from slots (files under an
    output folder, a backup, a database's side files): NAME → (kind, function of the slots)."""
    def __init__(self, command, arguments, variant="", files=None, derived=None):
        self.command, self.arguments, self.variant = command, arguments, variant
        self.files, self.derived = files or {}, derived or {}
        self.tool = command.split()[0]
        self.slots = {}  # name → (kind, default path)
        for text in [arguments, *self.files.values()]:
            for kind, name, default in SLOT.findall(text):
                assert name not in self.slots, f"{command}: slot {name} declared twice"
                self.slots[name] = (kind, default)

    @property
    def id(self):
        return self.command.replace(" ", "-") + (f"[{self.variant}]" if self.variant else "")

    def kind(self, name):
        return self.derived[name][0] if name in self.derived else self.slots[name][0]

    def defaults(self):
        return {name: default for name, (kind, default) in self.slots.items()}

    def paths(self, values):
        """Every slot's path, derived ones included."""
        return {**values, **{name: function(values) for name, (kind, function) in self.derived.items()}}

    def outputs(self):
        return [n for n, (k, _) in self.slots.items() if k in ("out", "io")] + [n for n, (k, _) in self.derived.items() if k in ("out", "side")]

    def peers(self):
        return [n for n, (k, _) in self.slots.items() if k != "dir"] + list(self.derived)

    def options(self):
        """The long options the invocation uses."""
        return set(re.findall(r"(?:^|\s)--([a-z][a-z0-9-]*)", self.arguments)) | ({"output"} if re.search(r"(^|\s)-o\s", self.arguments) else set())

    def render(self, values, folder):
        """The argument list, after writing the slot files (with absolute paths inside)."""
        def substitute(text, absolute):
            def value(name):
                path = values[name]
                return str(folder / path) if absolute and path != "-" and not path.startswith("/") else path
            text = SLOT.sub(lambda m: value(m.group(2)), text)
            return REFERENCE.sub(lambda m: value(m.group(1)) if m.group(1) in values else m.group(0), text)
        for name, content in self.files.items():
            target = folder / values[name]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(substitute(content, absolute=True))
        return [substitute(token, absolute=False) for token in self.arguments.split()]


SHEET_OPTIONS = "--date 2026-01-01"
WRITERS = [
    Writer("vault-tool keygen", "keygen -o {out:o=out.nsec}"),
    Writer("vault-tool derive", "derive --key-file {in:key=keys/parent.nsec} --vault-key-out {out:vk=out.vaultkey} -o {out:o=out.txt}"),
    Writer("vault-tool seal", "seal --key-file {in:key=keys/parent.nsec} -o {out:o=out.vault} {in:doc=testkit/ok-household.revealed.json}"),
    Writer("vault-tool open", "open --key-file {in:key=keys/parent.nsec} --reveal-secrets -o {out:o=out.json} {in:vault=work.vault}"),
    Writer("vault-tool migrate vault", "migrate --key-file {in:key=keys/parent.nsec} --to 2 -o {out:o=out.vault} {in:vault=work-v1.vault}"),
    Writer("vault-tool migrate vault", "migrate --key-file {in:key=keys/parent.nsec} --to 2 --in-place {io:vault=work-v1.vault}", "in-place",
           derived={"backup": ("out", lambda s: s["vault"] + ".bak")}),
    Writer("vault-tool migrate batch", "migrate --to 2 --manifest {in:manifest=manifest.jsonl} --out-dir {dir:out=batch}", "batch",
           files={"manifest": MANIFEST},
           derived={**BATCH_OUTPUTS, "journal": ("out", lambda s: s["out"] + ".migrate-journal.sqlite"),
                    **journal_side_files(lambda s: s["out"] + ".migrate-journal.sqlite")}),
    Writer("vault-tool migrate batch", "migrate --to 2 --manifest {in:manifest=manifest.jsonl} --out-dir {dir:out=batch} --journal {out:journal=journal.sqlite}",
           "batch-journal", files={"manifest": MANIFEST}, derived={**BATCH_OUTPUTS, **journal_side_files(lambda s: s["journal"])}),
    # Its vaults and keys are named by random households; its manifest is named by the tool.
    Writer("vault-tool sample-fleet", "sample-fleet --households 2 --out-dir {dir:out=fleet}",
           derived={"manifest": ("out", lambda s: s["out"] + "/manifest.jsonl")}),
    Writer("vault-tool merge", "merge --key-file {in:key=keys/parent.nsec} --base {in:base=base.vault} --ours {in:ours=ours.vault} "
                               "--theirs {in:theirs=theirs.vault} -o {out:o=out.vault}"),
    Writer("recovery-sheet generate", f"generate --key-file {{in:key=keys/parent.nsec}} --dpi 100 {SHEET_OPTIONS} -o {{out:o=out.png}}"),
    Writer("recovery-sheet generate", f"generate --key-file {{in:key=keys/parent.nsec}} --passphrase-file {{in:pass=pass.txt}} --log-n 10 --dpi 100 "
                                      f"{SHEET_OPTIONS} -o {{out:o=out.png}}", "encrypted"),
    Writer("recovery-sheet scan", "scan {in:image=sheet.png} -o {out:o=out.nsec}"),
    Writer("recovery-sheet scan", "scan {in:image=esheet.png} --passphrase-file {in:pass=pass.txt} -o {out:o=out.nsec}", "encrypted"),
    Writer("recovery-sheet words", "words --key-file {in:key=keys/parent.nsec} -o {out:o=out.txt}"),
    Writer("recovery-sheet scan", "scan {in:image=sheet.png} --vault {in:vault=work.vault} -o {out:o=out.nsec}", "vault"),
    Writer("recovery-sheet words", "words --decode -o {out:o=out.nsec} {in:words=words.txt}", "decode"),
    Writer("recovery-sheet words", "words --decode --vault {in:vault=work.vault} -o {out:o=out.nsec} {in:words=words.txt}", "decode-vault"),
    Writer("recovery-sheet code new", f"code new --master-key-file {{in:mk=mk.hex}} --user-id u {SHEET_OPTIONS} -o {{out:o=out.json}} "
                                      "--sheet {out:sheet=out.png} --code-out {out:code=out.words}"),
    Writer("recovery-sheet code unwrap", "code unwrap --blob {in:blob=blob.json} --sheet {in:sheet=code.png} -o {out:o=out.hex}"),
    Writer("recovery-sheet code unwrap", "code unwrap --blob {in:blob=cblob.json} --code-file {in:code=code.words} -o {out:o=out.hex}", "code-file"),
    Writer("recovery-sheet code rotate", f"code rotate --blob {{in:blob=blob.json}} --sheet {{in:sheet=code.png}} --sheet {{out:newsheet=out.png}} "
                                         f"{SHEET_OPTIONS} -o {{out:o=out.json}} --code-out {{out:code=out.words}}"),
    Writer("recovery-sheet code rotate", f"code rotate --blob {{in:blob=cblob.json}} --code-file {{in:code=code.words}} --sheet {{out:newsheet=out.png}} "
                                         f"{SHEET_OPTIONS} -o {{out:o=out.json}}", "code-file"),
    Writer("device-link create", f"create --key-file {{in:key=keys/parent.nsec}} --vault-url {URL} --now {NOW} -o {{out:o=out.png}}"),
    Writer("device-link read", f"read {{in:image=link.png}} --now {NOW} -o {{out:o=out.nsec}}"),
    Writer("recovery-sheet split", f"split --key-file {{in:key=keys/parent.nsec}} --threshold 2 --shares 2 {SHARE_OPTIONS} -o {{dir:out=shares}}",
           derived={f"{kind}{i}": ("out", lambda s, i=i, kind=kind: f"{s['out']}/share-{i}-of-2.{'png' if kind == 'sheet' else 'txt'}")
                    for i in (1, 2) for kind in ("sheet", "words")}),
    Writer("recovery-sheet split", f"split --key-file {{in:key=keys/parent.nsec}} --passphrase-file {{in:pass=pass.txt}} --group-threshold 1 "
                                   f"--groups 1of1,2of2 {SHARE_OPTIONS} -o {{dir:out=shares}}", "groups",
           derived={name: ("out", lambda s, name=name: f"{s['out']}/{name}") for name in
                    ["group1-share-1-of-1.png", "group2-share-1-of-2.png", "group2-share-2-of-2.txt"]}),
    Writer("recovery-sheet combine", "combine {in:a=tshares/share-1-of-2.png} {in:b=tshares/share-2-of-2.txt} -o {out:o=out.nsec}"),
    Writer("recovery-sheet combine", "combine {in:a=pshares/share-1-of-2.txt} {in:b=pshares/share-2-of-2.txt} --passphrase-file {in:pass=pass.txt} "
                                     "-o {out:o=out.nsec}", "passphrase"),
    Writer("recovery-sheet combine", "combine {in:a=tshares/share-1-of-2.png} {in:b=tshares/share-2-of-2.txt} --vault {in:vault=work.vault} "
                                     "-o {out:o=out.nsec}", "vault"),
    Writer("device-link pairing create", f"pairing create --share-url https://icloud.example/s --parent-device-id {PARENT_DEVICE} "
                                            f"--shared-zone-id Z --now {NOW} -o {{out:o=out.png}}"),
    Writer("rotation-planner plan", "plan --vault {in:vault=work.vault} --key-file {in:key=keys/parent.nsec} --new-key-file {in:new=keys/other.nsec} "
                                    "-o {out:o=out.json}"),
    Writer("rotation-planner apply", "apply {in:plan=plan.json} --vault {in:vault=work.vault} --key-file {in:key=keys/parent.nsec} "
                                     "--new-key-file {in:new=keys/other.nsec} --out-dir {dir:out=rotated} --ops {out:ops=ops.jsonl}",
           derived={"newvault": ("out", lambda s: s["out"] + "/" + OTHER.vault_path),
                    "tombstone": ("out", lambda s: s["out"] + "/" + PARENT.vault_path)}),
    Writer("device-revoker vault", f"vault --key-file {{in:key=keys/parent.nsec}} --vault {{in:vault=work.vault}} --device {DEVICE} --now {NOW} "
                                   "-o {out:o=out.vault} --ops {out:ops=ops.jsonl}"),
    Writer("device-revoker vault", f"vault --key-file {{in:key=keys/parent.nsec}} --vault {{in:vault=work.vault}} --devices-file {{in:list=devices.txt}} "
                                   f"--now {NOW} -o {{out:o=out.vault}} --ops {{out:ops=ops.jsonl}}", "devices-file"),
    Writer("vault-tool device add", f"device add --key-file {{in:key=keys/parent.nsec}} --id N-SWEEP --name Sweep --now {NOW} "
                                    "--ops {out:ops=ops.jsonl} -o {out:o=out.vault} {in:vault=work.vault}"),
    Writer("vault-tool device promote", f"device promote --key-file {{in:key=keys/parent.nsec}} --now {NOW} -o {{out:o=out.vault}} "
                                        "{in:vault=work.vault} B3E9A410"),
    Writer("vault-tool device rename", f"device rename --key-file {{in:key=keys/parent.nsec}} --now {NOW} -o {{out:o=out.vault}} "
                                       "{in:vault=work.vault} B3E9A410 Renamed"),
    Writer("vault-tool device limit", f"device limit --key-file {{in:key=keys/parent.nsec}} --now {NOW} -o {{out:o=out.vault}} {{in:vault=work.vault}} 5"),
    Writer("vault-tool device add", f"device add --key-file {{in:key=keys/parent.nsec}} --id N-SWEEP --name Sweep --now {NOW} "
                                    "--ops {out:ops=ops.jsonl} --in-place {io:vault=work.vault}", "in-place"),
    Writer("vault-tool device promote", f"device promote --key-file {{in:key=keys/parent.nsec}} --now {NOW} --ops {{out:ops=ops.jsonl}} "
                                        "--in-place {io:vault=work.vault} B3E9A410", "in-place"),
    Writer("vault-tool device rename", f"device rename --key-file {{in:key=keys/parent.nsec}} --now {NOW} --ops {{out:ops=ops.jsonl}} "
                                       "--in-place {io:vault=work.vault} B3E9A410 Renamed", "in-place"),
    Writer("vault-tool device limit", f"device limit --key-file {{in:key=keys/parent.nsec}} --now {NOW} --ops {{out:ops=ops.jsonl}} "
                                      "--in-place {io:vault=work.vault} 5", "in-place"),
    Writer("device-revoker registry init", "registry init --db {out:db=new.sqlite}"),
    Writer("device-revoker registry init", "registry init --schema family-medical --db {out:db=new.sqlite}", "family-medical"),
    Writer("device-revoker registry import", f"registry import --db {{io:db=medical.sqlite}} --devices {{in:devices=more-medical.jsonl}} --now {NOW}",
           "family-medical", derived=WRITTEN_DATABASE_SIDE_FILES),
    Writer("device-revoker registry revoke", f"registry revoke --db {{io:db=medical.sqlite}} --user {MEDICAL_USER} --name iphone --force "
                                             f"--batch-id B-SWEEP --now {NOW}", "family-medical", derived=WRITTEN_DATABASE_SIDE_FILES),
    Writer("device-revoker registry import", f"registry import --db {{io:db=registry.sqlite}} --devices {{in:devices=more-devices.jsonl}} "
                                             f"--members {{in:members=more-members.jsonl}} --now {NOW}", derived=WRITTEN_DATABASE_SIDE_FILES),
    Writer("device-revoker registry revoke", f"registry revoke --db {{io:db=registry.sqlite}} --device did:plc:parent#ipad-1 --reason lost --force "
                                             f"--batch-id B-SWEEP --now {NOW} --ops {{out:ops=ops.jsonl}}", derived=WRITTEN_DATABASE_SIDE_FILES),
    Writer("device-revoker registry revoke", f"registry revoke --db {{io:db=registry.sqlite}} --devices-file {{in:list=revoke.txt}} --force "
                                             f"--batch-id B-SWEEP --now {NOW} --ops {{out:ops=ops.jsonl}}", "devices-file", derived=WRITTEN_DATABASE_SIDE_FILES),
    Writer("device-revoker registry log", f"registry log --db {{in:db=registry.sqlite}} --batch {LOG_BATCH} --ops {{out:ops=ops.jsonl}}",
           derived=DATABASE_SIDE_FILES),
]
assert len({w.id for w in WRITERS}) == len(WRITERS)


# MARK: Finding the commands

# Options through which a command writes. `db` is read-only in these commands, and `registry
# log` writes only with --ops.
WRITING_OPTIONS = {"output", "ops", "sheet", "code-out", "vault-key-out", "out-dir", "db", "journal", "in-place"}
READ_ONLY_DATABASE = {"members", "rejoin-plan", "log", "devices"}
# Options named like outputs that these commands only read: `verify --out-dir` reads the folder
# `apply` wrote; `code verify --sheet` scans the code sheet.
READ_ONLY_OPTIONS = {"rotation-planner verify": {"out-dir"}, "recovery-sheet code verify": {"sheet"}}
# Commands whose every run needs the S3 test server, which this sweep's workspace has not: each
# names where its writes are tested instead. (Their journal is not yet in the aliasing sweep.)
ON_THE_OBJECT_STORE = {
    "vault-tool migrate bucket": "test_s3_fleet.py::test_a_journal_that_is_another_database_is_refused_and_left_as_it_was",
}


def installed_tools():
    return [name for name in TOOLS if (BIN / name).exists()]


def leaf_commands():
    """(tool subcommand…) → {option or positional name: abstract}, from each tool's own help."""
    commands = {}

    def walk(command, path):
        subcommands = command.get("subcommands") or []
        if not subcommands and path[-1] != "help":
            arguments = {}
            for argument in command.get("arguments") or []:
                names = [n["name"] for n in argument.get("names") or [] if n["kind"] == "long"]
                for name in names or [argument.get("valueName")]:
                    arguments[name] = (argument.get("abstract") or "") + " " + (argument.get("discussion") or "")
            commands[" ".join(path)] = arguments
        for sub in subcommands:
            walk(sub, path + [sub["commandName"]])

    for name in installed_tools():
        result = subprocess.run([BIN / name, "--experimental-dump-help"], capture_output=True, timeout=TIMEOUT)
        assert result.returncode == 0, result.stderr
        walk(json.loads(result.stdout)["command"], [name])
    return commands


def writes(command, options):
    used = (WRITING_OPTIONS & set(options)) - READ_ONLY_OPTIONS.get(command, set())
    if command.split()[-1] in READ_ONLY_DATABASE:
        used -= {"db"}
    return bool(used)


def test_every_writing_command_is_in_the_table():
    commands = leaf_commands()
    writers = sorted(c for c, options in commands.items() if writes(c, options))
    assert len(writers) >= 20, f"found only {writers}: is --experimental-dump-help read correctly?"
    missing = [c for c in writers if c not in {w.command for w in WRITERS} and c not in ON_THE_OBJECT_STORE]
    assert not missing, f"commands that write but have no WRITERS entry (add one, so the sweep covers them): {missing}"


def test_every_table_entry_names_a_command_and_its_options():
    commands = leaf_commands()
    tools = set(installed_tools())
    problems = []
    for writer in WRITERS:
        if writer.tool not in tools:
            continue
        if writer.command not in commands:
            problems.append(f"{writer.id}: no such command")
            continue
        unknown = writer.options() - set(commands[writer.command])
        if unknown:
            problems.append(f"{writer.id}: no options {sorted(unknown)}")
    # Every writing option of a command appears in one of its entries.
    for command, options in commands.items():
        entries = [w for w in WRITERS if w.command == command]
        if entries and writes(command, options):
            uncovered = (WRITING_OPTIONS & set(options)) - set().union(*(w.options() for w in entries))
            if command.split()[-1] in READ_ONLY_DATABASE:
                uncovered -= {"db"}
            if uncovered:
                problems.append(f"{command}: writing options {sorted(uncovered)} in no entry")
    assert not problems, problems


@pytest.mark.parametrize("writer", WRITERS, ids=[w.id for w in WRITERS])
def test_each_entry_works_as_written(workspace, writer):
    """The sweep's refusals mean something only if each invocation, unaliased, succeeds."""
    values = writer.defaults()
    argv = writer.render(values, workspace)
    result = tool(writer.tool, argv, workspace)
    assert result.returncode == 0, result
    paths = writer.paths(values)
    for name in writer.outputs():
        if writer.kind(name) == "out" or name in writer.slots:
            assert (workspace / paths[name]).is_file(), f"{name} ({paths[name]}) was not written"


# MARK: The sweep

# "missing-folder" spells the path through a folder that does not exist ("new/../work.vault", an
# --out-dir "new/../rotated" whose files are inputs): tidied as text, such a path once looked
# like a file still to be made and passed the same-file check.
LINKS = ["same", "spelling", "missing-folder", "symlink", "hardlink"]
NON_REGULAR = ["fifo", "folder", "stdout-link", "device-link", "dev-null", "dev-full"]


def depends(writer, source, name):
    """Whether the path of `name` follows from the slot `source` (a backup from its vault, a
    database's side files from the database, a batch output from its vault's name)."""
    if name not in writer.derived or source not in writer.slots:
        return False
    values = writer.defaults()
    before = writer.paths(values)[name]
    values[source] += ".moved"
    return writer.paths(values)[name] != before


def moves_derived(writer, slot, path):
    """Whether giving `slot` the value `path` changes the path of any derived file."""
    values = writer.defaults()
    before = writer.paths(values)
    values[slot] = path
    after = writer.paths(values)
    return any(after[name] != before[name] for name in writer.derived)


def output_folders(writer, name):
    """The output-folder slots a derived file's path follows from."""
    return [slot for slot, (kind, _) in writer.slots.items() if kind == "dir" and depends(writer, slot, name)]


def sweep_cases():
    cases = []
    for writer in WRITERS:
        defaults = writer.paths(writer.defaults())
        outputs = writer.outputs()
        for output in outputs:
            derived = output in writer.derived
            for peer in writer.peers():
                if peer == output or (derived and peer in writer.derived) or depends(writer, output, peer):
                    continue
                for kind in LINKS:
                    if derived and kind == "spelling":
                        continue  # the tool names a file under its output folder; there is no other spelling to give
                    if derived and kind == "missing-folder" and not output_folders(writer, output):
                        continue  # a derived file not under an output folder (a backup, a side file) has no folder to spell
                    if kind == "hardlink" and writer.kind(peer) in ("in", "side") and peer in writer.derived:
                        continue  # a database's side file that does not exist cannot be linked to
                    if kind in ("same", "missing-folder") and (derived or peer in writer.derived) and \
                            moves_derived(writer, peer if derived else output, defaults[output if derived else peer]):
                        continue  # giving the slot that path would move a file named after it (a backup, a batch output)
                    cases.append(pytest.param(writer, output, peer, kind, id=f"{writer.id}:{output}~{peer}:{kind}"))
            for kind in NON_REGULAR:
                if kind in ("dev-null", "dev-full") and (derived or writer.kind(output) == "io"):
                    continue  # a database on /dev/null would make its journal in /dev
                cases.append(pytest.param(writer, output, None, kind, id=f"{writer.id}:{output}:{kind}"))
        plain = [o for o in outputs if o not in writer.derived and writer.kind(o) == "out"]
        for index, first in enumerate(plain):
            for second in plain[index + 1:]:
                cases.append(pytest.param(writer, first, second, "both-stdout", id=f"{writer.id}:{first}~{second}:both-stdout"))
    return cases


SWEEP = sweep_cases()


def realize(writer, output, peer, kind, folder, fifos):
    """Sets up one case in the workspace. Returns the slot values, the output's argument and
    the peer's argument (to find in the message, or None), and whether the peer is an output
    too (then either name will do: the tool may first refuse to replace the earlier output)."""
    values = writer.defaults()
    paths = writer.paths(values)
    derived = output in writer.derived
    target = paths[output]

    def place(path):  # makes the folder a derived output lives in
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        return folder / path

    if kind == "both-stdout":
        values[output] = values[peer] = "-"
        return values, None, None, False
    if peer is not None:
        peer_path = paths[peer]
        if kind in ("symlink", "hardlink") and writer.kind(peer) == "out" and not (folder / peer_path).exists():
            place(peer_path).write_text("an earlier output\n")  # a link to nothing would be refused for that alone
        if derived:
            if kind in ("same", "missing-folder"):
                # The input itself lives where the output will be written.
                source = folder / peer_path
                if source.exists():
                    shutil.copy2(source, place(target))
                values[peer] = target
                if kind == "missing-folder":
                    for slot in output_folders(writer, output):
                        values[slot] = "new/../" + values[slot]
            elif kind == "symlink":
                os.symlink(os.path.relpath(folder / peer_path, (folder / target).parent), place(target))
            elif kind == "hardlink":
                os.link(folder / peer_path, place(target))
            return values, None, None, False
        if kind == "same":
            values[output] = peer_path
        elif kind == "spelling":
            values[output] = "sub/../" + peer_path
        elif kind == "missing-folder":
            values[output] = "new/../" + peer_path
        elif kind == "symlink":
            os.symlink(peer_path, folder / "alias.link")
            values[output] = "alias.link"
        elif kind == "hardlink":
            os.link(folder / peer_path, folder / "alias.hard")
            values[output] = "alias.hard"
        given_peer = peer_path if peer in writer.slots and peer not in file_slots(writer) else None
        return values, values[output], given_peer, writer.kind(peer) == "out"
    # Not a regular file.
    where = place(target) if derived else folder / {"fifo": "a.fifo", "folder": "a.folder", "stdout-link": "stdout.link",
                                                      "device-link": "device.link"}.get(kind, "unused")
    if kind == "fifo":
        fifos(where)
    elif kind == "folder":
        where.mkdir()
        (where / "kept").write_text("inside\n")
    elif kind == "stdout-link":
        os.symlink("/dev/stdout", where)
    elif kind == "device-link":
        make_device(folder / "null.device")
        os.symlink(os.path.relpath(folder / "null.device", where.parent), where)
    if derived:
        return values, None, None, False
    values[output] = {"dev-null": "/dev/null", "dev-full": "/dev/full"}.get(kind, str(where.relative_to(folder)))
    return values, values[output], None, False


def file_slots(writer):
    return {name for text in writer.files.values() for _, name, _ in SLOT.findall(text)}


@pytest.mark.parametrize("writer,output,peer,kind", SWEEP)
def test_sweep(workspace, fifos, writer, output, peer, kind):
    values, given_output, given_peer, peer_is_output = realize(writer, output, peer, kind, workspace, fifos)
    argv = writer.render(values, workspace)
    before = snapshot(workspace)
    result = tool(writer.tool, argv, workspace)
    assert result.returncode == REFUSED, f"{writer.tool} {' '.join(argv)}: expected a refusal (exit 4), got {result}"
    assert result.stdout == b"", f"a refused run wrote to standard output: {result}"
    named = [name for name in (given_output, given_peer) if name is not None and name in result.message]
    if given_peer is not None and peer_is_output:
        assert named, f"the message names neither '{given_output}' nor '{given_peer}': {result}"
    else:
        for name in (given_output, given_peer):
            assert name is None or name in named, f"the message does not name '{name}' (the output, and the file it would overwrite): {result}"
    if peer is None and given_output is not None and kind != "both-stdout":
        assert_refusal_names_the_option(writer, output, result)
    assert_unchanged(workspace, before, what=f"the refused run {writer.tool} {' '.join(argv)}")


@functools.cache
def value_options(command):
    """The options of a command that take a value ("-o", "--ops"), from the tool's own help."""
    tool_name, *path = command.split()
    found = json.loads(subprocess.run([str(BIN / tool_name), "--experimental-dump-help"], capture_output=True, check=True, timeout=20).stdout)["command"]
    for name in path:
        found = next(sub for sub in found.get("subcommands") or [] if sub["commandName"] == name)
    return {("-" if name["kind"] == "short" else "--") + name["name"] for argument in found.get("arguments") or []
            if argument["kind"] == "option" for name in argument.get("names") or []}


def slot_option(writer, slot):
    """The option that names a slot in the writer's arguments ("-o", "--ops", "--db"), or None
    for an argument (a flag such as --in-place before it is not its name)."""
    tokens = writer.arguments.split()
    index = next(i for i, token in enumerate(tokens) if re.search(r"\{(?:in|out|io|dir):" + slot + "=", token))
    return tokens[index - 1] if index and tokens[index - 1] in value_options(writer.command) else None


def assert_refusal_names_the_option(writer, output, result):
    """A file that cannot be written (a folder, a FIFO, a device) is refused naming the option
    that named it, and its hint names no other option: `--ops FOLDER` said "output 'FOLDER'"
    and hinted "give - (or no -o)" (a hostile trial)."""
    option = slot_option(writer, output)
    if option is None:
        return
    message = result.stderr.decode(errors="replace")
    error = next(line for line in message.splitlines() if ": error: " in line)
    # Named by the option, or by what the file is to the command ("the journal"): not as an
    # output like any other, which left a person guessing which of the command's files it was.
    generic = re.search(r": error: output '", error) is not None
    assert option in error or (option == "-o") == generic, f"the refusal does not say which file {option} names: {message}"
    hints = [line for line in message.splitlines() if ": hint: " in line]
    named = {match for hint in hints for match in re.findall(r"(?<![\w-])(-o\b|--[a-z][a-z0-9-]*)", hint)}
    assert named <= {option}, f"the hint names {sorted(named - {option})}, not {option}: {message}"


def test_the_sweep_is_big_enough():
    """A guard against a table or a generator that quietly lost its cases."""
    kinds = {case.values[3] for case in SWEEP}
    assert kinds == set(LINKS) | set(NON_REGULAR) | {"both-stdout"}
    assert len(SWEEP) > 500, len(SWEEP)
    assert len({case.id for case in SWEEP}) == len(SWEEP)


# MARK: Finding 1: outputs onto inputs, and onto each other

REVOKE = f"vault --key-file keys/parent.nsec --vault work.vault --device {DEVICE} --now {NOW}"
APPLY = "apply plan.json --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --out-dir rotated"
ONE_VAULT = '{{"vault": "{}", "keyFile": "keys/parent.nsec"}}\n'
OVERWRITES = [
    ("registry-revoke-ops-onto-db", "device-revoker", "registry revoke --db registry.sqlite --device did:plc:parent#ipad-1 --force --ops registry.sqlite", {}),
    ("derive-output-onto-key", "vault-tool", "derive --key-file keys/parent.nsec -o keys/parent.nsec", {}),
    ("apply-ops-onto-new-key", "rotation-planner", APPLY + " --ops keys/other.nsec", {}),
    ("apply-ops-onto-old-key", "rotation-planner", APPLY + " --ops keys/parent.nsec", {}),
    ("revoker-vault-ops-onto-key", "device-revoker", REVOKE + " -o o.vault --ops keys/parent.nsec", {}),
    ("revoker-vault-ops-onto-input-vault", "device-revoker", REVOKE + " -o o.vault --ops work.vault", {}),
    ("revoker-vault-ops-onto-output-vault", "device-revoker", REVOKE + " -o o.vault --ops o.vault", {}),
    ("words-output-onto-key", "recovery-sheet", "words --key-file keys/parent.nsec -o keys/parent.nsec", {}),
    ("link-create-output-onto-key", "device-link", f"create --key-file keys/parent.nsec --vault-url {URL} -o keys/parent.nsec", {}),
    ("link-read-output-onto-image", "device-link", f"read link.png --now {NOW} -o link.png", {}),
    ("scan-output-onto-passphrase", "recovery-sheet", "scan esheet.png --passphrase-file pass.txt -o pass.txt", {}),
    ("code-unwrap-output-onto-blob", "recovery-sheet", "code unwrap --blob blob.json --sheet code.png -o blob.json", {}),
    ("code-unwrap-output-onto-code-file", "recovery-sheet", "code unwrap --blob cblob.json --code-file code.words -o code.words", {}),
    ("code-unwrap-output-onto-sheet", "recovery-sheet", "code unwrap --blob blob.json --sheet code.png -o code.png", {}),
    ("code-new-output-onto-master-key", "recovery-sheet", "code new --master-key-file mk.hex --user-id u -o mk.hex --sheet s.png", {}),
    ("code-new-sheet-onto-master-key", "recovery-sheet", "code new --master-key-file mk.hex --user-id u -o b.json --sheet mk.hex --format png", {}),
    ("code-rotate-blob-onto-new-sheet", "recovery-sheet", "code rotate --blob blob.json --sheet code.png --sheet x.png -o x.png", {}),
    ("code-new-blob-onto-sheet", "recovery-sheet", "code new --master-key-file mk.hex --user-id u -o x.png --sheet x.png", {}),
    ("batch-vault-inside-out-dir", "vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch",
     {"m.jsonl": ONE_VAULT.format("batch/batch-0.vault"), "batch/batch-0.vault": "work-v1.vault"}),
    ("batch-vault-named-like-a-key-in-out-dir", "vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir keys",
     {"m.jsonl": ONE_VAULT.format("v/parent.nsec"), "v/parent.nsec": "work-v1.vault"}),
    ("batch-vault-at-the-default-journal", "vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch",
     {"m.jsonl": ONE_VAULT.format("batch.migrate-journal.sqlite"), "batch.migrate-journal.sqlite": "work-v1.vault"}),
]


def prepare(folder, files):
    """name → the workspace file to copy there, or the text to write (when it ends in a newline)."""
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if content.endswith("\n"):
            (folder / name).write_text(content)
        else:
            shutil.copy(folder / content, folder / name)


@pytest.mark.parametrize("name,tool_name,arguments,files", OVERWRITES, ids=[o[0] for o in OVERWRITES])
def test_finding_1_no_output_overwrites_an_input_or_another_output(workspace, name, tool_name, arguments, files):
    prepare(workspace, files)
    before = snapshot(workspace)
    result = tool(tool_name, arguments, workspace)
    assert result.returncode == REFUSED, result
    assert_unchanged(workspace, before)


# MARK: Finding 2: outputs that are not regular files

def test_finding_2_a_link_to_dev_stdout_is_refused_and_stays_a_link(workspace):
    os.symlink("/dev/stdout", workspace / "out")
    before = snapshot(workspace)
    result = tool("recovery-sheet", "scan sheet.png -o out", workspace)
    assert result.returncode == REFUSED and result.stdout == b"", result
    assert_unchanged(workspace, before)
    assert os.path.islink("/dev/stdout")


def test_finding_2_a_fifo_is_refused_without_blocking(workspace, fifos):
    fifos(workspace / "out")
    before = snapshot(workspace)
    result = tool("vault-tool", "open --key-file keys/parent.nsec -o out work.vault", workspace)
    assert result.returncode == REFUSED, result
    assert_unchanged(workspace, before)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
@pytest.mark.parametrize("tool_name,arguments", [("vault-tool", "seal --key-file keys/parent.nsec testkit/ok-household.revealed.json -o"),
                                                 ("recovery-sheet", "words --key-file keys/parent.nsec -o"),
                                                 ("device-revoker", REVOKE + " --ops ops.jsonl -o")], ids=["seal", "words", "revoke-vault"])
def test_finding_2_a_device_is_refused(workspace, tool_name, arguments, device):
    before = snapshot(workspace)
    result = tool(tool_name, f"{arguments} {device}", workspace)
    assert result.returncode == REFUSED, result
    assert device in result.message, result
    assert_unchanged(workspace, before)


def test_finding_2_a_terminal_is_refused(workspace):
    """-o naming a terminal device (here a pseudo-terminal, as /dev/tty would be) must not
    bypass the rule that secrets do not go to a terminal: refused, and nothing shows on it."""
    leader, follower = os.openpty()
    try:
        terminal = os.ttyname(follower)
        os.symlink(terminal, workspace / "tty.link")
        before = snapshot(workspace)
        for output in (terminal, "tty.link"):
            result = tool("recovery-sheet", f"scan sheet.png -o {output}", workspace)
            assert result.returncode == REFUSED, result
        os.set_blocking(leader, False)
        try:
            shown = os.read(leader, 4096)
        except BlockingIOError:
            shown = b""
        assert b"nsec1" not in shown, "a secret reached the terminal"
        assert_unchanged(workspace, before)
    finally:
        os.close(leader)
        os.close(follower)


def test_finding_2_standard_output_by_dash_still_works(workspace):
    result = tool("vault-tool", "keygen -o -", workspace)
    assert result.returncode == 0 and result.stdout.startswith(b"nsec1"), result


def test_finding_2_a_link_to_a_regular_file_is_written_through_and_stays_a_link(workspace):
    (workspace / "real.vault").write_bytes(b"an earlier vault\n")
    os.symlink("real.vault", workspace / "link.vault")
    ok("vault-tool", "seal --key-file keys/parent.nsec -o link.vault testkit/ok-v2-household.revealed.json", workspace)
    assert os.path.islink(workspace / "link.vault") and os.readlink(workspace / "link.vault") == "real.vault"
    opened = vaultref.open_envelope((workspace / "real.vault").read_bytes(), PARENT.vault_key)
    assert opened["parentPubkey"] == PARENT.pubkey


def test_finding_2_a_link_planted_where_the_tool_names_a_file_is_refused(workspace):
    """apply names its vaults itself under --out-dir: a link found there was planted, and is
    neither followed nor replaced."""
    (workspace / "unrelated.txt").write_text("someone else's file\n")
    (workspace / "rotated" / "vaults").mkdir(parents=True)
    os.symlink(workspace / "unrelated.txt", workspace / "rotated" / OTHER.vault_path)
    before = snapshot(workspace)
    result = tool("rotation-planner", "apply plan.json --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec "
                                      "--out-dir rotated --ops ops.jsonl", workspace)
    assert result.returncode == REFUSED and "symbolic link" in result.message, result
    assert_unchanged(workspace, before)


# MARK: Finding 3: the registry keeps a batch's operations

REVOKE_IPAD = f"registry revoke --db registry.sqlite --device did:plc:parent#ipad-1 --reason lost --force --now {NOW}"


def registry_state(folder, database="registry.sqlite"):
    with sqlite3.connect(f"file:{folder / database}?mode=ro", uri=True) as db:
        return (db.execute("SELECT is_active FROM user_devices WHERE device_id = 'ipad-1'").fetchone()[0],
                db.execute("SELECT count(*) FROM revocations").fetchone()[0])


def test_finding_3_registry_log_writes_a_batchs_operations_again(workspace):
    ok("device-revoker", REVOKE_IPAD + " --batch-id B1 --ops first.jsonl", workspace)
    first = (workspace / "first.jsonl").read_bytes()
    assert b"mls.remove" in first
    ok("device-revoker", "registry log --db registry.sqlite --batch B1 --ops again.jsonl", workspace)
    assert (workspace / "again.jsonl").read_bytes() == first
    # Any time later, after other batches.
    ok("device-revoker", f"registry revoke --db registry.sqlite --device did:plc:log#l1 --force --batch-id B2 --now {NOW} --ops second.jsonl", workspace)
    ok("device-revoker", "registry log --db registry.sqlite --batch B1 --ops later.jsonl", workspace)
    assert (workspace / "later.jsonl").read_bytes() == first
    ok("device-revoker", f"registry log --db registry.sqlite --batch {LOG_BATCH} --ops template.jsonl", workspace)
    assert (workspace / "template.jsonl").read_bytes() == (workspace / "log-ops.jsonl").read_bytes()


@pytest.mark.parametrize("ops", ["missing/ops.jsonl", "/dev/full"])
def test_finding_3_an_ops_file_that_cannot_be_written_is_refused_before_the_commit(workspace, ops):
    before, state = snapshot(workspace), registry_state(workspace)
    result = tool("device-revoker", REVOKE_IPAD + f" --batch-id B1 --ops {ops}", workspace)
    assert result.returncode in (1, REFUSED), result
    assert registry_state(workspace) == state, "the revocation was committed although its operations could not be written"
    assert_unchanged(workspace, before)
    assert ops in result.message, result


@pytest.fixture
def nobody_workspace(template):
    """(a copy of the template that 'nobody' owns, in a folder others may enter; the prefix
    that runs a command as 'nobody'): root ignores permissions. Removed afterwards."""
    workspace = Path(tempfile.mkdtemp(prefix="hvt-nobody-")) / "w"
    shutil.copytree(template, workspace, symlinks=True)
    workspace.parent.chmod(0o755)
    yield workspace, as_nobody(workspace)
    for path in [workspace, *workspace.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(workspace.parent)


@pytest.mark.parametrize("case", ["read-only-folder", "sticky-folder", "dry-run"])
def test_finding_3_an_ops_file_that_could_not_be_written_is_refused_before_the_commit(nobody_workspace, case):
    """As 'nobody': an --ops in a folder that cannot be written, or another user's --ops file in
    a sticky folder (as /tmp: rename(2) says EPERM), is refused before the batch is committed.
    It was found only when the operations were written, after the commit (the devices revoked,
    their MLS removals nowhere until a rerun). A dry run writes no --ops and is not refused."""
    workspace, prefix = nobody_workspace
    if not prefix:
        pytest.fail("run as root: the test runs the tool as another user")
    box = workspace / "box"
    box.mkdir()
    if case == "sticky-folder":
        (box / "ops.jsonl").write_text("the operations of another user's batch\n")
        (box / "ops.jsonl").chmod(0o666)
        box.chmod(0o1777)
    else:
        os.chown(box, 65534, 65534)
        box.chmod(0o555)
    dry = " --dry-run" if case == "dry-run" else ""
    before, state = snapshot(workspace), registry_state(workspace)
    result = execute([*prefix, BIN / "device-revoker", *(REVOKE_IPAD + f" --batch-id B1 --ops box/ops.jsonl{dry}").split()], workspace)
    if case == "dry-run":
        assert result.returncode == 0, result
    else:
        why = "not permitted" if case == "sticky-folder" else "permission denied"
        assert result.returncode == 1 and "--ops 'box/ops.jsonl' there" in result.message and why in result.message, result
    assert registry_state(workspace) == state, "the revocation was committed although its operations could not be written"
    assert_unchanged(workspace, before)


def test_finding_3_ops_lost_after_the_commit_can_be_written_again(workspace, tmp_path):
    """Naming the ops file fails (strace makes every link and rename fail, as if its folder
    vanished): if the revocation was committed, the message names the command that writes the
    operations again, and that command writes exactly what the run would have written."""
    reference = tmp_path / "reference"
    shutil.copytree(workspace, reference, symlinks=True)
    ok("device-revoker", REVOKE_IPAD + " --batch-id B1 --ops ops.jsonl", reference)
    expected = (reference / "ops.jsonl").read_bytes()

    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=link,linkat,rename,renameat,renameat2",
               "-e", "inject=link,linkat,rename,renameat,renameat2:error=ENOENT", BIN / "device-revoker",
               *(REVOKE_IPAD + " --batch-id B1 --ops ops.jsonl").split()]
    state = registry_state(workspace)
    result = execute(command, workspace)
    assert result.returncode == 1, result
    assert not (workspace / "ops.jsonl").exists()
    # The operations are named after the commit (the registry is the record): only naming fails.
    assert registry_state(workspace) != state, "the run failed before its commit"
    assert "registry log" in result.message and "B1" in result.message and "--ops" in result.message, result
    ok("device-revoker", "registry log --db registry.sqlite --batch B1 --ops ops.jsonl", workspace)
    assert (workspace / "ops.jsonl").read_bytes() == expected
    # Or the same command run again, as a tired operator would: its batch is committed, so it
    # revokes nothing and writes the batch's operations (it exited 0 and wrote none).
    (workspace / "ops.jsonl").unlink()
    ok("device-revoker", REVOKE_IPAD + " --batch-id B1 --ops ops.jsonl", workspace)
    assert (workspace / "ops.jsonl").read_bytes() == expected
    assert registry_state(workspace) != state


def test_finding_3_ops_lost_after_the_commit_are_found_by_the_same_command_without_a_batch_id(workspace, tmp_path):
    """The same cut-off run, started without --batch-id and run again as it was: the rerun has
    nothing left to revoke, and names the batch that revoked its devices and the command that
    writes that batch's operations (a trial: "nothing to revoke", no pointer), which writes
    what the first run would have."""
    reference = tmp_path / "reference"
    shutil.copytree(workspace, reference, symlinks=True)
    ok("device-revoker", REVOKE_IPAD + " --batch-id B1 --ops ops.jsonl", reference)
    expected = (reference / "ops.jsonl").read_bytes()
    command = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=link,linkat,rename,renameat,renameat2",
               "-e", "inject=link,linkat,rename,renameat,renameat2:error=ENOENT", BIN / "device-revoker", *(REVOKE_IPAD + " --ops ops.jsonl").split()]
    assert execute(command, workspace).returncode == 1
    with sqlite3.connect(workspace / "registry.sqlite") as db:
        (batch,) = db.execute("SELECT batch_id FROM revocations ORDER BY id DESC LIMIT 1").fetchone()
    again = ok("device-revoker", REVOKE_IPAD + " --ops ops.jsonl", workspace)
    assert not (workspace / "ops.jsonl").exists()
    assert f"the last of them by batch '{batch}'" in again.message and "registry log" in again.message, again
    pointed = again.message.split("write a batch's with: device-revoker ")[1].split("\n")[0].split()
    ok("device-revoker", " ".join(word.strip("'") for word in pointed), workspace)
    assert (workspace / "ops.jsonl").read_bytes() == expected.replace(b"B1", batch.encode())
    # A script reads the same pointer from --json's report.
    reported = subprocess.run([BIN / "device-revoker", *(REVOKE_IPAD + " --json").split()], cwd=workspace, capture_output=True, text=True)
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout)["alreadyRevokedBy"] == [batch], reported.stdout


# MARK: Finding 4: code rotate publishes nothing unless it publishes everything

def as_nobody(folder):
    """Root ignores permissions: as root, run as 'nobody', who then owns the workspace."""
    if os.geteuid() != 0:
        return []
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.mark.parametrize("blocked", ["missing-folder", "read-only-folder"])
def test_finding_4_code_rotate_keeps_the_old_sheet_when_the_blob_cannot_be_written(template, blocked):
    workspace = Path(tempfile.mkdtemp(prefix="hvt-rotate-")) / "w"
    try:
        shutil.copytree(template, workspace, symlinks=True)
        workspace.parent.chmod(0o755)
        prefix = as_nobody(workspace)
        if blocked == "read-only-folder":
            (workspace / "ro").mkdir()
            if prefix:
                os.chown(workspace / "ro", 65534, 65534)
            (workspace / "ro").chmod(0o555)
            blob = "ro/new.json"
        else:
            blob = "missing/new.json"
        # The old code comes from its words, and the new sheet goes where the old sheet was.
        arguments = f"code rotate --blob cblob.json --code-file code.words --sheet csheet.png -o {blob} {SHEET_OPTIONS}"
        before = snapshot(workspace)
        result = execute([*prefix, BIN / "recovery-sheet", *arguments.split()], workspace)
        assert result.returncode in (1, REFUSED), result
        assert_unchanged(workspace, before, what="a rotation whose blob could not be written")
    finally:
        if (workspace / "ro").exists():
            (workspace / "ro").chmod(0o755)
        shutil.rmtree(workspace.parent)


# MARK: Finding 5: a dry run writes nothing

DRY_RUNS = [
    ("vault-tool migrate vault", "migrate --key-file keys/parent.nsec --to 2 --dry-run work-v1.vault"),
    ("vault-tool migrate vault", "migrate --key-file keys/parent.nsec --to 2 --dry-run -o out.vault work-v1.vault"),
    ("vault-tool migrate vault", "migrate --key-file keys/parent.nsec --to 2 --dry-run --in-place work-v1.vault"),
    ("vault-tool migrate batch", "migrate --to 2 --manifest manifest.jsonl --out-dir batch --dry-run"),
    ("vault-tool migrate batch", "migrate --to 2 --manifest manifest.jsonl --out-dir batch --journal j.sqlite --dry-run"),
    ("vault-tool device add", f"device add --key-file keys/parent.nsec --id N-DRY --name Dry --dry-run work.vault"),
    ("vault-tool device add", f"device add --key-file keys/parent.nsec --id N-DRY --name Dry --dry-run --json -o out.vault --ops ops.jsonl work.vault"),
    ("vault-tool device promote", "device promote --key-file keys/parent.nsec --dry-run --in-place work.vault B3E9A410"),
    ("vault-tool device rename", "device rename --key-file keys/parent.nsec --dry-run -o out.vault work.vault B3E9A410 Dry"),
    ("vault-tool device limit", "device limit --key-file keys/parent.nsec --dry-run --json --in-place work.vault 5"),
    ("device-revoker vault", REVOKE + " --dry-run -o out.vault --ops ops.jsonl"),
    ("device-revoker vault", REVOKE + " --dry-run --json"),
    ("device-revoker registry revoke", REVOKE_IPAD + " --dry-run --ops ops.jsonl"),
    ("device-revoker registry revoke", REVOKE_IPAD + " --dry-run --json"),
]


def test_every_dry_run_is_in_the_table():
    commands = leaf_commands()
    with_dry_run = sorted(c for c, options in commands.items() if "dry-run" in options)
    assert with_dry_run, "no command has --dry-run: is the help read correctly?"
    assert set(with_dry_run) <= {c for c, _ in DRY_RUNS} | set(ON_THE_OBJECT_STORE), \
        f"commands with --dry-run missing from DRY_RUNS: {set(with_dry_run) - {c for c, _ in DRY_RUNS}}"


def test_the_commands_on_the_object_store_name_tests_that_exist():
    commands = leaf_commands()
    for command, test in ON_THE_OBJECT_STORE.items():
        assert command in commands, f"{command}: no such command"
        module, function = test.split("::")
        assert f"def {function}(" in (Path(__file__).parent / module).read_text(), f"{command}: no test {test}"


@pytest.mark.parametrize("command,arguments", DRY_RUNS, ids=[f"{c.replace(' ', '-')}:{i}" for i, (c, _) in enumerate(DRY_RUNS)])
def test_finding_5_a_dry_run_writes_nothing(workspace, command, arguments):
    time.sleep(0.01)  # so that a write within the same clock tick would still change an mtime
    before = snapshot(workspace, times=True)
    result = tool(command.split()[0], arguments, workspace)
    assert result.returncode == 0, result
    assert_unchanged(workspace, before, times=True, what="the dry run")


# MARK: Finding 6: a plan is applied once

def apply_arguments(plan="plan.json", ops="ops.jsonl"):
    return f"apply {plan} --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --out-dir rotated --ops {ops}"


@pytest.mark.parametrize("mode", ["routine", "compromise"])
def test_finding_6_a_second_apply_of_the_same_plan_changes_nothing(workspace, mode):
    plan = "plan.json"
    if mode == "compromise":
        plan = "compromise.json"
        ok("rotation-planner", f"plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --mode compromise "
                               f"--now {NOW} -o {plan}", workspace)
    ok("rotation-planner", apply_arguments(plan), workspace)
    assert (workspace / "rotated" / OTHER.vault_path).is_file() and (workspace / "rotated" / PARENT.vault_path).is_file()
    before = snapshot(workspace)
    again = tool("rotation-planner", apply_arguments(plan), workspace)
    assert again.returncode == 0, again
    assert "already applied" in (again.message + again.stdout.decode(errors="replace")).lower(), again
    assert_unchanged(workspace, before, what="the second apply")


@pytest.mark.parametrize("change", ["new-vault-edited", "other-plans-outputs"])
def test_finding_6_apply_over_other_outputs_is_refused(workspace, change):
    if change == "new-vault-edited":
        ok("rotation-planner", apply_arguments(), workspace)
        new_vault = workspace / "rotated" / OTHER.vault_path
        new_vault.write_bytes(new_vault.read_bytes() + b"\n")
        plan = "plan.json"
    else:
        ok("rotation-planner", f"plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec --mode compromise "
                               f"--now {NOW} -o compromise.json", workspace)
        ok("rotation-planner", apply_arguments("compromise.json"), workspace)
        plan = "plan.json"
    before = snapshot(workspace)
    result = tool("rotation-planner", apply_arguments(plan, ops="ops2.jsonl"), workspace)
    assert result.returncode == REFUSED, result
    assert_unchanged(workspace, before)


# MARK: Finding 7: numbers from outside are range-checked

@pytest.fixture
def revision_max(workspace):
    """A v2 vault, and its revealed document, at revision Int.max (sealed by the reference)."""
    document = json.loads((workspace / "testkit" / "ok-v2-household.revealed.json").read_text())
    document["revision"] = INT_MAX
    (workspace / "max.revealed.json").write_text(json.dumps(document, indent=2))
    (workspace / "max.vault").write_bytes(vaultref.seal_document(PARENT, document))
    return workspace


def test_finding_7_link_expiry_overflow_is_a_usage_error(workspace):
    # A number out of its option's range is a usage error (64) in every tool (issue 47's trial).
    before = snapshot(workspace)
    result = tool("device-link", f"create --key-file keys/parent.nsec --vault-url {URL} --now {NOW} --expires-in {INT_MAX} -o l.png", workspace)
    assert result.returncode == 64, result
    assert_unchanged(workspace, before)


@pytest.mark.parametrize("tool_name,arguments", [
    ("vault-tool", "seal --key-file keys/parent.nsec -o out.vault max.revealed.json"),
    ("device-revoker", f"vault --key-file keys/parent.nsec --vault max.vault --device {DEVICE} --now {NOW} -o out.vault"),
    ("vault-tool", "merge --key-file keys/parent.nsec --base max.vault --ours max.vault --theirs max.vault -o out.vault"),
], ids=["seal", "revoke-vault", "merge"])
def test_finding_7_a_vault_at_the_last_revision_is_invalid_input(revision_max, tool_name, arguments):
    before = snapshot(revision_max)
    result = tool(tool_name, arguments, revision_max)
    assert result.returncode == 2, result
    assert_unchanged(revision_max, before)


@pytest.mark.parametrize("tool_name,arguments", [
    ("vault-tool", "migrate --key-file keys/parent.nsec --to 1 --allow-lossy -o out.vault max.vault"),
    ("vault-tool", f"migrate --key-file keys/parent.nsec --to 2 --expect-revision {INT_MAX} -o out.vault max.vault"),
    ("rotation-planner", "plan --vault max.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec -o out.json"),
    ("device-link", f"pairing read --max-age {INT_MAX} --now 2026-01-01T00:01:00Z pair.png"),
    ("recovery-sheet", f"generate --key-file keys/parent.nsec --passphrase-file pass.txt --log-n {INT_MAX} -o out.png"),
    ("vault-tool", f"migrate --to 2 --manifest manifest.jsonl --out-dir batch --jobs {INT_MAX}"),
], ids=["migrate-down", "expect-revision", "plan", "max-age", "log-n", "jobs"])
def test_finding_7_other_numbers_never_trap(revision_max, tool_name, arguments):
    result = tool(tool_name, arguments, revision_max)
    assert result.returncode not in TRAPS, f"trapped: {result}"
    assert result.returncode in (0, 1, 2, 3, 4, 64), result


# MARK: Finding 8: limits, checked before allocating

LIMIT_WORDS = {
    "vault": r"16 ?MiB|16777216|16,777,216",
    "line": r"1 ?MiB|1048576|1,048,576",
    "picture": r"64 ?MiB|67108864|67,108,864",
    "pixels": r"64 ?(megapixels|MP|million pixels)|64000000|64,000,000",
}
MEMORY_LIMIT = 2 << 30  # address space; the machine has far more
BOUNDED = 200 * 1000  # kB of resident memory a refusal may take


def limited_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def measured(tool_name, arguments, folder, timeout=60):
    """Runs under /usr/bin/time -v and a 2 GiB address-space limit; returns the outcome and the
    peak resident memory in kB."""
    statistics = folder / ".time"
    argv = timed([BIN / tool_name, *(arguments.split() if isinstance(arguments, str) else arguments)], statistics)
    result = execute(argv, folder, timeout=timeout, preexec_fn=limited_address_space)
    return result, peak_kib(statistics)


def test_the_memory_limit_lets_a_normal_run_work(workspace):
    result, peak = measured("recovery-sheet", "scan sheet.png", workspace)
    assert result.returncode == 0 and result.stdout.strip() == PARENT.nsec.encode(), result
    assert 0 < peak < BOUNDED


def assert_refused_for(limit, result, peak):
    assert result.returncode == 2, result
    assert re.search(LIMIT_WORDS[limit], result.message), f"the message does not name the {limit} limit: {result}"
    assert result.returncode not in TRAPS
    assert peak < BOUNDED, f"the refusal took {peak} kB"


def assert_past(limit, result):
    assert result.returncode not in TRAPS, result
    assert not re.search(LIMIT_WORDS[limit], result.message), f"refused for the {limit} limit just under it: {result}"


def padded_vault(size):
    """A valid vault of exactly `size` bytes: the document padded with JSON whitespace."""
    text = json.dumps(vaultref.sealed_document(PARENT, json.loads((FIXTURES / "testkit" / "ok-v2-household.revealed.json").read_text())), indent=2)
    padding = size - vaultref.HEADER_SIZE - 16 - len(text.encode())
    data = vaultref.seal_envelope((text[:-1] + " " * padding + "}").encode(), PARENT.household_id, PARENT.vault_key, schema=2)
    assert len(data) == size
    return data


def padded_json(path, size):
    text = path.read_text().rstrip()
    assert text.endswith("}")
    padded = text[:-1] + " " * (size - len(text.encode())) + "}"
    assert len(padded.encode()) == size
    return padded


VAULT_LIMIT, LINE_LIMIT, PICTURE_LIMIT, PIXEL_LIMIT = 16 * MIB, MIB, 64 * MIB, 64_000_000


@pytest.mark.parametrize("arguments", ["inspect --key-file keys/parent.nsec big.vault", "open --key-file keys/parent.nsec -o out.json big.vault"])
def test_finding_8_vault_size(workspace, arguments):
    (workspace / "big.vault").write_bytes(padded_vault(VAULT_LIMIT - 1))
    result = tool("vault-tool", arguments, workspace)
    assert result.returncode == 0, result
    (workspace / "big.vault").write_bytes(padded_vault(VAULT_LIMIT + 1))
    assert_refused_for("vault", *measured("vault-tool", arguments, workspace))
    with open(workspace / "big.vault", "wb") as file:
        file.truncate(VAULT_LIMIT - 1)
    under = tool("vault-tool", arguments, workspace)
    assert under.returncode == 2, under  # not a vault, and not for its size
    assert_past("vault", under)
    with open(workspace / "big.vault", "wb") as file:
        file.truncate(VAULT_LIMIT + 1)
    assert_refused_for("vault", *measured("vault-tool", arguments, workspace))


def test_finding_8_a_garbage_file_of_200_mb_is_refused_with_bounded_memory(workspace):
    with open(workspace / "big.vault", "wb") as file:
        file.truncate(200 * 1000 * 1000)
    assert_refused_for("vault", *measured("vault-tool", "inspect big.vault", workspace))


def test_finding_8_inspect_dev_zero(workspace):
    result, peak = measured("vault-tool", "inspect /dev/zero", workspace, timeout=10)
    assert result.returncode == 2, result
    assert result.seconds < 5, result.seconds
    assert peak < BOUNDED, peak


@pytest.mark.parametrize("what,tool_name,arguments,source", [
    ("revealed", "vault-tool", "seal --key-file keys/parent.nsec -o out.vault big.json", "testkit/ok-v2-household.revealed.json"),
    ("plan", "rotation-planner", "show big.json", "plan.json"),
    ("blob", "recovery-sheet", "code unwrap --blob big.json --code-file code.words -o out.hex", "cblob.json"),
], ids=["revealed-document", "plan", "blob"])
def test_finding_8_json_document_size(workspace, what, tool_name, arguments, source):
    (workspace / "big.json").write_text(padded_json(workspace / source, VAULT_LIMIT - 1))
    under = tool(tool_name, arguments, workspace)
    assert_past("vault", under)
    if what != "plan":  # padding changes the bytes a plan's signatures cover
        assert under.returncode == 0, under
    (workspace / "out.hex").unlink(missing_ok=True)  # a restored key is never replaced: the second run writes anew
    (workspace / "big.json").write_text(padded_json(workspace / source, VAULT_LIMIT + 1))
    assert_refused_for("vault", *measured(tool_name, arguments, workspace))


def jsonl_line(text, size):
    assert text.endswith("}")
    line = text[:-1] + " " * (size - len(text.encode())) + "}"
    assert len(line.encode()) == size
    return line + "\n"


@pytest.mark.parametrize("what", ["manifest", "import"])
def test_finding_8_json_lines_line_length(workspace, what):
    if what == "manifest":
        path, arguments = "m.jsonl", "migrate --to 2 --manifest m.jsonl --out-dir batch"
        line = '{"vault": "batch-0.vault", "keyFile": "keys/parent.nsec"}'
        tool_name = "vault-tool"
    else:
        path, arguments = "d.jsonl", f"registry import --db registry.sqlite --devices d.jsonl --now {NOW}"
        line = '{"user_did": "did:plc:big", "device_id": "b0", "device_mls_did": "did:plc:big#b0", "signature_public_key": "00"}'
        tool_name = "device-revoker"
    (workspace / path).write_text(jsonl_line(line, LINE_LIMIT))
    ok(tool_name, arguments, workspace)
    (workspace / path).write_text(jsonl_line(line.replace("b0", "b1"), LINE_LIMIT + 1))
    if what == "manifest":
        shutil.rmtree(workspace / "batch")
    before = snapshot(workspace)
    assert_refused_for("line", *measured(tool_name, arguments, workspace))
    assert_unchanged(workspace, before)


def png_declaring(width, height):
    """A small PNG whose header declares width × height."""
    buffer = io.BytesIO()
    Image.new("L", (16, 16), 255).save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    data[16:24] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)


def jpeg_declaring(width, height):
    buffer = io.BytesIO()
    Image.new("L", (16, 16), 255).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    frame = data.index(b"\xff\xc0")
    data[frame + 5:frame + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


@pytest.mark.parametrize("format_", ["png", "jpeg"])
def test_finding_8_pictures_declaring_too_many_pixels(workspace, format_):
    picture = (png_declaring if format_ == "png" else jpeg_declaring)(20000, 20000)
    assert len(picture) < 1000
    (workspace / "huge").write_bytes(picture)
    for program, arguments in [("recovery-sheet", "scan huge"), ("device-link", f"read huge --now {NOW}"),
                               ("recovery-sheet", "verify huge --npub " + PARENT.npub)]:
        result, peak = measured(program, arguments, workspace)
        assert_refused_for("pixels", result, peak)
        assert result.seconds < 5, result.seconds


def test_finding_8_picture_pixels_at_the_limit(workspace):
    Image.new("L", (8000, 8000), 255).save(workspace / "edge.png")  # exactly 64,000,000: allowed
    under, peak = measured("recovery-sheet", "scan edge.png", workspace, timeout=120)
    assert under.returncode == 2, under  # decoded, and no QR code on a white page
    assert_past("pixels", under)
    (workspace / "over.png").write_bytes(png_declaring(8000, 8001))
    assert_refused_for("pixels", *measured("recovery-sheet", "scan over.png", workspace))


def test_finding_8_picture_file_size(workspace):
    sheet = (workspace / "sheet.png").read_bytes()
    (workspace / "big.png").write_bytes(sheet + bytes(PICTURE_LIMIT - 1 - len(sheet)))  # after IEND: ignored
    result = tool("recovery-sheet", "scan big.png", workspace, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == PARENT.nsec.encode(), result
    (workspace / "big.png").write_bytes(sheet + bytes(PICTURE_LIMIT + 1 - len(sheet)))
    assert_refused_for("picture", *measured("recovery-sheet", "scan big.png", workspace))


@pytest.mark.parametrize("tool_name,arguments", [
    ("vault-tool", "derive --key-file big.key"),
    ("recovery-sheet", "scan esheet.png --passphrase-file big.key"),
    ("recovery-sheet", "words --decode big.key"),
], ids=["key", "passphrase", "words"])
def test_finding_8_secret_files_are_at_most_4096_bytes(workspace, tool_name, arguments):
    secret(workspace / "big.key", "x" * 4097)
    result, peak = measured(tool_name, arguments, workspace)
    assert result.returncode == 2 and re.search(r"4 ?KiB|4096|4,096", result.message), result
    assert peak < BOUNDED


# MARK: Finding 9: standard input in pipelines

def vault_opens(data, version=None):
    document = vaultref.open_envelope(data, PARENT.vault_key)
    assert document["parentPubkey"] == PARENT.pubkey
    assert version is None or document["version"] == version
    return document


def decoded_qr(png):
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert results, "no QR code in the picture on standard output"
    return results[0].text


REVEALED = "testkit/ok-household.revealed.json"
OTHER_NPUB = (FIXTURES / "keys" / "other.npub").read_text().strip()

STDIN = {
    # (command, the option or argument reading "-"): (arguments, the file on standard input, check of standard output)
    ("vault-tool derive", "key-file"): ("derive --key-file -", "keys/parent.nsec", lambda out: PARENT.npub.encode() in out),
    ("vault-tool seal", "key-file"): (f"seal --key-file - {REVEALED}", "keys/parent.nsec", lambda out: vault_opens(out, 1)),
    ("vault-tool seal", "FILE"): ("seal --key-file keys/parent.nsec -", REVEALED, lambda out: vault_opens(out, 1)),
    ("vault-tool open", "key-file"): ("open --key-file - work.vault", "keys/parent.nsec", lambda out: json.loads(out)["parentPubkey"] == PARENT.pubkey),
    ("vault-tool open", "VAULT"): ("open --key-file keys/parent.nsec -", "work.vault", lambda out: json.loads(out)["parentPubkey"] == PARENT.pubkey),
    ("vault-tool inspect", "key-file"): ("inspect --key-file - work.vault", "keys/parent.nsec", lambda out: PARENT.household_id.hex()[:12].encode() in out),
    ("vault-tool inspect", "VAULT"): ("inspect -", "work.vault", lambda out: PARENT.household_id.hex()[:12].encode() in out),
    ("vault-tool check vault", "key-file"): ("check --key-file - work.vault", "keys/parent.nsec", lambda out: True),
    ("vault-tool check vault", "VAULT"): ("check --key-file keys/parent.nsec -", "work.vault", lambda out: True),
    ("vault-tool migrate vault", "key-file"): ("migrate --key-file - --to 2 work-v1.vault", "keys/parent.nsec", lambda out: vault_opens(out, 2)),
    ("vault-tool migrate vault", "VAULT"): ("migrate --key-file keys/parent.nsec --to 2 -", "work-v1.vault", lambda out: vault_opens(out, 2)),
    ("vault-tool diff", "key-file"): ("diff --key-file - work.vault work.vault", "keys/parent.nsec", lambda out: b"no differences" in out),
    ("vault-tool merge", "key-file"): ("merge --key-file - --base base.vault --ours ours.vault --theirs theirs.vault -o -", "keys/parent.nsec",
                                       lambda out: vault_opens(out, 2)),
    ("recovery-sheet generate", "key-file"): (f"generate --key-file - --dpi 100 {SHEET_OPTIONS} --format png -o -", "keys/parent.nsec",
                                              lambda out: decoded_qr(out) == PARENT.nsec),
    ("recovery-sheet generate", "passphrase-file"): (f"generate --key-file keys/parent.nsec --passphrase-file - --log-n 10 --dpi 100 {SHEET_OPTIONS} --format png -o -",
                                                     "pass.txt", lambda out: decoded_qr(out).startswith("ncryptsec1")),
    ("recovery-sheet scan", "IMAGE"): ("scan -", "sheet.png", lambda out: out.strip() == PARENT.nsec.encode()),
    ("recovery-sheet scan", "passphrase-file"): ("scan esheet.png --passphrase-file -", "pass.txt", lambda out: out.strip() == PARENT.nsec.encode()),
    ("recovery-sheet verify", "passphrase-file"): (f"verify esheet.png --npub {PARENT.npub} --passphrase-file -", "pass.txt", lambda out: True),
    ("recovery-sheet words", "FILE"): ("words --decode -", "words.txt", lambda out: out.strip() == PARENT.nsec.encode()),
    ("recovery-sheet words", "passphrase-file"): ("words --decode typed-ncryptsec.txt --passphrase-file -", "pass.txt",
                                                  lambda out: out.strip() == PARENT.nsec.encode()),
    ("recovery-sheet split", "key-file"): (f"split --key-file - --threshold 2 --shares 2 {SHARE_OPTIONS} -o {SPLIT_OUT}/key", "keys/parent.nsec",
                                           lambda out: len(list(Path(SPLIT_OUT, "key").glob("*.png"))) == 2),
    ("recovery-sheet split", "passphrase-file"): (f"split --key-file keys/parent.nsec --passphrase-file - --threshold 2 --shares 2 {SHARE_OPTIONS} "
                                                  f"-o {SPLIT_OUT}/passphrase", "pass.txt",
                                                  lambda out: len(list(Path(SPLIT_OUT, "passphrase").glob("*.png"))) == 2),
    ("recovery-sheet combine", "SHARE"): ("combine - tshares/share-2-of-2.txt", "tshares/share-1-of-2.png", lambda out: out.strip() == PARENT.nsec.encode()),
    ("recovery-sheet combine", "passphrase-file"): ("combine pshares/share-1-of-2.txt pshares/share-2-of-2.png --passphrase-file -", "pass.txt",
                                                    lambda out: out.strip() == PARENT.nsec.encode()),
    ("device-link create", "key-file"): (f"create --key-file - --vault-url {URL} --now {NOW} -o -", "keys/parent.nsec",
                                         lambda out: PARENT.nsec in decoded_qr(out)),
    ("rotation-planner plan", "key-file"): (f"plan --vault work.vault --key-file - --new-key-file keys/other.nsec --now {NOW}", "keys/parent.nsec",
                                            lambda out: json.loads(out)["mode"] == "routine"),
    ("rotation-planner apply", "key-file"): (f"apply plan.json --vault work.vault --key-file - --new-key-file keys/other.nsec --out-dir {SPLIT_OUT}/applied",
                                             "keys/parent.nsec", lambda out: len(list(Path(SPLIT_OUT, "applied", "vaults").glob("*.vault"))) == 2),
    ("rotation-planner verify", "key-file"): ("verify --out-dir applied --key-file - --new-key-file keys/other.nsec", "keys/parent.nsec", lambda out: True),
    ("vault-tool log start", "key-file"): ("log start --key-file - testkit/ok-v3-household.vault", "keys/parent.nsec", lambda out: out == b""),
    ("vault-tool log grant", "key-file"): (f"log grant --key-file - --to {OTHER_NPUB} --allow revoke --until 2099-01-01 v3.vault", "keys/parent.nsec",
                                           lambda out: out == b""),
    ("vault-tool log withdraw", "key-file"): (f"log withdraw --key-file - --grant {OTHER_NPUB} v3.vault", "keys/parent.nsec", lambda out: out == b""),
    ("vault-tool device add", "key-file"): (f"device add --key-file - --id N-IN --name In --now {NOW} --ops ops.jsonl -o - work.vault", "keys/parent.nsec",
                                            lambda out: any(d["deviceId"] == "N-IN" for d in vault_opens(out, 2)["devices"])),
    ("vault-tool device add", "VAULT"): (f"device add --key-file keys/parent.nsec --id N-IN --name In --now {NOW} -o out.vault -", "work.vault",
                                         lambda out: all(json.loads(line)["op"] == "mls.add" for line in out.splitlines())),
    ("vault-tool device promote", "key-file"): (f"device promote --key-file - --now {NOW} -o - work.vault B3E9A410", "keys/parent.nsec",
                                                lambda out: [d["isPrimary"] for d in vault_opens(out, 2)["devices"] if d["deviceId"].startswith("B3E9A410")] == [True]),
    ("vault-tool device promote", "VAULT"): (f"device promote --key-file keys/parent.nsec --now {NOW} --json -o out.vault - B3E9A410", "work.vault",
                                             lambda out: json.loads(out)["change"] == "promote"),
    ("vault-tool device rename", "key-file"): (f"device rename --key-file - --now {NOW} -o - work.vault B3E9A410 In", "keys/parent.nsec",
                                               lambda out: "In" in [d["deviceName"] for d in vault_opens(out, 2)["devices"]]),
    ("vault-tool device rename", "VAULT"): (f"device rename --key-file keys/parent.nsec --now {NOW} --dry-run --json - B3E9A410 In", "work.vault",
                                            lambda out: json.loads(out)["change"] == "rename"),
    ("vault-tool device limit", "key-file"): (f"device limit --key-file - --now {NOW} -o - work.vault 5", "keys/parent.nsec",
                                              lambda out: vault_opens(out, 2)["deviceLimit"] == 5),
    ("vault-tool device limit", "VAULT"): (f"device limit --key-file keys/parent.nsec --now {NOW} --dry-run --json - 5", "work.vault",
                                           lambda out: json.loads(out)["change"] == "limit"),
    ("device-revoker vault", "key-file"): (f"vault --key-file - --vault work.vault --device {DEVICE} --now {NOW} --ops ops.jsonl -o -", "keys/parent.nsec",
                                           lambda out: [d["status"] for d in vault_opens(out, 2)["devices"] if d["deviceId"] == DEVICE] == ["revoked"]),
}


def test_every_standard_input_is_in_the_table():
    documented = {(command, name) for command, arguments in leaf_commands().items()
                  for name, text in arguments.items() if "standard input" in text}
    assert len(documented) >= 15, documented
    assert not documented - set(STDIN), f"inputs documented to read '-' with no STDIN entry: {sorted(documented - set(STDIN))}"
    tools = set(installed_tools())
    assert not {k for k in STDIN if k[0].split()[0] in tools} - documented, "STDIN entries for inputs that do not read '-'"


@pytest.mark.parametrize("key", list(STDIN), ids=[f"{c.replace(' ', '-')}:{n}" for c, n in STDIN])
def test_finding_9_every_standard_input_works_in_a_pipeline(workspace, key):
    arguments, source, check = STDIN[key]
    before = snapshot(workspace)
    result = tool(key[0].split()[0], arguments, workspace, stdin=(workspace / source).read_bytes())
    assert result.returncode == 0, result
    assert check(result.stdout), result
    # The household log commands are there to write the log beside their vault, and nothing else.
    writes = {"vault-tool log start": ["testkit/ok-v3-household.log"], "vault-tool log grant": ["v3.log"], "vault-tool log withdraw": ["v3.log"],
              # A revocation's or an addition's operations go to a file when the vault is standard output.
              "device-revoker vault": ["ops.jsonl"], "vault-tool device add": ["ops.jsonl", "out.vault"],
              "vault-tool device promote": ["out.vault"]}
    assert_unchanged(workspace, before, what="a pipeline", writes=writes.get(key[0], ()))


@pytest.mark.parametrize("content", [b"", b"\x00" * 5_000_000], ids=["empty", "five-megabytes-of-zeros"])
@pytest.mark.parametrize("key", list(STDIN), ids=[f"{c.replace(' ', '-')}:{n}" for c, n in STDIN])
def test_every_standard_input_is_named_as_such_when_refused(workspace, key, content):
    """Every input read from '-', refused (empty, or far too large), is named "standard input",
    unquoted: quoted, its two words read as a file's name, and as two recovery words the
    redaction withheld ("words file (not shown: …)"). Each factory that names a file renders
    it through one function (FileNames.quoted), so none of them can quote it."""
    arguments, _, _ = STDIN[key]
    result = tool(key[0].split()[0], arguments, workspace, stdin=content)
    message = result.stderr.decode(errors="replace")
    assert result.returncode != 0, f"{key}: {content[:8]!r}… on standard input was accepted: {result}"
    assert "'standard input'" not in message and "not shown" not in message, f"{key}: {message}"


# MARK: Finding 10: terminal escapes in messages

EVIL = "\u001b[31mevil\u202e\u2066x\u0007"


def assert_clean(result):
    message = result.stderr.decode(errors="replace")
    raw = [c for c in message if (ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7f or 0x80 <= ord(c) < 0xa0
           or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
    assert not raw, f"raw control or bidi characters {raw!r} reach the terminal: {message!r}"


def pairing_payload(workspace):
    return json.loads(zxingcpp.read_barcodes(Image.open(workspace / "pair.png"))[0].text)


def qr_png(text, path):
    barcode = zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.QRCode)
    image = barcode.to_image(scale=8)
    picture = Image.frombytes("L", (image.shape[1], image.shape[0]), bytes(memoryview(image)))
    padded = Image.new("L", (picture.width + 64, picture.height + 64), 255)
    padded.paste(picture, (32, 32))
    padded.save(path)


@pytest.mark.parametrize("where", ["import-field-name", "import-raw-bidi", "pairing-field-name", "blob-field-name", "manifest-field-name"])
def test_finding_10_messages_escape_terminal_controls(workspace, where):
    if where.startswith("import"):
        field = json.dumps(EVIL)[1:-1] if where == "import-field-name" else "evil\u202ex"
        (workspace / "d.jsonl").write_text('{"user_did": "did:plc:x", "device_id": "d", "device_mls_did": "did:plc:x#d", '
                                           f'"signature_public_key": "00", "{field}": 1}}\n', encoding="utf-8")
        result = tool("device-revoker", f"registry import --db registry.sqlite --devices d.jsonl --now {NOW}", workspace)
    elif where == "pairing-field-name":
        payload = pairing_payload(workspace)
        payload[EVIL] = 1
        qr_png(json.dumps(payload, separators=(",", ":"), ensure_ascii=False), workspace / "evil.png")
        result = tool("device-link", f"pairing read --now {NOW} evil.png", workspace)
    elif where == "blob-field-name":
        blob = json.loads((workspace / "cblob.json").read_text())
        blob[EVIL] = 1
        (workspace / "evil.json").write_text(json.dumps(blob))
        result = tool("recovery-sheet", "code unwrap --blob evil.json --code-file code.words -o out.hex", workspace)
    else:
        (workspace / "m.jsonl").write_text(json.dumps({"vault": "batch-0.vault", "keyFile": "keys/parent.nsec", EVIL: 1}) + "\n")
        result = tool("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert result.returncode in (1, 2), result
    assert "evil" in result.message, f"the message no longer shows the offending name at all: {result}"
    assert_clean(result)


# MARK: Finding 11: the smaller ones

@pytest.fixture
def foreign_database(workspace):
    with sqlite3.connect(workspace / "other.sqlite") as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes (body) VALUES ('groceries')")
    db.close()
    return workspace


@pytest.mark.parametrize("arguments", ["registry log --db other.sqlite", "registry members --db other.sqlite --convo family",
                                       "registry rejoin-plan --db other.sqlite --device did:plc:parent#ipad-1",
                                       "registry devices --db other.sqlite"], ids=["log", "members", "rejoin-plan", "devices"])
def test_finding_11_read_only_commands_leave_another_apps_database_alone(foreign_database, arguments):
    before = snapshot(foreign_database, times=True)
    result = tool("device-revoker", arguments, foreign_database)
    assert result.returncode == 2, result
    assert "other.sqlite" in result.message, result
    assert_unchanged(foreign_database, before, times=True, what="a read-only command on another app's database")


@pytest.mark.parametrize("field", ["device_id", "user_did"])
def test_finding_11_nul_in_an_imported_string_is_refused(workspace, field):
    row = {"user_did": "did:plc:nul", "device_id": "d", "device_mls_did": "did:plc:nul#d", "signature_public_key": "00"}
    row[field] = row[field][:2] + "\u0000" + row[field][2:]
    (workspace / "nul.jsonl").write_text(json.dumps(row) + "\n")
    before = snapshot(workspace)
    result = tool("device-revoker", f"registry import --db registry.sqlite --devices nul.jsonl --now {NOW}", workspace)
    assert result.returncode == 2, result
    assert_unchanged(workspace, before)


@pytest.mark.parametrize("length", [250, 255])
@pytest.mark.parametrize("tool_name,arguments", [
    ("vault-tool", "seal --key-file keys/parent.nsec testkit/ok-household.revealed.json -o"),
    ("recovery-sheet", "words --key-file keys/parent.nsec -o"),
    ("rotation-planner", "plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec -o"),
    ("device-revoker", REVOKE + " --ops ops.jsonl -o"),
], ids=["seal", "words", "plan", "revoke-vault"])
def test_finding_11_an_output_name_of_up_to_255_bytes_works(workspace, tool_name, arguments, length):
    name = "x" * length
    ok(tool_name, f"{arguments} {name}", workspace)
    first = (workspace / name).read_bytes()
    assert first
    (workspace / name).write_bytes(b"an earlier output\n")
    if tool_name == "rotation-planner":
        # A plan file is never replaced (it may record an applied rotation): refused, kept.
        assert tool(tool_name, f"{arguments} {name}", workspace).returncode == 4
        assert (workspace / name).read_bytes() == b"an earlier output\n"
    else:
        ok(tool_name, f"{arguments} {name}", workspace)  # and replacing an existing file of that name
        assert (workspace / name).read_bytes() != b"an earlier output\n"
    assert sorted(p.name for p in workspace.iterdir() if p.name.startswith(".")) == [], "a temporary file was left behind"


@pytest.mark.parametrize("tool_name,arguments,bad", [
    ("vault-tool", "diff --key-file keys/parent.nsec work.vault testkit/tampered-tag.vault", "testkit/tampered-tag.vault"),
    ("vault-tool", "diff --key-file keys/parent.nsec testkit/bad-magic.vault work.vault", "testkit/bad-magic.vault"),
    ("vault-tool", "merge --key-file keys/parent.nsec --base work.vault --ours testkit/not-json.vault --theirs work.vault -o out.vault",
     "testkit/not-json.vault"),
    ("vault-tool", "merge --key-file keys/parent.nsec --base work.vault --ours work.vault --theirs testkit/tampered-tag.vault -o out.vault",
     "testkit/tampered-tag.vault"),
    ("recovery-sheet", f"verify sheet.png --vault testkit/bad-magic.vault", "testkit/bad-magic.vault"),
    ("recovery-sheet", f"verify sheet.png --vault testkit/tampered-tag.vault", "testkit/tampered-tag.vault"),
    ("recovery-sheet", f"verify testkit/bad-magic.vault --npub {PARENT.npub}", "testkit/bad-magic.vault"),
    ("recovery-sheet", f"verify blank.png --npub {PARENT.npub}", "blank.png"),
], ids=["diff-b", "diff-a", "merge-ours", "merge-theirs", "verify-vault-not-a-vault", "verify-vault-tampered", "verify-image-not-a-picture",
        "verify-image-without-qr"])
def test_finding_11_errors_of_two_input_commands_name_the_input(workspace, tool_name, arguments, bad):
    Image.new("L", (200, 200), 255).save(workspace / "blank.png")
    result = tool(tool_name, arguments, workspace)
    assert result.returncode in (1, 2, 3), result
    assert bad in result.message, f"the message does not say which input: {result}"


# MARK: Restores, batches and secrets on standard output

RESTORES = [
    ("scan", "recovery-sheet", "scan sheet.png"),
    ("scan-encrypted", "recovery-sheet", "scan esheet.png --passphrase-file pass.txt"),
    ("words-decode", "recovery-sheet", "words --decode typed-ncryptsec.txt --passphrase-file pass.txt"),
    ("combine", "recovery-sheet", "combine tshares/share-1-of-2.png tshares/share-2-of-2.txt"),
    ("code-unwrap", "recovery-sheet", "code unwrap --blob blob.json --sheet code.png"),
    ("link-read", "device-link", f"read link.png --now {NOW}"),
]


@pytest.mark.parametrize("tool_name,arguments", [r[1:] for r in RESTORES], ids=[r[0] for r in RESTORES])
@pytest.mark.parametrize("existing", ["keys/other.nsec", "new/../keys/other.nsec"])
def test_a_restore_never_replaces_a_key_file(workspace, tool_name, arguments, existing):
    """Scanning an old sheet "into parent.nsec" once replaced the family's current key: every
    command whose output is a key creates it, and refuses a file that is there (exit 4)."""
    before = snapshot(workspace)
    result = tool(tool_name, f"{arguments} -o {existing}", workspace)
    assert result.returncode == REFUSED, result
    assert existing in result.message, result
    assert_unchanged(workspace, before)
    result = ok(tool_name, f"{arguments} -o restored.key", workspace)
    assert (workspace / "restored.key").stat().st_mode & 0o777 == 0o600


def test_a_batch_removes_only_the_temporary_files_it_makes(workspace):
    """Names merely shaped like the tool's temporaries, folders, links and other users' files
    in an --out-dir are never removed. A leftover of the batch's own (a kill between linking an
    output's temporary name and renaming it) is known by the name its journal records, and only
    that is removed by the next run."""
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work-v1.vault")})
    batch = workspace / "batch"
    (batch / ".photos.tmp-2024ab").mkdir(parents=True)
    (batch / ".photos.tmp-2024ab" / "beach.jpg").write_text("a photo\n")
    (batch / ".notes.tmp-abcdef").write_text("a note\n")
    (batch / ".hvt-abcdefgh.tmp").mkdir()
    (batch / ".hvt-abcdefgh.tmp" / "kept").write_text("inside\n")
    (batch / ".hvt-leftover.tmp").write_text("shaped like an earlier version's temporary name\n")
    os.symlink("../work.vault", batch / ".hvt-zzzzzzzz.tmp")
    ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    foreign = {".photos.tmp-2024ab", ".notes.tmp-abcdef", ".hvt-abcdefgh.tmp", ".hvt-leftover.tmp", ".hvt-zzzzzzzz.tmp"}
    assert set(os.listdir(batch)) == foreign | {"work-v1.vault"}
    (prefix,) = sqlite3.connect(workspace / "batch.migrate-journal.sqlite").execute("SELECT temporaryPrefix FROM run").fetchone()
    assert re.fullmatch(r"\.hvt-[a-z0-9]{12}-", prefix), prefix
    (batch / f"{prefix}1.tmp").write_text("what a killed run of this batch left for manifest line 1\n")
    shaped = {f"{prefix}2.tmp", f"{prefix}01.tmp", f"{prefix}+1.tmp", f"{prefix}1.tmp.tmp"}
    for name in shaped:
        (batch / name).write_text("not a line of this batch\n")
    ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert set(os.listdir(batch)) == foreign | shaped | {"work-v1.vault"}
    assert (batch / ".photos.tmp-2024ab" / "beach.jpg").read_text() == "a photo\n"
    assert (batch / ".hvt-abcdefgh.tmp" / "kept").exists()
    # A journal whose record would name a user's files (damaged, or edited) is not trusted.
    with sqlite3.connect(workspace / "batch.migrate-journal.sqlite") as journal:
        journal.execute("UPDATE run SET temporaryPrefix = 'notes-'")
    (batch / "notes-1.tmp").write_text("a user's file\n")
    result = tool("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert result.returncode != 0 and "may be damaged" in result.message, result
    assert (batch / "notes-1.tmp").read_text() == "a user's file\n"


def test_a_mistyped_target_version_costs_nothing(workspace):
    """--to 3 (then no schema; 4 since issue 45) once made the journal and failed every job, and
    the corrected command was then refused as "another batch": the target is checked before
    anything is made."""
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work-v1.vault")})
    before = snapshot(workspace)
    result = tool("vault-tool", "migrate --to 4 --manifest m.jsonl --out-dir batch", workspace)
    assert result.returncode == 2, result
    assert_unchanged(workspace, before)
    ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert (workspace / "batch" / "work-v1.vault").exists()


def test_a_journal_that_is_another_database_is_refused(workspace):
    """A --journal pointed at the registry once added the journal's tables to it."""
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work-v1.vault")})
    before = snapshot(workspace)
    result = tool("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch --journal registry.sqlite", workspace)
    assert result.returncode == REFUSED, result
    assert "registry.sqlite" in result.message, result
    assert_unchanged(workspace, before)


def test_a_refused_batch_removes_what_it_made(workspace):
    """A batch refused at its journal (another batch's) leaves neither a new output folder
    nor a new journal."""
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work-v1.vault"), "n.jsonl": ONE_VAULT.format("work.vault")})
    ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch --journal j.sqlite", workspace)
    before = snapshot(workspace)
    result = tool("vault-tool", "migrate --to 2 --manifest n.jsonl --out-dir fresh/batch --journal j.sqlite", workspace)
    assert result.returncode == REFUSED, result
    assert_unchanged(workspace, before)


def test_a_secret_redirected_into_a_readable_file_is_warned_about(workspace):
    """The refusal on a terminal no longer suggests a redirection; a redirection the shell made
    readable by others is written, with a warning naming chmod 600."""
    target = workspace / "redirected.nsec"
    with open(target, "wb") as stdout:
        os.chmod(target, 0o644)
        result = subprocess.run([BIN / "vault-tool", "keygen"], cwd=workspace, stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert b"chmod 600" in result.stderr, result.stderr
    assert target.read_text().startswith("nsec1")
    private = workspace / "private.nsec"
    with open(private, "wb") as stdout:
        os.chmod(private, 0o600)
        result = subprocess.run([BIN / "vault-tool", "keygen"], cwd=workspace, stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert result.returncode == 0 and b"warning" not in result.stderr, result.stderr


def test_a_batch_checks_its_files_before_it_starts(workspace):
    """A key file that is not there is found before the journal or the folder is made."""
    prepare(workspace, {"m.jsonl": '{"vault": "work-v1.vault", "keyFile": "keys/parnet.nsec"}\n'})
    before = snapshot(workspace)
    result = tool("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert result.returncode == 1, result
    assert "manifest line 1" in result.message and "keys/parnet.nsec" in result.message, result
    assert_unchanged(workspace, before)


def test_a_lossy_batch_reports_every_dropped_value(workspace):
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work.vault")})
    result = ok("vault-tool", "migrate --to 1 --allow-lossy --manifest m.jsonl --out-dir batch", workspace)
    line = json.loads(result.stdout.decode().splitlines()[0])
    assert line["status"] == "migrated" and line["lost"], line
    assert all(isinstance(value, str) and value for value in line["lost"]), line


def test_census_counts_a_cut_off_vault_apart(workspace):
    (workspace / "fleet").mkdir()
    shutil.copy(workspace / "work.vault", workspace / "fleet" / "whole.vault")
    (workspace / "fleet" / "cut.vault").write_bytes((workspace / "work.vault").read_bytes()[:100])
    (workspace / "fleet" / "note.txt").write_text("not a vault\n")
    census = json.loads(ok("vault-tool", "census --json fleet", workspace).stdout)
    assert census["vaults"] == 1 and census["files"] == 3, census
    assert [entry["path"] for entry in census["truncated"]] == ["cut.vault"], census
    assert [entry["path"] for entry in census["notVaults"]] == ["note.txt"], census


def test_sample_fleet_makes_a_fleet_the_batch_migrates(workspace):
    ok("vault-tool", "sample-fleet --households 70 --out-dir trial --now 2026-01-01T00:00:00Z", workspace)
    assert len(list((workspace / "trial" / "vaults").iterdir())) == 70
    assert {stat.S_IMODE(key.stat().st_mode) for key in (workspace / "trial" / "keys").iterdir()} == {0o600}
    lines = (workspace / "trial" / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 70
    for line in lines[:3]:
        entry = json.loads(line)
        key = nip19_decode((workspace / "trial" / entry["keyFile"]).read_text().strip(), "nsec")
        assert Path(entry["vault"]).name == Household(key).vault_path.split("/")[-1]
    result = ok("vault-tool", "migrate --manifest trial/manifest.jsonl --to 2 --out-dir trial-v2", workspace)
    assert [json.loads(l)["status"] for l in result.stdout.decode().splitlines()] == ["migrated"] * 70
    before = snapshot(workspace)
    result = tool("vault-tool", "sample-fleet --households 2 --out-dir trial", workspace)
    assert result.returncode == REFUSED, result
    assert_unchanged(workspace, before)


WRONG_KIND = [
    ("recovery-sheet", "scan tshares/share-1-of-2.png -o out.nsec", "a share sheet of set", "recovery-sheet combine"),
    ("recovery-sheet", "scan code.png -o out.nsec", "a recovery-code sheet", "code unwrap --sheet"),
    ("recovery-sheet", "scan link.png -o out.nsec", "a device-link code", "device-link read"),
    ("recovery-sheet", "combine sheet.png tshares/share-2-of-2.txt -o out.nsec", "a recovery sheet", "recovery-sheet scan"),
    ("recovery-sheet", "code unwrap --blob blob.json --sheet sheet.png -o out.hex", "a recovery sheet", "recovery-sheet scan"),
    ("device-link", f"read pair.png --now {NOW}", "a pairing code", "device-link pairing read"),
    ("device-link", f"read sheet.png --now {NOW}", "a recovery sheet", "recovery-sheet scan"),
    ("device-link", f"pairing read link.png --now {NOW}", "a device-link code", "device-link read"),
]


@pytest.mark.parametrize("tool_name,arguments,what,command", WRONG_KIND, ids=[f"{t} {a.split()[0]} {a.split()[1]}" for t, a, _, _ in WRONG_KIND])
def test_the_wrong_kind_of_code_is_named_with_the_command_that_reads_it(workspace, tool_name, arguments, what, command):
    before = snapshot(workspace)
    result = tool(tool_name, arguments, workspace)
    assert result.returncode == 2, result
    assert f"is {what}" in result.message and command in result.message, result
    assert_unchanged(workspace, before)


# MARK: Pictures that cost more to decode than their size

def progressive_jpeg(size=(64, 64)):
    """A small progressive JPEG of a gradient (PIL through libjpeg), as bytes."""
    image = Image.new("L", size)
    image.putdata([(x * 4 + y) % 256 for y in range(size[1]) for x in range(size[0])])
    out = io.BytesIO()
    image.save(out, "JPEG", progressive=True, quality=90)
    return out.getvalue()


def jpeg_segments(data):
    """(marker, start, end) of each segment; a scan's segment runs to the next marker."""
    segments, position = [], 2
    while position < len(data):
        assert data[position] == 0xFF, position
        marker = data[position + 1]
        if marker == 0xD9:
            segments.append((marker, position, position + 2))
            break
        length = int.from_bytes(data[position + 2:position + 4], "big")
        end = position + 2 + length
        if marker == 0xDA:  # entropy-coded data up to the next marker that is not a stuffed 0xFF00 or a restart
            while not (data[end] == 0xFF and data[end + 1] not in (0x00, *range(0xD0, 0xD8))):
                end += 1
        segments.append((marker, position, end))
        position = end
    return segments


def test_a_jpeg_of_thousands_of_scans_is_refused_after_the_limit(workspace):
    """Each scan is a pass over the image: 5,000 repeated scans once took minutes. The tool
    stops past 100 scans, whatever the file's size."""
    data = progressive_jpeg((256, 256))
    segments = jpeg_segments(data)
    scans = [s for s in segments if s[0] == 0xDA]
    smallest = min(scans, key=lambda s: s[2] - s[1])
    bomb = data[:scans[-1][2]] + data[smallest[1]:smallest[2]] * 5000 + b"\xff\xd9"
    assert len(bomb) < 8 * MIB
    (workspace / "scans.jpg").write_bytes(bomb)
    result, peak = measured("recovery-sheet", "scan scans.jpg -o out.nsec", workspace, timeout=30)
    assert result.returncode == 2, result
    assert "more than 100 scans" in result.message, result
    assert result.seconds < 10, result.seconds
    assert peak < BOUNDED, peak
    assert not (workspace / "out.nsec").exists()


def test_a_small_jpeg_claiming_a_huge_progressive_image_is_refused_before_decoding(workspace):
    """A 64×64 progressive JPEG whose frame header claims 8000×8000: its coefficients alone
    would take 122 MiB for a file of a few kilobytes."""
    data = bytearray(progressive_jpeg())
    frame = next(s for s in jpeg_segments(bytes(data)) if s[0] == 0xC2)
    data[frame[1] + 5:frame[1] + 7] = (8000).to_bytes(2, "big")
    data[frame[1] + 7:frame[1] + 9] = (8000).to_bytes(2, "big")
    (workspace / "huge.jpg").write_bytes(bytes(data))
    result, peak = measured("recovery-sheet", "scan huge.jpg -o out.nsec", workspace, timeout=30)
    assert result.returncode == 2, result
    assert "MiB" in result.message, result
    assert peak < BOUNDED, peak
    assert result.seconds < 5, result.seconds


def test_an_ordinary_progressive_photo_still_reads(workspace):
    """The limits leave real pictures alone: a progressive JPEG of a recovery sheet scans."""
    sheet = Image.open(workspace / "sheet.png").convert("L")
    out = io.BytesIO()
    sheet.save(out, "JPEG", progressive=True, quality=85)
    (workspace / "sheet-progressive.jpg").write_bytes(out.getvalue())
    ok("recovery-sheet", "scan sheet-progressive.jpg -o restored.nsec", workspace)


LONG_INPUTS = [
    ("device-revoker", lambda long: ["registry", "revoke", "--db", "registry.sqlite", "--device", long]),
    ("device-revoker", lambda long: ["registry", "revoke", "--db", "registry.sqlite", "--device", long + "#x", "--dry-run"]),
    ("vault-tool", lambda long: ["inspect", long]),
    ("recovery-sheet", lambda long: ["generate", "--key-file", "keys/parent.nsec", "--lang", long, "-o", "x.png"]),
]


@pytest.mark.parametrize("tool_name,arguments", LONG_INPUTS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(LONG_INPUTS)])
def test_a_message_quotes_a_bounded_part_of_a_long_input(workspace, tool_name, arguments):
    long = "did:plc:" + "9" * 100_000
    result = tool(tool_name, arguments(long), workspace)
    assert result.returncode != 0, result
    assert len(result.stderr) < 3000, len(result.stderr)


def test_a_long_manifest_line_is_quoted_in_part(workspace):
    (workspace / "m.jsonl").write_text('{"vault": "work-v1.vault", "keyFile": "keys/parent.nsec", "version": ' + "9" * 1_000_000 + "}\n")
    result = tool("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert result.returncode == 2, result
    assert len(result.stderr) < 3000, len(result.stderr)


def leave_hot_journal(database):
    """What a revoke killed mid-transaction leaves: changed pages in the file and the journal
    that undoes them (a small page cache makes SQLite write them before the commit)."""
    code = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('PRAGMA cache_size = 1'); "
            "c.execute('BEGIN IMMEDIATE'); c.execute(\"UPDATE user_devices SET device_name = coalesce(device_name, '') || 'x'\"); "
            "c.execute(\"UPDATE members SET is_admin = is_admin\"); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(database)], check=True)
    assert Path(str(database) + "-journal").stat().st_size > 0


@pytest.mark.parametrize("arguments", ["registry log --db registry.sqlite", "registry devices --db registry.sqlite",
                                       "registry revoke --db registry.sqlite --user did:plc:parent --dry-run --force"])
def test_a_reading_command_leaves_what_a_killed_run_left_and_a_writing_one_rolls_it_back(workspace, arguments):
    """A reading command changes nothing, a hot journal's rollback included (a hostile trial:
    another copy's journal, rolled back by `registry devices`, broke the registry): it says so
    and how, exit 1, both files as they were; a writing command rolls it back, and then the
    reading one reads the registry as it was before the killed run."""
    before = sqlite3.connect(workspace / "registry.sqlite").execute("SELECT group_concat(device_name) FROM user_devices").fetchone()
    leave_hot_journal(workspace / "registry.sqlite")
    files = {p.name: p.read_bytes() for p in workspace.iterdir() if p.name.startswith("registry.sqlite")}
    refused = tool("device-revoker", arguments, workspace)
    said = refused.stderr.decode()
    assert refused.returncode == 1 and "unfinished transaction" in said and "sqlite3 'registry.sqlite'" in said, said
    assert {p.name: p.read_bytes() for p in workspace.iterdir() if p.name.startswith("registry.sqlite")} == files
    ok("device-revoker", "registry init --db registry.sqlite", workspace)
    result = ok("device-revoker", arguments, workspace)
    assert not Path(str(workspace / "registry.sqlite") + "-journal").exists()
    after = sqlite3.connect(workspace / "registry.sqlite").execute("SELECT group_concat(device_name) FROM user_devices").fetchone()
    assert after == before
    assert {p.name for p in workspace.iterdir() if p.name.startswith("registry.sqlite")} == {"registry.sqlite"}, result


@pytest.mark.parametrize("arguments", ["registry log --db registry.sqlite", "registry devices --db registry.sqlite",
                                       "registry revoke --db registry.sqlite --user did:plc:parent --dry-run --force"])
def test_a_reading_command_leaves_no_file_beside_a_wal_registry(workspace, arguments):
    """The chat app may keep its registry in WAL mode: a read-only connection makes -wal and
    -shm and cannot remove them, so a dry run or `log` left two files. SQLite's last connection
    removes them; while another connection has the database open, they are its, and stay."""
    database = workspace / "registry.sqlite"
    connection = sqlite3.connect(database)
    assert connection.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    connection.close()
    before = database.read_bytes()
    result = ok("device-revoker", arguments, workspace)
    assert {p.name for p in workspace.iterdir() if p.name.startswith("registry.sqlite")} == {"registry.sqlite"}, result
    assert database.read_bytes() == before
    app = sqlite3.connect(database)
    app.execute("SELECT count(*) FROM user_devices").fetchone()
    ok("device-revoker", arguments, workspace)
    assert {p.name for p in workspace.iterdir() if p.name.startswith("registry.sqlite")} == {"registry.sqlite", "registry.sqlite-wal", "registry.sqlite-shm"}
    app.execute("UPDATE user_devices SET device_name = 'still the app''s' WHERE device_id = (SELECT min(device_id) FROM user_devices)")
    app.commit()
    app.close()
    assert {p.name for p in workspace.iterdir() if p.name.startswith("registry.sqlite")} == {"registry.sqlite"}


def import_peak_kilobytes(folder, count, name):
    """The peak resident memory of importing `count` new devices spread over users."""
    with open(folder / f"{name}.jsonl", "w") as out:
        for i in range(count):
            out.write(json.dumps({"user_did": f"did:plc:u{i % 5000}", "device_id": f"d{i}", "device_mls_did": f"did:plc:u{i % 5000}#d{i}",
                                  "signature_public_key": f"{i:08x}"}) + "\n")
    ok("device-revoker", f"registry init --db {name}.sqlite", folder)
    result, peak = measured("device-revoker", f"registry import --db {name}.sqlite --devices {name}.jsonl", folder)
    assert result.returncode == 0, result
    return peak


def test_an_imports_memory_is_bounded_by_its_caches_not_its_file(workspace):
    """An import's memory once grew with its file (a 104 MB file took 2.7 GB), then with the
    registry (every page it touched stayed mapped: 420 MB for a 134 MB file). Twelve times the
    devices must not take much more than the caches (64 MiB, and 128 MiB for temporary tables)."""
    small = import_peak_kilobytes(workspace, 20_000, "small")
    large = import_peak_kilobytes(workspace, 240_000, "large")
    assert large < small + 200 * 1024, (small, large)


def batch_check_peak_kilobytes(folder, count):
    """The peak resident memory of a batch that reads and checks a manifest of `count` vaults
    (hard links of one) and is refused at its last line, whose vault is missing."""
    (folder / "many").mkdir(exist_ok=True)
    with open(folder / f"m{count}.jsonl", "w") as out:
        for i in range(count):
            if i < count - 1 and not (folder / "many" / f"{i}.vault").exists():
                os.symlink("../work.vault", folder / "many" / f"{i}.vault")
            out.write(json.dumps({"vault": f"many/{i}.vault", "keyFile": "keys/parent.nsec"}) + "\n")
    result, peak = measured("vault-tool", f"migrate --to 2 --manifest m{count}.jsonl --out-dir out{count}", folder)
    assert result.returncode == 1 and f"manifest line {count}: cannot read the vault" in result.message, result
    assert not (folder / f"out{count}").exists() and not (folder / f"out{count}.migrate-journal.sqlite").exists()
    return peak


def test_a_batchs_memory_does_not_grow_with_its_manifest(workspace):
    """A batch held every manifest line as a job and its output, about 1.4 KB each: the
    documented 1 GiB manifest would have taken gigabytes. Lines are staged in a temporary
    database and read back a group at a time, so ten times the lines take the same memory."""
    small = batch_check_peak_kilobytes(workspace, 5_000)
    large = batch_check_peak_kilobytes(workspace, 50_000)
    assert large < small + 20 * 1024, (small, large)


def import_cpu_seconds(folder, count, name):
    """CPU time of importing `count` new devices of one user into a new registry."""
    with open(folder / f"{name}.jsonl", "w") as out:
        for i in range(count):
            out.write(json.dumps({"user_did": "did:plc:one", "device_id": f"d{i}", "device_mls_did": f"did:plc:one#d{i}",
                                  "signature_public_key": f"{i:08x}"}) + "\n")
    ok("device-revoker", f"registry init --db {name}.sqlite", folder)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ok("device-revoker", f"registry import --db {name}.sqlite --devices {name}.jsonl", folder)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def test_an_import_grows_linearly_with_one_users_devices(workspace):
    """20,000 devices of one user once took 80 s against 0.6 s spread over users: each line's
    checks scanned that user's other lines. Four times the devices must cost about four times
    as much, not sixteen (CPU time, with room for the start-up the small run pays too)."""
    small = import_cpu_seconds(workspace, 3_000, "small")
    large = import_cpu_seconds(workspace, 12_000, "large")
    assert large < 8 * max(small, 0.05), (small, large)


@pytest.mark.parametrize("arguments", [
    "generate --key-file keys/parent.nsec --passphrase-file weak.txt --log-n 4 --dpi 100 -o weak.png",
    f"split --key-file keys/parent.nsec --passphrase-file weak.txt --threshold 2 --shares 2 {SHARE_OPTIONS} -o weak-shares",
], ids=["generate", "split"])
def test_a_weak_new_passphrase_is_refused_unless_insisted_on(workspace, arguments):
    """zxcvbn's estimate of "password123" is a few bits; the reason names the estimate, never
    the passphrase, and --weak-passphrase goes ahead knowingly."""
    secret(workspace / "weak.txt", "password123\n")
    before = snapshot(workspace)
    result = tool("recovery-sheet", arguments, workspace)
    assert result.returncode == REFUSED, result
    assert "too easy to guess" in result.message and "--weak-passphrase" in result.message, result
    assert b"password123" not in result.stderr
    assert_unchanged(workspace, before)
    ok("recovery-sheet", arguments + " --weak-passphrase", workspace)


def test_a_batch_whose_outputs_were_removed_is_done_again_not_reported_done(workspace):
    """The journal sits beside the output folder: an operator who empties the folder (or a
    part of it) to start again got "done earlier" for every line and no vault at all. A line
    is done only while its output is there; a missing one is migrated again."""
    prepare(workspace, {"m.jsonl": ONE_VAULT.format("work-v1.vault")})
    ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    shutil.rmtree(workspace / "batch")
    again = ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert "migrated 1" in again.message and "done earlier 0" in again.message, again
    assert (workspace / "batch" / "work-v1.vault").is_file()
    third = ok("vault-tool", "migrate --to 2 --manifest m.jsonl --out-dir batch", workspace)
    assert "done earlier 1" in third.message, third


# MARK: A path on this machine spelled as a URL

# Options that take a path on this machine only, and the outputs of tools that also write
# objects, given a name spelled as a URL: made as folders, `--out-dir s3://b/v2/` became a local
# folder `s3:` the report then named as the bucket (a trial: vaults, and sample-fleet's parent
# keys, written there with exit 0). Each must be refused with exit 2 before anything is written.
LOCAL_ONLY = [
    ("vault-tool", "migrate batch --manifest manifest.jsonl --to 2 --out-dir {url}v2/"),
    ("vault-tool", "migrate --manifest manifest.jsonl --to 2 --out-dir out --journal {url}j.sqlite"),
    ("vault-tool", "sample-fleet --households 1 --out-dir {url}fleet/"),
    ("device-revoker", "registry init --db {url}r.sqlite"),
    ("device-revoker", "registry devices --db {url}r.sqlite"),
    ("device-revoker", "registry init --db {url}m.sqlite --schema family-medical"),
]
OBJECT_WRITERS = [
    ("vault-tool", "open --key-file keys/parent.nsec -o {url}o.json work.vault"),
    ("vault-tool", "keygen -o {url}k.nsec"),
    ("recovery-sheet", "generate --key-file keys/parent.nsec -o {url}s.pdf"),
    ("rotation-planner", "plan --vault work.vault --key-file keys/parent.nsec --new-key-file keys/other.nsec -o {url}p.json"),
    ("device-link", f"create --key-file keys/parent.nsec --vault-url {URL} --now 2026-01-01T00:00:00Z -o {{url}}l.png"),
]
URL_SPELLINGS = ["s3://household-vaults/", "S3://household-vaults/", "S3:/household-vaults/", "https://example.com/", "gs+x.y-z://b/"]


# An `s3://` name is an object to the commands that write one: those take the other spellings.
URL_CASES = [(name, arguments, url) for name, arguments in LOCAL_ONLY for url in URL_SPELLINGS] + \
    [(name, arguments, url) for name, arguments in OBJECT_WRITERS for url in URL_SPELLINGS if not url.startswith("s3://")]


@pytest.mark.parametrize("name,arguments,url", URL_CASES, ids=[f"{n}-{a.split(' -')[0]}-{u.split(':')[0]}" for n, a, u in URL_CASES])
def test_a_path_spelled_as_a_url_is_refused_not_made_as_folders(workspace, name, arguments, url):
    before = snapshot(workspace)
    result = tool(name, arguments.format(url=url), workspace)
    assert result.returncode == 2, result
    assert b"is spelled as a URL" in result.stderr, result.stderr
    assert (b"in lowercase" in result.stderr) == url.startswith("S3:/"), result.stderr
    assert_unchanged(workspace, before)


def test_a_local_folder_named_so_is_still_reached_by_a_path_that_says_so(workspace):
    """The rule is the spelling of a URL, not a folder's name: `./s3://k.nsec` is a path."""
    (workspace / "s3:").mkdir()
    ok("vault-tool", "keygen -o ./s3://k.nsec", workspace)
    assert (workspace / "s3:" / "k.nsec").is_file()


@pytest.mark.parametrize("url,hint", [("S3://household-vaults/a.vault", b"in lowercase"), ("https://example.com/a.vault", b"a path on this machine")])
def test_a_missing_input_spelled_as_a_url_says_what_was_meant(workspace, url, hint):
    result = tool("vault-tool", f"inspect --key-file keys/parent.nsec {url}", workspace)
    assert result.returncode == 1 and b"no such file" in result.stderr and hint in result.stderr, result
