"""Registry commands that change things do only what a person meant (issue 37), on both engines.

Seeded random registries are imported with the tool and read back with independent clients
(Python's sqlite3, psycopg): a cutoff date in the future is refused; a batch over the share of
active devices is refused at one device past the threshold and allowed exactly at it; a wrong
--expect-revocations is refused even with --force; import refuses ids the selectors cannot
address and values that cannot be true, naming the line and the field, and imports nothing; an
empty list file is an error, unlike a batch already done; a real run's --json names exactly the
devices the database now has revoked.
"""
import json
import os
import random
import secrets
import shlex
import sqlite3
import subprocess
import unicodedata

import psycopg
import pytest

from workspace import DEVICE_REVOKER

NOW = "2026-11-22T10:00:00Z"
ENGINES = ["sqlite", "postgres"]


class Registry:
    """A fresh registry on one engine: its --db, and an independent reader."""

    def __init__(self, engine, folder):
        self.engine = engine
        if engine == "sqlite":
            self.db = str(folder / "r.sqlite")
            self.name = None
        else:
            assert os.environ.get("HVT_TEST_PGHOST"), "needs the throwaway PostgreSQL server that scripts/test starts"
            self.host, self.port = os.environ["HVT_TEST_PGHOST"], os.environ["HVT_TEST_PGPORT"]
            self.user = os.environ.get("HVT_TEST_PGUSER", "hvt")
            self.name = f"t_{secrets.token_hex(6)}"
            with psycopg.connect(host=self.host, port=self.port, user=self.user, dbname="postgres", autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {self.name}")
            self.db = f"postgresql:///{self.name}?host={self.host}&port={self.port}&user={self.user}"
        succeeds("init", "--db", self.db)

    def rows(self, sql):
        if self.engine == "sqlite":
            with sqlite3.connect(self.db) as connection:
                return connection.execute(sql).fetchall()
        with psycopg.connect(host=self.host, port=self.port, user=self.user, dbname=self.name) as connection:
            return connection.execute(sql).fetchall()

    def value(self, sql):
        return self.rows(sql)[0][0]

    def execute(self, sql, parameters):
        """A write as the app makes it, beside the tool (SQLite's `?` placeholders)."""
        if self.engine == "sqlite":
            with sqlite3.connect(self.db) as connection:
                connection.execute(sql, parameters)
            return
        with psycopg.connect(host=self.host, port=self.port, user=self.user, dbname=self.name) as connection:
            connection.execute(sql.replace("?", "%s"), parameters)

    def active(self):
        return {(u, d) for u, d in self.rows("SELECT user_did, device_id FROM user_devices WHERE is_active")}

    def snapshot(self):
        """Everything a revocation or an import could change."""
        return (sorted(self.rows("SELECT user_did, device_id, is_active, revocation_reason FROM user_devices")),
                sorted(self.rows("SELECT convo_id, member_mls_did, left_at IS NULL FROM members")),
                self.value("SELECT count(*) FROM revocations"))

    def drop(self):
        if self.name:
            with psycopg.connect(host=self.host, port=self.port, user=self.user, dbname="postgres", autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")


@pytest.fixture(params=ENGINES)
def registry(request, tmp_path):
    made = Registry(request.param, tmp_path)
    yield made
    made.drop()


def tool(*arguments):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run([DEVICE_REVOKER, "registry", *arguments], capture_output=True, text=True, env=environment,
                          stdin=subprocess.DEVNULL)


def succeeds(*arguments):
    result = tool(*arguments)
    assert result.returncode == 0, f"{arguments}: {result.stderr}"
    return result


def random_registry(registry, folder, seed, users=None):
    """Imports a seeded random registry: users with 1 to 6 devices each, seen at random days of
    2024 and 2025 (one in eight never), one in ten already revoked, each device in a few of a
    pool of conversations. Returns the device rows."""
    rng = random.Random(seed)
    users = users or rng.randint(40, 90)
    devices, members = [], []
    for u in range(users):
        user = f"did:plc:{rng.choice(['josh', 'alice', 'bob', 'maya'])}{u}"
        for k in range(rng.randint(1, 6)):
            device = f"d{k}-{rng.getrandbits(24):06x}"
            row = {"user_did": user, "device_id": device, "device_mls_did": f"{user}#{device}", "signature_public_key": secrets.token_hex(32),
                   "registered_at": "2024-01-01T00:00:00Z", "key_packages_available": rng.randint(0, 5)}
            if rng.random() > 0.125:
                row["last_seen"] = f"{rng.choice([2024, 2025])}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
            if rng.random() < 0.1:
                row.update(is_active=False, revoked_at="2025-06-01T00:00:00Z", revocation_reason="old")
            devices.append(row)
            for c in rng.sample(range(30), rng.randint(0, 3)):
                members.append({"convo_id": f"c{c}", "member_mls_did": f"{user}#{device}", "user_did": user, "device_id": device,
                                "joined_at": "2024-02-01T00:00:00Z", "left_at": None if row.get("is_active", True) else "2025-06-01T00:00:00Z",
                                "is_admin": rng.random() < 0.3})
    write_jsonl(folder / "devices.jsonl", devices)
    write_jsonl(folder / "members.jsonl", members)
    succeeds("import", "--db", registry.db, "--devices", str(folder / "devices.jsonl"), "--members", str(folder / "members.jsonl"), "--now", NOW)
    return devices


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def last_sign_of_life(row):
    return row.get("last_seen") or row["registered_at"]


# --- dates ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_a_cutoff_in_the_future_is_refused_and_changes_nothing(registry, tmp_path, seed):
    random_registry(registry, tmp_path, seed)
    before = registry.snapshot()
    rng = random.Random(seed)
    # One second after --now up to two centuries on; the 2205 typo of the report among them.
    for cutoff in ["2026-11-22T10:00:01Z", "2026-11-23", "2205-01-01", f"{rng.randint(2027, 2999)}-{rng.randint(1, 12):02d}-01"]:
        for command in (["revoke", "--not-seen-since", cutoff, "--keep-last-device", "--force"],
                        ["revoke", "--not-seen-since", cutoff, "--dry-run"], ["devices", "--not-seen-since", cutoff]):
            result = tool(command[0], "--db", registry.db, *command[1:], "--now", NOW)
            assert result.returncode == 64, (command, result.stderr)
            assert f"--not-seen-since {cutoff} is in the future (now is {NOW})" in result.stderr
            assert result.stdout == ""
    assert registry.snapshot() == before
    # The cutoff exactly at --now is the latest allowed.
    assert tool("devices", "--db", registry.db, "--not-seen-since", NOW, "--now", NOW).returncode == 0


# --- the share of active devices -----------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_the_share_guard_allows_exactly_the_threshold_and_refuses_one_more(registry, tmp_path, seed):
    rows = random_registry(registry, tmp_path, 100 + seed)
    rng = random.Random(seed)
    active = sorted(registry.active())
    percent = rng.choice(["10", "2.5", "33.33", "5", "12.75"])
    basis_points = round(float(percent) * 100)
    at = basis_points * len(active) // 10000   # the most devices a batch may have
    assert at >= 1
    chosen = rng.sample(active, at + 1)
    over = tmp_path / "over.txt"
    over.write_text("# one too many\n" + "".join(f"{u}#{d}\n" for u, d in chosen))
    before = registry.snapshot()
    # The other guard rails are let through, so only the share can refuse.
    common = ["--db", registry.db, "--max-share", percent, "--now", NOW, "--allow-users-without-device", "--allow-conversations-without-admin"]

    refused = tool("revoke", "--devices-file", str(over), *common)
    assert refused.returncode == 4, refused.stderr
    assert f"the batch would revoke {at + 1} of the registry's {len(active)} active devices (" in refused.stderr
    assert f"more than {percent}%; nothing was changed" in refused.stderr
    assert f"--expect-revocations {at + 1}" in refused.stderr
    # The refusal lists the batch it would revoke, in byte order, as its JSON does.
    listed = refused.stdout.split("would revoke:\n", 1)[1].splitlines()
    assert [line.strip() for line in listed[:at + 1]] == sorted(f"{u}#{d}" for u, d in chosen)
    assert registry.snapshot() == before

    # The dry run says the same, with the numbers in JSON.
    dry = tool("revoke", "--devices-file", str(over), *common, "--dry-run", "--json")
    assert dry.returncode == 4
    report = json.loads(dry.stdout)
    assert (report["devices"], report["activeDevices"], report["applied"], report["overMaxShare"]) == (at + 1, len(active), False, True)
    assert [r["kind"] for r in report["refusals"] if r["kind"] == "tooLarge"] == ["tooLarge"]
    assert {(d["userDid"], d["deviceId"]) for d in report["batchDevices"]} == set(chosen)

    # Exactly at the threshold: revoked.
    exact = tmp_path / "exact.txt"
    exact.write_text("".join(f"{u}#{d}\n" for u, d in chosen[:at]))
    done = tool("revoke", "--devices-file", str(exact), *common, "--json")
    assert done.returncode == 0, done.stderr
    assert registry.active() == set(active) - set(chosen[:at])
    assert json.loads(done.stdout)["refusals"] == [] and json.loads(done.stdout)["overMaxShare"] is False


@pytest.mark.parametrize("seed", range(3))
def test_expect_revocations_lets_the_exact_count_through_and_refuses_any_other(registry, tmp_path, seed):
    rows = random_registry(registry, tmp_path, 200 + seed)
    cutoff = "2025-03-01"
    selected = {(r["user_did"], r["device_id"]) for r in rows if r.get("is_active", True) and last_sign_of_life(r) < cutoff + "T00:00:00Z"}
    assert len(selected) * 10 > len(registry.active()), "the seed should select more than 10%"
    before = registry.snapshot()
    base = ["revoke", "--db", registry.db, "--not-seen-since", cutoff, "--now", NOW, "--force"]
    dry = tool(*base[:-1], "--dry-run", "--json")
    assert dry.returncode == 4 and json.loads(dry.stdout)["devices"] == len(selected)
    for wrong in (len(selected) - 1, len(selected) + 1, 0):
        result = tool(*base, "--expect-revocations", str(wrong))
        assert result.returncode == 4, result.stderr
        assert f"the batch would revoke {len(selected)} devices, not the {wrong} expected; nothing was changed" in result.stderr
        assert registry.snapshot() == before
    # A forced dry run goes ahead, and still says the batch is over the share.
    forced = tool(*base, "--dry-run", "--json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["overMaxShare"] is True and json.loads(forced.stdout)["refusals"] == []
    result = tool(*base, "--expect-revocations", str(len(selected)), "--json")
    assert result.returncode == 0, result.stderr
    assert registry.active() == registry_active_before(before) - selected


def registry_active_before(snapshot):
    return {(u, d) for u, d, active, _ in snapshot[0] if active}


# --- the report of a real run --------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_a_real_runs_json_names_exactly_what_the_database_revoked(registry, tmp_path, seed):
    random_registry(registry, tmp_path, 300 + seed)
    active_before = registry.active()
    result = tool("revoke", "--db", registry.db, "--not-seen-since", "2025-01-01", "--keep-last-device", "--force",
                  "--reason", "stale", "--batch-id", f"T-{seed}", "--now", NOW, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    named = [(d["userDid"], d["deviceId"]) for d in report["batchDevices"]]
    revoked_now = set(registry.rows("SELECT user_did, device_id FROM user_devices WHERE revocation_reason = 'stale'"))
    logged = set(registry.rows(f"SELECT user_did, device_id FROM revocations WHERE batch_id = 'T-{seed}'"))
    assert report["applied"] and report["batchId"] == f"T-{seed}" and report["dryRun"] is False
    assert set(named) == revoked_now == logged == active_before - registry.active()
    assert len(named) == len(set(named)) == report["devices"] > 0
    assert named == sorted(named, key=lambda p: (p[0].encode(), p[1].encode()))
    assert report["activeDevices"] == len(active_before)

    # In words, every device revoked is named, one a line.
    again = tmp_path / "again.txt"
    again.write_text("".join(f"{u}#{d}\n" for u, d in sorted(registry.active())[:3]))
    text = tool("revoke", "--db", registry.db, "--devices-file", str(again), "--force", "--now", NOW)
    assert text.returncode == 0, text.stderr
    after = text.stdout.split("\nrevoked:\n", 1)[1].splitlines()
    listed = [line[2:] for line in after[:next((i for i, line in enumerate(after) if not line.startswith("  ")), len(after))]]
    assert listed == sorted(again.read_text().split())


@pytest.mark.parametrize("order", ["as listed", "reversed", "by device, last first", "shuffled"])
def test_a_lists_order_changes_nothing_but_the_lines_it_names(registry, tmp_path, order):
    """SQLite looks a list's devices up sorted by the table's key (docs/performance.md): the
    same entries in any order take the same devices and close the same memberships, count the
    same repeats, revoked and unknown devices, and name each unknown entry by its own line."""
    devices = random_registry(registry, tmp_path, 77, users=40)
    active = [d for d in devices if d.get("is_active", True)]
    inactive = [d for d in devices if not d.get("is_active", True)][:2]
    ref = lambda d: f"{d['user_did']}#{d['device_id']}"  # noqa: E731
    unknown = [f"{active[0]['user_did']}#nowhere-{n}" for n in (1, 2)]
    entries = [ref(d) for d in active[:15]] + [ref(active[4]), ref(active[9])] + [ref(d) for d in inactive] + unknown
    if order == "reversed":
        entries.reverse()
    elif order == "by device, last first":
        entries.sort(key=lambda e: e.split("#")[1], reverse=True)
    elif order == "shuffled":
        random.Random(5).shuffle(entries)
    (tmp_path / "list.txt").write_text("\n".join(entries) + "\n")
    taken = {(d["user_did"], d["device_id"]) for d in active[:15]}
    open_before = set(registry.rows("SELECT convo_id, member_mls_did FROM members WHERE left_at IS NULL"))
    result = tool("revoke", "--db", registry.db, "--devices-file", str(tmp_path / "list.txt"), "--batch-id", "bag",
                  "--allow-unmatched", "--force", "--now", NOW, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["devices"], report["alreadyRevoked"], report["notFound"]) == (15, 2, 2)
    assert {(d["userDid"], d["deviceId"]) for d in report["batchDevices"]} == taken
    assert sorted(entry["where"] for entry in report["unmatched"]) == sorted(f"devices file line {entries.index(u) + 1}" for u in unknown)
    assert registry.active() == {(d["user_did"], d["device_id"]) for d in active} - taken
    closed = open_before - set(registry.rows("SELECT convo_id, member_mls_did FROM members WHERE left_at IS NULL"))
    assert closed == {(c, m) for c, m in open_before if tuple(m.split("#", 1)) in taken}
    assert set(registry.rows("SELECT user_did, device_id FROM revocations WHERE batch_id = 'bag'")) == taken


def test_a_revocation_by_name_is_logged_as_one(registry, tmp_path):
    """`revoke --user U --name N` is recorded as the devices a name matched among U's, not as a
    list someone gave (a trial: "devices (1 listed)"); a list given by --device still is."""
    rows = [{"user_did": "did:plc:josh", "device_id": device, "device_mls_did": f"did:plc:josh#{device}", "device_name": name,
             "signature_public_key": secrets.token_hex(32), "registered_at": "2024-01-01T00:00:00Z"}
            for device, name in [("d1", "Kitchen iPad"), ("d2", "Josh's iPhone"), ("d3", "Hall iPad")]]
    succeeds("import", "--db", registry.db, "--devices", str(write_jsonl(tmp_path / "devices.jsonl", rows)), "--now", NOW)
    succeeds("revoke", "--db", registry.db, "--user", "did:plc:josh", "--name", "kitchen ipad", "--reason", "lost", "--batch-id", "by-name", "--force", "--now", NOW)
    succeeds("revoke", "--db", registry.db, "--device", "did:plc:josh#d3", "--reason", "lost", "--batch-id", "by-list", "--force", "--now", NOW)
    logged = {entry["batchId"]: entry for entry in map(json.loads, succeeds("log", "--db", registry.db, "--json").stdout.splitlines())}
    assert logged["by-name"]["selector"] == "devices by name of user did:plc:josh (1 matched)" and logged["by-name"]["deviceId"] == "d1", logged
    assert logged["by-list"]["selector"] == "devices (1 listed)", logged
    succeeds("log", "--db", registry.db, "--verify")


ALIKE = {
    # Names that differ only in case or spacing, which a listing shows alike or a person says alike.
    "spacing": ("Kitchen iPad", "kitchen ipad ", ["kitchen ipad", "Kitchen iPad", "KITCHEN  IPAD", "kitchen ipad "]),
    # Lower-casing is not case folding: ß and SS, a final sigma (a trial: one of each pair was taken).
    "sharp s": ("Straße iPad", "STRASSE IPAD", ["strasse ipad", "Straße iPad"]),
    "final sigma": ("ΟΔΟΣ", "οδος", ["οδος", "ΟΔΟΣ", "Οδος"]),
    "full width": ("Hall iPad", "ＨＡＬＬ ｉＰａｄ", ["hall ipad"]),
    # Characters that show as nothing (a zero-width space, a word joiner, a soft hyphen), which a
    # listing shows escaped but a person reading the name does not say (a trial: matched apart).
    "invisible": ("Den iPad", "Den\u200b iPad", ["den ipad", "Den\u2060 iPad", "Den iP\u00adad", "\ufeffden ipad"]),
}


@pytest.mark.parametrize("case", ALIKE)
def test_names_a_listing_shows_alike_are_refused_as_ambiguous(registry, tmp_path, case):
    """Two active devices whose names differ only in case or spacing ("Kitchen iPad" and
    "kitchen ipad " with a trailing space, which `registry devices` shows alike, "Straße" and
    "STRASSE"): a name typed as either is refused (exit 4) naming both ids, nothing changed (a
    trial: "kitchen ipad" silently took one, an exact match first)."""
    first, second, typings = ALIKE[case]
    rows = [{"user_did": "did:plc:josh", "device_id": device, "device_mls_did": f"did:plc:josh#{device}", "device_name": name,
             "signature_public_key": secrets.token_hex(32), "registered_at": "2024-01-01T00:00:00Z"}
            for device, name in [("d0", first), ("d1", second), ("d2", "Josh's iPhone"), ("d3", "   ")]]
    succeeds("import", "--db", registry.db, "--devices", str(write_jsonl(tmp_path / "devices.jsonl", rows)), "--now", NOW)
    before = registry.snapshot()
    for typed in typings:
        refused = tool("revoke", "--db", registry.db, "--user", "did:plc:josh", "--name", typed, "--reason", "lost", "--force", "--now", NOW)
        assert refused.returncode == 4, (typed, refused.stderr)
        assert "did:plc:josh#d0" in refused.stderr and "did:plc:josh#d1" in refused.stderr, (typed, refused.stderr)
    # A blank name names no device, not even the one the app left blank (a trial: an unset
    # shell variable revoked it).
    for blank in ["", " ", "\t", "\u00a0", "\u200b", " \u2060\u200d ", "\ufeff", "\u3164", "\u2800"]:
        refused = tool("revoke", "--db", registry.db, "--user", "did:plc:josh", "--name", blank, "--reason", "lost", "--force", "--now", NOW)
        assert refused.returncode == 64 and "empty or only spaces" in refused.stderr, (blank, refused.stderr)
    assert registry.snapshot() == before


def test_with_ops_on_standard_output_the_report_goes_to_standard_error(registry, tmp_path):
    random_registry(registry, tmp_path, 7)
    user, device = sorted(registry.active())[0]
    result = tool("revoke", "--db", registry.db, "--device", f"{user}#{device}", "--force", "--ops", "-", "--now", NOW)
    assert result.returncode == 0, result.stderr
    assert all(json.loads(line)["op"] == "mls.remove" for line in result.stdout.splitlines())
    assert result.stderr.startswith("revoked (batch ") and f"revoked:\n  {user}#{device}\n" in result.stderr
    refused = tool("revoke", "--db", registry.db, "--device", f"{user}#{device}", "--ops", "-", "--json")
    assert refused.returncode == 64 and "--json and --ops - would both write to standard output" in refused.stderr


# --- list files ----------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "\n\n", "# nothing here\n   \n# still nothing\n", "\t\n#did:plc:x#y\n"])
@pytest.mark.parametrize("option", ["--devices-file", "--signature-keys-file"])
def test_an_empty_list_file_is_an_error_not_a_batch_already_done(registry, tmp_path, content, option):
    random_registry(registry, tmp_path, 11)
    (tmp_path / "list.txt").write_text(content)
    before = registry.snapshot()
    result = tool("revoke", "--db", registry.db, option, str(tmp_path / "list.txt"), "--force", "--now", NOW)
    assert result.returncode == 2, result.stderr
    assert "list.txt' lists nothing: it has only blank lines and comments" in result.stderr
    assert registry.snapshot() == before
    # A batch already done is not an error: it says so and exits 0.
    user, device = sorted(registry.active())[0]
    (tmp_path / "done.txt").write_text(f"{user}#{device}\n")
    assert tool("revoke", "--db", registry.db, "--devices-file", str(tmp_path / "done.txt"), "--force").returncode == 0
    again = tool("revoke", "--db", registry.db, "--devices-file", str(tmp_path / "done.txt"), "--force")
    assert again.returncode == 0 and again.stdout.startswith("nothing to revoke")


# --- import --------------------------------------------------------------------------------

# (field, value, what the refusal says): ids the selectors cannot address, then values that
# cannot be true.
HOSTILE = [
    ("device_id", "ipad#2", "device_id contains '#'"),
    ("device_id", "", "device_id is empty"),
    ("device_id", "   ", "device_id is only white space"),
    ("device_id", " ipad", "device_id starts or ends with white space"),
    ("device_id", "ipad\u00a0", "device_id starts or ends with white space"),
    ("device_id", "ip\x1bad", "device_id contains a control character"),
    ("device_id", "ip\nad", "device_id contains a control character"),
    ("device_id", "ip\u0085ad", "device_id contains a control character"),
    ("user_did", "", "user_did is empty"),
    ("user_did", "#did:plc:x", "user_did starts with '#'"),
    ("user_did", "did:plc:x\u2003", "user_did starts or ends with white space"),
    ("user_did", "did:plc:\x7fx", "user_did contains a control character"),
    # Shown in every plan and report: nothing that breaks a line or turns text around.
    ("device_id", "ip\u2028ad", "device_id contains an invisible or line-breaking character"),
    ("user_did", "did:plc:\u202ex", "user_did contains an invisible or line-breaking character"),
    ("device_id", "ip\u200bad", "device_id contains an invisible or line-breaking character"),
    ("key_packages_available", -1, "key_packages_available is negative"),
    ("key_packages_available", 2**31, "key_packages_available is larger than 2147483647"),
    ("revoked_at", "2025-01-01T00:00:00Z", "revoked_at is set on an active device"),
    ("revocation_reason", "lost", "revocation_reason is set on an active device"),
    ("last_seen", "2026-11-24T10:00:00Z", "last_seen is in the future"),
    ("last_seen", "2023-01-01T00:00:00Z", "last_seen is before registered_at"),
    ("registered_at", "2205-01-01T00:00:00Z", "registered_at is in the future"),
]


@pytest.mark.parametrize("field,value,says", HOSTILE, ids=[f"{h[0]}-{i}" for i, h in enumerate(HOSTILE)])
def test_import_refuses_what_the_selectors_cannot_address_or_cannot_be_true(registry, tmp_path, field, value, says):
    random_registry(registry, tmp_path, 5, users=10)
    before = registry.snapshot()
    rng = random.Random(field + repr(value))
    rows = [{"user_did": f"did:plc:new{i}", "device_id": f"n{i}", "device_mls_did": f"did:plc:new{i}#n{i}",
             "signature_public_key": secrets.token_hex(32), "registered_at": "2024-01-01T00:00:00Z"} for i in range(rng.randint(3, 30))]
    line = rng.randrange(len(rows))
    rows[line][field] = value
    write_jsonl(tmp_path / "new.jsonl", rows)
    result = tool("import", "--db", registry.db, "--devices", str(tmp_path / "new.jsonl"), "--now", NOW)
    assert result.returncode == 2, result.stderr
    assert f"new.jsonl' line {line + 1}: {says}" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr
    assert registry.snapshot() == before


@pytest.mark.parametrize("field,value,says", [
    ("device_id", "a#b", "device_id contains '#'"), ("user_did", " did:plc:x", "user_did starts or ends with white space"),
    # A conversation's id is held to the ids' rule (it held ESC, U+2028 and U+202E).
    ("convo_id", "c\x1b[2J", "convo_id contains a control character"), ("convo_id", "c\u2028x", "convo_id contains an invisible or line-breaking character"),
    ("convo_id", "c\u202ex", "convo_id contains an invisible or line-breaking character"), ("convo_id", "", "convo_id is empty"),
    ("left_at", "2024-01-01T00:00:00Z", "left_at is before joined_at"), ("joined_at", "2205-01-01T00:00:00Z", "joined_at is in the future"),
])
def test_import_refuses_such_memberships_too(registry, tmp_path, field, value, says):
    random_registry(registry, tmp_path, 6, users=10)
    before = registry.snapshot()
    user, device = sorted(registry.active())[0]
    row = {"convo_id": "new", "member_mls_did": f"{user}#{device}", "user_did": user, "device_id": device, "joined_at": "2024-02-01T00:00:00Z"}
    row[field] = value
    write_jsonl(tmp_path / "m.jsonl", [row])
    result = tool("import", "--db", registry.db, "--members", str(tmp_path / "m.jsonl"), "--now", NOW)
    assert result.returncode == 2 and f"m.jsonl' line 1: {says}" in result.stderr, result.stderr
    assert registry.snapshot() == before


@pytest.mark.parametrize("member", ["another device", "another user", "no device", "decomposed"])
def test_a_membership_names_its_own_device_byte_for_byte(registry, tmp_path, member):
    """A hostile trial: a membership whose member_mls_did was another user's device was imported,
    and revoking its own device then wrote an mls.remove of the innocent one. A membership names
    the MLS DID the server gives its device, USER_DID#DEVICE_ID, byte for byte; so does a device
    (an é decomposed is another member to the app)."""
    random_registry(registry, tmp_path, 9, users=6)
    before = registry.snapshot()
    active = sorted(registry.active())
    user, device = next(pair for pair in active if sum(p[0] == pair[0] for p in active) > 1)
    other = next(pair for pair in active if pair[0] == user and pair != (user, device)) if member == "another device" else \
        next(pair for pair in active if pair[0] != user)
    named = {"another device": f"{other[0]}#{other[1]}", "another user": f"{other[0]}#{other[1]}", "no device": f"{user}#{device}x",
             "decomposed": unicodedata.normalize("NFD", f"{user}#{device}")}[member]
    if member == "decomposed":
        # Ids that decompose: a device and its membership both written so.
        user, device = "did:plc:jos\u00e9", "caf\u00e9"
        named = unicodedata.normalize("NFD", f"{user}#{device}")
        write_jsonl(tmp_path / "d.jsonl", [{"user_did": user, "device_id": device, "device_mls_did": named, "signature_public_key": "abcd"}])
        result = tool("import", "--db", registry.db, "--devices", str(tmp_path / "d.jsonl"), "--now", NOW)
        assert result.returncode == 2 and "d.jsonl' line 1: device_mls_did should be" in result.stderr, result.stderr
        assert registry.snapshot() == before
        return
    write_jsonl(tmp_path / "m.jsonl", [{"convo_id": "new", "member_mls_did": named, "user_did": user, "device_id": device, "joined_at": "2024-02-01T00:00:00Z"}])
    result = tool("import", "--db", registry.db, "--members", str(tmp_path / "m.jsonl"), "--now", NOW)
    assert result.returncode == 2 and "m.jsonl' line 1: member_mls_did should be" in result.stderr, result.stderr
    assert registry.snapshot() == before


@pytest.mark.parametrize("reference,says", [
    ("did:plc:josh#", "the device id is empty"), ("#ipad", "the user DID is empty"), ("did:plc:josh", "there is no '#'"),
    ("did:plc:josh#ip\x1bad", "the device id contains a control character"),
])
def test_the_selector_refuses_what_import_refuses(registry, tmp_path, reference, says):
    random_registry(registry, tmp_path, 8, users=5)
    result = tool("revoke", "--db", registry.db, "--device", reference, "--dry-run")
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert "\x1b" not in result.stderr


@pytest.mark.parametrize("command", [
    ["init"], ["import", "--devices", "devices.jsonl"], ["devices"], ["revoke", "--user", "did:plc:a", "--dry-run"],
    ["members", "--convo", "c"], ["rejoin-plan", "--device", "did:plc:a#d"], ["log"],
])
@pytest.mark.parametrize("db", ["-", ""])
def test_db_is_neither_a_stream_nor_empty(tmp_path, command, db):
    """`--db -` once made a database file named '-' (and `--db ''` was reported as an output):
    every registry command refuses both as a usage error, and makes nothing."""
    (tmp_path / "devices.jsonl").write_text("")
    result = subprocess.run([DEVICE_REVOKER, "registry", command[0], "--db", db, *command[1:]], cwd=tmp_path,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 64, result.stderr
    says = "cannot be standard input or output" if db == "-" else "--db is empty"
    assert result.stderr.startswith("device-revoker: error: --db ") and says in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["devices.jsonl"]


def no_registry_hint(tmp_path, db_arguments):
    """The command the hint of `registry devices` on a missing registry says to run: all that
    follows its colon, pasted as it is (a hostile trial: the hint put quotes around a command
    that quoted its own path, and `x $(touch PWNED).sqlite` ran `touch` when pasted)."""
    result = subprocess.run([DEVICE_REVOKER, "registry", "devices", *db_arguments], cwd=tmp_path,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 1, result.stderr
    prefix, suffix = "device-revoker: hint: make one with: ", "\n"
    hint = result.stderr.splitlines(keepends=True)[-1]
    assert hint.startswith(prefix) and hint.endswith(suffix), result.stderr
    return hint[len(prefix):-len(suffix)]


def run_in_shell(command, tmp_path):
    """`command` run by /bin/sh as pasted, with this build's device-revoker."""
    made = subprocess.run(["/bin/sh", "-c", command.replace("device-revoker", shlex.quote(DEVICE_REVOKER), 1)], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert made.returncode == 0, made.stderr


@pytest.mark.parametrize("name", ["plain.sqlite", "my registry.sqlite", "it's.sqlite", "a'\u0301b $(touch pwned) `x`.sqlite", "x;y&z.sqlite"])
def test_the_no_registry_hint_is_a_command_the_shell_reads_back(tmp_path, name):
    """The hint's `init` command quotes --db as a shell reads it back (shlex, then a real
    shell): a path with a blank, a quote (one followed by a combining mark, one Character
    with it) or `$(…)` once came out unquoted. A plain path stays bare, as it was."""
    command = no_registry_hint(tmp_path, ["--db", name])
    assert shlex.split(command) == ["device-revoker", "registry", "init", "--db", name]
    if name == "plain.sqlite":
        assert command.endswith("--db plain.sqlite")
    run_in_shell(command, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_db_starting_with_a_dash_stays_the_value_of_db_in_the_hint(tmp_path):
    """A registry named `-r.sqlite` (given as --db=-r.sqlite): the hint's command gives it back
    as --db=-r.sqlite, where `--db -r.sqlite` was itself a usage error (missing value for
    '--db'), and the command it names makes the registry."""
    command = no_registry_hint(tmp_path, ["--db=-r.sqlite"])
    assert shlex.split(command) == ["device-revoker", "registry", "init", "--db=-r.sqlite"]
    run_in_shell(command, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["-r.sqlite"]


def test_a_committed_batchs_hint_is_a_command_the_shell_reads_back(tmp_path):
    """A batch committed whose report could not be written (standard output closed) says how to
    see it: --db and --batch-id quoted as a shell reads them back, where --db was put in quotes
    unescaped (a name with a quote broke the command) and --batch-id not quoted at all."""
    db, batch = "it's a reg.sqlite", "my batch $(x)"
    device = {"signature_public_key": "0001", "last_seen": "2025-01-01T00:00:00Z", "registered_at": "2024-01-01T00:00:00Z"}
    lines = [dict(device, user_did=f"did:plc:{u}", device_id="d1", device_mls_did=f"did:plc:{u}#d1") for u in "ab"]
    (tmp_path / "devices.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for command in (["init"], ["import", "--devices", "devices.jsonl"]):
        subprocess.run([DEVICE_REVOKER, "registry", command[0], "--db", db, *command[1:]], cwd=tmp_path, check=True, capture_output=True)
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([DEVICE_REVOKER, "registry", "revoke", "--db", db, "--device", "did:plc:a#d1", "--force",
                                 "--batch-id", batch, "--now", NOW], cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert result.returncode == 1 and "is committed, but its report could not be written" in result.stderr, result.stderr
    prefix = "device-revoker: hint: see the batch with: "
    command = result.stderr.splitlines()[-1]
    assert command.startswith(prefix), result.stderr
    command = command[len(prefix):]
    assert shlex.split(command) == ["device-revoker", "registry", "log", "--db", db, "--batch", batch]
    seen = subprocess.run(["/bin/sh", "-c", command.replace("device-revoker", shlex.quote(DEVICE_REVOKER), 1)], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert seen.returncode == 0 and "did:plc:a#d1" in seen.stdout, seen.stderr


def test_a_batch_id_is_shown_escaped_in_the_revoke_summary(registry, tmp_path):
    """--batch-id is kept as given, and shown like every other untrusted text: the summary's
    first line printed it raw ("revoked (batch T-1<U+202E><U+2028><ESC>[2J…)": a cleared screen,
    text turned around), where `registry log` escaped it (a hostile trial). A control or
    line-breaking character names no batch and is refused (64), as an operator's is."""
    devices = random_registry(registry, tmp_path, 41, users=8)
    active = next(d for d in devices if d.get("is_active", True))
    for refused in ("T-1\u202e\u2028\x1b[2Jx", "T-1\x1b[2J", "T-1\u2028x"):
        result = tool("revoke", "--db", registry.db, "--device", f"{active['user_did']}#{active['device_id']}", "--force", "--ops", str(tmp_path / "ops.jsonl"),
                      "--batch-id", refused, "--now", NOW)
        assert result.returncode == 64 and "--batch-id" in result.stderr and not (tmp_path / "ops.jsonl").exists(), result.stderr
        assert not any(c in result.stderr for c in "\x1b\u202e\u2028"), repr(result.stderr)
    batch = "T-1\u202ex"
    result = tool("revoke", "--db", registry.db, "--device", f"{active['user_did']}#{active['device_id']}", "--force", "--ops", str(tmp_path / "ops.jsonl"),
                  "--batch-id", batch, "--now", NOW)
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        assert not any(c in stream for c in "\x1b\u202e\u2028"), repr(stream)
    assert "revoked (batch T-1\\u{202e}x)" in result.stdout, result.stdout


def test_a_revocation_removes_only_the_revoked_devices_own_member_whatever_a_row_of_the_apps_says(registry, tmp_path):
    """The review of the import's rule: the app writes its own rows (PostgreSQL), and a row
    whose member_mls_did names another device's would have had that innocent device removed
    when this one was revoked. The operation names the revoked device's own MLS DID."""
    random_registry(registry, tmp_path, 11, users=6)
    active = sorted(registry.active())
    user, device = next(pair for pair in active if sum(p[0] == pair[0] for p in active) > 1)
    innocent = next(pair for pair in active if pair[0] != user)
    registry.execute("INSERT INTO members (convo_id, member_mls_did, user_did, device_id, joined_at, is_admin) VALUES (?, ?, ?, ?, ?, ?)",
                     ("forged-convo", f"{innocent[0]}#{innocent[1]}", user, device, "2024-02-01T00:00:00Z", False))
    result = succeeds("revoke", "--db", registry.db, "--device", f"{user}#{device}", "--reason", "lost", "--force", "--ops", str(tmp_path / "ops.jsonl"),
                      "--now", NOW)
    operations = [json.loads(line) for line in (tmp_path / "ops.jsonl").read_text().splitlines()]
    assert operations and {op["member"] for op in operations} == {f"{user}#{device}"}, (operations, result.stderr)
    assert any(op["convo"] == "forged-convo" for op in operations)
