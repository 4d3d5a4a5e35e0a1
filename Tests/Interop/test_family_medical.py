"""Family Medical's device table (seed 002, issue 47) in device-revoker's registry, checked from
outside: SQLite through Python's sqlite3, PostgreSQL through psycopg on a database where the
app made its own table (with its reference to user_profiles) and wrote its rows itself.

Each revocation is compared with a model written here from the seed's words and the guard
rails' documentation, not from the tool's SQL: which devices go (not seen since, keep the last
device, by name, by id in any case), that every other byte of the table stays as it was, that
each revoked device has one log row naming the batch and its reason, and that refusals change
nothing.
"""
import json
import random
import secrets
import sqlite3
import subprocess
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from test_registry_postgres import PGHOST, PGPORT, PGUSER, as_role_under_policies, new_database  # noqa: F401 (a fixture)
from workspace import DEVICE_REVOKER

NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)
NOW_TEXT = "2026-11-22T10:00:00Z"

# Seed 002's table, word for word but for the comments, with the app's profiles it refers to.
APP_SCHEMA = """
CREATE TABLE user_profiles (user_id UUID PRIMARY KEY);
CREATE TABLE user_devices (
    device_id UUID PRIMARY KEY,
    user_id UUID NOT NULL REFERENCES user_profiles(user_id),
    device_name TEXT NOT NULL,
    device_type TEXT,
    first_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    is_active BOOLEAN NOT NULL DEFAULT TRUE
);
"""


def revoker(*arguments, check=None):
    now = ["--now", NOW_TEXT] if arguments[0] in ("import", "revoke", "devices") else []
    result = subprocess.run([DEVICE_REVOKER, "registry", *arguments, *now], capture_output=True, text=True, timeout=120)
    if check is not None:
        assert result.returncode == check, result.stderr
    return result


def time_text(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def family(rng, users=12):
    """Random households: 1–4 devices a user, names a parent would give (two iPads sometimes),
    seen at random in the last two years, some already inactive."""
    devices = []
    for _ in range(users):
        user = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        for _ in range(rng.randint(1, 4)):
            first = NOW - timedelta(days=rng.randint(400, 800))
            last = first + timedelta(days=rng.randint(0, 399), seconds=rng.randint(0, 86399))
            devices.append({
                "device_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "user_id": user,
                "device_name": rng.choice(["iPhone", "iPad", "Alice's iPhone", "Kitchen iPad", "Mac"]),
                "device_type": rng.choice(["iPhone 15 Pro", "iPad Air", None]),
                "first_seen_at": time_text(first), "last_seen_at": time_text(last), "is_active": rng.random() > 0.1,
            })
    return devices


def model_not_seen_since(devices, cutoff, keep_last):
    """The devices a --not-seen-since revoke takes: active ones last seen before the cutoff;
    with --keep-last-device, a user all of whose active devices would go keeps the one seen last
    (ties: the smaller id)."""
    chosen = {d["device_id"] for d in devices if d["is_active"] and d["last_seen_at"] < cutoff}
    if keep_last:
        for user in {d["user_id"] for d in devices}:
            active = [d for d in devices if d["user_id"] == user and d["is_active"]]
            if active and all(d["device_id"] in chosen for d in active):
                kept = sorted(active, key=lambda d: (tuple(-ord(c) for c in d["last_seen_at"]), d["device_id"]))[0]
                chosen.discard(kept["device_id"])
    return chosen


class SQLiteRegistry:
    def __init__(self, folder, devices):
        self.path = str(folder / "devices.sqlite")
        self.db = self.path
        revoker("init", "--db", self.path, "--schema", "family-medical", check=0)
        lines = "".join(json.dumps({k: v for k, v in d.items() if v is not None}) + "\n" for d in devices)
        (folder / "devices.jsonl").write_text(lines)
        revoker("import", "--db", self.path, "--devices", str(folder / "devices.jsonl"), check=0)

    def rows(self, sql):
        with sqlite3.connect(self.path) as connection:
            return connection.execute(sql).fetchall()

    def table(self):
        return self.rows("SELECT device_id, user_id, device_name, device_type, first_seen_at, last_seen_at, is_active FROM user_devices ORDER BY device_id")

    def active(self):
        return {row[0] for row in self.rows("SELECT device_id FROM user_devices WHERE is_active")}


# The same table in two hash partitions, the second in a schema of its own, as a large
# deployment may keep it: a trigger of the app's may be on one partition only.
PARTITIONED_SCHEMA = APP_SCHEMA.replace("device_id UUID PRIMARY KEY,", "device_id UUID NOT NULL,").replace(
    "is_active BOOLEAN NOT NULL DEFAULT TRUE\n)", "is_active BOOLEAN NOT NULL DEFAULT TRUE,\n    PRIMARY KEY (device_id)\n) PARTITION BY HASH (device_id)") + """
CREATE TABLE user_devices_p0 PARTITION OF user_devices FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE SCHEMA app_archive;
CREATE TABLE app_archive.user_devices_p1 PARTITION OF user_devices FOR VALUES WITH (MODULUS 2, REMAINDER 1);
"""
PARTITIONS = ("user_devices_p0", "app_archive.user_devices_p1")


class PostgresRegistry:
    """The app's database: its own table and rows, made and written with psycopg."""

    def __init__(self, database, devices, partitioned=False):
        self.database = database
        self.db = database.uri()
        self.partitioned = partitioned
        with database.connect() as connection:
            connection.execute(PARTITIONED_SCHEMA if partitioned else APP_SCHEMA)
            for user in sorted({d["user_id"] for d in devices}):
                connection.execute("INSERT INTO user_profiles VALUES (%s)", (user,))
            for d in devices:
                connection.execute("INSERT INTO user_devices VALUES (%s, %s, %s, %s, %s, %s, %s)",
                                   (d["device_id"], d["user_id"], d["device_name"], d["device_type"], d["first_seen_at"], d["last_seen_at"], d["is_active"]))
        revoker("init", "--db", self.db, "--schema", "family-medical", check=0)

    def rows(self, sql):
        return self.database.rows(sql)

    def table(self):
        return [tuple(str(v) if isinstance(v, uuid.UUID) else v for v in row) for row in self.rows(
            "SELECT device_id, user_id, device_name, device_type, first_seen_at, last_seen_at, is_active FROM user_devices ORDER BY device_id")]

    def active(self):
        return {str(row[0]) for row in self.rows("SELECT device_id FROM user_devices WHERE is_active")}

    def add_trigger(self, name, timing, function):
        """The app's trigger on its table or, partitioned, on each partition alone (its own
        name on each, as an app adding one where it is needed would)."""
        places = [(f"{name}_{table.split('.')[-1][-2:]}", table) for table in PARTITIONS] if self.partitioned else [(name, "user_devices")]
        self.database.execute("".join(f"CREATE TRIGGER {trigger} {timing} ON {table} FOR EACH ROW EXECUTE FUNCTION {function}();\n"
                                      for trigger, table in places))


@pytest.fixture(params=["sqlite", "postgres", "postgres-partitioned"])
def make_registry(request, tmp_path):
    def make(devices):
        if request.param == "sqlite":
            return SQLiteRegistry(tmp_path, devices)
        request.getfixturevalue("postgres_server")
        return PostgresRegistry(request.getfixturevalue("new_database")(), devices, partitioned=request.param == "postgres-partitioned")
    return make


def assert_only_activity_changed(before, after, revoked):
    """Every column of every row as it was, but is_active of the revoked devices."""
    assert len(before) == len(after)
    for old, new in zip(before, after):
        assert old[:6] == new[:6]
        assert bool(new[6]) == (bool(old[6]) and old[0] not in revoked), old[0]


@pytest.mark.parametrize("seed", range(6))
def test_not_seen_since_takes_what_the_model_takes(make_registry, seed):
    rng = random.Random(seed)
    devices = family(rng)
    registry = make_registry(devices)
    cutoff = time_text(NOW - timedelta(days=rng.randint(60, 500)))
    keep_last = seed % 2 == 0
    expected = model_not_seen_since(devices, cutoff, keep_last)
    options = ["--not-seen-since", cutoff, "--force", "--batch-id", f"stale-{seed}", "--reason", "not seen", "--operator", "support-ana"]
    options += ["--keep-last-device"] if keep_last else []
    before = registry.table()
    dry = revoker("revoke", "--db", registry.db, *options, "--dry-run", "--json", check=0)
    assert {d["deviceId"] for d in json.loads(dry.stdout)["batchDevices"]} == expected
    assert registry.table() == before
    real = revoker("revoke", "--db", registry.db, *options, "--json", check=0)
    report = json.loads(real.stdout)
    assert report["applied"] == bool(expected) and report["devices"] == len(expected)
    assert_only_activity_changed(before, registry.table(), expected)
    log = registry.rows(f"SELECT device_id, reason, batch_id FROM revocations WHERE batch_id = 'stale-{seed}'")
    assert sorted(row[0] for row in log) == sorted(expected) and all(row[1] == "not seen" for row in log)
    if expected:
        verified = revoker("log", "--db", registry.db, "--verify", check=0)
        assert "1 batch chained" in verified.stdout
    # Listed as a parent sees them: every revoked device with when and why.
    listed = json.loads(revoker("devices", "--db", registry.db, "--revoked", "--json", check=0).stdout)
    newly = [d for d in listed if d["deviceId"] in expected]
    assert len(newly) == len(expected) and all(d["revokedAt"] == NOW_TEXT and d["revocationReason"] == "not seen" for d in newly)


@pytest.mark.parametrize("dry", [False, True])
def test_the_now_check_counts_the_listed_devices_registered_after_it(make_registry, tmp_path, dry):
    """`--now` earlier than when some of a revocation's devices registered is said with their
    count however the batch was chosen: on PostgreSQL a real run selects it by revoking it (the
    UPDATE returns each device's registration), a dry run selects it first."""
    devices = family(random.Random(4747), users=12)
    registry = make_registry(devices)
    now = time_text(NOW - timedelta(days=600))
    listed = [d for d in devices if d["is_active"]][::2]
    late = sum(d["first_seen_at"] > now for d in listed)
    assert 0 < late < len(listed)
    (tmp_path / "list.txt").write_text("".join(f"{d['user_id']}#{d['device_id']}\n" for d in listed))
    result = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", registry.db, "--devices-file", str(tmp_path / "list.txt"), "--reason", "t",
                             "--force", "--now", now, *(["--dry-run"] if dry else [])], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"is earlier than when {late} of its devices registered after it" in result.stderr, result.stderr
    assert len(registry.active()) == sum(d["is_active"] for d in devices) - (0 if dry else len(listed))


def test_guard_rails_refuse_and_change_nothing(make_registry):
    devices = family(random.Random(7), users=6)
    registry = make_registry(devices)
    before = registry.table()
    user = next(d["user_id"] for d in devices if d["is_active"])
    # A whole user: over the share of a small registry, and the user left without a device.
    refused = revoker("revoke", "--db", registry.db, "--user", user.upper(), check=4)
    assert "more than 10%" in refused.stderr and "no active device" in refused.stderr
    # A cutoff after now is a usage error.
    revoker("revoke", "--db", registry.db, "--not-seen-since", "2030-01-01", check=64)
    # An id that is no UUID, and a device not in the registry.
    assert "is not a UUID" in revoker("revoke", "--db", registry.db, "--device", f"{user}#nope", check=2).stderr
    missing = f"{user}#{uuid.uuid4()}"
    assert "not in the registry" in revoker("revoke", "--db", registry.db, "--device", missing, "--force", check=4).stderr
    # What Family Medical's table has none of.
    revoker("revoke", "--db", registry.db, "--user", user, "--force", "--ops", "ops.jsonl", check=4)
    revoker("members", "--db", registry.db, "--convo", "c0", check=4)
    assert registry.table() == before
    assert registry.rows("SELECT count(*) FROM revocations") == [(0,)]


def test_a_list_with_repeats_revoked_and_unknown_devices_is_counted_alike_on_both_engines(make_registry, tmp_path):
    """PostgreSQL revokes a list as it selects it (one UPDATE that fills the batch), SQLite
    selects first: the same list is counted, reported and logged the same on both."""
    devices = family(random.Random(11), users=40)
    registry = make_registry(devices)
    active = [d for d in devices if d["is_active"]]
    inactive = next(d for d in devices if not d["is_active"])
    ref = lambda d: f"{d['user_id']}#{d['device_id']}"  # noqa: E731
    unknown = f"{active[0]['user_id']}#{uuid.UUID(int=1, version=4)}"
    lines = [ref(active[0]), ref(active[1]).upper(), ref(active[0]), ref(inactive), unknown, ref(active[2])]
    (tmp_path / "list.txt").write_text("# stolen bag\n" + "\n".join(lines) + "\n")
    common = ["--db", registry.db, "--devices-file", str(tmp_path / "list.txt"), "--batch-id", "bag", "--json"]
    before = registry.table()
    refused = json.loads(revoker("revoke", *common, check=4).stdout)
    assert not refused["applied"] and registry.table() == before
    assert [entry["where"] for entry in refused["unmatched"]] == ["devices file line 6"]
    report = json.loads(revoker("revoke", *common, "--allow-unmatched", "--force", check=0).stdout)
    taken = {active[i]["device_id"] for i in range(3)}
    assert (report["devices"], report["alreadyRevoked"], report["notFound"]) == (3, 1, 1)
    assert {d["deviceId"] for d in report["batchDevices"]} == taken
    assert_only_activity_changed(before, registry.table(), taken)
    assert sorted(row[0] for row in registry.rows("SELECT device_id FROM revocations WHERE batch_id = 'bag'")) == sorted(taken)
    assert "1 batch chained" in revoker("log", "--db", registry.db, "--verify", check=0).stdout


@pytest.mark.parametrize("order", ["as listed", "reversed", "by id, last first", "shuffled"])
def test_a_lists_order_changes_nothing_but_the_lines_it_names(make_registry, tmp_path, order):
    """SQLite looks a list's devices up sorted by the table's key, whatever order the list has
    (docs/performance.md): the same entries in any order take the same devices, count the same
    repeats, revoked and unknown devices, and name each unknown entry by its own line."""
    devices = family(random.Random(23), users=30)
    registry = make_registry(devices)
    active = [d for d in devices if d["is_active"]]
    inactive = [d for d in devices if not d["is_active"]][:2]
    ref = lambda d: f"{d['user_id']}#{d['device_id']}"  # noqa: E731
    unknown = [f"{active[0]['user_id']}#{uuid.UUID(int=n, version=4)}" for n in (7, 8)]
    entries = [ref(d) for d in active[:12]] + [ref(active[3]).upper(), ref(active[5])] + [ref(d) for d in inactive] + unknown
    if order == "reversed":
        entries.reverse()
    elif order == "by id, last first":
        entries.sort(key=lambda e: e.lower().split("#")[1], reverse=True)
    elif order == "shuffled":
        random.Random(5).shuffle(entries)
    (tmp_path / "list.txt").write_text("\n".join(entries) + "\n")
    before = registry.table()
    report = json.loads(revoker("revoke", "--db", registry.db, "--devices-file", str(tmp_path / "list.txt"), "--batch-id", "bag",
                                "--allow-unmatched", "--force", "--json", check=0).stdout)
    taken = {d["device_id"] for d in active[:12]}
    assert (report["devices"], report["alreadyRevoked"], report["notFound"]) == (12, 2, 2)
    assert {d["deviceId"] for d in report["batchDevices"]} == taken
    assert sorted(entry["where"] for entry in report["unmatched"]) == sorted(f"devices file line {entries.index(u) + 1}" for u in unknown)
    assert_only_activity_changed(before, registry.table(), taken)
    assert sorted(row[0] for row in registry.rows("SELECT device_id FROM revocations WHERE batch_id = 'bag'")) == sorted(taken)


def test_a_batch_of_unknown_size_is_measured_before_anything_is_changed(postgres_server, new_database):
    """Where a refusal for its size is possible and the batch has no bound (a cutoff), the
    batch is selected and measured first: an app trigger that fails every change of a device
    shows that a refused run never tried one, and that a forced run does."""
    devices = family(random.Random(3), users=20)
    registry = PostgresRegistry(new_database(), devices)
    with registry.database.connect() as connection:
        connection.execute("""
            CREATE FUNCTION no_changes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'devices are read-only today'; END $$;
            CREATE TRIGGER app_no_changes BEFORE UPDATE ON user_devices FOR EACH ROW EXECUTE FUNCTION no_changes();
        """)
    cutoff = time_text(NOW - timedelta(days=30))
    refused = revoker("revoke", "--db", registry.db, "--not-seen-since", cutoff, check=4)
    assert "more than 10%" in refused.stderr and "read-only" not in refused.stderr
    forced = revoker("revoke", "--db", registry.db, "--not-seen-since", cutoff, "--force")
    assert forced.returncode != 0 and "read-only today" in forced.stderr


@pytest.mark.parametrize("selector", ["device", "cutoff"])
def test_an_app_trigger_that_keeps_a_device_active_undoes_the_revocation(make_registry, selector):
    """A trigger of the app's that silently skips one device's change (PostgreSQL's RETURN NULL,
    SQLite's RAISE(IGNORE)) is found, and the run changes nothing (exit 3), by whichever path
    the batch was selected (a hostile trial: PostgreSQL's revoke-as-it-selects counted the
    device as revoked before and committed the others)."""
    devices = family(random.Random(5), users=8)
    registry = make_registry(devices)
    kept = next(d for d in devices if d["is_active"])
    if isinstance(registry, PostgresRegistry):
        registry.database.execute(f"""
            CREATE FUNCTION app_keep() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF OLD.device_id = '{kept["device_id"]}' THEN RETURN NULL; END IF; RETURN NEW; END $$;
        """)
        registry.add_trigger("app_keep", "BEFORE UPDATE", "app_keep")
    else:
        with sqlite3.connect(registry.path) as connection:
            connection.execute(f"""CREATE TRIGGER app_keep BEFORE UPDATE ON user_devices WHEN OLD.device_id = '{kept["device_id"]}'
                                   BEGIN SELECT RAISE(IGNORE); END""")
    before = registry.table()
    chosen = ["--device", f"{kept['user_id']}#{kept['device_id']}"] if selector == "device" else ["--not-seen-since", NOW_TEXT]
    undone = revoker("revoke", "--db", registry.db, *chosen, "--force", check=3)
    assert "app_keep" in undone.stderr and "nothing was changed" in undone.stderr
    assert registry.table() == before
    assert registry.rows("SELECT count(*) FROM revocations") == [(0,)]


@pytest.mark.parametrize("rule", ["DO INSTEAD NOTHING", "WHERE OLD.is_active DO INSTEAD NOTHING", "DO ALSO NOTIFY devices_changed"])
@pytest.mark.parametrize("selector", ["device", "cutoff"])
@pytest.mark.parametrize("layout", ["plain", "partitioned"])
def test_a_rule_on_the_apps_table_refuses_the_revoke_naming_it(postgres_server, new_database, rule, selector, layout):
    """A rule on user_devices (PostgreSQL's `CREATE RULE`) refuses the revoke by either path,
    naming it, with nothing changed (exit 3), where the server refused the revoke-as-it-selects
    with its raw error (a trial)."""
    devices = family(random.Random(23), users=8)
    registry = PostgresRegistry(new_database(), devices, partitioned=layout == "partitioned")
    registry.database.execute(f"CREATE RULE app_rule AS ON UPDATE TO user_devices {rule}")
    taken = next(d for d in devices if d["is_active"])
    before = registry.table()
    chosen = ["--device", f"{taken['user_id']}#{taken['device_id']}"] if selector == "device" else ["--not-seen-since", NOW_TEXT]
    refused = revoker("revoke", "--db", registry.db, *chosen, "--force", check=3)
    assert 'rule "app_rule" on user_devices' in refused.stderr and "nothing was changed" in refused.stderr, refused.stderr
    assert "SQLSTATE" not in refused.stderr
    assert registry.table() == before and registry.rows("SELECT count(*) FROM revocations") == [(0,)]
    registry.database.execute("DROP RULE app_rule ON user_devices")
    # A table named members is another app's here: its rules refuse nothing (a trial).
    registry.database.execute("CREATE TABLE members (id INT); CREATE RULE other_app AS ON INSERT TO members DO ALSO NOTIFY members_changed")
    revoker("revoke", "--db", registry.db, *chosen, "--force", check=0)
    assert taken["device_id"] not in registry.active()


def hold_row_while(registry, device, revoke, meanwhile):
    """Runs `revoke` (argv) while the app holds `device`'s row lock, and runs `meanwhile` (SQL)
    once the server shows the revoke waiting on it: seen by the server, not guessed by a timer."""
    with registry.database.connect() as holder:
        holder.autocommit = False
        holder.execute("UPDATE user_devices SET last_seen_at = last_seen_at WHERE device_id = %s", (device,))
        run = subprocess.Popen(revoke, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            with registry.database.connect() as watcher:
                for _ in range(6000):
                    waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE user_devices AS d%'"
                    if watcher.execute(waiting).fetchone()[0] or run.poll() is not None:
                        break
                    watcher.execute("SELECT pg_sleep(0.01)")
            registry.database.execute(meanwhile)
        finally:
            holder.commit()
        out, err = run.communicate(timeout=120)
    return run.returncode, out, err


@pytest.mark.parametrize("meanwhile", ["registers", "reactivates"])
def test_a_listed_device_the_app_changes_while_the_revoke_waits_refuses_the_run(postgres_server, new_database, tmp_path, meanwhile):
    """The batch is what the change took; a listed device the app registers, or makes active
    again, while the revoke waits on a row lock is active after the change: the run is refused
    and changes nothing (exit 3), never counting it as revoked before or as not in the registry
    (two trials found each)."""
    devices = family(random.Random(9), users=12)
    taken = next(d for d in devices if d["is_active"])
    if meanwhile == "registers":
        other = {"device_id": str(uuid.UUID(int=42, version=4)), "user_id": taken["user_id"]}
        sql = f"INSERT INTO user_devices VALUES ('{other['device_id']}', '{other['user_id']}', 'New iPad', 'iPad Air', '{NOW_TEXT}', '{NOW_TEXT}', true)"
    else:
        other = devices[-1]
        other["is_active"] = False
        sql = f"UPDATE user_devices SET is_active = true WHERE device_id = '{other['device_id']}'"
    registry = PostgresRegistry(new_database(), devices)
    (tmp_path / "list.txt").write_text(f"{taken['user_id']}#{taken['device_id']}\n{other['user_id']}#{other['device_id']}\n")
    code, out, err = hold_row_while(registry, taken["device_id"], [DEVICE_REVOKER, "registry", "revoke", "--db", registry.db, "--devices-file",
                                                                   str(tmp_path / "list.txt"), "--allow-unmatched", "--json", "--now", NOW_TEXT], sql)
    assert code == 3 and "kept 1 device the revocation named active" in err and "nothing was changed" in err, err
    assert {taken["device_id"], other["device_id"]} <= registry.active()
    assert registry.rows("SELECT count(*) FROM revocations") == [(0,)]


@pytest.mark.parametrize("selector", ["list", "forced"])
def test_a_policy_that_keeps_the_tools_role_from_updating_a_device_refuses_the_run(postgres_server, new_database, tmp_path, selector):
    """Row-level security (Supabase's way) that lets the tool's role read every device but
    update only some: the device kept active is never logged revoked, whichever path selects
    the batch (a trial: it was reported as not in the registry, and passed with
    --allow-unmatched)."""
    devices = family(random.Random(13), users=10)
    database = new_database()
    registry = PostgresRegistry(database, devices)
    kept, taken = [d for d in devices if d["is_active"]][:2]
    as_app = as_role_under_policies(database, f"""
        ALTER TABLE user_devices ENABLE ROW LEVEL SECURITY;
        CREATE POLICY app_reads ON user_devices FOR SELECT USING (true);
        CREATE POLICY app_updates ON user_devices FOR UPDATE USING (device_id <> '{kept["device_id"]}');
    """)
    before = registry.table()
    chosen = (["--device", f"{kept['user_id']}#{kept['device_id']}", "--device", f"{taken['user_id']}#{taken['device_id']}", "--allow-unmatched"]
              if selector == "list" else ["--not-seen-since", NOW_TEXT, "--expect-revocations", str(len([d for d in devices if d["is_active"]]))])
    refused = revoker("revoke", "--db", as_app, *chosen, "--force", check=3)
    assert "row-level security applies to the role" in refused.stderr and "nothing was changed" in refused.stderr
    assert registry.table() == before and registry.rows("SELECT count(*) FROM revocations") == [(0,)]


def test_a_policy_that_keeps_an_upsert_from_a_device_refuses_the_import(postgres_server, new_database, tmp_path):
    """The same policy before `import --upsert`: a device the role may read but not update is
    not reported imported as it was: row-level security refuses the import (exit 3)."""
    devices = family(random.Random(29), users=6)
    database = new_database()
    registry = PostgresRegistry(database, devices)
    kept = next(d for d in devices if d["is_active"])
    as_app = as_role_under_policies(database, f"""
        ALTER TABLE user_devices ENABLE ROW LEVEL SECURITY;
        CREATE POLICY app_reads ON user_devices FOR SELECT USING (true);
        CREATE POLICY app_updates ON user_devices FOR UPDATE USING (device_id <> '{kept["device_id"]}');
    """)
    renamed = [dict(d, device_name="renamed") for d in devices if d["is_active"]]
    (tmp_path / "renamed.jsonl").write_text("".join(json.dumps({k: v for k, v in d.items() if v is not None}) + "\n" for d in renamed))
    before = registry.table()
    refused = revoker("import", "--db", as_app, "--devices", str(tmp_path / "renamed.jsonl"), "--upsert", check=3)
    assert "row-level security applies to the role" in refused.stderr and "nothing was changed" in refused.stderr, refused.stderr
    assert registry.table() == before


def test_an_app_trigger_that_deactivates_other_devices_refuses_the_run(make_registry):
    """A trigger of the app's that makes another device inactive as one is revoked (a user's
    only device, unmeasured and unlogged, in a trial) refuses the run, changing nothing."""
    devices = family(random.Random(17), users=8)
    registry = make_registry(devices)
    revoked, collateral = [d for d in devices if d["is_active"]][:2]
    if isinstance(registry, PostgresRegistry):
        registry.database.execute(f"""
            CREATE FUNCTION app_spread() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                IF pg_trigger_depth() = 1 AND NEW.device_id = '{revoked["device_id"]}' THEN
                    UPDATE user_devices SET is_active = false WHERE device_id = '{collateral["device_id"]}'; END IF;
                RETURN NULL; END $$;
        """)
        registry.add_trigger("app_spread", "AFTER UPDATE", "app_spread")
    else:
        with sqlite3.connect(registry.path) as connection:
            connection.execute(f"""CREATE TRIGGER app_spread AFTER UPDATE OF is_active ON user_devices WHEN NEW.device_id = '{revoked["device_id"]}'
                                   BEGIN UPDATE user_devices SET is_active = 0 WHERE device_id = '{collateral["device_id"]}'; END""")
    before = registry.table()
    spread = revoker("revoke", "--db", registry.db, "--device", f"{revoked['user_id']}#{revoked['device_id']}", "--force", check=3)
    assert "made 1 device outside the batch inactive" in spread.stderr and "app_spread" in spread.stderr
    assert registry.table() == before and registry.rows("SELECT count(*) FROM revocations") == [(0,)]


def test_sqlite_keeps_every_id_in_lower_case_whoever_writes_it(tmp_path):
    """SQLite keeps whatever text a row is given: a row the app or a person wrote in capitals
    was neither revoked with its user (reported as nothing to do) nor found by its id as
    listed (a hostile trial), where PostgreSQL's UUIDs compare alike. The registry refuses such
    a row, and a registry made before the rule has its rows given their lower-case spelling
    when next opened to write."""
    devices = family(random.Random(23), users=3)
    registry = SQLiteRegistry(tmp_path, devices)
    upper = {"device": "00000000-0000-4000-8000-0000000000E1", "user": "EEEEEEEE-EEEE-4EEE-8EEE-EEEEEEEEEEEE"}
    insert = ("INSERT INTO user_devices (device_id, user_id, device_name, first_seen_at, last_seen_at, is_active) "
              "VALUES (?, ?, 'Kitchen iPad', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 1)")
    lower = upper["device"].lower()
    for device, user in [(upper["device"], upper["user"].lower()), (lower, upper["user"]), (upper["device"], upper["user"]),
                         ("{" + lower + "}", upper["user"].lower()), (lower.replace("-", ""), upper["user"].lower()), ("urn:uuid:" + lower, upper["user"].lower()),
                         (lower, "not-a-uuid"), (lower + " ", upper["user"].lower()), (lower, None)]:
        with pytest.raises(sqlite3.IntegrityError, match="kept in lower case|NOT NULL"):
            with sqlite3.connect(registry.path) as connection:
                connection.execute(insert, (device, user))
    for change in ("user_id = upper(user_id)", "device_id = upper(device_id)", "device_id = '{' || device_id || '}'"):
        with pytest.raises(sqlite3.IntegrityError, match="kept in lower case"):
            with sqlite3.connect(registry.path) as connection:
                connection.execute(f"UPDATE user_devices SET {change} WHERE device_id = ?", (devices[0]["device_id"],))
    # Any other change to a row is the app's to make.
    with sqlite3.connect(registry.path) as connection:
        connection.execute("UPDATE user_devices SET device_name = 'Renamed' WHERE device_id = ?", (devices[0]["device_id"],))
    # A registry from before the rule: its rows in capitals, its guards not yet made.
    with sqlite3.connect(registry.path) as connection:
        for trigger in ("user_devices_ids_are_lower_case_insert", "user_devices_ids_are_lower_case_update"):
            connection.execute(f"DROP TRIGGER {trigger}")
        connection.execute("DELETE FROM grdb_migrations WHERE identifier LIKE 'fm2:%'")
        connection.execute(insert, (upper["device"], upper["user"]))
    # The next command that writes (here the revoke itself) brings it up to date first.
    revoked = revoker("revoke", "--db", registry.path, "--user", upper["user"], "--force", "--json", check=0)
    assert json.loads(revoked.stdout)["devices"] == 1
    assert registry.rows(f"SELECT device_id, user_id, is_active FROM user_devices WHERE user_id = '{upper['user'].lower()}'") == [
        (upper["device"].lower(), upper["user"].lower(), 0)]
    listed = revoker("devices", "--db", registry.path, "--user", upper["user"], "--json", check=0)
    assert upper["device"].lower() in listed.stdout
    assert registry.rows("SELECT count(*) FROM sqlite_master WHERE name LIKE 'user_devices_ids_are_lower_case_%'") == [(2,)]
    assert revoker("log", "--db", registry.path, "--verify").returncode == 0


def test_the_id_guards_hold_against_blobs_and_a_remade_pattern_and_an_older_registry_is_no_alarm(tmp_path):
    """The id guards (a review): an id stored as a BLOB holding a lower-case UUID is refused
    (GLOB reads it as text); a guard made again with its pattern in capitals, which would refuse
    every lower-case id, is not in place, and init puts it back; a registry from before the
    guards, read without writing, verifies (its age is not tampering); and a device kept twice
    in two spellings does not stop the step that brings the registry up to date, nor a revoke."""
    devices = family(random.Random(29), users=3)
    registry = SQLiteRegistry(tmp_path, devices)
    lower = "00000000-0000-4000-8000-0000000000e1"
    insert = ("INSERT INTO user_devices (device_id, user_id, device_name, first_seen_at, last_seen_at, is_active) "
              "VALUES (?, ?, 'Kitchen iPad', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 1)")
    for device, user in [(lower.encode(), devices[0]["user_id"]), (lower, devices[0]["user_id"].encode())]:
        with pytest.raises(sqlite3.IntegrityError, match="kept in lower case"):
            with sqlite3.connect(registry.path) as connection:
                connection.execute(insert, (device, user))
    with sqlite3.connect(registry.path) as connection:
        made = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'user_devices_ids_are_lower_case_insert'").fetchone()[0]
        connection.execute("DROP TRIGGER user_devices_ids_are_lower_case_insert")
        connection.execute(made.replace("[0-9a-f]", "[0-9A-F]"))
    refused = revoker("revoke", "--db", registry.path, "--user", devices[0]["user_id"], "--force")
    assert refused.returncode == 3 and "user_devices_ids_are_lower_case_insert" in refused.stderr, refused.stderr
    revoker("init", "--db", registry.path, "--schema", "family-medical", check=0)
    assert registry.rows("SELECT sql FROM sqlite_master WHERE name = 'user_devices_ids_are_lower_case_insert'") == [(made,)]
    # The step's record gone, its guards still there: the step runs again over them, as it
    # does over triggers of their names made by hand (a trial: every write failed, init's too).
    with sqlite3.connect(registry.path) as connection:
        connection.execute("DELETE FROM grdb_migrations WHERE identifier LIKE 'fm2:%'")
    revoker("import", "--db", registry.path, "--devices", str(tmp_path / "devices.jsonl"), "--upsert", check=0)
    # A registry from before the guards, with one device in two spellings and others in the
    # spellings PostgreSQL's uuid reads.
    spelled = {"{00000000-0000-4000-8000-0000000000e2}": "00000000-0000-4000-8000-0000000000e2",
               "URN:UUID:00000000-0000-4000-8000-0000000000E3": "00000000-0000-4000-8000-0000000000e3",
               "00000000000040008000000000000E4": None, "000000000000400080000000000000e5": "00000000-0000-4000-8000-0000000000e5"}
    with sqlite3.connect(registry.path) as connection:
        for trigger in ("user_devices_ids_are_lower_case_insert", "user_devices_ids_are_lower_case_update"):
            connection.execute(f"DROP TRIGGER {trigger}")
        connection.execute("DELETE FROM grdb_migrations WHERE identifier LIKE 'fm2:%'")
        connection.execute(insert, (lower, devices[0]["user_id"]))
        connection.execute(insert, (lower.upper(), devices[0]["user_id"]))
        # A user in capitals whose devices' ids cannot all be written in the one form.
        for device in ("00000000-0000-4000-8000-0000000000f1", "00000000-0000-4000-8000-0000000000F1", "not-a-uuid"):
            connection.execute(insert, (device, "FFFFFFFF-0000-4000-8000-000000000001"))
        for device in spelled:
            connection.execute(insert, (device, devices[1]["user_id"]))
    verified = revoker("log", "--db", registry.path, "--verify")
    assert verified.returncode == 0, verified.stderr
    revoked = revoker("revoke", "--db", registry.path, "--user", devices[0]["user_id"], "--force", "--json", check=0)
    assert lower in revoked.stdout
    assert registry.rows(f"SELECT device_id FROM user_devices WHERE lower(device_id) = '{lower}' ORDER BY 1") == [(lower.upper(),), (lower,)]
    assert registry.rows("SELECT count(*) FROM sqlite_master WHERE name LIKE 'user_devices_ids_are_lower_case_%'") == [(2,)]
    # The user's id is written in its one form even where a device's is not: a revoke of the
    # user takes every one of their devices (a trial: two stayed active, reported done).
    whole = revoker("revoke", "--db", registry.path, "--user", "ffffffff-0000-4000-8000-000000000001", "--force", "--json", check=0)
    assert json.loads(whole.stdout)["devices"] == 3
    assert registry.rows("SELECT count(*) FROM user_devices WHERE lower(user_id) = 'ffffffff-0000-4000-8000-000000000001' AND is_active") == [(0,)]
    # Each spelling of a UUID in its one form, found by it; text that is no UUID (31 digits) left.
    kept = {row[0] for row in registry.rows(f"SELECT device_id FROM user_devices WHERE user_id = '{devices[1]['user_id']}'")}
    assert {canonical or device for device, canonical in spelled.items()} <= kept
    taken = revoker("revoke", "--db", registry.path, "--device", f"{devices[1]['user_id']}#00000000-0000-4000-8000-0000000000E3", "--force", check=0)
    assert "00000000-0000-4000-8000-0000000000e3" not in registry.active(), taken.stdout


def test_a_trigger_named_at_any_length_is_named_in_a_bounded_message(tmp_path):
    """SQLite's names have no bound: a trigger added to the log under a name of 100,000
    characters is named cut, as an input is quoted, not written out whole in the refusal."""
    registry = SQLiteRegistry(tmp_path, family(random.Random(31), users=2))
    name = "t" * 100_000
    with sqlite3.connect(registry.path) as connection:
        connection.execute(f'CREATE TRIGGER "{name}" BEFORE INSERT ON revocations BEGIN SELECT RAISE(IGNORE); END')
    refused = revoker("revoke", "--db", registry.path, "--not-seen-since", NOW_TEXT, "--force")
    assert refused.returncode == 3 and '"ttt' in refused.stderr and "…" in refused.stderr, refused.stderr[:500]
    assert len(refused.stderr) < 2000
    dropped = revoker("init", "--db", registry.path, check=0)
    assert len(dropped.stderr) < 2000 and "…" in dropped.stderr
    assert registry.rows("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND length(name) > 1000") == [(0,)]


def test_a_device_is_revoked_by_its_name_or_its_id_in_any_case(make_registry):
    user = str(uuid.uuid4())
    devices = [
        {"device_id": str(uuid.uuid4()), "user_id": user, "device_name": name, "device_type": None,
         "first_seen_at": "2025-01-01T00:00:00Z", "last_seen_at": last, "is_active": True}
        for name, last in [("Alice's iPhone", "2026-11-22T09:58:00Z"), ("iPad", "2026-11-19T10:00:00Z"), ("iPad", "2026-03-01T00:00:00Z")]
    ]
    registry = make_registry(devices)
    # "I don't recognize that iPad": two are called so; each is shown with its id and last seen.
    ambiguous = revoker("revoke", "--db", registry.db, "--user", user, "--name", "ipad", "--force", check=4)
    assert devices[1]["device_id"] in ambiguous.stderr and devices[2]["device_id"] in ambiguous.stderr
    assert "2026-03-01T00:00:00Z" in ambiguous.stderr
    assert registry.active() == {d["device_id"] for d in devices}
    # By its id, in capitals as a support agent may read it out.
    target = devices[2]
    revoker("revoke", "--db", registry.db, "--device", f"{user.upper()}#{target['device_id'].upper()}", "--force", "--reason", "not recognised", check=0)
    assert registry.active() == {devices[0]["device_id"], devices[1]["device_id"]}
    # The name an active iPad shares with a revoked one is still refused: run again after a
    # re-setup under the same name, it would take the new device.
    again = revoker("revoke", "--db", registry.db, "--user", user, "--name", "iPad", "--force", check=4)
    assert "(revoked, last seen" in again.stderr and "(active, last seen" in again.stderr
    revoker("revoke", "--db", registry.db, "--device", f"{user}#{devices[1]['device_id']}", "--force", check=0)
    assert registry.active() == {devices[0]["device_id"]}
    # Every iPad revoked: the same name revokes nothing more, and says so.
    done = revoker("revoke", "--db", registry.db, "--user", user, "--name", "ipad", "--force", check=0)
    assert done.stdout.startswith("nothing to revoke")
    revoker("revoke", "--db", registry.db, "--user", user, "--name", "Watch", "--force", check=4)
    # The list a parent sees: name, type, state and last seen, in words.
    listing = revoker("devices", "--db", registry.db, "--user", user, check=0).stdout
    assert "Alice's iPhone" in listing and "2 minutes ago" in listing and listing.count("revoked") == 2
    # The log records a revocation by name as one, with the user (a trial: "devices (1 listed)",
    # as if someone had listed them); the name itself is the app's text, not recorded.
    revoker("revoke", "--db", registry.db, "--user", user, "--name", "alice's iphone", "--force", "--batch-id", "by-name", check=0)
    logged = [json.loads(line) for line in revoker("log", "--db", registry.db, "--batch", "by-name", "--json", check=0).stdout.splitlines()]
    assert [entry["selector"] for entry in logged] == [f"devices by name of user {user} (1 matched)"], logged


def test_init_remembers_the_schema(tmp_path):
    path = str(tmp_path / "r.sqlite")
    revoker("init", "--db", path, "--schema", "family-medical", check=0)
    revoker("init", "--db", path, check=0)
    refused = revoker("init", "--db", path, "--schema", "catbird", check=4)
    assert "Family Medical" in refused.stderr
    catbird = str(tmp_path / "c.sqlite")
    revoker("init", "--db", catbird, check=0)
    revoker("init", "--db", catbird, "--schema", "family-medical", check=4)
    assert "unknown" not in revoker("init", "--db", str(tmp_path / "x.sqlite"), "--schema", "family-medical", check=0).stderr
    revoker("init", "--db", str(tmp_path / "y.sqlite"), "--schema", "medical", check=64)


@pytest.mark.parametrize("bad", ["0000000Z-0000-4000-8000-000000000000", "not-a-uuid", "{00000000-0000-4000-8000-000000000000}"])
@pytest.mark.parametrize("side", ["user", "device"])
def test_a_devices_file_line_whose_id_is_no_uuid_is_named_by_its_line(make_registry, tmp_path, bad, side):
    """A hostile trial: a malformed UUID deep in a large export was refused without its line,
    where a line without '#' in the same file was named; support could not find it."""
    devices = family(random.Random(3), users=4)
    registry = make_registry(devices)
    active = [d for d in devices if d["is_active"]]
    good = f"{active[0]['user_id']}#{active[0]['device_id']}"
    broken = f"{bad}#{active[1]['device_id']}" if side == "user" else f"{active[1]['user_id']}#{bad}"
    (tmp_path / "list.txt").write_text(f"{good}\n# a comment\n\n{broken}\n")
    before = registry.table()
    refused = revoker("revoke", "--db", registry.db, "--devices-file", str(tmp_path / "list.txt"), "--dry-run", check=2)
    assert "devices file line 4: " in refused.stderr and "is not a UUID" in refused.stderr, refused.stderr
    assert registry.table() == before


def imported_registry(tmp_path, names):
    db = str(tmp_path / "names.sqlite")
    revoker("init", "--db", db, "--schema", "family-medical", check=0)
    user = "11111111-1111-4111-8111-111111111111"
    lines = [json.dumps({"device_id": f"aaaaaaaa-0000-4000-8000-{index:012d}", "user_id": user, "device_name": name}) for index, name in enumerate(names)]
    (tmp_path / "devices.jsonl").write_text("\n".join(lines) + "\n")
    return db, user, revoker("import", "--db", db, "--devices", str(tmp_path / "devices.jsonl"))


@pytest.mark.parametrize("name", ["\u00ad", "\u200b", "\u200b\u200d", " \u00ad ", "\u3164", "\ufeff", "\u2060\u00a0", "\U00013430", "\u200e\u2028", "Kitchen iPad\\u{202e}", "\\u{41}", "Kitchen \uff3cu{202e}"])
def test_a_name_that_names_nothing_or_imitates_an_escape_is_refused_at_import(tmp_path, name):
    """A trial: a name of only a soft hyphen (or a zero-width space) was imported, and no
    `--name` could then pick that device (a name read so is no name); a name typed with
    `\\u{202e}` listed as the one holding U+202E. Both are refused by line (exit 2), nothing
    imported."""
    db, _, result = imported_registry(tmp_path, ["Kitchen iPad", name])
    assert result.returncode == 2 and "line 2: device_name " in result.stderr, result.stderr
    assert sqlite3.connect(db).execute("SELECT count(*) FROM user_devices").fetchone()[0] == 0


@pytest.mark.parametrize("typed", ["strasse", "STRASSE MAC", "straße", "ｍａｃ", "Strasse  Mac", "8000-000000000000"])
def test_match_reads_a_name_as_name_reads_it(tmp_path, typed):
    """A trial: "Straße Mac" was found by `--name "STRASSE MAC"` and not by `--match strasse`:
    support searching as it picks found nothing. `--match` reads a name as `--name` does (any
    case, spacing and width), and an id in any case."""
    db, user, result = imported_registry(tmp_path, ["Straße Mac", "Kitchen iPad"])
    assert result.returncode == 0, result.stderr
    listed = revoker("devices", "--db", db, "--match", typed, "--json", check=0)
    assert [d["deviceName"] for d in json.loads(listed.stdout)] == ["Straße Mac"], listed.stdout


@pytest.mark.parametrize("typed", [" ", "\u00ad", "\u200b "])
def test_match_of_what_reads_as_nothing_finds_no_name(tmp_path, typed):
    """A trial: `--match " "` (or a soft hyphen) read as nothing, and so as part of every named
    device, and listed them all. Text that reads as nothing is part of no name."""
    db, user, result = imported_registry(tmp_path, ["Straße Mac", "Kitchen iPad"])
    assert result.returncode == 0, result.stderr
    listed = revoker("devices", "--db", db, "--match", typed, "--json", check=0)
    assert json.loads(listed.stdout) == [], listed.stdout


@pytest.mark.parametrize("schema", ["family-medical", "catbird"])
@pytest.mark.parametrize("operator", ["", " ", "\u200b", "\u00ad\u200d", "\x1b[31m", "ops\nforged", "a\u2028b", "\t", "\u0301", " \u0301\u20dd ",
                                      "\ue000", "\u0378", "\uffff", "alice\\u{202e}", "Support) x (", "a  b", " alice", "alice "])
def test_an_operator_that_names_nobody_is_refused_and_nothing_is_logged(tmp_path, operator, schema):
    """A trial: `--operator ""`, a space or a zero-width space was logged as who ran the batch
    (the log's "by" blank) and `log --verify` said ok. A usage error (64), on both schemas,
    before the registry changes; a name anyone reads is taken."""
    db = str(tmp_path / "r.sqlite")
    revoker("init", "--db", db, "--schema", schema, check=0)
    if schema == "family-medical":
        user, device = "11111111-1111-4111-8111-111111111111", "aaaaaaaa-0000-4000-8000-000000000001"
        rows = [{"device_id": device, "user_id": user, "device_name": "iPad"}, {"device_id": "aaaaaaaa-0000-4000-8000-000000000002", "user_id": user, "device_name": "iPhone"}]
    else:
        user, device = "did:plc:family", "ipad"
        rows = [{"user_did": user, "device_id": name, "device_name": name, "device_mls_did": f"{user}#{name}", "signature_public_key": secrets.token_hex(32)} for name in ("ipad", "iphone")]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    revoker("import", "--db", db, "--devices", str(tmp_path / "d.jsonl"), check=0)
    before = (tmp_path / "r.sqlite").read_bytes()
    refused = revoker("revoke", "--db", db, "--device", f"{user}#{device}", "--reason", "lost", "--operator", operator, "--force")
    assert refused.returncode == 64 and "--operator" in refused.stderr and "\x1b" not in refused.stderr, (refused.returncode, refused.stderr)
    assert (tmp_path / "r.sqlite").read_bytes() == before
    # The batch's id names it in the same log: the same rule.
    refused = revoker("revoke", "--db", db, "--device", f"{user}#{device}", "--reason", "lost", "--batch-id", operator, "--force")
    assert refused.returncode == 64 and "--batch-id" in refused.stderr, (refused.returncode, refused.stderr)
    assert (tmp_path / "r.sqlite").read_bytes() == before
    taken = revoker("revoke", "--db", db, "--device", f"{user}#{device}", "--reason", "lost", "--operator", "Zoë (support)", "--force", check=0)
    assert "Zoë (support)" in revoker("log", "--db", db, check=0).stdout, taken.stderr
