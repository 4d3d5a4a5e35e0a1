"""The README's walk-throughs run as pasted: every ```sh block of its "Walk-throughs" section
but those that use the fleet image (run by scripts/image --check instead: readme_blocks.py),
in order, in one folder holding the example household (Examples/) under the names the blocks
use, on the test servers scripts/test starts. The only changes are the two server addresses: the
object store comes from the AWS variables an operator sets, and the PostgreSQL address in the
text is pointed at a fresh database on the test server. A block that fails fails the test, with
its command and output. The device-link example of docs/tools.md runs the same way, and the
README's PostgreSQL commands run again as the two roles docs/device-registry.md sets up."""
import io
import json
import os
import re
import shutil
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from PIL import Image

import readme_blocks
import s3fleet
from vaultref import Household, nip19_decode
from workspace import BIN, ROOT

README = ROOT / "README.md"
TOOLS = ROOT / "docs" / "tools.md"
REGISTRY_DOC = ROOT / "docs" / "device-registry.md"
# The live registry's address in the README, as each of the documented roles reaches it.
LIVE_REGISTRY = re.compile(r"postgresql://(registry_owner|registry_operator)@db\.internal/chat")


def walkthrough_blocks(section_title="Walk-throughs", document=README):
    """(heading, text) of each sh block between "## <section_title>" and the next "## " that
    this test runs: all but those scripts/image --check runs (readme_blocks.py)."""
    return [(heading, text) for heading, mark, text in readme_blocks.sh_blocks(section_title, document) if mark is None]


def test_every_walkthrough_block_is_run_here_or_by_the_image_check():
    """No block is skipped: each is unmarked (run above) or marked for scripts/image --check,
    whose check runs every block so marked, through the same parser, and fails without one."""
    blocks = readme_blocks.sh_blocks()
    assert {mark for _, mark, _ in blocks} <= {None, readme_blocks.IMAGE_MARK}, [mark for _, mark, _ in blocks]
    image = readme_blocks.image_blocks()
    assert image and all(heading == "Operators: a fleet migration" for heading, _ in image)
    check = (ROOT / "scripts" / "lib" / "image_check.py").read_text()
    assert "readme_blocks.image_blocks()" in check and "def readme_walkthrough" in check and "readme_walkthrough(secrets)" in check
    # The operators' walk-through runs the fleet image as the image check does, and names no key.
    section = README.read_text().split("\n### Operators: a fleet migration\n", 1)[1].split("\n### ", 1)[0]
    assert len(section.encode()) <= 2500, len(section.encode())
    for _, text in image:
        assert "podman run --rm --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 --network host" in text
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "aws_access_key_id", "aws_secret_access_key"):
        assert name not in section and name not in (ROOT / "docs" / "fleet.md").read_text(), name


def jpeg(png, out):
    """A photo of a page, as a phone would send it."""
    image = Image.open(png).convert("L")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85)
    out.write_bytes(buffer.getvalue())


def run(argv, cwd, env=None):
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, timeout=300)
    assert result.returncode == 0, f"{argv}: {result.stderr.decode(errors='replace')}"
    return result


@pytest.fixture
def folder(tmp_path):
    """The example household under the walk-throughs' names: the parent's key and vault, a
    photo of its recovery sheet, and photos of two sheets of a set of family shares."""
    shutil.copy(ROOT / "Examples" / "household.nsec", tmp_path / "parent.nsec")
    (tmp_path / "parent.nsec").chmod(0o600)
    run([BIN / "vault-tool", "seal", "--key-file", "parent.nsec", "-o", "household.vault", ROOT / "Examples" / "household.json"], tmp_path)
    setup = tmp_path / ".setup"
    setup.mkdir()
    run([BIN / "recovery-sheet", "generate", "--key-file", "parent.nsec", "--dpi", "150", "-o", setup / "sheet.png"], tmp_path)
    jpeg(setup / "sheet.png", tmp_path / "sheet-photo.jpg")
    run([BIN / "recovery-sheet", "split", "--key-file", "parent.nsec", "--threshold", "2", "--shares", "3", "--dpi", "150",
         "--iteration-exponent", "0", "-o", setup / "shares"], tmp_path)
    jpeg(setup / "shares" / "share-1-of-3.png", tmp_path / "rosa-scan.jpg")
    jpeg(setup / "shares" / "share-3-of-3.png", tmp_path / "safe-photo.jpg")
    # The chat app's registry export: Josh's two devices and Alice's, in one conversation.
    devices = [("did:plc:josh", "a1b2", "Josh's iPhone", "0102"), ("did:plc:josh", "c3d4", None, "0304"), ("did:plc:alice", "e5f6", None, "0506")]
    (tmp_path / "devices.jsonl").write_text("".join(json.dumps(
        {"user_did": u, "device_id": d, "device_mls_did": f"{u}#{d}", "device_name": n, "signature_public_key": k}) + "\n" for u, d, n, k in devices))
    (tmp_path / "members.jsonl").write_text("".join(json.dumps(
        {"convo_id": "alpha", "member_mls_did": f"{u}#{d}", "user_did": u, "device_id": d, "joined_at": "2025-01-01T00:00:00Z",
         "is_admin": u == "did:plc:josh"}) + "\n" for u, d, _, _ in devices))
    (tmp_path / "stolen.txt").write_text("# the phone stolen on the 3rd\ndid:plc:josh#a1b2\n")
    # Family Medical's export (seed 002): Alice's iPhone and an iPad she does not recognise.
    alice = "0f9c2d1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f"
    (tmp_path / "medical-devices.jsonl").write_text("".join(json.dumps(
        {"device_id": d, "user_id": alice, "device_name": n, "device_type": t, "first_seen_at": "2025-03-01T09:00:00Z", "last_seen_at": s}) + "\n"
        for d, n, t, s in [("6f1c2b7e-0d4a-4c55-9e1b-2a7f3c9d8e01", "Alice's iPhone", "iPhone 15 Pro", "2026-11-20T08:00:00Z"),
                           ("9a7d3c21-5b2e-4f61-8c3d-7e2a1b9f0c44", "iPad", "iPad Air", "2026-10-02T18:30:00Z")]))
    shutil.rmtree(setup)
    return tmp_path


def object_store(folder):
    """Before the bucket block: the trial fleet in the bucket, and the vault keys of its
    households in keys/, as the operator holds them."""
    s3 = s3fleet.client()
    try:
        s3.create_bucket(Bucket="family-vaults")
    except s3.exceptions.BucketAlreadyOwnedByYou:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket="family-vaults"):
            for entry in page.get("Contents", []):
                s3.delete_object(Bucket="family-vaults", Key=entry["Key"])
    (folder / "keys").mkdir()
    vaults = sorted((folder / "trial" / "vaults").iterdir())
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda vault: s3.upload_file(str(vault), "family-vaults", f"vaults/{vault.name}"), vaults))
    for vault in vaults:
        # The vault key as `vault-tool derive --vault-key-out` writes it (docs/vault-format.md §2.1),
        # derived here by the independent reference rather than 2,000 runs of the tool.
        household = Household(nip19_decode((folder / "trial" / "keys" / vault.name.replace(".vault", ".nsec")).read_text().strip(), "nsec"))
        assert vault.name == household.vault_path.split("/")[-1]
        key = folder / "keys" / vault.name.replace(".vault", ".vaultkey")
        key.write_text(household.vault_key.hex() + "\n")
        key.chmod(0o600)
    return s3fleet.tool_environment()


def registry_database():
    """A fresh, empty database on the test server, as the chat app's would be before the
    registry's first init; its address (as the superuser) and name."""
    host = os.environ["HVT_TEST_PGHOST"]
    port, user = os.environ["HVT_TEST_PGPORT"], os.environ.get("HVT_TEST_PGUSER", "hvt")
    name = "readme_" + uuid.uuid4().hex[:12]
    with psycopg.connect(host=host, port=port, user=user, dbname="postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return f"postgresql:///{name}?host={host}&port={port}&user={user}", name


def postgres_address(name, role):
    """The README's live registry as `role` reaches the test server's database `name`; quoted,
    since the socket's address has a query."""
    host, port = os.environ["HVT_TEST_PGHOST"], os.environ["HVT_TEST_PGPORT"]
    return f"'postgresql:///{name}?host={host}&port={port}&user={role}'"


@pytest.mark.usefixtures("s3_server", "postgres_server")
def test_every_walkthrough_block_runs_as_pasted(folder):
    blocks = walkthrough_blocks()
    assert len(blocks) >= 4, [heading for heading, _ in blocks]
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    database = None
    try:
        for heading, text in blocks:
            block_env = env
            if "s3://" in text:
                block_env = {**object_store(folder), "PATH": env["PATH"]}
            if LIVE_REGISTRY.search(text):
                # Both roles as the superuser here; test_the_postgres_walkthrough_runs_as_the_documented_roles
                # runs these commands as the roles themselves.
                _, database = registry_database()
                text = LIVE_REGISTRY.sub(lambda _: postgres_address(database, os.environ.get("HVT_TEST_PGUSER", "hvt")), text)
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=folder, env=block_env, capture_output=True, timeout=900)
            assert result.returncode == 0, (f"the walk-through block under '{heading}' failed (exit {result.returncode}):\n{text}\n"
                                            f"stderr: {result.stderr.decode(errors='replace')[-3000:]}")
    finally:
        if database:
            host, port, user = os.environ["HVT_TEST_PGHOST"], os.environ["HVT_TEST_PGPORT"], os.environ.get("HVT_TEST_PGUSER", "hvt")
            with psycopg.connect(host=host, port=port, user=user, dbname="postgres", autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    # What the blocks were for: the restores match the parent's key, the revoke landed.
    parent = (folder / "parent.nsec").read_text()
    assert (folder / "restored.nsec").read_text() == parent
    assert (folder / "restored-from-shares.nsec").read_text() == parent
    assert len(list((folder / "migrated").iterdir())) == 2000
    assert (folder / "removals.jsonl").read_text() == (folder / "removals-again.jsonl").read_text() != ""


def test_the_device_link_example_runs_as_pasted(folder):
    """It once named a vault URL the tool refuses (vaults/HOUSEHOLD.vault)."""
    [(_, text)] = walkthrough_blocks("device-link", document=TOOLS)
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=folder, env=env, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert (folder / "new-ipad.nsec").read_text() == (folder / "parent.nsec").read_text()


def role_setup_blocks():
    """The sql blocks of docs/device-registry.md's "Role setup": the superuser's, then the
    schema owner's after init."""
    section = REGISTRY_DOC.read_text().split("\n### Role setup\n", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^```sql\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def postgres_commands():
    """The README walk-through's commands on the live PostgreSQL registry, continuation lines
    joined, in order."""
    commands = []
    for _, text in walkthrough_blocks():
        for command in re.sub(r"\\\n", " ", text).splitlines():
            if LIVE_REGISTRY.search(command):
                commands.append(command)
    return commands


@pytest.mark.usefixtures("postgres_server")
def test_the_postgres_walkthrough_runs_as_the_documented_roles(folder):
    """The README's PostgreSQL commands as pasted, each as the role its address names, on a
    database set up by the role setup's SQL as pasted (roles and database renamed to be this
    test's own). Since PostgreSQL 15 no role may create in the public schema unless granted:
    the documented setup once left init failing with "permission denied for schema public"."""
    superuser_sql, owner_sql = role_setup_blocks()
    commands = postgres_commands()
    assert [c.split()[2] for c in commands] == ["init", "import", "revoke"], commands
    assert "registry_owner@" in commands[0] and all("registry_operator@" in c for c in commands[1:])
    host, port, superuser = os.environ["HVT_TEST_PGHOST"], os.environ["HVT_TEST_PGPORT"], os.environ.get("HVT_TEST_PGUSER", "hvt")
    suffix = uuid.uuid4().hex[:10]
    roles = {"registry_owner": f"registry_owner_{suffix}", "registry_operator": f"registry_operator_{suffix}"}
    _, database = registry_database()

    def renamed(sql):
        sql = sql.replace("DATABASE chat ", f"DATABASE {database} ")
        return re.sub(r"\bregistry_(owner|operator)\b", lambda m: roles[m.group(0)], sql)

    def connect(role):
        return psycopg.connect(host=host, port=port, user=role, dbname=database, autocommit=True)

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PG")}, "PATH": f"{BIN}:{os.environ['PATH']}"}
    try:
        with connect(superuser) as connection:
            # What PostgreSQL 15 does by default, stated so the test means it on any version.
            connection.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
            connection.execute(renamed(superuser_sql))
        for command in commands:
            command = LIVE_REGISTRY.sub(lambda m: postgres_address(database, roles[m.group(1)]), command)
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=folder, env=env, capture_output=True, timeout=300)
            assert result.returncode == 0, f"{command}\n{result.stderr.decode(errors='replace')}"
            if " init " in command:
                with connect(roles["registry_owner"]) as connection:
                    connection.execute(renamed(owner_sql))
        assert "dry run: would revoke" in result.stdout.decode() and "did:plc:josh#a1b2" in result.stdout.decode()
        with connect(superuser) as connection:
            owners = {row[0] for row in connection.execute(
                "SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename IN "
                "('user_devices', 'members', 'revocations', 'batch_operations', 'registry_migrations')")}
            assert owners == {roles["registry_owner"]}
            assert connection.execute("SELECT count(*) FROM user_devices").fetchone()[0] == 3
        # The operator may do the rest, but not change the schema or the log.
        with connect(roles["registry_operator"]) as connection:
            for statement in ("CREATE TABLE public.x (y int)", "UPDATE revocations SET reason = 'x'"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    connection.execute(statement)
    finally:
        with psycopg.connect(host=host, port=port, user=superuser, dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            for role in roles.values():
                admin.execute(f"DROP ROLE IF EXISTS {role}")
