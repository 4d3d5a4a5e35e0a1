"""device-revoker's registry on PostgreSQL (issue 13), checked from outside with psycopg.

The tests run against the throwaway server scripts/test starts (scripts/lib/postgres.sh), one
fresh database each. They build what a deployment has before the tool arrives (the Catbird
seed's two tables, full of rows, or a hash-partitioned layout), run the built binary on it, and
read the result with an independent client: existing rows untouched byte for byte, the log
append-only for every role, the seed's column types, passwords never taken from --db, and the
promises a revoke makes under load (one log row per device, no open membership of a revoked
device, no deadlock) while other revokers, an app registering devices, or SIGKILL interfere.
"""
import json
import os
import random
import re
import secrets
import sqlite3
import subprocess
import threading
import time

import psycopg
import pytest

from workspace import DEVICE_REVOKER, KILLED, calls_of, killed_at, wait_until

pytestmark = pytest.mark.usefixtures("postgres_server")

PGHOST = os.environ.get("HVT_TEST_PGHOST", "")
PGPORT = os.environ.get("HVT_TEST_PGPORT", "")
PGUSER = os.environ.get("HVT_TEST_PGUSER", "hvt")
PGPASSFILE = os.environ.get("HVT_TEST_PGPASSFILE", "")
PASSWORD_ROLE = os.environ.get("HVT_TEST_PGPASSWORD_ROLE", "hvt_password")
NOW = "2026-11-22T10:00:00Z"

# The Catbird seed's tables, exactly as a deployment has them (issue 13).
SEED_SCHEMA = """
CREATE TABLE user_devices (user_did TEXT NOT NULL, device_id TEXT NOT NULL, device_mls_did TEXT NOT NULL, device_name TEXT,
    signature_public_key BYTEA NOT NULL, key_packages_available INT DEFAULT 0, last_seen TIMESTAMPTZ,
    registered_at TIMESTAMPTZ DEFAULT NOW(), PRIMARY KEY (user_did, device_id), UNIQUE (user_did, signature_public_key));
CREATE TABLE members (convo_id TEXT NOT NULL, member_mls_did TEXT NOT NULL, user_did TEXT NOT NULL, device_id TEXT NOT NULL,
    joined_at TIMESTAMPTZ DEFAULT NOW(), left_at TIMESTAMPTZ, is_admin BOOLEAN DEFAULT false,
    PRIMARY KEY (convo_id, member_mls_did), FOREIGN KEY (user_did, device_id) REFERENCES user_devices);
"""
SEED_COLUMNS = {
    "user_devices": "user_did, device_id, device_mls_did, device_name, signature_public_key, key_packages_available, "
                    "last_seen, registered_at",
    "members": "convo_id, member_mls_did, user_did, device_id, joined_at, left_at, is_admin",
}
SEED_ORDER = {"user_devices": "user_did, device_id", "members": "convo_id, member_mls_did"}

# The same tables spread over four hash partitions each, as a large deployment may have them.
# A partitioned table's primary key must hold the partition key, so members' key gains user_did.
PARTITIONED_SCHEMA = """
CREATE TABLE user_devices (user_did TEXT NOT NULL, device_id TEXT NOT NULL, device_mls_did TEXT NOT NULL, device_name TEXT,
    signature_public_key BYTEA NOT NULL, key_packages_available INT DEFAULT 0, last_seen TIMESTAMPTZ,
    registered_at TIMESTAMPTZ DEFAULT NOW(), PRIMARY KEY (user_did, device_id), UNIQUE (user_did, signature_public_key))
    PARTITION BY HASH (user_did);
CREATE TABLE members (convo_id TEXT NOT NULL, member_mls_did TEXT NOT NULL, user_did TEXT NOT NULL, device_id TEXT NOT NULL,
    joined_at TIMESTAMPTZ DEFAULT NOW(), left_at TIMESTAMPTZ, is_admin BOOLEAN DEFAULT false,
    PRIMARY KEY (convo_id, member_mls_did, user_did), FOREIGN KEY (user_did, device_id) REFERENCES user_devices)
    PARTITION BY HASH (user_did);
""" + "".join(
    f"CREATE TABLE {table}_p{r} PARTITION OF {table} FOR VALUES WITH (MODULUS 4, REMAINDER {r});\n"
    for table in ("user_devices", "members") for r in range(4))

# Words a revoke must never show: PostgreSQL's own for a lost lock-order race.
RACE_WORDS = re.compile(r"deadlock|serializ", re.IGNORECASE)


@pytest.fixture(autouse=True)
def scratch_folder(tmp_path, monkeypatch):
    """Runs every test in its own folder: a tool that took a --db for a file name (as one without
    PostgreSQL support does) creates that file there, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def admin():
    return psycopg.connect(host=PGHOST, port=PGPORT, user=PGUSER, dbname="postgres", autocommit=True)


class Database:
    """One test's database on the test server, reached over the trusted socket."""

    def __init__(self, name):
        self.name = name

    def uri(self, user=PGUSER):
        return f"postgresql:///{self.name}?host={PGHOST}&port={PGPORT}&user={user}"

    def connect(self, user=PGUSER):
        return psycopg.connect(host=PGHOST, port=PGPORT, user=user, dbname=self.name, autocommit=True)

    def execute(self, sql, params=None):
        with self.connect() as connection:
            connection.execute(sql, params)

    def rows(self, sql, params=None):
        with self.connect() as connection:
            return connection.execute(sql, params).fetchall()

    def value(self, sql, params=None):
        return self.rows(sql, params)[0][0]


@pytest.fixture
def new_database():
    """Makes fresh databases (`CREATE DATABASE t_<random>`), dropped after the test even when a
    killed revoke left a session behind."""
    made = []

    def make(owner=PGUSER, template=None):
        name = f"t_{secrets.token_hex(6)}"
        with admin() as connection:
            connection.execute(f"CREATE DATABASE {name} OWNER {owner}" + (f" TEMPLATE {template}" if template else ""))
        made.append(name)
        return Database(name)

    yield make
    with admin() as connection:
        for name in reversed(made):
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def database(new_database):
    return new_database()


def tool_environment(env=None):
    """This process's environment without the machine's own PG* variables (libpq would read
    them), plus `env`."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    environment.update(env or {})
    return environment


def registry(*arguments, env=None):
    """Runs `device-revoker registry …`; standard input is empty, so nothing can wait for a password."""
    return subprocess.run([DEVICE_REVOKER, "registry", *arguments], capture_output=True, text=True,
                          env=tool_environment(env), stdin=subprocess.DEVNULL)


def succeeds(*arguments, env=None):
    result = registry(*arguments, env=env)
    assert result.returncode == 0, f"registry {' '.join(arguments)}: {result.stderr}"
    return result


def load_registry(db, users, devices_per_user=5, memberships_per_device=5):
    """Fills the seed's two tables with SQL alone, as an app's server would have them:
    bytea keys, a device in ten never seen, one in seven unnamed, fractions of a second in every
    time, some memberships already left. Device i is user i // devices_per_user's; it sits in
    memberships_per_device conversations, none shared with its user's other devices. Works on the
    seed's tables and on a registry (`init` adds only columns with defaults)."""
    devices = users * devices_per_user
    convos = devices // 2
    step = convos // memberships_per_device
    assert step > devices_per_user, "a user's devices would share a conversation"
    db.execute(f"""
        INSERT INTO user_devices (user_did, device_id, device_mls_did, device_name, signature_public_key,
                                  key_packages_available, last_seen, registered_at)
        SELECT 'did:plc:u' || i / {devices_per_user}, 'd' || i % {devices_per_user},
               'did:plc:u' || i / {devices_per_user} || '#d' || i % {devices_per_user},
               CASE WHEN i % 7 <> 3 THEN 'device ' || i END, sha256(int4send(i)), i % 4,
               CASE WHEN i % 10 <> 9 THEN timestamptz '2025-01-01 00:00:00.123456+00' + (i % 500) * interval '1 day' END,
               timestamptz '2024-01-01 08:30:00.5+00' + i * interval '1.000001 second'
        FROM generate_series(0, {devices - 1}) AS i;
        INSERT INTO members (convo_id, member_mls_did, user_did, device_id, joined_at, left_at, is_admin)
        SELECT 'c' || (i + k * {step}) % {convos}, 'did:plc:u' || i / {devices_per_user} || '#d' || i % {devices_per_user},
               'did:plc:u' || i / {devices_per_user}, 'd' || i % {devices_per_user},
               timestamptz '2024-06-01 00:00:00.25+00' + i * interval '1 minute',
               CASE WHEN (i + k) % 11 = 0 THEN timestamptz '2025-02-01 12:34:56.654321+00' END, k = 0
        FROM generate_series(0, {devices - 1}) AS i, generate_series(0, {memberships_per_device - 1}) AS k;
    """)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def device_rows(users, devices_per_user, prefix="u"):
    for index in range(users * devices_per_user):
        user, device = f"did:plc:{prefix}{index // devices_per_user}", f"d{index % devices_per_user}"
        yield {"user_did": user, "device_id": device, "device_mls_did": f"{user}#{device}",
               "device_name": f"device {index}", "signature_public_key": f"{prefix}{index}".encode().hex().rjust(64, "0"),
               "key_packages_available": index % 3, "last_seen": f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}T10:00:00Z",
               "registered_at": "2024-01-01T00:00:00Z"}


def member_rows(users, devices_per_user, per_device, prefix="u"):
    devices = users * devices_per_user
    convos = max(devices // 2, 1)
    for index in range(devices):
        user, device = f"did:plc:{prefix}{index // devices_per_user}", f"d{index % devices_per_user}"
        for k in range(per_device):
            yield {"convo_id": f"{prefix}c{(index + k * (convos // per_device)) % convos}", "member_mls_did": f"{user}#{device}",
                   "user_did": user, "device_id": device, "joined_at": "2024-06-01T00:00:00Z", "is_admin": k == 0}


def import_registry(db_uri, folder, users, devices_per_user=4, per_device=3):
    devices = write_jsonl(folder / "devices.jsonl", device_rows(users, devices_per_user))
    members = write_jsonl(folder / "members.jsonl", member_rows(users, devices_per_user, per_device))
    succeeds("import", "--db", db_uri, "--devices", str(devices), "--members", str(members), "--now", NOW)


def seed_dump(db, table):
    """The seed's columns of every row, in PostgreSQL's binary COPY format: the stored values
    themselves, independent of the session's time zone or date style."""
    with db.connect() as connection:
        with connection.cursor().copy(
                f"COPY (SELECT {SEED_COLUMNS[table]} FROM {table} ORDER BY {SEED_ORDER[table]}) TO STDOUT (FORMAT binary)") as copy:
            return b"".join(bytes(block) for block in copy)


def storage(db):
    """Where each table's rows live (a rewrite gives a table a new file) and the transaction that
    last wrote each row (an UPDATE changes it)."""
    return (db.rows("SELECT relname, pg_relation_filenode(oid) FROM pg_class WHERE relnamespace = 'public'::regnamespace "
                    "AND relkind = 'r' ORDER BY relname"),
            db.rows("SELECT user_did, device_id, xmin::text FROM user_devices ORDER BY 1, 2"),
            db.rows("SELECT convo_id, member_mls_did, xmin::text FROM members ORDER BY 1, 2"))


def schema(db):
    """Columns, constraints and triggers of the public schema, as text to compare."""
    return (db.rows("SELECT table_name, column_name, data_type, column_default, is_nullable FROM information_schema.columns "
                    "WHERE table_schema = 'public' ORDER BY table_name, column_name"),
            db.rows("SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint "
                    "WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2"),
            db.rows("SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2"))


def columns(db, table):
    """column name → (type, default, nullable) of one table."""
    return {name: (data_type, default, nullable)
            for owner, name, data_type, default, nullable in schema(db)[0] if owner == table}


def open_memberships_of_inactive_devices(db):
    return db.value("SELECT count(*) FROM members m JOIN user_devices d USING (user_did, device_id) "
                    "WHERE m.left_at IS NULL AND NOT d.is_active")


def devices_logged_twice(db):
    return db.rows("SELECT user_did, device_id, count(*) FROM revocations GROUP BY 1, 2 HAVING count(*) <> 1")


def inactive_devices(db):
    return set(db.rows("SELECT user_did, device_id FROM user_devices WHERE NOT is_active"))


def logged_devices(db):
    return set(db.rows("SELECT user_did, device_id FROM revocations"))


# --- init ------------------------------------------------------------------------------------


def test_init_adds_to_a_populated_seed_database_without_touching_its_rows(database):
    database.execute(SEED_SCHEMA)
    load_registry(database, users=60)
    dumps = {table: seed_dump(database, table) for table in SEED_COLUMNS}
    files, device_writes, member_writes = storage(database)

    succeeds("init", "--db", database.uri())

    assert {table: seed_dump(database, table) for table in SEED_COLUMNS} == dumps
    after = storage(database)
    assert [row for row in after[0] if row[0] in SEED_COLUMNS] == files, "init rewrote a seed table"
    assert after[1:] == (device_writes, member_writes), "init updated existing rows"
    for column in ("is_active", "revoked_at", "revocation_reason"):
        assert column in columns(database, "user_devices")
    for table in ("revocations", "batch_operations", "registry_migrations"):
        assert database.value("SELECT to_regclass(%s) IS NOT NULL", (table,)), table
    assert database.value("SELECT count(*) FROM registry_migrations") > 0
    assert database.value("SELECT count(*) FROM user_devices WHERE is_active") == 300

    before_second = (schema(database), storage(database), database.rows("SELECT * FROM registry_migrations ORDER BY name"))
    succeeds("init", "--db", database.uri())
    assert (schema(database), storage(database),
            database.rows("SELECT * FROM registry_migrations ORDER BY name")) == before_second


@pytest.mark.parametrize("schema_name", ["catbird", "family-medical"])
def test_a_device_without_any_time_is_not_seen_since_any_time(database, schema_name):
    """Both seeds' tables allow a device row with no time at all (Catbird's last_seen and
    registered_at, Family Medical's last_seen_at): such a device showed no sign of life, and
    escaped every --not-seen-since (a trial's finding). It is taken and listed as not seen;
    --keep-last-device keeps a user's one seen last, a device with a time before one without."""
    if schema_name == "catbird":
        database.execute(SEED_SCHEMA)
        rows = [("did:plc:a", "old", None, None), ("did:plc:a", "new", "2026-11-20T00:00:00Z", "2026-01-01T00:00:00Z"),
                ("did:plc:b", "only", None, None), ("did:plc:c", "none", None, None), ("did:plc:c", "stale", "2024-01-01T00:00:00Z", "2023-01-01T00:00:00Z")]
        for user, device, seen, registered in rows:
            database.execute("INSERT INTO user_devices (user_did, device_id, device_mls_did, signature_public_key, last_seen, registered_at) "
                             "VALUES (%s, %s, %s, %s, %s, %s)", (user, device, f"{user}#{device}", secrets.token_bytes(32), seen, registered))
        succeeds("init", "--db", database.uri())
        name = {f"{user}#{device}": device for user, device, _, _ in rows}
    else:
        database.execute("CREATE TABLE user_devices (device_id UUID PRIMARY KEY, user_id UUID NOT NULL, device_name TEXT, device_type TEXT, "
                         "first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ, is_active BOOLEAN NOT NULL DEFAULT TRUE)")
        users = {"did:plc:a": "00000000-0000-4000-8000-00000000000a", "did:plc:b": "00000000-0000-4000-8000-00000000000b",
                 "did:plc:c": "00000000-0000-4000-8000-00000000000c"}
        rows = [("did:plc:a", "old", None), ("did:plc:a", "new", "2026-11-20T00:00:00Z"), ("did:plc:b", "only", None),
                ("did:plc:c", "none", None), ("did:plc:c", "stale", "2024-01-01T00:00:00Z")]
        name = {}
        for number, (user, device, seen) in enumerate(rows, start=1):
            device_id = f"00000000-0000-4000-8000-{number:012d}"
            database.execute("INSERT INTO user_devices (device_id, user_id, device_name, last_seen_at) VALUES (%s, %s, %s, %s)",
                             (device_id, users[user], device, seen))
            name[f"{user}#{device}"] = device_id
        succeeds("init", "--schema", "family-medical", "--db", database.uri())
    listed = json.loads(succeeds("devices", "--db", database.uri(), "--not-seen-since", "2025-01-01", "--json", "--now", NOW).stdout)
    assert sorted(d["deviceId"] for d in listed) == sorted(name[k] for k in ("did:plc:a#old", "did:plc:b#only", "did:plc:c#none", "did:plc:c#stale"))
    # No time is shown as none, never as 1970 (a trial's finding).
    old = next(d for d in listed if d["deviceId"] == name["did:plc:a#old"])
    assert old["lastSeenAt"] is None and old["registeredAt" if schema_name == "catbird" else "firstSeenAt"] is None, old
    text = succeeds("devices", "--db", database.uri(), "--now", NOW).stdout
    assert "never (no time recorded)" in text and "1970" not in text and "56 years" not in text, text
    report = json.loads(succeeds("revoke", "--db", database.uri(), "--not-seen-since", "2025-01-01", "--keep-last-device", "--force",
                                 "--reason", "stale", "--now", NOW, "--json").stdout)
    # a's old one goes (a keeps its new one); b's only one stays (its last); of c's two, the one
    # with a time stays, the one with none goes.
    assert sorted(d["deviceId"] for d in report["batchDevices"]) == sorted([name["did:plc:a#old"], name["did:plc:c#none"]]), report


def test_init_refuses_an_incompatible_database_naming_each_difference(database):
    incompatible = SEED_SCHEMA.replace("signature_public_key BYTEA", "signature_public_key TEXT").replace("left_at TIMESTAMPTZ, ", "")
    assert "signature_public_key TEXT" in incompatible and "left_at" not in incompatible
    database.execute(incompatible)
    before = schema(database)

    result = registry("init", "--db", database.uri())

    assert result.returncode != 0
    assert "signature_public_key" in result.stderr and "left_at" in result.stderr, result.stderr
    assert schema(database) == before
    assert not database.value("SELECT to_regclass('registry_migrations') IS NOT NULL")


def test_init_on_an_empty_database_creates_the_seeds_columns(new_database):
    seed, made = new_database(), new_database()
    seed.execute(SEED_SCHEMA)

    succeeds("init", "--db", made.uri())

    for table in SEED_COLUMNS:
        made_columns = columns(made, table)
        assert {name: made_columns[name] for name in columns(seed, table)} == columns(seed, table), table
    types = {name: kind for name, (kind, _, _) in columns(made, "user_devices").items()}
    assert types["signature_public_key"] == "bytea" and types["key_packages_available"] == "integer"
    assert types["last_seen"] == types["registered_at"] == types["revoked_at"] == "timestamp with time zone"
    assert columns(made, "user_devices")["is_active"] == ("boolean", "true", "NO")
    assert columns(made, "members")["is_admin"] == ("boolean", "false", "YES")
    assert columns(made, "members")["joined_at"][1] == "now()"
    seed_constraints = set(schema(seed)[1])
    assert seed_constraints <= set(schema(made)[1])


# --- where the connection and its password come from ------------------------------------------

SECRET = "Tr0ub4dor-secret"
EVERY_SUBCOMMAND = [["init"], ["import", "--devices", os.devnull], ["devices"], ["revoke", "--user", "did:plc:u0", "--dry-run"],
                    ["members", "--convo", "c0"], ["rejoin-plan", "--device", "did:plc:u0#d0"], ["log"]]


@pytest.mark.parametrize("db", [
    f"postgresql://hvt:{SECRET}@127.0.0.1/db",
    f"postgres://hvt@127.0.0.1/db?password={SECRET}",
    f"password={SECRET} host=127.0.0.1 dbname=db",
    # Nested where libpq expands it (a hostile trial: each was tried, and "cannot connect" quoted it).
    f"postgresql://hvt@127.0.0.1/postgres?dbname=postgresql://x:{SECRET}@h/d",
    f"postgresql://hvt@127.0.0.1/postgres?dbname=host%3Dh%20password%3D{SECRET}",
    f"postgresql://hvt@127.0.0.1/postgresql%3A%2F%2Fu%3A{SECRET}%40h%2Fd",
    f"postgresql://hvt@127.0.0.1/postgres#password={SECRET}",
], ids=["uri", "uri-query", "key-value", "nested-uri", "nested-key-value", "encoded-path", "fragment"])
def test_a_password_in_db_is_refused_without_showing_it(db):
    for subcommand in EVERY_SUBCOMMAND:
        result = registry(subcommand[0], "--db", db, *subcommand[1:])
        assert result.returncode == 64, (subcommand, result.stderr)
        assert SECRET not in result.stderr + result.stdout
        assert re.search(r"PGPASSWORD|pgpass", result.stderr, re.IGNORECASE), result.stderr


def test_the_password_comes_from_pgpassfile_or_pgpassword(new_database, tmp_path):
    database = new_database(owner=PASSWORD_ROLE)
    over_tcp = f"postgresql://{PASSWORD_ROLE}@127.0.0.1:{PGPORT}/{database.name}"

    succeeds("init", "--db", over_tcp, env={"PGPASSFILE": PGPASSFILE})
    assert database.value("SELECT tableowner FROM pg_tables WHERE tablename = 'user_devices'") == PASSWORD_ROLE
    password = open(PGPASSFILE).read().strip().rsplit(":", 1)[1]
    succeeds("devices", "--db", over_tcp, env={"PGPASSWORD": password, "PGPASSFILE": os.devnull})

    empty = tmp_path / "empty.pgpass"
    empty.touch(mode=0o600)
    result = registry("devices", "--db", over_tcp, env={"PGPASSFILE": str(empty)})
    assert 0 < result.returncode < 128, result.stderr
    assert result.stderr.startswith("device-revoker: error:") and len(result.stderr.splitlines()) <= 4, result.stderr


@pytest.mark.parametrize("form", ["uri-and-environment", "empty-uri", "key-value-and-environment", "key-value", "postgres-scheme"])
def test_the_database_can_be_named_as_in_psql(database, tmp_path, form):
    environment = {"PGHOST": PGHOST, "PGPORT": PGPORT, "PGUSER": PGUSER}
    db = {
        "uri-and-environment": f"postgresql:///{database.name}",
        "empty-uri": "postgresql://",
        "key-value-and-environment": f"dbname={database.name}",
        "key-value": f"host={PGHOST} port={PGPORT} user={PGUSER} dbname={database.name}",
        "postgres-scheme": f"postgres:///{database.name}?host={PGHOST}&port={PGPORT}&user={PGUSER}",
    }[form]
    if form == "empty-uri":
        environment["PGDATABASE"] = database.name
    if form in ("key-value", "postgres-scheme"):
        environment = {}

    succeeds("init", "--db", db, env=environment)
    succeeds("import", "--db", db, "--devices", str(write_jsonl(tmp_path / "d.jsonl", device_rows(3, 2))), env=environment)
    listed = succeeds("devices", "--db", db, "--user", "did:plc:u1", "--now", NOW, env=environment).stdout

    assert "did:plc:u1#d0" in listed and "did:plc:u1#d1" in listed and "did:plc:u2" not in listed
    assert database.value("SELECT count(*) FROM user_devices") == 6


# --- the log and the roles ----------------------------------------------------------------------


def test_the_database_keeps_the_log_append_only_and_no_revoked_device_in_a_conversation(database, tmp_path):
    succeeds("init", "--db", database.uri())
    import_registry(database.uri(), tmp_path, users=10)
    succeeds("revoke", "--db", database.uri(), "--user", "did:plc:u3", "--force", "--reason", "stolen", "--now", NOW)
    log = database.rows("SELECT * FROM revocations ORDER BY id")
    operations = database.rows("SELECT * FROM batch_operations ORDER BY batch_id, seq")
    assert len(log) == 4 and operations

    with database.connect() as connection:
        for statement in ("UPDATE revocations SET reason = 'found again'", "DELETE FROM revocations",
                          "UPDATE batch_operations SET operation = '{}'", "DELETE FROM batch_operations",
                          "UPDATE members SET left_at = NULL WHERE user_did = 'did:plc:u3'",
                          "INSERT INTO members (convo_id, member_mls_did, user_did, device_id) "
                          "VALUES ('new', 'did:plc:u3#d0', 'did:plc:u3', 'd0')"):
            with pytest.raises(psycopg.Error):
                connection.execute(statement)
    assert database.rows("SELECT * FROM revocations ORDER BY id") == log
    assert database.rows("SELECT * FROM batch_operations ORDER BY batch_id, seq") == operations
    assert open_memberships_of_inactive_devices(database) == 0


@pytest.fixture
def operator_role(database):
    """A login role (trusted on the socket) with only what an operator's account needs. Dropped
    before its database, since the database-level grant depends on both."""
    name = f"hvt_operator_{secrets.token_hex(3)}"
    with admin() as connection:
        connection.execute(f"CREATE ROLE {name} LOGIN")
    yield name
    database.execute(f"DROP OWNED BY {name}")
    with admin() as connection:
        connection.execute(f"DROP ROLE {name}")


def test_an_operator_role_with_the_documented_privileges_can_do_everything_but_change_the_log(database, operator_role, tmp_path):
    succeeds("init", "--db", database.uri())
    database.execute(f"""
        GRANT SELECT, INSERT, UPDATE ON user_devices, members TO {operator_role};
        GRANT SELECT, INSERT ON revocations, batch_operations, revocation_batches TO {operator_role};
        GRANT USAGE ON SEQUENCE {database.value("SELECT pg_get_serial_sequence('revocations', 'id')")} TO {operator_role};
        GRANT TEMPORARY ON DATABASE {database.name} TO {operator_role};
        GRANT SELECT ON registry_migrations, revocation_chain_start TO {operator_role};
    """)
    operator = database.uri(user=operator_role)

    import_registry(operator, tmp_path, users=10)
    # Its dry run finds every privilege the real run needs.
    assert "lacks" not in succeeds("revoke", "--db", operator, "--user", "did:plc:u3", "--force", "--dry-run", "--now", NOW).stderr
    succeeds("revoke", "--db", operator, "--user", "did:plc:u3", "--force", "--batch-id", "OP-1", "--now", NOW,
             "--ops", str(tmp_path / "ops.jsonl"))
    assert "did:plc:u3#d0" in succeeds("log", "--db", operator, "--now", NOW).stdout
    succeeds("log", "--db", operator, "--batch", "OP-1", "--ops", str(tmp_path / "again.jsonl"))
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "ops.jsonl").read_bytes()
    assert "did:plc:u3#d0" in succeeds("devices", "--db", operator, "--revoked", "--now", NOW).stdout
    succeeds("members", "--db", operator, "--convo", "uc0")
    succeeds("rejoin-plan", "--db", operator, "--device", "did:plc:u4#d0")

    with database.connect(user=operator_role) as connection:
        for statement in ("UPDATE revocations SET reason = 'x'", "DELETE FROM revocations"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connection.execute(statement)
    assert database.value("SELECT count(*) FROM revocations") == 4


# --- layouts ---------------------------------------------------------------------------------


def test_a_hash_partitioned_registry_answers_like_a_plain_one(new_database, tmp_path):
    plain, partitioned = new_database(), new_database()
    plain.execute(SEED_SCHEMA)
    partitioned.execute(PARTITIONED_SCHEMA)
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(40, 5))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(40, 5, 4))
    (tmp_path / "list.txt").write_text("".join(f"did:plc:u{u}#d{u % 5}\n" for u in range(0, 40, 3)))
    commands = [
        ["init"],
        ["import", "--devices", str(devices), "--members", str(members), "--now", NOW],
        ["revoke", "--user", "did:plc:u7", "--force", "--reason", "stolen", "--batch-id", "P-1", "--now", NOW, "--ops", "OPS"],
        ["revoke", "--devices-file", str(tmp_path / "list.txt"), "--force", "--batch-id", "P-2", "--now", NOW, "--dry-run"],
        ["revoke", "--devices-file", str(tmp_path / "list.txt"), "--force", "--batch-id", "P-2", "--now", NOW],
        ["revoke", "--not-seen-since", "2025-03-01", "--force", "--batch-id", "P-3", "--now", NOW, "--json"],
        ["members", "--convo", "uc7"], ["members", "--convo", "uc33", "--json"],
        ["rejoin-plan", "--device", "did:plc:u8#d1"],
        ["log", "--now", NOW], ["log", "--json", "--now", NOW], ["log", "--batch", "P-3", "--now", NOW],
        ["devices", "--now", NOW], ["devices", "--json", "--now", NOW], ["devices", "--user", "did:plc:u7", "--now", NOW],
        ["devices", "--active", "--not-seen-since", "2025-06-01", "--now", NOW],
    ]

    def run_all(db):
        answers = []
        for command in commands:
            arguments = [str(tmp_path / f"{db.name}.ops") if a == "OPS" else a for a in command]
            result = registry(arguments[0], "--db", db.uri(), *arguments[1:])
            answers.append((command[0], result.returncode, result.stdout.replace(db.uri(), "DB").replace(db.name, "DB")))
        return answers

    expected = run_all(plain)
    assert all(code == 0 for _, code, _ in expected), expected
    assert run_all(partitioned) == expected
    assert (tmp_path / f"{partitioned.name}.ops").read_bytes() == (tmp_path / f"{plain.name}.ops").read_bytes()
    assert partitioned.value("SELECT relkind FROM pg_class WHERE relname = 'user_devices'") == "p"
    assert all(partitioned.value(f"SELECT count(*) FROM {table}_p{r}") > 0 for table in ("user_devices", "members") for r in range(4))


@pytest.mark.parametrize("trigger", ["keeps", "spreads", "log", "named-like-a-guard", "a guard's name in capitals", "a name that quotes",
                                     "disabled on another partition"])
def test_an_app_trigger_on_one_partition_is_watched_as_one_on_its_table(new_database, tmp_path, trigger):
    """A trigger made on one partition of a table, not on the table, fires on the rows the rules
    change through it: one that keeps a revoked device active, or makes another user's device
    inactive, refuses the run with nothing changed (exit 3), and one on a partition of the log
    stops every write until init drops it (a hostile trial: each went unseen, and the run
    logged a device still active, or left a user with none unmeasured)."""
    database = new_database()
    database.execute(PARTITIONED_SCHEMA)
    succeeds("init", "--db", database.uri())
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(40, 3))
    succeeds("import", "--db", database.uri(), "--devices", str(devices), "--now", NOW)
    # The partition that holds user u1's devices, and another user's device in the same one.
    partition = database.value("SELECT tableoid::regclass::text FROM user_devices WHERE user_did = 'did:plc:u1' LIMIT 1")
    other = database.value(f"SELECT device_id FROM {partition} WHERE user_did <> 'did:plc:u1' ORDER BY 1 LIMIT 1")
    other_user = database.value(f"SELECT user_did FROM {partition} WHERE device_id = %s AND user_did <> 'did:plc:u1' LIMIT 1", (other,))
    keeps = "BEGIN NEW.is_active := OLD.is_active; RETURN NEW; END"
    body, on = {
        "keeps": (keeps, f"BEFORE UPDATE ON {partition}"),
        # A guard's name on a table that is not the guard's is no guard.
        "named-like-a-guard": (keeps, "BEFORE UPDATE ON user_devices"),
        "spreads": (f"BEGIN IF pg_trigger_depth() = 1 THEN UPDATE user_devices SET is_active = false WHERE user_did = '{other_user}'; END IF; "
                    "RETURN NULL; END", f"AFTER UPDATE ON {partition}"),
        "log": ("BEGIN RETURN NULL; END", "BEFORE INSERT ON revocations"),
        # PostgreSQL keeps a quoted name's case: another trigger than the guard (a trial).
        "a guard's name in capitals": ("BEGIN RETURN NULL; END", "BEFORE INSERT ON revocations"),
        # A name that would read as two in a message quoted by apostrophes (a trial).
        "a name that quotes": ("BEGIN RETURN NULL; END", "BEFORE INSERT ON revocations"),
        # Made on the table, then disabled on a partition that does not hold the batch: it
        # still fires on the batch's rows (a trial: it was watched nowhere).
        "disabled on another partition": (keeps, "BEFORE UPDATE ON user_devices"),
    }[trigger]
    if trigger == "log":
        database.execute("""
            CREATE TABLE revocations_spare (LIKE revocations);
            ALTER TABLE revocations_spare INHERIT revocations;
        """)
        on = "BEFORE INSERT ON revocations_spare"
    name = {"named-like-a-guard": "revocations_are_append_only", "a guard's name in capitals": "Revocations_Are_Append_Only",
            "a name that quotes": "a' (on revocations), 'revocations_are_append_only"}.get(trigger, "app_on_a_part")
    quoted = '"' + name.replace('"', '""') + '"'
    database.execute(f"CREATE FUNCTION app_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$;"
                     f"CREATE TRIGGER {quoted} {on} FOR EACH ROW EXECUTE FUNCTION app_trigger();")
    if trigger == "disabled on another partition":
        elsewhere = database.value(f"SELECT tableoid::regclass::text FROM user_devices WHERE tableoid::regclass::text <> '{partition}' LIMIT 1")
        database.execute(f"ALTER TABLE {elsewhere} DISABLE TRIGGER {quoted}")
    before = seed_dump(database, "user_devices")
    result = registry("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
    # Each trigger named as SQL quotes it, and where it is.
    assert result.returncode == 3 and f"{quoted} on " in result.stderr, result.stderr
    assert seed_dump(database, "user_devices") == before
    assert database.value("SELECT count(*) FROM revocations") == 0
    if body.startswith("BEGIN RETURN NULL"):
        assert "added by hand" in result.stderr and (trigger != "log" or "revocations_spare, part of revocations" in result.stderr)
        again = registry("init", "--db", database.uri())
        assert again.returncode == 0 and quoted in again.stdout + again.stderr, again.stderr
        assert database.value("SELECT count(*) FROM pg_trigger WHERE tgname = %s", (name,)) == 0
        succeeds("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
    else:
        assert "nothing was changed" in result.stderr


@pytest.mark.parametrize("case", ["a guard disabled on one partition", "the rules' tables inherit"])
def test_guards_and_app_triggers_are_seen_whatever_the_tables_inherit(new_database, tmp_path, case):
    """A guard disabled on one partition does not fire there, so the registry is not as made
    (exit 3) until init puts it back; and tables of the rules that inherit from a table
    elsewhere (a parent with no columns) keep their guards seen and an app's trigger watched
    (a review: such a table fell out of the catalog, its guards read as missing for good)."""
    database = new_database()
    database.execute(PARTITIONED_SCHEMA if case.startswith("a guard") else SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(12, 3))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(12, 3, 2))
    succeeds("import", "--db", database.uri(), "--devices", str(devices), "--members", str(members), "--now", NOW)
    if case.startswith("a guard"):
        database.execute("ALTER TABLE members_p0 DISABLE TRIGGER members_need_an_active_device")
        refused = registry("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
        assert refused.returncode == 3 and "members_need_an_active_device" in refused.stderr, refused.stderr
        succeeds("init", "--db", database.uri())
        assert database.value("SELECT count(*) FROM pg_trigger WHERE tgname = 'members_need_an_active_device' AND tgenabled <> 'O'") == 0
        succeeds("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
        return
    database.execute("""
        CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.audited ();
        ALTER TABLE user_devices INHERIT elsewhere.audited; ALTER TABLE members INHERIT elsewhere.audited;
        ALTER TABLE revocations INHERIT elsewhere.audited;
    """)
    succeeds("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
    database.execute("""
        CREATE FUNCTION app_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.is_active := OLD.is_active; RETURN NEW; END $$;
        CREATE TRIGGER app_keep BEFORE UPDATE ON user_devices FOR EACH ROW EXECUTE FUNCTION app_keep();
    """)
    before = seed_dump(database, "user_devices")
    undone = registry("revoke", "--db", database.uri(), "--user", "did:plc:u2", "--force", "--now", NOW)
    assert undone.returncode == 3 and "app_keep" in undone.stderr and "nothing was changed" in undone.stderr, undone.stderr
    assert seed_dump(database, "user_devices") == before


RULES = {
    # Each rewrites a statement a writer runs on the app's tables: refused, the rule left.
    "keeps every device": ("app_keep", "ON UPDATE TO user_devices DO INSTEAD NOTHING"),
    "keeps one user's devices": ("app_keep", "ON UPDATE TO user_devices WHERE OLD.user_did = 'did:plc:u1' DO INSTEAD NOTHING"),
    "keeps memberships open": ("app_keep", "ON UPDATE TO members DO INSTEAD NOTHING"),
    "also notifies": ("app_notify", "ON UPDATE TO user_devices DO ALSO NOTIFY devices_changed"),
    "drops new devices": ("app_drop", "ON INSERT TO user_devices DO INSTEAD NOTHING"),
    "a name that quotes": ("a' (on members), 'b", "ON INSERT TO members DO ALSO NOTIFY members_changed"),
    "in capitals, on the partitioned table": ("App_Keep", "ON UPDATE TO user_devices DO INSTEAD NOTHING"),
    # Added to the log: refused as a trigger added there is, and dropped by init.
    "drops the log's rows": ("log_drop", "ON INSERT TO revocations DO INSTEAD NOTHING"),
    "on a child of the log": ("log_drop", "ON INSERT TO revocations_spare DO INSTEAD NOTHING"),
    # Disabled, still in the way of an import's ON CONFLICT.
    "disabled": ("app_keep", "ON UPDATE TO user_devices DO INSTEAD NOTHING"),
    # Rewriting nothing a writer runs: no refusal.
    "on another table named in capitals": ("rr", 'ON INSERT TO "Revocations" DO INSTEAD NOTHING'),
    "on one partition": ("app_keep", "ON UPDATE TO user_devices_p0 DO INSTEAD NOTHING"),
    "on delete": ("app_keep", "ON DELETE TO user_devices DO INSTEAD NOTHING"),
}


@pytest.mark.parametrize("case", RULES)
def test_a_rule_that_rewrites_a_writers_statement_refuses_it_naming_the_rule(new_database, tmp_path, case):
    """A rule (`CREATE RULE`) on the app's tables rewrites an UPDATE or an INSERT before it runs:
    every revoke and import refuses (exit 3) naming it as SQL quotes it, changing nothing, and
    init leaves it, saying so; one on the log's tables is refused as a trigger added there is
    and dropped by init (a trial: a rule stopped Family Medical's revoke with the server's raw
    error); a disabled one too (PostgreSQL refuses ON CONFLICT beside it). A rule that rewrites
    none of the writers' statements (on one partition alone, on DELETE, on another table whose
    name differs in case only: PostgreSQL keeps a quoted name's case) refuses nothing."""
    name, rule = RULES[case]
    database = new_database()
    partitioned = case in ("on one partition", "in capitals, on the partitioned table")
    database.execute(PARTITIONED_SCHEMA if partitioned else SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(12, 3))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(12, 3, 2))
    more = write_jsonl(tmp_path / "more.jsonl", device_rows(2, 2, prefix="new"))
    succeeds("import", "--db", database.uri(), "--devices", str(devices), "--members", str(members), "--now", NOW)
    if case == "on a child of the log":
        database.execute("CREATE TABLE revocations_spare (LIKE revocations); ALTER TABLE revocations_spare INHERIT revocations;")
    if case == "on another table named in capitals":
        database.execute('CREATE TABLE "Revocations" (x INT); CREATE TABLE "USER_DEVICES" (x INT);'
                         'CREATE RULE uu AS ON UPDATE TO "USER_DEVICES" DO INSTEAD NOTHING')
    quoted = '"' + name.replace('"', '""') + '"'
    database.execute(f"CREATE RULE {quoted} AS {rule}")
    if case == "disabled":
        database.execute(f"ALTER TABLE user_devices DISABLE RULE {quoted}")
    before = (seed_dump(database, "user_devices"), seed_dump(database, "members"))
    revoke = ("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
    if case in ("on one partition", "on delete", "on another table named in capitals"):
        succeeds(*revoke)
        assert database.value("SELECT count(*) FROM user_devices WHERE user_did = 'did:plc:u1' AND is_active") == 0
        assert database.value("SELECT count(*) FROM revocations") == 3
        succeeds("import", "--db", database.uri(), "--devices", str(more), "--upsert", "--now", NOW)
        return
    shown = f"rule {quoted} on {'revocations_spare, part of revocations' if case == 'on a child of the log' else rule.split(' TO ')[1].split()[0]}"
    for command in (revoke, ("import", "--db", database.uri(), "--devices", str(more), "--now", NOW),
                    ("import", "--db", database.uri(), "--devices", str(more), "--upsert", "--now", NOW)):
        refused = registry(*command)
        assert refused.returncode == 3 and shown in refused.stderr and "nothing was changed" in refused.stderr, (command, refused.stderr)
        assert "ERROR" not in refused.stderr and "DO INSTEAD" not in refused.stderr and "ON CONFLICT" not in refused.stderr
    # The dry run says so (a trial: it said nothing).
    dry = registry(*revoke, "--dry-run")
    # It measures, then ends as the real run would (a trial: exit 0, where the real run was
    # refused), without saying what only a real refusal leaves.
    assert dry.returncode == 3 and "dry run: the real run would be refused" in dry.stderr and shown in dry.stderr, dry.stderr
    assert "would revoke" in dry.stdout, dry.stdout
    assert "nothing was changed" not in dry.stderr, dry.stderr
    assert (seed_dump(database, "user_devices"), seed_dump(database, "members")) == before
    assert database.value("SELECT count(*) FROM revocations") == 0
    again = registry("init", "--db", database.uri())
    assert again.returncode == 0 and shown in again.stderr, again.stderr
    if case.startswith("drops the log") or case.endswith("child of the log"):
        assert "added by hand" in again.stderr and database.value("SELECT count(*) FROM pg_rewrite WHERE rulename = %s", (name,)) == 0
        succeeds(*revoke)
        assert database.value("SELECT count(*) FROM revocations") == 3
    else:
        assert "every revoke and import refuses" in again.stderr
        assert database.value("SELECT count(*) FROM pg_rewrite WHERE rulename = %s", (name,)) == 1
        assert registry(*revoke).returncode == 3
        database.execute(f"DROP RULE {quoted} ON {rule.split(' TO ')[1].split()[0]}")
        succeeds(*revoke)


def login_role(database, role, grants):
    """The connection string of a login role of the server's, given `grants` (SQL) here. The
    statements run as one transaction, which the server may pick to end a deadlock with a
    session of its own (a CI run: the table's lock for row-level security against another
    session's); undone whole, it is made again, up to three times."""
    for attempt in range(3):
        try:
            database.execute(f"""
                -- Tests at once race to make it: either error means it is there.
                DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
                {grants}
            """)
            break
        except psycopg.errors.DeadlockDetected:
            if attempt == 2:
                raise
    return database.uri(user=role)


def as_role_under_policies(database, policies):
    """A login role with every right on the registry's tables, and `policies` (SQL) enabling
    row-level security on some of them: Supabase's way of keeping an app's role to its rows."""
    return login_role(database, "registry_app", f"""
        GRANT ALL ON ALL TABLES IN SCHEMA public TO registry_app;
        GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO registry_app;
        {policies}
    """)


POLICIES = {
    # Each lets the role read what a writer needs and keeps something from it (a trial found
    # each: a batch short of a device, a device left in a hidden conversation, the server's
    # raw error, a log hidden from its own chain).
    "updates only some devices": ("user_devices", "FOR SELECT USING (true)", "FOR UPDATE USING (device_id <> 'd1')"),
    "closes only some memberships": ("members", "FOR SELECT USING (true)", "FOR UPDATE USING (NOT is_admin)"),
    "hides a conversation": ("members", "FOR SELECT USING (convo_id <> 'uc3')", "FOR UPDATE USING (true)"),
    "checks what an update writes": ("user_devices", "FOR SELECT USING (true)", "FOR UPDATE USING (true) WITH CHECK (is_active OR user_did <> 'did:plc:u1')"),
    "hides the log": ("revocations", "FOR SELECT USING (false)", "FOR INSERT WITH CHECK (true)"),
}


@pytest.mark.parametrize("case", POLICIES)
def test_row_level_security_on_a_table_the_writers_change_refuses_them(new_database, tmp_path, case):
    """Row-level security (Supabase's way) that applies to the tool's role on a table a revoke or
    an import changes refuses both (exit 3), naming the table, nothing changed, and init warns;
    a role that bypasses it (the tables' owner, security not forced) is served. A policy can
    hide rows from a selection or keep a change from rows it reads, which no count afterwards
    tells apart from the app's own changes (a trial: a batch short of a device, exit 0)."""
    table, *policies = POLICIES[case]
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(12, 3))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(12, 3, 2))
    succeeds("import", "--db", database.uri(), "--devices", str(devices), "--members", str(members), "--now", NOW)
    as_app = as_role_under_policies(database, f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;\n"
                                    + "".join(f"CREATE POLICY p{i} ON {table} {policy};\n" for i, policy in enumerate(policies)))
    more = write_jsonl(tmp_path / "more.jsonl", device_rows(2, 2, prefix="new"))
    before = (seed_dump(database, "user_devices"), seed_dump(database, "members"))
    for command in (("revoke", "--user", "did:plc:u1", "--force", "--now", NOW), ("revoke", "--not-seen-since", "2025-03-01", "--force", "--now", NOW),
                    ("import", "--devices", str(more), "--now", NOW), ("import", "--devices", str(devices), "--upsert", "--now", NOW)):
        refused = registry(command[0], "--db", as_app, *command[1:])
        assert refused.returncode == 3, (command, refused.stderr)
        assert f"row-level security applies to the role" in refused.stderr and f"on {table}" in refused.stderr, refused.stderr
        assert "nothing was changed" in refused.stderr and "SQLSTATE" not in refused.stderr
    dry = registry("revoke", "--db", as_app, "--user", "did:plc:u1", "--force", "--now", NOW, "--dry-run")
    assert dry.returncode == 3 and "the real run would be refused: row-level security applies" in dry.stderr and "nothing was changed" not in dry.stderr, dry.stderr
    # Said once, as the refusal: not also as a reader's warning (a trial).
    assert "rows a policy hides" not in dry.stderr and dry.stderr.count("row-level security applies") == 1, dry.stderr
    # A reader says what it may not show, and the log's verification gives no verdict (a
    # trial: it said "ok" while a policy hid rows from it).
    shown = registry("devices", "--db", as_app, "--now", NOW)
    assert shown.returncode == 0 and f"row-level security applies to this role on {table}: rows a policy hides" in shown.stderr, shown.stderr
    verified = registry("log", "--db", as_app, "--verify")
    assert verified.returncode == 3 and "row-level security applies to the role" in verified.stderr and "ok" not in verified.stdout, verified.stderr
    # A reader changes nothing either way: it says it gives no verdict, not "nothing was changed".
    assert "no verdict is given on the log" in verified.stderr and "nothing was changed" not in verified.stderr, verified.stderr
    assert "rows a policy hides" not in verified.stderr and verified.stderr.count("row-level security applies") == 1, verified.stderr
    assert (seed_dump(database, "user_devices"), seed_dump(database, "members")) == before
    assert database.value("SELECT count(*) FROM revocations") == 0
    warned = succeeds("init", "--db", as_app)
    assert "row-level security applies to this role on " + table in warned.stderr, warned.stderr
    # The owner, to whom the policies do not apply, revokes every device asked for.
    succeeds("revoke", "--db", database.uri(), "--user", "did:plc:u1", "--force", "--now", NOW)
    assert database.value("SELECT count(*) FROM user_devices WHERE user_did = 'did:plc:u1' AND is_active") == 0
    assert database.value("SELECT count(*) FROM members WHERE user_did = 'did:plc:u1' AND left_at IS NULL") == 0


MADE_MEANWHILE = {
    "a rule": ("import", "CREATE RULE sneaky AS ON INSERT TO user_devices DO INSTEAD NOTHING", 'rule "sneaky" on user_devices'),
    "row-level security": ("import", "ALTER TABLE user_devices ENABLE ROW LEVEL SECURITY; CREATE POLICY sneaky ON user_devices USING (true)",
                           "row-level security applies"),
    "a trigger on the log": ("revoke", "CREATE FUNCTION sneaky() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;"
                             "CREATE TRIGGER sneaky BEFORE INSERT ON revocations FOR EACH ROW EXECUTE FUNCTION sneaky()", '"sneaky" on revocations'),
}


@pytest.mark.parametrize("made", MADE_MEANWHILE)
def test_what_is_made_while_a_writer_waits_for_its_tables_is_seen(new_database, tmp_path, made):
    """A rule, a policy or a trigger made by another session after a writer opened the registry,
    and committed while the writer waits for its tables, is seen by the writer's transaction:
    refused (exit 3), nothing changed (a trial: an import under a rule made so reported four
    devices imported and wrote none). The writer is shown waiting by the server, not a timer."""
    command, ddl, shown = MADE_MEANWHILE[made]
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    succeeds("import", "--db", database.uri(), "--devices", str(write_jsonl(tmp_path / "devices.jsonl", device_rows(6, 2))), "--now", NOW)
    as_app = as_role_under_policies(database, "")
    more = write_jsonl(tmp_path / "more.jsonl", device_rows(2, 2, prefix="new"))
    arguments = (["import", "--db", as_app, "--devices", str(more)] if command == "import"
                 else ["revoke", "--db", as_app, "--user", "did:plc:u1", "--force"]) + ["--now", NOW]
    before = seed_dump(database, "user_devices")
    with database.connect() as holder:
        holder.autocommit = False
        holder.execute("LOCK TABLE user_devices IN ACCESS EXCLUSIVE MODE")
        holder.execute(ddl)
        run = subprocess.Popen([DEVICE_REVOKER, "registry", *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=tool_environment(None), stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: run.poll() is not None or database.value(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()") > 0,
                       "the writer waiting for a table the other session holds")
        finally:
            holder.commit()
        out, err = run.communicate(timeout=120)
    assert run.returncode == 3 and shown in err and "nothing was changed" in err, err
    assert seed_dump(database, "user_devices") == before
    assert database.value("SELECT count(*) FROM revocations") == 0


def test_a_role_that_may_write_only_the_apps_tables_imports_and_is_told_what_a_revoke_lacks(new_database, tmp_path):
    """A role with the rights an import needs and no right to write the log imports (a trial:
    the writer's hold on the log's tables refused it with the server's raw text), and its revoke
    is refused in the registry's words, naming the table, nothing changed (exit 78)."""
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    importer = login_role(database, "h_importer", f"""
        GRANT TEMPORARY ON DATABASE {database.name} TO h_importer;
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO h_importer;
        GRANT INSERT, UPDATE ON user_devices, members TO h_importer;
    """)
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(6, 2))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(6, 2, 2))
    succeeds("import", "--db", importer, "--devices", str(devices), "--members", str(members), "--now", NOW)
    succeeds("import", "--db", importer, "--devices", str(devices), "--upsert", "--now", NOW)
    before = (seed_dump(database, "user_devices"), seed_dump(database, "members"))
    refused = registry("revoke", "--db", importer, "--user", "did:plc:u1", "--force", "--now", NOW)
    assert refused.returncode == 78, refused.stderr
    assert "lacks a privilege the command needs (permission denied for table" in refused.stderr and "Role setup" in refused.stderr, refused.stderr
    assert "SQLSTATE" not in refused.stderr and "nothing was changed" in refused.stderr
    assert (seed_dump(database, "user_devices"), seed_dump(database, "members")) == before


READER_GRANTS = {
    # What docs/device-registry.md gives a read-only support role: SELECT and TEMPORARY.
    "reads only": ("", ["UPDATE on members", "UPDATE on user_devices", "INSERT on batch_operations", "INSERT on revocation_batches", "INSERT on revocations"]),
    "writes the app's tables, not the log": ("GRANT UPDATE ON user_devices, members TO {role};",
                                            ["INSERT on batch_operations", "INSERT on revocation_batches", "INSERT on revocations"]),
    # A writer holds its tables first (LOCK TABLE … ROW EXCLUSIVE), which an UPDATE granted on
    # some columns does not allow: the real run is refused, so the dry run says so.
    "the app's tables by column": ("""GRANT UPDATE (is_active, revoked_at, revocation_reason) ON user_devices TO {role}; GRANT UPDATE (left_at) ON members TO {role};
                                      GRANT INSERT ON revocations, batch_operations, revocation_batches TO {role};""", ["UPDATE on members", "UPDATE on user_devices"]),
    "everything a revoke needs": ("GRANT UPDATE ON user_devices, members TO {role}; GRANT INSERT ON revocations, batch_operations, revocation_batches TO {role};", []),
}


@pytest.mark.parametrize("case", READER_GRANTS)
def test_a_dry_run_names_the_privileges_its_real_run_would_lack(new_database, tmp_path, case):
    """A role that may only read previews a revoke for one that may write (docs/device-registry.md,
    "Role setup"): its dry run works (exit 0, nothing changed) and names each privilege the same
    command run for real by this role would lack, where the real run stops with exit 78 (a
    trial: the dry run said nothing of it)."""
    database = new_database()
    succeeds("init", "--db", database.uri())
    import_registry(database.uri(), tmp_path, users=4)
    role = f"h_reader_{secrets.token_hex(3)}"
    grants, lacking = READER_GRANTS[case]
    reader = login_role(database, role, f"""
        GRANT TEMPORARY ON DATABASE {database.name} TO {role};
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};
        {grants.format(role=role)}
    """)
    before = (seed_dump(database, "user_devices"), seed_dump(database, "members"), database.value("SELECT count(*) FROM revocations"))
    for extra in ([], ["--json"]):
        dry = registry("revoke", "--db", reader, "--user", "did:plc:u1", "--force", "--dry-run", "--now", NOW, *extra)
        assert dry.returncode == 0, dry.stderr
        if lacking:
            assert f"the role connecting lacks {', '.join(lacking)}: the real run as this role would be refused (exit 78)" in dry.stderr, dry.stderr
        else:
            assert "lacks" not in dry.stderr, dry.stderr
    real = registry("revoke", "--db", reader, "--user", "did:plc:u1", "--force", "--now", NOW)
    assert real.returncode == (78 if lacking else 0), real.stderr
    if lacking:
        assert (seed_dump(database, "user_devices"), seed_dump(database, "members"), database.value("SELECT count(*) FROM revocations")) == before


def test_an_import_that_loses_a_deadlock_says_so_and_changes_nothing(new_database, tmp_path):
    """An app that locks user_devices and then members while an import holds members and waits
    for user_devices: the server breaks the deadlock by stopping the import (its role's
    deadlock_timeout the shorter), which says so in the registry's words, nothing imported,
    exit 75 (a trial: the server's raw text). Each step waits for the server to show the last."""
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    as_app = as_role_under_policies(database, "")
    database.execute(f"ALTER ROLE registry_app IN DATABASE {database.name} SET deadlock_timeout = '50ms'")
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(4, 2))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(4, 2, 2))
    waiting = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()"
    with database.connect() as app:
        app.autocommit = False
        app.execute("SET deadlock_timeout = '60s'")
        app.execute("LOCK TABLE user_devices IN SHARE MODE")
        run = subprocess.Popen([DEVICE_REVOKER, "registry", "import", "--db", as_app, "--devices", str(devices), "--members", str(members), "--now", NOW],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tool_environment(None), stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: run.poll() is not None or database.value(waiting) > 0, "the import waiting for user_devices")
            app.execute("LOCK TABLE members IN SHARE MODE")
        finally:
            app.rollback()
        out, err = run.communicate(timeout=120)
    assert run.returncode == 75 and "changed by another session at the same moment" in err and "nothing was changed" in err, err
    assert "SQLSTATE" not in err
    assert database.value("SELECT count(*) FROM user_devices") == 0


@pytest.mark.parametrize("command", ["devices", "revoke --ops -"])
def test_a_closed_standard_output_is_an_error_and_nothing_reaches_the_server(new_database, tmp_path, command):
    """Started with standard output closed (`>&-`), the tool's connection would take its number
    and the report or the operations went into the server's protocol stream (a trial: exit 0,
    or FATAL from the server). Now the write fails as on any closed stream: exit 1, naming
    standard output; a committed batch's operations can be written again from the log."""
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    succeeds("import", "--db", database.uri(), "--devices", str(write_jsonl(tmp_path / "devices.jsonl", device_rows(4, 2))),
             "--members", str(write_jsonl(tmp_path / "members.jsonl", member_rows(4, 2, 2))), "--now", NOW)
    arguments = (["devices", "--now", NOW] if command == "devices"
                 else ["revoke", "--user", "did:plc:u1", "--force", "--now", NOW, "--batch-id", "closed-1", "--ops", "-"])
    closed = subprocess.run([DEVICE_REVOKER, "registry", arguments[0], "--db", database.uri(), *arguments[1:]], stderr=subprocess.PIPE,
                            text=True, env=tool_environment(None), stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert closed.returncode == 1 and "standard output" in closed.stderr and "SQLSTATE" not in closed.stderr, closed.stderr
    if command != "devices":
        assert "could not be written" in closed.stderr and "operations are in standard output" not in closed.stderr, closed.stderr
        again = succeeds("log", "--db", database.uri(), "--batch", "closed-1", "--ops", "-")
        assert again.stdout.count('"mls.remove"') == 4, again.stdout


@pytest.mark.parametrize("setting, code, said", [
    ("default_transaction_read_only = on", 78, "may only be read on this connection"),
    ("statement_timeout = '1ms'", 75, "cancelled a statement of the command"),
])
def test_a_role_setting_that_stops_every_write_is_said_in_the_registrys_words(new_database, tmp_path, setting, code, said):
    """A role whose connections may only read, or whose statements are cancelled at once: the
    import is refused in the registry's words with a sysexits code, nothing changed (a trial:
    the server's raw text, exit 1)."""
    database = new_database()
    database.execute(SEED_SCHEMA)
    succeeds("init", "--db", database.uri())
    as_app = as_role_under_policies(database, f"ALTER ROLE registry_app IN DATABASE {database.name} SET {setting};")
    refused = registry("import", "--db", as_app, "--devices", str(write_jsonl(tmp_path / "devices.jsonl", device_rows(4, 2))), "--now", NOW)
    assert refused.returncode == code and said in refused.stderr and "nothing was changed" in refused.stderr, refused.stderr
    assert "SQLSTATE" not in refused.stderr
    assert database.value("SELECT count(*) FROM user_devices") == 0


@pytest.mark.parametrize("search_path", ["nowhere", "''", "nowhere, \"$user\""])
def test_init_without_a_schema_to_make_tables_in_says_so(new_database, search_path):
    """A connection whose search_path names no schema that exists (a role set so, or the
    URI's options): `init` is refused in the registry's words (exit 78), naming search_path,
    nothing made (a trial: the server's raw 3F000)."""
    database = new_database()
    role = f"h_pathless_{secrets.token_hex(3)}"
    pathless = login_role(database, role, f"""
        GRANT CREATE ON SCHEMA public TO {role};
        ALTER ROLE {role} IN DATABASE {database.name} SET search_path = {search_path};
    """)
    refused = registry("init", "--db", pathless)
    assert refused.returncode == 78, refused.stderr
    assert "has no schema to make its tables in: the connection's search_path names none that exists" in refused.stderr, refused.stderr
    assert "SHOW search_path" in refused.stderr and "SQLSTATE" not in refused.stderr
    assert database.value("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0
    # The same role with the schema named works.
    succeeds("init", "--db", pathless + ("&" if "?" in pathless else "?") + "options=-csearch_path%3Dpublic")


# --- concurrency and crashes -------------------------------------------------------------------


def test_two_overlapping_revokers_both_finish_and_log_each_device_once(database, tmp_path):
    succeeds("init", "--db", database.uri())
    load_registry(database, users=1000)
    chosen = set()
    for round_ in range(5):
        user = f"did:plc:u{round_}"
        # The user's devices come last and in reverse order, so a revoker that locks rows in the
        # order it reads them would cross the other's order.
        others = [f"did:plc:u{u}#d{d}" for u in range(100 + 150 * round_, 250 + 150 * round_) for d in (0, 2)]
        listed = others + [f"{user}#d4", f"{user}#d2", f"{user}#d0"]
        (tmp_path / f"list-{round_}.txt").write_text("\n".join(listed) + "\n")
        revokers = [subprocess.Popen([DEVICE_REVOKER, "registry", *arguments, "--db", database.uri(), "--force"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                                     env=tool_environment())
                    for arguments in (["revoke", "--user", user, "--batch-id", f"U-{round_}"],
                                      ["revoke", "--devices-file", str(tmp_path / f"list-{round_}.txt"), "--batch-id", f"F-{round_}"])]
        for revoker in revokers:
            _, stderr = revoker.communicate(timeout=120)
            assert revoker.returncode == 0, stderr
            assert not RACE_WORDS.search(stderr), stderr
        chosen |= {(user, f"d{d}") for d in range(5)} | {tuple(line.split("#")) for line in listed}

    assert devices_logged_twice(database) == []
    assert logged_devices(database) == inactive_devices(database) == chosen
    assert open_memberships_of_inactive_devices(database) == 0


class RegisteringApp(threading.Thread):
    """The app's server at a steady rate: each transaction registers a new device for a random
    user, then adds it, and one of the user's existing devices, to one of the user's
    conversations with a plain INSERT; the registry refuses a revoked device by trigger."""

    def __init__(self, db, users, seed):
        super().__init__(daemon=True)
        self.db, self.users, self.random = db, users, random.Random(seed)
        self.committed, self.errors = [], []
        self.refused = 0
        self.stopping = threading.Event()

    def run(self):
        try:
            with self.db.connect() as connection:
                while not self.stopping.is_set():
                    self.register(connection, len(self.committed))
                    time.sleep(0.002)
        except Exception as error:  # reported by the test, which runs in another thread
            self.errors.append(repr(error))

    def register(self, connection, number):
        user = f"did:plc:u{self.random.randrange(self.users)}"
        device = f"live-{number}"
        with connection.transaction():
            connection.execute("INSERT INTO user_devices (user_did, device_id, device_mls_did, signature_public_key, last_seen) "
                               "VALUES (%s, %s, %s, %s, now())", (user, device, f"{user}#{device}", secrets.token_bytes(32)))
            convo = connection.execute("SELECT convo_id FROM members WHERE user_did = %s ORDER BY random() LIMIT 1",
                                       (user,)).fetchone()[0]
            existing = connection.execute("SELECT device_id FROM user_devices WHERE user_did = %s AND device_id NOT LIKE 'live-%%' "
                                          "ORDER BY random() LIMIT 1", (user,)).fetchone()[0]
            for joining in (device, existing):
                # A plain insert, as an app that knows nothing of revocations would make: the
                # registry's trigger refuses a revoked device (check_violation), in a savepoint.
                try:
                    with connection.transaction():
                        connection.execute("INSERT INTO members (convo_id, member_mls_did, user_did, device_id) VALUES (%s, %s, %s, %s) "
                                           "ON CONFLICT DO NOTHING", (convo, f"{user}#{joining}", user, joining))
                except psycopg.errors.CheckViolation:
                    self.refused += 1
        self.committed.append((user, device))


def test_a_revoke_beside_an_app_registering_devices_loses_nothing(database):
    succeeds("init", "--db", database.uri())
    load_registry(database, users=4000)
    cutoff = "2025-04-11"
    selected = set(database.rows("SELECT user_did, device_id FROM user_devices WHERE coalesce(last_seen, registered_at) < %s",
                                 (cutoff,)))
    assert len(selected) > 4000
    seed = secrets.randbits(32)
    app = RegisteringApp(database, users=4000, seed=seed)

    app.start()
    # The app is under way before the revoke starts, and goes on after it ends.
    wait_until(lambda: len(app.committed) >= 10 or app.errors, "the app's first 10 registrations")
    started = len(app.committed)
    result = registry("revoke", "--db", database.uri(), "--not-seen-since", cutoff, "--force", "--reason", "stale")
    during = len(app.committed) - started
    wait_until(lambda: len(app.committed) >= started + during + 10 or app.errors, "10 registrations after the revoke")
    app.stopping.set()
    app.join(timeout=30)

    assert result.returncode == 0, result.stderr
    assert not RACE_WORDS.search(result.stderr), result.stderr
    assert app.errors == [], f"seed {seed}"
    assert during > 0, "the app registered nothing while the revoke ran: the test saw no race"
    registered = set(app.committed)
    assert registered and registered <= set(database.rows("SELECT user_did, device_id FROM user_devices WHERE is_active"))
    assert open_memberships_of_inactive_devices(database) == 0
    assert devices_logged_twice(database) == []
    assert logged_devices(database) == inactive_devices(database) == selected


def batch_state(db, cutoff):
    """(inactive selected devices, active others, log rows, stored operations, open memberships of
    selected devices), read in one snapshot."""
    with db.connect() as connection:
        connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with connection.transaction():
            return connection.execute("""
                WITH selected AS (SELECT user_did, device_id, is_active FROM user_devices
                                  WHERE coalesce(last_seen, registered_at) < %(cutoff)s)
                SELECT (SELECT count(*) FROM selected WHERE NOT is_active),
                       (SELECT count(*) FROM user_devices WHERE NOT is_active) - (SELECT count(*) FROM selected WHERE NOT is_active),
                       (SELECT count(*) FROM revocations),
                       (SELECT coalesce(sum(array_length(string_to_array(operation, E'\\n'), 1)), 0) FROM batch_operations),
                       (SELECT count(*) FROM members JOIN selected USING (user_did, device_id) WHERE left_at IS NULL)
            """, {"cutoff": cutoff}).fetchone()


def test_a_revoke_killed_at_any_moment_leaves_all_or_nothing(new_database):
    template = new_database()
    succeeds("init", "--db", template.uri())
    load_registry(template, users=4000)
    cutoff = "2025-04-11"
    revoked, _, _, _, open_memberships = before = batch_state(template, cutoff)
    assert revoked == 0 and open_memberships > 0
    devices = template.value("SELECT count(*) FROM user_devices WHERE coalesce(last_seen, registered_at) < %s", (cutoff,))
    after = (devices, 0, devices, open_memberships, 0)

    def revoke(db):
        return ["revoke", "--db", db.uri(), "--not-seen-since", cutoff, "--force", "--reason", "stale"]

    # An uninterrupted run on a copy: it shows what "after" is, and how many messages a run sends
    # the server (sendto), so the kills below fall on the first messages and on messages spread
    # up to three quarters of them, then on the report, which comes once the commit was answered.
    # (libpq sends a long message in as many calls as the socket takes, so the count varies a
    # little between runs: the last calls of one run may never come in another.)
    whole = new_database(template=template.name)
    sends = calls_of("sendto", [DEVICE_REVOKER, "registry", *revoke(whole)], env=tool_environment(), timeout=600)
    assert batch_state(whole, cutoff) == after
    assert sends >= 3, sends

    moments = [("sendto", call) for call in sorted({1, 2, sends // 4, sends // 2, 3 * sends // 4})] + [("write", 1)]
    states = []
    for syscall, call in moments:
        db = new_database(template=template.name)
        result = subprocess.run([*killed_at(syscall, call), DEVICE_REVOKER, "registry", *revoke(db)], capture_output=True,
                                stdin=subprocess.DEVNULL, env=tool_environment(), timeout=600)
        assert result.returncode in KILLED, f"the kill at {syscall} {call} never came: {result.stderr.decode()}"
        states.append(batch_state(db, cutoff))
        assert states[-1] in (before, after), f"killed at {syscall} {call}: {states[-1]}"
    # Killed at its first message, nothing changed; at its report, the batch was committed; and
    # once committed, it stays so for every later kill.
    assert states[0] == before and states[-1] == after, list(zip(moments, states))
    assert states == sorted(states, key=lambda state: state == after), list(zip(moments, states))


def test_a_committed_batchs_operations_can_be_written_again(database, tmp_path):
    succeeds("init", "--db", database.uri())
    import_registry(database.uri(), tmp_path, users=200)
    (tmp_path / "stolen.txt").write_text("".join(f"did:plc:u{u}#d{u % 4}\n" for u in range(0, 200, 2)))

    succeeds("revoke", "--db", database.uri(), "--devices-file", str(tmp_path / "stolen.txt"), "--force",
             "--batch-id", "TICKET-9", "--ops", str(tmp_path / "ops.jsonl"))
    succeeds("log", "--db", database.uri(), "--batch", "TICKET-9", "--ops", str(tmp_path / "again.jsonl"))

    written = (tmp_path / "ops.jsonl").read_bytes()
    assert len(written.splitlines()) == 100 * 3
    assert (tmp_path / "again.jsonl").read_bytes() == written


def test_a_bulk_import_loads_everything_or_nothing(database, tmp_path):
    succeeds("init", "--db", database.uri())
    devices = write_jsonl(tmp_path / "devices.jsonl", device_rows(10_000, 5))
    members = write_jsonl(tmp_path / "members.jsonl", member_rows(10_000, 5, 2))

    succeeds("import", "--db", database.uri(), "--devices", str(devices), "--members", str(members), "--now", NOW)
    counts = database.rows("SELECT (SELECT count(*) FROM user_devices), (SELECT count(*) FROM members)")
    assert counts == [(50_000, 100_000)]

    late_members = list(member_rows(1_000, 1, 31, prefix="late"))
    late_members[29_999] = {"convo_id": "latec0", "member_mls_did": "did:plc:ghost#nope", "user_did": "did:plc:ghost", "device_id": "nope"}
    result = registry("import", "--db", database.uri(),
                      "--devices", str(write_jsonl(tmp_path / "late-devices.jsonl", device_rows(1_000, 1, prefix="late"))),
                      "--members", str(write_jsonl(tmp_path / "late-members.jsonl", late_members)), "--now", NOW)

    assert result.returncode != 0
    assert re.search(r"late-members\.jsonl.*\b30,?000\b", result.stderr), result.stderr
    assert database.rows("SELECT (SELECT count(*) FROM user_devices), (SELECT count(*) FROM members)") == counts


@pytest.mark.parametrize("engine", ["postgresql", "sqlite"])
def test_a_revocation_time_before_what_the_registry_holds_is_said_and_before_1970_refused(database, tmp_path, engine):
    """`--now` earlier than a device's registration (or one of its open memberships) records a
    revocation the registry's own import refuses: said, on a dry run too (a time given on
    purpose may be older than the data); a time before 1970 is no time at all: refused (64)."""
    db = database.uri() if engine == "postgresql" else str(tmp_path / "r.sqlite")
    succeeds("init", "--db", db)
    import_registry(db, tmp_path, users=2)  # registered 2024-01-01, each device in 3 conversations since 2024-06-01
    revoke = ["revoke", "--db", db, "--device", "did:plc:u0#d0", "--reason", "lost", "--force"]
    refused = registry(*revoke, "--now", "0001-01-01T00:00:00Z")
    assert refused.returncode == 64 and "before 1970-01-01T00:00:00Z" in refused.stderr, refused.stderr
    for now, said in [("2023-06-01T00:00:00Z", "1 of its devices registered and 3 of their open memberships began after it"),
                      ("2024-03-01T00:00:00Z", "when 3 of their open memberships began after it")]:
        dry = registry(*revoke, "--now", now, "--dry-run")
        assert dry.returncode == 0 and said in dry.stderr and "would record" in dry.stderr, dry.stderr
    quiet = registry(*revoke, "--now", "2024-07-01T00:00:00Z", "--dry-run")
    assert quiet.returncode == 0 and "earlier than" not in quiet.stderr, quiet.stderr
    done = registry(*revoke, "--now", "2023-06-01T00:00:00Z")
    assert done.returncode == 0 and "registry import' refuses" in done.stderr, done.stderr


@pytest.mark.parametrize("engine", ["postgresql", "sqlite"])
@pytest.mark.parametrize("selector,devices", [(["--user", "did:plc:u0"], 4), (["--devices-file", "list.txt"], 5)])
@pytest.mark.parametrize("run", ["real", "dry", "refused"])
def test_the_now_check_counts_what_each_selector_takes_however_the_run_ends(database, tmp_path, engine, selector, devices, run):
    """The `--now` check counts the batch's own devices and open memberships (kept by the
    selection and the closing, not looked up again): by a user or a list, in a real run, a dry
    run and a run a guard rail refuses (a user left without a device), on both engines."""
    db = database.uri() if engine == "postgresql" else str(tmp_path / "r.sqlite")
    succeeds("init", "--db", db)
    import_registry(db, tmp_path, users=2)  # registered 2024-01-01, each device in 3 conversations since 2024-06-01
    (tmp_path / "list.txt").write_text("".join(f"did:plc:u0#d{i}\n" for i in range(4)) + "did:plc:u1#d0\n")
    force = [] if run == "refused" else ["--force"]
    arguments = ["revoke", "--db", db, *selector, "--reason", "lost", *force, "--now", "2023-06-01T00:00:00Z", *(["--dry-run"] if run == "dry" else [])]
    result = subprocess.run([DEVICE_REVOKER, "registry", *arguments], capture_output=True, text=True, env=tool_environment(None),
                            stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert (result.returncode == 0) == (run != "refused"), result.stderr
    said = f"is earlier than when {devices} of its devices registered and {3 * devices} of their open memberships began after it"
    assert said in result.stderr, result.stderr
    # Only a run that changed the registry recorded anything (a trial: a refused run said "records").
    assert ("the revocation records a time" if run == "real" else "the revocation would record a time") in result.stderr, result.stderr
    active = 8 - (devices if run == "real" else 0)
    if engine == "sqlite":
        with sqlite3.connect(db) as connection:
            assert connection.execute("SELECT count(*) FROM user_devices WHERE is_active").fetchone()[0] == active
    else:
        assert database.rows("SELECT count(*) FROM user_devices WHERE is_active") == [(active,)]


def test_the_now_check_compares_a_start_stored_as_a_number_as_the_registry_holds_it(tmp_path):
    """A hostile trial: in a registry whose `members.joined_at` was declared another type by
    hand, a start stored as a number sorts before every text, and the `--now` check must count
    it as the registry compares it (a copy in a text column made `5` sort after `2024-…`)."""
    db = str(tmp_path / "r.sqlite")
    succeeds("init", "--db", db)
    import_registry(db, tmp_path, users=2)  # u0: 4 devices, 12 open memberships since 2024-06-01
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute("UPDATE sqlite_master SET sql = replace(sql, 'joined_at TEXT NOT NULL', 'joined_at DATETIME NOT NULL') WHERE name = 'members'")
    connection.commit()
    connection.close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE members SET joined_at = 5 WHERE user_did = 'did:plc:u0' AND device_id IN ('d0', 'd1')")
        assert connection.execute("SELECT count(*) FROM members WHERE typeof(joined_at) = 'integer'").fetchone()[0] == 6
        later = connection.execute("SELECT count(*) FROM members WHERE user_did = 'did:plc:u0' AND left_at IS NULL AND joined_at > '2023-06-01T00:00:00Z'").fetchone()[0]
    connection.close()
    assert later == 6
    for dry in (["--dry-run"], []):
        result = registry("revoke", "--db", db, "--user", "did:plc:u0", "--reason", "lost", "--force", "--now", "2023-06-01T00:00:00Z", *dry)
        assert result.returncode == 0, result.stderr
        assert f"when 4 of its devices registered and {later} of their open memberships began after it" in result.stderr, result.stderr


@pytest.mark.parametrize("loosened", ["user_id UUID NOT NULL", "is_active BOOLEAN NOT NULL DEFAULT TRUE"])
def test_init_refuses_a_column_the_rules_need_that_may_be_null(database, loosened):
    """A hostile trial: Family Medical's table made without NOT NULL on user_id or is_active
    passed init, and one NULL row then failed every revocation on an internal table's constraint.
    A column a device is found by, or its state, may not be NULL: init names it and changes nothing."""
    table = ("CREATE TABLE user_devices (device_id UUID PRIMARY KEY, user_id UUID NOT NULL, device_name TEXT NOT NULL, device_type TEXT, "
             "first_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(), last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(), is_active BOOLEAN NOT NULL DEFAULT TRUE);")
    column = loosened.split()[0]
    database.execute(table.replace(loosened, loosened.replace(" NOT NULL", "")))
    before = schema(database)
    result = registry("init", "--schema", "family-medical", "--db", database.uri())
    assert result.returncode == 2 and f"user_devices.{column} may be NULL" in result.stderr, result.stderr
    assert schema(database) == before
