"""Each tool links only the layers it uses (issue 26): its C libraries, read from the binary's
DT_NEEDED entries, are exactly those Tests/link-table.txt lists, and never one the layers
keep from it (device-link: no libcurl, libpq, SQLite or FreeType; and so on); and no tool
carries ICU (issue 39; the size budgets are checked on the release build by scripts/package)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from workspace import BIN, FIXTURES, ROOT, URL

sys.path.insert(0, str(ROOT / "scripts" / "lib"))
import check_links  # noqa: E402


@pytest.mark.parametrize("tool,expected", check_links.table().items(), ids=list(check_links.table()))
def test_a_tool_links_what_the_table_says(tool, expected):
    found = check_links.linked(BIN / tool)
    assert found == expected, f"{tool} links {sorted(found)}; the table says {sorted(expected)}"
    assert not found & check_links.NEVER.get(tool, set()), f"{tool} links {sorted(found & check_links.NEVER[tool])}"


@pytest.mark.parametrize("tool", check_links.table(), ids=list(check_links.table()))
def test_no_tool_carries_icu(tool):
    """Issue 39: FoundationEssentials only, NFKC from libunistring; ICU neither linked nor inside
    (a waiver in the table only while a tool still needs one)."""
    problem = check_links.icu_problem(tool, BIN / tool)
    assert problem is None, f"{tool} {problem}"


def test_the_table_names_every_tool():
    assert set(check_links.table()) == {"vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"}
    assert set(check_links.budgets()) == set(check_links.table()) | {"packages"}
    assert all(limit <= 20 for tool, limit in check_links.budgets().items() if tool != "packages") and check_links.budgets()["packages"] <= 25
    assert Path(BIN / "device-link").exists()


# Issue 48: libraries loaded on use.

@pytest.mark.parametrize("tool,expected", check_links.loads_table().items(), ids=list(check_links.loads_table()))
def test_a_tool_may_load_what_the_table_says(tool, expected):
    """What a tool may load is in the tool, its .note.dlopen notes: exactly the table's, and
    none of what its layers keep from it."""
    loads = check_links.loaded(BIN / tool)
    assert loads == expected, f"{tool} may load {sorted(loads)}; the table says {sorted(expected)}"
    assert check_links.never_problem(tool, check_links.linked(BIN / tool), loads) is None
    entries = check_links.dlopen_notes(BIN / tool)
    assert all(entry["priority"] == "recommended" and entry["feature"] and entry["description"] for entry in entries)


def library_path(soname):
    """Where the loader finds `soname` (ldconfig's cache), resolved."""
    listing = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname and ("x86-64" in name or "AArch64" in name):
            return Path(path).resolve()
    raise AssertionError(f"{soname} is not installed here")


def package_of(soname):
    path = library_path(soname)
    found = subprocess.run(["dpkg-query", "-S", str(path)], capture_output=True, text=True)
    if found.returncode != 0:
        found = subprocess.run(["dpkg-query", "-S", str(Path("/lib") / path.relative_to("/usr/lib"))], capture_output=True, text=True, check=True)
    return found.stdout.split(":")[0]


def control_depends(package):
    """The package names in a binary package's Depends in debian/control (its continuation
    lines are those that start with a space)."""
    stanza = next(text for text in (ROOT / "debian" / "control").read_text().split("\n\n") if f"\nPackage: {package}\n" in f"\n{text}\n")
    lines = [line for line in stanza.splitlines() if not line.startswith("#")]
    start = next(index for index, line in enumerate(lines) if line.startswith("Depends:"))
    field = [lines[start][len("Depends:"):]]
    for line in lines[start + 1:]:
        if not line.startswith((" ", "\t")):
            break
        field.append(line)
    return {item.split()[0] for item in ",".join(field).split(",") if item.strip()}


@pytest.mark.parametrize("tool", check_links.loads_table(), ids=list(check_links.loads_table()))
def test_the_package_depends_on_what_a_tool_loads(tool):
    """dpkg-shlibdeps sees only what is linked: debian/control names the package of every
    library the tool may load (vault-tool ships in the fleet package)."""
    package = "household-vault-tools-fleet" if tool == "vault-tool" else "household-vault-tools"
    depends = control_depends(package)
    missing = {package_of(soname) for soname in check_links.loaded(BIN / tool)} - depends
    assert not missing, f"{package}'s Depends lacks {sorted(missing)}, which {tool} loads"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A parent key, its sheet as PNG and PDF, a JPEG's first bytes, a Master Key, a link code."""
    folder = tmp_path_factory.mktemp("load-on-use")
    shutil.copy(FIXTURES / "keys" / "parent.nsec", folder / "parent.nsec")
    (folder / "parent.nsec").chmod(0o600)
    (folder / "mk.hex").write_text("11" * 32 + "\n")
    (folder / "mk.hex").chmod(0o600)
    (folder / "pass.txt").write_text("correct horse battery staple tomato\n")
    (folder / "pass.txt").chmod(0o600)
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(64))
    for arguments in ("generate --key-file parent.nsec --dpi 100 -o sheet.png", "generate --key-file parent.nsec -o sheet.pdf"):
        subprocess.run([str(BIN / "recovery-sheet"), *arguments.split()], cwd=folder, check=True, capture_output=True)
    # A household vault and a batch's manifest naming it: a batch keeps its journal in SQLite.
    shutil.copy(ROOT / "Examples" / "household.nsec", folder / "household.nsec")
    (folder / "household.nsec").chmod(0o600)
    subprocess.run([str(BIN / "vault-tool"), "seal", "--key-file", "household.nsec", "-o", "a.vault", str(ROOT / "Examples" / "household.json")],
                   cwd=folder, check=True, capture_output=True)
    (folder / "jobs.jsonl").write_text('{"vault": "a.vault", "keyFile": "household.nsec"}\n')
    (folder / "d.jsonl").write_text("")  # an import's devices: read before the registry is reached
    subprocess.run([str(BIN / "device-link"), "create", "--key-file", "parent.nsec", "--vault-url", URL, "--now", "2026-01-01T00:00:00Z", "-o", "link.png"],
                   cwd=folder, check=True, capture_output=True)
    return folder


# What needs each library, and what does not (run with the library hidden too): each command a
# tool line of arguments. The object store and PostgreSQL are named at a closed port: the
# library is loaded before anything is reached.
S3 = {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_REGION": "us-east-1"}
HIDDEN = [
    ("libcurl.so.4", "vault-tool inspect s3://household-vaults/a.vault", "vault-tool keygen -o new.nsec"),
    ("libcurl.so.4", "recovery-sheet scan s3://household-vaults/sheet.png -o r1.nsec", "recovery-sheet scan sheet.png -o r2.nsec"),
    ("libcurl.so.4", "device-revoker vault --vault s3://household-vaults/a.vault --key-file parent.nsec --device abcd --dry-run",
     "device-revoker registry init --db r.sqlite"),
    ("libcurl.so.4", "rotation-planner show s3://household-vaults/plan.json", "rotation-planner show --help"),
    ("libpq.so.5", "device-revoker registry devices --db postgresql://127.0.0.1:1/registry", "device-revoker registry init --db r.sqlite"),
    # SQLite: a registry and a batch's journal need it; one vault's migration and an open do not.
    ("libsqlite3.so.0", "device-revoker registry init --db r.sqlite", "vault-tool open --key-file household.nsec a.vault"),
    ("libsqlite3.so.0", "vault-tool migrate batch --manifest jobs.jsonl --to 2 --out-dir out", "vault-tool migrate vault --key-file household.nsec --to 2 -o b.vault a.vault"),
    # zlib: an S3 Inventory report's files are gzip; the run stops before the store is reached.
    ("libz.so.1", "vault-tool migrate --inventory s3://household-vaults/inventory/manifest.json --to 2 --in-place --vault-key-dir .",
     "vault-tool open --key-file household.nsec a.vault"),
    ("libqrencode.so.4", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet scan sheet.png -o r.nsec"),
    ("libqrencode.so.4", f"device-link create --key-file parent.nsec --vault-url {URL} -o l.png", "device-link read link.png --now 2026-01-01T00:00:00Z"),
    ("libzbar.so.0", "recovery-sheet scan sheet.png -o r.nsec", "recovery-sheet generate --key-file parent.nsec -o s.pdf"),
    ("libzbar.so.0", "device-link read link.png --now 2026-01-01T00:00:00Z", f"device-link create --key-file parent.nsec --vault-url {URL} -o l.png"),
    ("libpng16.so.16", "recovery-sheet scan sheet.png -o r.nsec", "recovery-sheet words --key-file parent.nsec -o w.txt"),
    # zbar itself needs libjpeg: without it, no picture is read, and sheets are still made.
    ("libjpeg.so.62", "recovery-sheet scan photo.jpg -o r.nsec", "recovery-sheet generate --key-file parent.nsec -o s.pdf"),
    ("libglib-2.0.so.0", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet scan sheet.png -o r.nsec"),
    ("libgobject-2.0.so.0", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet scan sheet.png -o r.nsec"),
    ("libcairo.so.2", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet words --key-file parent.nsec -o w.txt"),
    ("libpango-1.0.so.0", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet scan sheet.png -o r.nsec"),
    ("libpangocairo-1.0.so.0", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "recovery-sheet scan sheet.png -o r.nsec"),
    ("libpoppler-glib.so.8", "recovery-sheet scan sheet.pdf -o r.nsec", "recovery-sheet generate --key-file parent.nsec -o s.pdf"),
    ("libzxcvbn.so.0", "recovery-sheet generate --key-file parent.nsec --passphrase-file pass.txt --log-n 10 -o s.pdf",
     "recovery-sheet generate --key-file parent.nsec -o s.pdf"),
    # A passphrase taken knowingly (--weak-passphrase) is not judged: zxcvbn is not needed.
    ("libzxcvbn.so.0", "recovery-sheet split --key-file parent.nsec --threshold 2 --shares 3 --passphrase-file pass.txt -o shares",
     "recovery-sheet generate --key-file parent.nsec --passphrase-file pass.txt --weak-passphrase --log-n 10 -o s.pdf"),
    ("libcrypto.so.3", "recovery-sheet code new --master-key-file mk.hex --user-id u -o blob.json --sheet code.png",
     "recovery-sheet generate --key-file parent.nsec -o s.pdf"),
]


def test_every_loaded_library_is_hidden_in_a_test():
    """Each library some tool may load has a row above: its package name, its soname and the
    owner's loading are then tried on a real command (a library added to a layer and to the
    table is not checked until it has one)."""
    assert {row[0] for row in HIDDEN} == set().union(*check_links.loads_table().values())


def test_the_page_headers_are_where_pkg_config_says():
    """Package.swift names the page libraries' header folders by hand (pkg-config would link
    the libraries too): each is one pkg-config gives, so a folder that moved fails here."""
    given = set(re.findall(r'"(/usr/[^"]+)"', (ROOT / "Package.swift").read_text().split("var pageHeaders")[1].split("\n}\n")[0]))
    given = {folder.replace("\\(multiarch)", platform_multiarch()) for folder in given}
    flags = subprocess.run(["pkg-config", "--cflags-only-I", "pangocairo", "poppler-glib"], capture_output=True, text=True, check=True).stdout.split()
    assert given <= {flag.removeprefix("-I") for flag in flags}, sorted(given - {flag.removeprefix("-I") for flag in flags})


def platform_multiarch():
    return subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True, check=True).stdout.strip()


def run_hidden(soname, folder, command, environment=S3):
    """`command` in a mount namespace where `soname`'s file is /dev/null: as if not installed
    (dlopen finds it and cannot load it). Each run in a fresh copy of the inputs; returns the
    run and the copy."""
    work = Path(tempfile.mkdtemp(dir=folder.parent))
    for item in folder.iterdir():
        shutil.copy2(item, work / item.name)
    tool, *arguments = command.split()
    hide = 'mount --bind /dev/null "$0" && exec "$@"'
    keep = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", hide, str(library_path(soname)), str(BIN / tool), *arguments],
                         cwd=work, capture_output=True, env={**keep, **environment}, timeout=120)
    return run, work


def contents(folder):
    return {path.name: path.read_bytes() for path in folder.iterdir()}


@pytest.mark.parametrize("soname,needs,works", HIDDEN, ids=[f"{soname}-{needs.split()[0]}" for soname, needs, _ in HIDDEN])
def test_a_missing_library_stops_only_the_commands_that_need_it(inputs, soname, needs, works):
    """Issue 48: a command that needs a library that is not there exits 69 (EX_UNAVAILABLE)
    naming the soname and the Debian package to install, and writes nothing; every tool's
    --version and a command that does not need it work as before."""
    package = package_of(soname)
    stopped, work = run_hidden(soname, inputs, needs)
    stderr = stopped.stderr.decode()
    assert stopped.returncode == 69, f"{needs} with {soname} hidden: exit {stopped.returncode}: {stderr}"
    assert f"apt install {package}" in stderr, stderr
    assert soname in stderr and "could not be loaded" in stderr, stderr
    assert contents(work) == contents(inputs), f"{needs} with {soname} hidden changed its folder"
    worked, _ = run_hidden(soname, inputs, works)
    assert worked.returncode == 0, f"{works} with {soname} hidden: exit {worked.returncode}: {worked.stderr.decode()}"
    for tool in check_links.table():
        version, _ = run_hidden(soname, inputs, f"{tool} --version")
        assert version.returncode == 0 and version.stdout.startswith(b"0."), (tool, version.stderr)


@pytest.mark.parametrize("hidden,command,loaded", [
    ("libpng16.so.16", "recovery-sheet generate --key-file parent.nsec -o s.pdf", "libcairo2"),
    ("libcrypto.so.3", "vault-tool inspect s3://household-vaults/a.vault", "libcurl4"),
])
def test_a_missing_dependency_is_named_not_the_library_that_needs_it(inputs, hidden, command, loaded):
    """A library the loaded one needs is missing: the message names that file, and does not
    send the operator to reinstall the package that is there (a hostile trial's finding)."""
    stopped, work = run_hidden(hidden, inputs, command)
    stderr = stopped.stderr.decode()
    assert stopped.returncode == 69, stderr
    assert f"which needs {hidden}" in stderr and f"apt install {loaded}" not in stderr, stderr
    assert contents(work) == contents(inputs)


# Credentials from an endpoint: each source asks it through libcurl too, and a source that
# cannot reach its endpoint is a failure to retry (75) or a configuration (78); a missing
# libcurl is neither, whichever source the command would ask (a hostile trial's finding).
ENDPOINT = "http://127.0.0.1:1"
CREDENTIAL_SOURCES = {
    "container": {"AWS_CONTAINER_CREDENTIALS_FULL_URI": f"{ENDPOINT}/credentials"},
    "web-identity": {"AWS_WEB_IDENTITY_TOKEN_FILE": "parent.nsec", "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/r", "AWS_ENDPOINT_URL_STS": ENDPOINT},
    "instance-metadata": {"AWS_EC2_METADATA_SERVICE_ENDPOINT": ENDPOINT},
}


@pytest.mark.parametrize("source", CREDENTIAL_SOURCES)
@pytest.mark.parametrize("command", ["vault-tool inspect s3://household-vaults/a.vault", "vault-tool census s3://household-vaults/ --log-format json",
                                     "recovery-sheet verify s3://household-vaults/sheet.png --key-file parent.nsec"])
def test_a_missing_libcurl_is_69_however_the_credentials_come(inputs, source, command):
    environment = {"AWS_ENDPOINT_URL": ENDPOINT, "AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                   **CREDENTIAL_SOURCES[source]}
    stopped, work = run_hidden("libcurl.so.4", inputs, command, environment)
    stderr = stopped.stderr.decode()
    assert stopped.returncode == 69, f"{command} ({source}): exit {stopped.returncode}: {stderr}"
    assert "libcurl4" in stderr and "libcurl.so.4" in stderr, stderr
    assert contents(work) == contents(inputs)


def test_a_bucket_run_without_sqlite_neither_writes_to_the_store_nor_leaves_a_journal(inputs, s3, proxy, tmp_path):
    """A bucket migration keeps its journal in SQLite. With the library missing it stops (69)
    before any request that writes: it once probed the store's conditional writes (three PUTs
    and a DELETE) and left an empty journal behind before it found the library missing. So with
    a journal in a folder still to be made: no folder either."""
    import s3fleet
    bucket = s3fleet.new_bucket(s3)
    fleet = s3fleet.Fleet(s3, bucket, 2, tmp_path / "keys")
    environment = s3fleet.tool_environment(endpoint=proxy.endpoint)
    base = f"vault-tool migrate bucket --source s3://{bucket}/vaults/ --to 2 --vault-key-dir {tmp_path / 'keys'}"
    for extra in (" --in-place", " --in-place --journal j/deep/run.sqlite", f" --out s3://{bucket}/v2/"):
        proxy.reset()
        stopped, work = run_hidden("libsqlite3.so.0", inputs, base + extra, environment=environment)
        assert stopped.returncode == 69 and "apt install libsqlite3-0" in stopped.stderr.decode(), (extra, stopped.stderr.decode())
        assert sorted(path.name for path in work.iterdir()) == sorted(path.name for path in inputs.iterdir()), extra
        assert contents(work) == contents(inputs), extra
        with proxy.lock:
            written = [(method, path) for method, path, *_ in proxy.requests if method not in ("GET", "HEAD")]
        assert written == [], (extra, written)
    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))
    assert listed == sorted(fleet.uploaded)


# The option checks argument-parser runs as it decodes (an option group's `validate()`): a
# library they load is still the library's refusal, and --help runs none of them.
REGISTRY_COMMANDS = ["init", "import --devices d.jsonl", "devices", "revoke --user did:plc:x --dry-run", "members --convo c", "rejoin-plan --device did:plc:x#d", "log"]
POSTGRES_SPELLINGS = ["postgresql://127.0.0.1:1/registry", "POSTGRES://127.0.0.1:1/registry", "host=127.0.0.1 port=1 dbname=registry"]


def too_old_library(folder, soname):
    """A folder where `soname` is another library (libsodium): found, loaded, without a
    function the owner needs."""
    old = folder / f"old-{soname}"
    old.mkdir(exist_ok=True)
    shutil.copy(library_path("libsodium.so.23"), old / soname)
    return old


@pytest.mark.parametrize("spelling", POSTGRES_SPELLINGS)
@pytest.mark.parametrize("command", REGISTRY_COMMANDS)
def test_a_libpq_too_old_is_69_from_the_option_check_too(inputs, tmp_path, command, spelling):
    """A trial: a libpq without a function the suite calls was found by `--db`'s check, run by
    argument-parser as it decodes, which passed on only a missing library: exit 1 and
    "vaultError.libraryTooOld: …" as Swift writes the value. Every registry command, every
    spelling of a connection: exit 69 naming the package."""
    subcommand, *rest = command.split()
    run = subprocess.run([str(BIN / "device-revoker"), "registry", subcommand, "--db", spelling, *rest], cwd=inputs, capture_output=True, text=True,
                         env={**os.environ, "LD_LIBRARY_PATH": str(too_old_library(tmp_path, "libpq.so.5"))}, timeout=60)
    assert run.returncode == 69, (run.returncode, run.stderr)
    assert "libpq5" in run.stderr and "of a newer version" in run.stderr and "vaultError" not in run.stderr, run.stderr


def dynamically_loaded(run):
    return sorted({line.split("file=")[1].split()[0] for line in run.stderr.splitlines() if "dynamically loaded" in line and "file=" in line})


@pytest.mark.parametrize("spelling", POSTGRES_SPELLINGS)
@pytest.mark.parametrize("command", REGISTRY_COMMANDS)
@pytest.mark.parametrize("help", ["--help", "-h", "help-first"])
def test_help_loads_no_library_whatever_the_options_name(inputs, command, spelling, help):
    """A trial: `registry devices --db postgresql://… --help` loaded libpq and its tree (TLS,
    Kerberos, LDAP) for `--db`'s check, which argument-parser runs before it looks for help."""
    subcommand, *rest = command.split()
    arguments = ["registry", subcommand, "--db", spelling, *rest]
    arguments = ["registry", subcommand, "--help", "--db", spelling, *rest] if help == "help-first" else arguments + [help]
    run = subprocess.run([str(BIN / "device-revoker"), *arguments], cwd=inputs, capture_output=True, text=True, env={**os.environ, "LD_DEBUG": "files"}, timeout=60)
    assert run.returncode == 0 and "USAGE:" in run.stdout, (run.returncode, run.stderr[-2000:])
    assert dynamically_loaded(run) == [], dynamically_loaded(run)


@pytest.mark.parametrize("command", ["vault-tool check --manifest jobs.jsonl", "vault-tool check bucket --manifest jobs.jsonl",
                                     "vault-tool migrate --manifest jobs.jsonl --to 2 --in-place", "vault-tool migrate bucket --manifest jobs.jsonl --to 2 --in-place",
                                     "vault-tool migrate bucket --manifest jobs.jsonl --to 2 --out s3://household-vaults/v2/"])
def test_a_manifest_of_files_is_refused_before_the_store_is_reached(inputs, command):
    """A trial: a bucket run's manifest naming local files loaded libcurl and asked every
    credential source (instance metadata at 169.254.169.254) before it read its lines, so a
    missing library (69) or missing credentials (78) hid the line's own mistake. The line is
    refused first (exit 2), with libcurl hidden, and nothing loaded with it there."""
    stopped, work = run_hidden("libcurl.so.4", inputs, command, environment={})
    stderr = stopped.stderr.decode()
    assert stopped.returncode == 2 and "manifest line 1 names 'a.vault', which is not an object in a bucket" in stderr, (stopped.returncode, stderr)
    assert contents(work) == contents(inputs)
    keep = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    run = subprocess.run([str(BIN / "vault-tool"), *command.split()[1:]], cwd=work, capture_output=True, text=True, env={**keep, "LD_DEBUG": "files"}, timeout=60)
    assert run.returncode == 2 and dynamically_loaded(run) == [], (run.returncode, dynamically_loaded(run))


MANIFEST_MISTAKES = {
    "a key file missing": ('{"vault": "s3://household-vaults/a.vault", "keyFile": "missing.nsec"}\n', 1, "cannot read the key file"),
    "a key file that is a folder": ('{"vault": "s3://household-vaults/a.vault", "keyFile": "/"}\n', 2, "is a directory, not a regular file"),
    "two lines, one output": ('{"vault": "s3://household-vaults/a.vault", "keyFile": "parent.nsec"}\n'
                              '{"vault": "s3://household-vaults/a.vault", "keyFile": "parent.nsec"}\n', 2, "would both write"),
}


@pytest.mark.parametrize("mistake", list(MANIFEST_MISTAKES))
@pytest.mark.parametrize("command", ["vault-tool check --manifest bad.jsonl", "vault-tool migrate --manifest bad.jsonl --to 2 --out s3://household-vaults/v2/",
                                     "vault-tool migrate --manifest bad.jsonl --to 2 --in-place", "vault-tool migrate bucket --manifest bad.jsonl --to 2 --in-place"])
def test_every_mistake_of_a_bucket_manifest_is_said_before_the_store_is_reached(inputs, tmp_path, mistake, command):
    """A review: only a line naming a file was checked before the store; a key file that cannot
    be read and two lines writing one output were still hidden behind libcurl (69) and the
    credentials (78), and a key file that is a folder passed (access(2) says it can be read).
    A check writes no output, so two lines of one object are two checks; in place, two lines
    of one object would migrate it twice (a trial: refused with --out, not in place)."""
    manifest, code, said = MANIFEST_MISTAKES[mistake]
    folder = tmp_path / "in"
    shutil.copytree(inputs, folder)
    (folder / "bad.jsonl").write_text(manifest)
    stopped, work = run_hidden("libcurl.so.4", folder, command, environment={})
    stderr = stopped.stderr.decode()
    if mistake == "two lines, one output" and command.startswith("vault-tool check"):
        assert stopped.returncode == 69 and "libcurl4" in stderr, (stopped.returncode, stderr)
        return
    assert stopped.returncode == code and said in stderr, (stopped.returncode, stderr)
    assert contents(work) == contents(folder)


@pytest.mark.parametrize("spelling", POSTGRES_SPELLINGS)
@pytest.mark.parametrize("command", REGISTRY_COMMANDS)
@pytest.mark.parametrize("answer", ["--version", "--experimental-dump-help"])
def test_an_answer_argument_parser_gives_itself_loads_no_library(inputs, command, spelling, answer):
    """A trial: --help loaded nothing, but --version and the help dump beside a PostgreSQL --db
    still ran its check, which loads libpq."""
    subcommand, *rest = command.split()
    run = subprocess.run([str(BIN / "device-revoker"), "registry", subcommand, "--db", spelling, *rest, answer], cwd=inputs, capture_output=True, text=True,
                         env={**os.environ, "LD_DEBUG": "files"}, timeout=60)
    assert run.returncode == 0 and run.stdout, (run.returncode, run.stderr[-2000:])
    assert dynamically_loaded(run) == [], dynamically_loaded(run)


@pytest.mark.parametrize("extra", [" --in-place", " --in-place --journal j/run.sqlite", " --out s3://household-vaults/v2/",
                                   " --in-place --shard 1/2"])
def test_a_bucket_run_without_sqlite_stops_before_it_lists(inputs, tmp_path, extra):
    """A trial: a bucket migration without SQLite listed the whole prefix first, and with the
    store out of reach said that (75, "run it again later") where the package is what is
    missing. With the store at a closed port: 69 naming libsqlite3-0, and nothing made."""
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    household = json.loads(subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", "household.nsec", "--json"], cwd=inputs, capture_output=True,
                                          check=True).stdout)["householdId"]
    subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", str(inputs / "household.nsec"), "--vault-key-out", str(keys / f"{household}.vaultkey")],
                   capture_output=True, check=True)
    command = f"vault-tool migrate bucket --source s3://household-vaults/vaults/ --to 2 --vault-key-dir {keys}" + extra
    stopped, work = run_hidden("libsqlite3.so.0", inputs, command)
    stderr = stopped.stderr.decode()
    assert stopped.returncode == 69 and "apt install libsqlite3-0" in stderr and "object store" not in stderr, (stopped.returncode, stderr)
    assert contents(work) == contents(inputs)


@pytest.mark.parametrize("command", ["vault-tool inspect s3://household-vaults/", "vault-tool inspect s3://household-vaults/vaults/",
                                     "vault-tool open --key-file household.nsec s3://household-vaults/",
                                     "vault-tool check --key-file household.nsec s3://household-vaults/v/",
                                     "rotation-planner show s3://household-vaults/plans/",
                                     "recovery-sheet scan s3://household-vaults/sheets/ -o r.nsec"])
def test_a_prefix_where_one_object_is_read_is_refused_before_the_store(inputs, command):
    """A trial: `inspect s3://bucket/` loaded libcurl and tried the store (75; 69 without the
    library), where `s3:///a.vault` was refused as no object name (2). A prefix names no one
    object: exit 2, said as such, nothing loaded."""
    keep = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    tool, *arguments = command.split()
    run = subprocess.run([str(BIN / tool), *arguments], cwd=inputs, capture_output=True, text=True, env={**keep, **S3, "LD_DEBUG": "files"}, timeout=60)
    assert run.returncode == 2 and "names a prefix" in run.stderr, (run.returncode, run.stderr[-2000:])
    assert dynamically_loaded(run) == [], dynamically_loaded(run)


@pytest.mark.parametrize("spelling", ["postgresql://127.0.0.1:1/registry", "postgres://127.0.0.1:1/registry", "host=127.0.0.1 port=1 dbname=registry"])
@pytest.mark.parametrize("command", ["import --devices missing.jsonl", "import --members missing.jsonl", "import --devices a.vault --members missing.jsonl",
                                     "revoke --devices-file missing.txt --reason r", "revoke --devices-file missing.txt --reason r --dry-run"])
def test_a_missing_list_is_said_before_the_registry_is_reached(inputs, command, spelling):
    """A trial: `registry import --devices missing.jsonl` tried the server (exit 1, "cannot
    connect"; 69 without libpq) before it found its own input missing, as a bucket run's
    manifest once did. The file is said first, with libpq there or not."""
    subcommand, *rest = command.split()
    run = subprocess.run([str(BIN / "device-revoker"), "registry", subcommand, "--db", spelling, *rest], cwd=inputs, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "missing." in run.stderr and "connect" not in run.stderr, (run.returncode, run.stderr[-2000:])
    if spelling.startswith("postgresql://"):
        stopped, work = run_hidden("libpq.so.5", inputs, f"device-revoker registry {subcommand} --db {spelling} {' '.join(rest)}")
        assert stopped.returncode == 1 and b"missing." in stopped.stderr, (stopped.returncode, stopped.stderr.decode())
        assert contents(work) == contents(inputs)


@pytest.mark.parametrize("command", ["vault-tool log show --log s3://household-vaults/ v3.vault", "vault-tool log verify --log s3://household-vaults/logs/ v3.vault",
                                     "vault-tool log grant --key-file household.nsec --to NPUB --allow revoke --until 2099-01-01 s3://household-vaults/",
                                     "vault-tool diff --key-file household.nsec a.vault s3://household-vaults/v/"])
def test_a_prefix_where_one_log_or_vault_is_read_is_refused_before_the_store(inputs, tmp_path, command):
    """A review: `--log s3://bucket/` asked the store whether the object was there (75), and a
    vault prefix given to `log grant` read the log beside it from the store: refused (2), as
    one object read from a prefix is, nothing loaded."""
    folder = tmp_path / "in"
    shutil.copytree(inputs, folder)
    subprocess.run([str(BIN / "vault-tool"), "migrate", "--key-file", "household.nsec", "--to", "3", "-o", "v3.vault", "a.vault"], cwd=folder, check=True,
                   capture_output=True)
    npub = json.loads(subprocess.run([str(BIN / "vault-tool"), "derive", "--key-file", "parent.nsec", "--json"], cwd=folder, check=True,
                                     capture_output=True).stdout)["npub"]
    keep = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    tool, *arguments = command.replace("NPUB", npub).split()
    run = subprocess.run([str(BIN / tool), *arguments], cwd=folder, capture_output=True, text=True, env={**keep, **S3, "LD_DEBUG": "files"}, timeout=60)
    assert run.returncode == 2 and "names a prefix" in run.stderr, (run.returncode, run.stderr[-2000:])
    assert dynamically_loaded(run) == [], dynamically_loaded(run)


@pytest.mark.parametrize("spelling", ["postgresql://127.0.0.1:1/registry", "host=127.0.0.1 port=1 dbname=registry"])
def test_a_missing_signer_key_file_is_said_before_the_registry_is_reached(inputs, spelling):
    """A review: `registry revoke --signer-key-file missing.nsec` tried the server first."""
    run = subprocess.run([str(BIN / "device-revoker"), "registry", "revoke", "--db", spelling, "--device", "did:plc:u#d1", "--reason", "r",
                          "--signer-key-file", "missing.nsec"], cwd=inputs, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "missing.nsec" in run.stderr and "connect" not in run.stderr, (run.returncode, run.stderr)
