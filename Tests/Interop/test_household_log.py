"""The signed household log (issue 46, docs/vault-format.md §10) against a Nostr library that is
not ours: rust-nostr (PyPI nostr-sdk) verifies every event's id and signature, and the chain's
rules are written here again from the document. Random households and random sequences of
actions by the parent and by granted, expired, withdrawn and ungranted support keys; every
tampering tried against `log verify`; each writer's event; the rotation's hand-over.
"""
import hashlib
import json
import os
import random
import shutil
import subprocess

import coincurve
import nostr_sdk
import pytest
from vaultref import Household, nip19_decode, nip19_encode, open_envelope, reveal_document
from workspace import BIN, FIXTURES

KIND = 4801
ACTIONS = {"start", "seal", "migrate", "revoke", "merge", "device", "rotate", "grant", "withdraw"}
PARENT_ONLY = {"start", "seal", "migrate", "rotate", "grant", "withdraw"}
PARENT = Household(nip19_decode((FIXTURES / "keys" / "parent.nsec").read_text().strip(), "nsec"))


def tool(name, *arguments, cwd):
    return subprocess.run([str(BIN / name), *arguments], capture_output=True, text=True, errors="replace", cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def reference_verify(log_text: str, household_hex: str, vault: bytes):
    """The first bad event's line (1-based), or None when the whole log holds: each event
    verified by rust-nostr, each rule of §10.3 checked here."""
    grants = {}
    previous = None
    lines = log_text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        return len(lines)  # the last line does not end in a newline: cut off mid-write
    if not lines:
        return 1
    for number, line in enumerate(lines, 1):
        try:
            event = nostr_sdk.Event.from_json(line)
            raw = json.loads(line)
        except Exception:
            return number
        if not event.verify() or set(raw) != {"id", "pubkey", "created_at", "kind", "tags", "content", "sig"}:
            return number

        def tag(name):
            return next((t[1:] for t in raw["tags"] if t and t[0] == name), None)

        if raw["kind"] != KIND or tag("h") != [household_hex]:
            return number
        if previous is None:
            if tag("prev") is not None:
                return number
        elif tag("prev") != [previous["id"]] or raw["created_at"] < previous["created_at"] or previous["action"] == "rotate":
            return number
        action = (tag("action") or [None])[0]
        vault_tag = tag("vault")
        if action not in ACTIONS or not vault_tag or len(vault_tag) != 2 or len(vault_tag[0]) != 64 or not vault_tag[1].isdigit():
            return number
        if vault_tag[0] != vault_tag[0].lower():
            return number
        if action == "revoke" and not any(t and t[0] == "device" for t in raw["tags"]) and tag("dropped") is None:
            return number
        devices = [t[1:] for t in raw["tags"] if t and t[0] == "device"]
        if any(len(d) != 1 or not d[0] for d in devices) or len({d[0] for d in devices if d}) != len(devices):
            return number
        dropped = tag("dropped")
        if dropped is not None and (len(dropped) != 1 or len(dropped[0]) != 64 or dropped[0] != dropped[0].lower()
                                    or any(c not in "0123456789abcdef" for c in dropped[0])):
            return number
        if not vault_tag[1].isdigit() or str(int(vault_tag[1])) != vault_tag[1]:
            return number
        # A change naming the vault before it changed nothing: it may only give an event up.
        changed_nothing = previous is not None and action not in {"grant", "withdraw"} and vault_tag[0] == previous["vault"][0]
        if changed_nothing and (dropped is None or devices):
            return number
        if action == "device":
            change = [t[1:] for t in raw["tags"] if t and t[0] == "change"]
            if len(change) != 1 or change[0] not in (["add"], ["promote"], ["rename"], ["limit"]):
                return number
            if not changed_nothing and len(devices) != (0 if change[0] == ["limit"] else 1):
                return number
        if previous is None and action not in {"start", "seal", "migrate"}:
            return number
        if action in {"grant", "withdraw"} and previous is not None and vault_tag != previous["vault"]:
            return number
        is_parent = hashlib.sha256(raw["pubkey"].encode()).hexdigest() == household_hex
        if not is_parent:
            if action == "device" and tag("change") == ["add"]:
                return number
            if action in PARENT_ONLY or not any(g["key"] == raw["pubkey"] and not g["withdrawn"] and action in g["actions"]
                                                and raw["created_at"] < g["until"] for g in grants.values()):
                return number
        if action == "grant":
            allowed, until = tag("allow"), tag("until")
            if not tag("p") or not allowed or any(a not in ACTIONS - PARENT_ONLY for a in allowed) or not until or int(until[0]) <= raw["created_at"]:
                return number
            grants[raw["id"]] = {"key": tag("p")[0], "actions": set(allowed), "until": int(until[0]), "withdrawn": False}
        if action == "withdraw":
            target = (tag("e") or [None])[0]
            if target not in grants or grants[target]["withdrawn"]:
                return number
            grants[target]["withdrawn"] = True
        previous = {"id": raw["id"], "created_at": raw["created_at"], "action": action, "vault": vault_tag}
    if previous["vault"][0] != hashlib.sha256(vault).hexdigest():
        return len(lines)
    return None


def sign_event(secret: bytes, created_at: int, tags, content: str) -> str:
    """A NIP-01 event made and signed here (coincurve's BIP-340), for forgeries."""
    pubkey = coincurve.PrivateKey(secret).public_key_xonly.format().hex()
    serialized = json.dumps([0, pubkey, created_at, KIND, tags, content], separators=(",", ":"), ensure_ascii=False)
    event_id = hashlib.sha256(serialized.encode()).digest()
    sig = coincurve.PrivateKey(secret).sign_schnorr(event_id, os.urandom(32))
    return json.dumps({"id": event_id.hex(), "pubkey": pubkey, "created_at": created_at, "kind": KIND, "tags": tags,
                       "content": content, "sig": sig.hex()}, separators=(",", ":"), ensure_ascii=False)


def tool_broken_line(result):
    """The event `log verify` named as the first bad one, or None when it passed."""
    if result.returncode == 0:
        return None
    assert result.returncode == 3, result.stderr
    marker = "at event "
    assert marker in result.stderr, result.stderr
    after = result.stderr.split(marker, 1)[1]
    return int(after[:len(after) - len(after.lstrip("0123456789"))])


def new_key(folder, name):
    made = tool("vault-tool", "keygen", "-o", name, cwd=folder)
    assert made.returncode == 0, made.stderr
    secret = nip19_decode((folder / name).read_text().strip(), "nsec")
    return secret, next(word for word in made.stderr.split() if word.startswith("npub1"))


@pytest.fixture
def fleet(tmp_path):
    made = tool("vault-tool", "sample-fleet", "--households", "3", "--out-dir", "fleet", "--schema-version", "3", "--now", "2026-01-01T00:00:00Z",
                cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    return tmp_path


FAR = 10 ** 9  # a grant's end far ahead of every recorded day and of the clock


def day(n):
    return f"2026-01-{1 + n // 24:02d}T{n % 24:02d}:00:00Z" if n < 24 * 31 else f"2026-02-{1 + (n - 24 * 31) // 24:02d}T{n % 24:02d}:00:00Z"


def test_random_actions_by_parent_and_support_keys_give_a_log_rust_nostr_and_the_reference_verify(fleet):
    rng = random.Random(46)
    for key_path in sorted((fleet / "fleet" / "keys").iterdir()):
        household_hex = key_path.stem
        parent = Household(nip19_decode(key_path.read_text().strip(), "nsec"))
        folder = fleet / household_hex[:8]
        folder.mkdir()
        shutil.copy(key_path, folder / "parent.nsec")
        (folder / "h.vault").write_bytes((fleet / "fleet" / "vaults" / f"{household_hex}.vault").read_bytes())
        (folder / "h.log").write_bytes((fleet / "fleet" / "vaults" / f"{household_hex}.log").read_bytes())
        (folder / "vk").write_text(parent.vault_key.hex() + "\n")
        os.chmod(folder / "vk", 0o600)
        agents = [new_key(folder, f"agent{i}.nsec") for i in range(3)]
        grants = []  # (agent index, until hour, withdrawn)
        signers = [parent.pubkey]
        hour = 1
        for step in range(10):
            hour += rng.randint(1, 30)
            document = open_envelope((folder / "h.vault").read_bytes(), parent.vault_key)
            active = [d for d in document["devices"] if d["status"] == "active" and not d["isPrimary"]]
            choice = rng.choice(["grant", "withdraw", "agent", "agent", "parent"] if active else ["grant", "withdraw"])
            if choice == "grant":
                agent = rng.randrange(3)
                # A grant that ends within the recorded days has run out by the clock too (these
                # days are in the past): a --now in the past does not revive it.
                far = rng.random() < 0.5
                until = FAR if far else hour + rng.randint(1, 60)
                result = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", agents[agent][1], "--allow", "revoke",
                              "--until", "2099-01-01" if far else day(until), "--now", day(hour), "h.vault", cwd=folder)
                assert result.returncode == 0, result.stderr
                # The same grant still in force is not recorded twice.
                if far and any(g[0] == agent and g[1] == FAR and not g[2] for g in grants):
                    assert "already holds this grant" in result.stderr, result.stderr
                    continue
                grants.append([agent, until, False])
                signers.append(parent.pubkey)
            elif choice == "withdraw":
                live = [g for g in grants if not g[2]]
                if not live:
                    continue
                agent = live[0][0]
                result = tool("vault-tool", "log", "withdraw", "--key-file", "parent.nsec", "--grant", agents[agent][1], "--now", day(hour),
                              "h.vault", cwd=folder)
                assert result.returncode == 0, result.stderr
                # Every grant of that key still in force is withdrawn, one event each.
                for grant in grants:
                    if grant[0] == agent and not grant[2]:
                        grant[2] = True
                        signers.append(parent.pubkey)
            else:
                device = rng.choice(active)
                if choice == "parent":
                    who, key_options, expected = parent.pubkey, ["--key-file", "parent.nsec"], True
                else:
                    agent = rng.randrange(3)
                    who = coincurve.PrivateKey(agents[agent][0]).public_key_xonly.format().hex()
                    key_options = ["--vault-key-file", "vk", "--signer-key-file", f"agent{agent}.nsec"]
                    expected = any(g[0] == agent and not g[2] and g[1] == FAR for g in grants)
                before = (folder / "h.log").read_bytes()
                result = tool("device-revoker", "vault", *key_options, "--vault", "h.vault", "--device", device["deviceId"], "--now", day(hour),
                              "-o", "next.vault", cwd=folder)
                if expected:
                    assert result.returncode == 0, (step, result.stderr)
                    os.replace(folder / "next.vault", folder / "h.vault")
                    os.replace(folder / "next.log", folder / "h.log")
                    signers.append(who)
                else:
                    assert result.returncode == 4 and "may not revoke" in result.stderr, (step, result.stderr)
                    assert not (folder / "next.vault").exists() and not (folder / "next.log").exists()
                    assert (folder / "h.log").read_bytes() == before
        log_text = (folder / "h.log").read_text()
        assert reference_verify(log_text, household_hex, (folder / "h.vault").read_bytes()) is None
        assert [json.loads(line)["pubkey"] for line in log_text.splitlines()] == signers
        verified = tool("vault-tool", "log", "verify", "h.vault", cwd=folder)
        assert verified.returncode == 0, verified.stderr
        checked = tool("vault-tool", "check", "--vault-key-file", "vk", "--log", "h.log", "h.vault", cwd=folder)
        assert checked.returncode == 0, (checked.stdout, checked.stderr)
        shown = tool("vault-tool", "log", "show", "--json", "h.vault", cwd=folder)
        assert [e["role"] for e in json.loads(shown.stdout)] == ["parent" if s == parent.pubkey else "support" for s in signers]


@pytest.fixture
def signed(tmp_path):
    """The testkit's v3 household with a log: started, a grant, a support revocation, the grant withdrawn."""
    for name in ("parent.nsec", "parent.vaultkey"):
        shutil.copy(FIXTURES / "keys" / name, tmp_path / name)
        os.chmod(tmp_path / name, 0o600)
    (tmp_path / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    assert tool("vault-tool", "log", "start", "--key-file", "parent.nsec", "--now", "2026-01-01T00:00:00Z", "h.vault", cwd=tmp_path).returncode == 0
    agent, npub = new_key(tmp_path, "agent.nsec")
    assert tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", npub, "--allow", "revoke", "--until", "2027-01-01",
                "--now", "2026-01-02T00:00:00Z", "h.vault", cwd=tmp_path).returncode == 0
    result = tool("device-revoker", "vault", "--vault-key-file", "parent.vaultkey", "--signer-key-file", "agent.nsec", "--vault", "h.vault",
                  "--device", "bedroom ipad", "--now", "2026-01-03T00:00:00Z", "-o", "next.vault", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    os.replace(tmp_path / "next.vault", tmp_path / "h.vault")
    os.replace(tmp_path / "next.log", tmp_path / "h.log")
    withdrawn = tool("vault-tool", "log", "withdraw", "--key-file", "parent.nsec", "--grant", npub, "--now", "2026-01-04T00:00:00Z", "h.vault",
                     cwd=tmp_path)
    assert withdrawn.returncode == 0, withdrawn.stderr
    return tmp_path, agent


def tamperings(lines, agent):
    """Each tampering of a four-event log, by name: the lines it leaves."""
    events = [json.loads(line) for line in lines]
    stranger = os.urandom(32)

    def edit(index, **changes):
        event = dict(events[index], **changes)
        return lines[:index] + [json.dumps(event, separators=(",", ":"), ensure_ascii=False)] + lines[index + 1:]

    def resigned(index, secret, tags=None, content=None):
        event = events[index]
        return lines[:index] + [sign_event(secret, event["created_at"], tags or event["tags"], content if content is not None else event["content"])] + lines[index + 1:]

    grant_tags = [t if t[0] != "until" else ["until", "4102444800"] for t in events[1]["tags"]]
    earlier_vault = next(t for t in events[1]["tags"] if t[0] == "vault")
    return {
        "content edited": edit(3, content="revoked nothing"),
        "time edited": edit(2, created_at=events[2]["created_at"] + 1),
        "signature of another event": edit(3, sig=events[2]["sig"]),
        "tags edited": edit(2, tags=events[2]["tags"] + [["reason", "forged"]]),
        "support event re-signed by a stranger": resigned(2, stranger),
        "withdrawal re-signed by the support key": resigned(3, agent),
        "grant re-signed by the support key": resigned(1, agent),
        "grant extended, re-signed by the support key": resigned(1, agent, tags=grant_tags),
        "two events swapped": [lines[0], lines[2], lines[1], lines[3]],
        "an event deleted": [lines[0], lines[2], lines[3]],
        "the first event deleted": lines[1:],
        "the last two deleted": lines[:2],
        "an event repeated": lines[:3] + [lines[2], lines[3]],
        "a line that is no event": lines[:2] + ["{\"hello\": 1}"] + lines[2:],
        # A hostile trial's: a support event that names no device, or its digest in upper case.
        "revocation naming no device": resigned(2, agent, tags=[t for t in events[2]["tags"] if t[0] != "device"]),
        "digest in upper case": resigned(2, agent, tags=[t if t[0] != "vault" else ["vault", t[1].upper(), t[2]] for t in events[2]["tags"]]),
        "a device named empty": resigned(2, agent, tags=[t if t[0] != "device" else ["device", ""] for t in events[2]["tags"]]),
        "a device named twice": resigned(2, agent, tags=events[2]["tags"] + [t for t in events[2]["tags"] if t[0] == "device"]),
        "revision with a leading zero": resigned(2, agent, tags=[t if t[0] != "vault" else ["vault", t[1], "0" + t[2]] for t in events[2]["tags"]]),
        # A second trial's: a support revocation that changed nothing (the vault before it), a
        # device named or not, giving an event up or not.
        "revocation repeating the vault before it": resigned(2, agent, tags=[t if t[0] != "vault" else earlier_vault for t in events[2]["tags"]]),
        "revocation repeating the vault, giving an event up": resigned(
            2, agent, tags=[t if t[0] != "vault" else earlier_vault for t in events[2]["tags"]] + [["dropped", os.urandom(32).hex()]]),
        "revocation repeating the vault, naming nothing": resigned(
            2, agent, tags=[t for t in events[2]["tags"] if t[0] != "device" and t[0] != "vault"] + [earlier_vault]),
    }


def test_every_tampering_is_found_at_its_first_bad_event_by_the_tool_and_the_reference(signed):
    folder, agent = signed
    lines = (folder / "h.log").read_text().splitlines()
    assert len(lines) == 4
    vault = (folder / "h.vault").read_bytes()
    household = open_envelope(vault, PARENT.vault_key)
    household_hex = PARENT.household_id.hex()
    assert reference_verify("\n".join(lines) + "\n", household_hex, vault) is None
    for name, tampered in tamperings(lines, agent).items():
        (folder / "t.log").write_text("\n".join(tampered) + "\n")
        result = tool("vault-tool", "log", "verify", "--log", "t.log", "h.vault", cwd=folder)
        expected = reference_verify("\n".join(tampered) + "\n", household_hex, vault)
        assert expected is not None, name
        assert tool_broken_line(result) == expected, (name, result.stderr)
        # check with the log given says the same.
        checked = tool("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "--log", "t.log", "h.vault", cwd=folder)
        assert checked.returncode == 3 and f"at event {expected}" in checked.stderr + checked.stdout, (name, checked.stdout, checked.stderr)
    # A vault changed without its event: an older copy, another household's vault.
    (folder / "old.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    shutil.copy(folder / "h.log", folder / "old.log")
    result = tool("vault-tool", "log", "verify", "old.vault", cwd=folder)
    assert tool_broken_line(result) == reference_verify((folder / "h.log").read_text(), household_hex, (folder / "old.vault").read_bytes()) == 4
    assert household["version"] == 3


@pytest.mark.parametrize("named", ["its id", "its id in lower case", "its name", "its id and a space", "no device's id", "the right one, at revision 99"])
def test_a_revocation_the_vault_does_not_hold_is_found_by_a_check_that_opens_the_vault(signed, named):
    """Two trials: a support key signed, with Nostr code of its own, a `revoke` naming a device
    the vault still holds as active (by its id, in another case, by its name), or no device at
    all, or at a revision the vault is not at, and `log show` told the family it was revoked.
    Public keys alone cannot see inside the vault (`log verify` holds), but `check --log` with a
    key that opens it names the event (exit 3), in text and JSON; the log as the tools wrote it
    is no finding."""
    folder, agent = signed
    lines = (folder / "h.log").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    document = open_envelope((folder / "h.vault").read_bytes(), PARENT.vault_key)
    active = next(d for d in document["devices"] if d["status"] == "active")
    device = {"its id": active["deviceId"], "its id in lower case": active["deviceId"].lower(), "its name": active["deviceName"],
              "its id and a space": active["deviceId"] + " ", "no device's id": "4A1B2C3D-0000-4000-8000-00000000ABCD"}.get(named)
    tags = events[2]["tags"] + ([["device", device]] if device else [])
    if named == "the right one, at revision 99":
        tags = [t if t[0] != "vault" else ["vault", t[1], "99"] for t in tags]
    forged = sign_event(agent, events[2]["created_at"], tags, events[2]["content"])
    (folder / "t.log").write_text("\n".join(lines[:2] + [forged]) + "\n")
    assert reference_verify((folder / "t.log").read_text(), PARENT.household_id.hex(), (folder / "h.vault").read_bytes()) is None
    verified = tool("vault-tool", "log", "verify", "--log", "t.log", "h.vault", cwd=folder)
    assert verified.returncode == 0, verified.stderr
    found = "revision 99" if device is None else ("which the vault holds as active" if named == "its id" else "no device of the vault has that id")
    for key in (["--vault-key-file", "parent.vaultkey"], ["--key-file", "parent.nsec"]):
        checked = tool("vault-tool", "check", *key, "--log", "t.log", "h.vault", cwd=folder)
        assert checked.returncode == 3, (checked.stdout, checked.stderr)
        assert "at event 3" in checked.stdout and found in checked.stdout, checked.stdout
        reported = tool("vault-tool", "check", *key, "--json", "--log", "t.log", "h.vault", cwd=folder)
        assert reported.returncode == 3
        log = json.loads(reported.stdout)["log"]
        assert log["ok"] is False and found in log["problem"], log
    # What the event names beside its sentence is shown.
    shown = tool("vault-tool", "log", "show", "--json", "--log", "t.log", "h.vault", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)[2]["devices"] == [t[1] for t in tags if t[0] == "device"]
    kept = tool("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "--log", "h.log", "h.vault", cwd=folder)
    assert kept.returncode == 0, (kept.stdout, kept.stderr)


def test_each_writer_appends_one_event_signed_by_whoever_made_the_change(tmp_path):
    folder = tmp_path
    for name in ("parent.nsec", "parent.vaultkey"):
        shutil.copy(FIXTURES / "keys" / name, folder / name)
        os.chmod(folder / name, 0o600)
    (folder / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())

    def actions(log):
        return [[t[1] for t in json.loads(line)["tags"] if t[0] == "action"][0] for line in (folder / log).read_text().splitlines()]

    def verifies(vault):
        result = tool("vault-tool", "log", "verify", vault, cwd=folder)
        assert result.returncode == 0, result.stderr
        log = vault[:-len(".vault")] + ".log"
        assert reference_verify((folder / log).read_text(), PARENT.household_id.hex(), (folder / vault).read_bytes()) is None

    # A migration to 3 begins the log; a migration in place that changes nothing adds nothing.
    assert tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "h.vault", "v2.vault", cwd=folder).returncode == 0
    assert actions("h.log") == ["migrate"]
    verifies("h.vault")
    assert not (folder / "v2.log").exists()
    # An edit: open, change, seal over the vault; the seal is appended to its log.
    assert tool("vault-tool", "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "edit.json", "h.vault", cwd=folder).returncode == 0
    sealed = tool("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "h.vault", "edit.json", cwd=folder)
    assert sealed.returncode == 0, sealed.stderr
    assert actions("h.log") == ["migrate", "seal"]
    verifies("h.vault")
    # A revocation and a merge of two copies.
    shutil.copy(folder / "h.vault", folder / "base.vault")
    shutil.copy(folder / "h.log", folder / "base.log")
    revoked = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "bedroom ipad", "-o", "ours.vault",
                   cwd=folder)
    assert revoked.returncode == 0, revoked.stderr
    assert actions("ours.log") == ["migrate", "seal", "revoke"]
    merged = tool("vault-tool", "merge", "--key-file", "parent.nsec", "--base", "base.vault", "--ours", "ours.vault", "--theirs", "base.vault",
                  "-o", "merged.vault", cwd=folder)
    assert merged.returncode == 0, merged.stderr
    assert actions("merged.log") == ["migrate", "seal", "revoke", "merge"]
    verifies("merged.vault")
    # Back to 2: no log is written for a vault that has none.
    assert tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "2", "-o", "down.vault", "merged.vault", cwd=folder).returncode == 0
    assert not (folder / "down.log").exists()
    # A schema 3 vault on standard output has nowhere for its log: refused, nothing written.
    out = subprocess.run([str(BIN / "device-revoker"), "vault", "--key-file", "parent.nsec", "--vault", "merged.vault", "--device", "kitchen",
                          "--promote", "x", "-o", "-"], capture_output=True, cwd=folder, timeout=60)
    assert out.returncode != 0 and out.stdout == b""


def test_the_rotation_hands_over_from_both_ends_and_the_old_key_cannot_sign_after_it(tmp_path):
    folder = tmp_path
    for name in ("parent.nsec",):
        shutil.copy(FIXTURES / "keys" / name, folder / name)
        os.chmod(folder / name, 0o600)
    (folder / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    assert tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "h.vault", "v2.vault", cwd=folder).returncode == 0
    new_secret, _ = new_key(folder, "new.nsec")
    new = Household(new_secret)
    planned = tool("rotation-planner", "plan", "--mode", "compromise", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec",
                   "-o", "plan.json", cwd=folder)
    assert planned.returncode == 0, planned.stderr
    applied = tool("rotation-planner", "apply", "plan.json", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec",
                   "--out-dir", "rotated", "--ops", "ops.jsonl", cwd=folder)
    assert applied.returncode == 0, applied.stderr
    old_vault, new_vault = folder / "rotated" / PARENT.vault_path, folder / "rotated" / new.vault_path
    old_log = [json.loads(line) for line in old_vault.with_suffix(".log").read_text().splitlines()]
    new_log = [json.loads(line) for line in new_vault.with_suffix(".log").read_text().splitlines()]
    assert reference_verify(old_vault.with_suffix(".log").read_text(), PARENT.household_id.hex(), old_vault.read_bytes()) is None
    assert reference_verify(new_vault.with_suffix(".log").read_text(), new.household_id.hex(), new_vault.read_bytes()) is None
    # The old log ends with the move, signed by the old key, naming the successor and its vault.
    rotate = old_log[-1]
    assert rotate["pubkey"] == PARENT.pubkey and ["action", "rotate"] in rotate["tags"]
    assert ["successor", new.household_id.hex(), hashlib.sha256(new_vault.read_bytes()).hexdigest()] in rotate["tags"]
    # The new one begins signed by the new key, naming the old log's last event before the move.
    first = new_log[0]
    assert first["pubkey"] == new.pubkey and ["predecessor", PARENT.household_id.hex(), old_log[-2]["id"]] in first["tags"]
    for name in (old_vault, new_vault):
        assert tool("vault-tool", "log", "verify", str(name), cwd=folder).returncode == 0
    verified = tool("rotation-planner", "verify", "--out-dir", "rotated", "--key-file", "parent.nsec", "--new-key-file", "new.nsec", "--json", cwd=folder)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    checks = {c["name"]: c["passed"] for c in json.loads(verified.stdout)["checks"]}
    assert checks["old-log-ends-with-the-move"] and checks["successor-confirmed-by-new-key"] and checks["new-log-verifies"]
    # A new household's log begun by another key (the old one, say) does not confirm the successor.
    new_log_path = new_vault.with_suffix(".log")
    genuine = new_log_path.read_text()
    forged_start = sign_event(PARENT.secret, first["created_at"], first["tags"], first["content"])
    new_log_path.write_text(forged_start + "\n")
    refused = tool("rotation-planner", "verify", "--out-dir", "rotated", "--key-file", "parent.nsec", "--new-key-file", "new.nsec", "--json", cwd=folder)
    assert refused.returncode == 3
    assert not {c["name"]: c["passed"] for c in json.loads(refused.stdout)["checks"]}["new-log-verifies"]
    new_log_path.write_text(genuine)
    # The old key (the attacker's, after a compromise) cannot sign after the move: a forged event
    # redirecting the household is found.
    forged = sign_event(PARENT.secret, rotate["created_at"] + 1,
                        [["h", PARENT.household_id.hex()], ["prev", rotate["id"]], ["action", "start"],
                         ["vault", hashlib.sha256(old_vault.read_bytes()).hexdigest(), "9"]], "redirected")
    (folder / "forged.log").write_text(old_vault.with_suffix(".log").read_text() + forged + "\n")
    result = tool("vault-tool", "log", "verify", "--log", "forged.log", str(old_vault), cwd=folder)
    assert tool_broken_line(result) == len(old_log) + 1
    revoked = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", str(old_vault), "--device", "kitchen", "--allow-empty",
                   "-o", "after.vault", cwd=folder)
    assert revoked.returncode != 0 and not (folder / "after.vault").exists()


def test_the_worked_example_of_the_format_document_verifies_with_rust_nostr():
    """docs/vault-format.md §10.6: each event's id is the hash of the serialisation shown, its
    signature verifies in rust-nostr, the second follows the first, and the signer is the
    example household's parent."""
    document = (FIXTURES.parents[1] / "docs" / "vault-format.md").read_text()
    block = document.split("<!-- worked-example-log -->\n```\n", 1)[1].split("```", 1)[0]
    lines = block.strip().split("\n")
    events = [json.loads(line) for line in lines]
    assert len(events) == 2 and all(nostr_sdk.Event.from_json(line).verify() for line in lines)
    serialized = document.split("The first event's id is SHA-256 of\n\n    ", 1)[1].split("\n", 1)[0]
    assert hashlib.sha256(serialized.encode()).hexdigest() == events[0]["id"]
    assert json.loads(serialized) == [0, events[0]["pubkey"], events[0]["created_at"], KIND, events[0]["tags"], events[0]["content"]]
    example = Household(nip19_decode((FIXTURES.parents[1] / "Examples" / "household.nsec").read_text().strip(), "nsec"))
    assert events[0]["pubkey"] == example.pubkey and ["h", example.household_id.hex()] in events[0]["tags"]
    assert ["prev", events[0]["id"]] in events[1]["tags"]
    # The chain's rules hold up to the vault, which the example names by its hash.
    assert reference_verify(block, example.household_id.hex(), b"not the vault") == 2
    # The hand-over example: the old key's last event follows the grant and names the successor;
    # the new key's first names the old household and that grant.
    hand_over = document.split("<!-- worked-example-hand-over -->\n```\n", 1)[1].split("```", 1)[0].strip().split("\n")
    rotate, start = [json.loads(line) for line in hand_over]
    assert all(nostr_sdk.Event.from_json(line).verify() for line in hand_over)
    assert rotate["pubkey"] == example.pubkey and ["prev", events[1]["id"]] in rotate["tags"] and ["action", "rotate"] in rotate["tags"]
    successor = next(t for t in rotate["tags"] if t[0] == "successor")
    new = Household(nip19_decode((FIXTURES / "keys" / "other.nsec").read_text().strip(), "nsec"))
    assert successor[1] == new.household_id.hex() and start["pubkey"] == new.pubkey
    assert ["predecessor", example.household_id.hex(), events[1]["id"]] in start["tags"] and ["action", "start"] in start["tags"]
    assert reference_verify(hand_over[1] + "\n", new.household_id.hex(), b"not the vault") == 1
    assert hashlib.sha256(new.pubkey.encode()).hexdigest() == new.household_id.hex()


@pytest.mark.usefixtures("s3_server")
def test_a_change_to_a_schema_3_vault_in_a_bucket_writes_its_log_beside_it_under_compare_and_swap(signed):
    """`vaults/<id>.log` beside `vaults/<id>.vault` in a bucket (§10.1): the parent starts and
    grants in the bucket, the support agent's revocation writes the new vault and its log as two
    objects (each a conditional write: created, never replacing), and the log verifies from the
    bucket, in the tool and in the reference."""
    import s3fleet
    folder, _ = signed
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    vault_key, log_key = f"vaults/{PARENT.household_id.hex()}.vault", f"vaults/{PARENT.household_id.hex()}.log"
    s3.put_object(Bucket=bucket, Key=vault_key, Body=(FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    env = s3fleet.tool_environment()

    def run(*argv):
        return subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, cwd=folder, env=env, timeout=120, stdin=subprocess.DEVNULL)

    assert run("vault-tool", "log", "start", "--key-file", "parent.nsec", "--now", "2026-01-01T00:00:00Z", f"s3://{bucket}/{vault_key}").returncode == 0
    made = run("vault-tool", "keygen", "-o", "agent2.nsec")
    npub = next(word for word in made.stderr.split() if word.startswith("npub1"))
    assert run("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", npub, "--allow", "revoke", "--until", "2099-01-01",
               f"s3://{bucket}/{vault_key}").returncode == 0
    revoked = run("device-revoker", "vault", "--vault-key-file", "parent.vaultkey", "--signer-key-file", "agent2.nsec", "--vault", f"s3://{bucket}/{vault_key}",
                  "--device", "bedroom ipad", "-o", f"s3://{bucket}/vaults/next.vault")
    assert revoked.returncode == 0, revoked.stderr
    log_text = s3.get_object(Bucket=bucket, Key="vaults/next.log")["Body"].read().decode()
    vault = s3.get_object(Bucket=bucket, Key="vaults/next.vault")["Body"].read()
    assert reference_verify(log_text, PARENT.household_id.hex(), vault) is None and len(log_text.splitlines()) == 3
    assert run("vault-tool", "log", "verify", f"s3://{bucket}/vaults/next.vault").returncode == 0
    # The source's log is left as it was (the change went to another object).
    assert len(s3.get_object(Bucket=bucket, Key=log_key)["Body"].read().decode().splitlines()) == 2


def test_a_run_cut_off_after_its_new_log_is_finished_by_running_it_again_and_nobody_elses_log_is_replaced(tmp_path):
    """The log is published before the vault: a migration to 3 cut off between the two leaves a
    one-event log whose vault is not there. The same migration run again begins the log anew
    over it; a log of anything else there is refused, and kept."""
    folder = tmp_path
    for name in ("parent.nsec", "other.nsec"):
        shutil.copy(FIXTURES / "keys" / name, folder / name)
        os.chmod(folder / name, 0o600)
    (folder / "v2.vault").write_bytes((FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes())
    migrate = ["vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "h.vault", "v2.vault"]
    assert tool(*migrate, cwd=folder).returncode == 0
    (folder / "h.vault").unlink()  # as if cut off after the log was published
    again = tool(*migrate, cwd=folder)
    assert again.returncode == 0, again.stderr
    assert tool("vault-tool", "log", "verify", "h.vault", cwd=folder).returncode == 0
    # Someone else's log there (another household's) is not the run's own: refused, kept.
    (folder / "h.vault").unlink()
    other = Household(nip19_decode((folder / "other.nsec").read_text().strip(), "nsec"))
    foreign = sign_event(other.secret, 1_800_000_000, [["h", other.household_id.hex()], ["action", "start"], ["vault", "00" * 32, "1"]], "x")
    (folder / "h.log").write_text(foreign + "\n")
    refused = tool(*migrate, cwd=folder)
    assert refused.returncode == 4 and "already" in refused.stderr and not (folder / "h.vault").exists()
    assert (folder / "h.log").read_text() == foreign + "\n"


@pytest.mark.parametrize("source", [1, 2])
@pytest.mark.parametrize("backup", ["--backup=.bak", "--no-backup"])
def test_a_migration_to_3_in_place_cut_off_at_any_name_it_gives_is_finished_by_running_it_again(tmp_path, source, backup):
    """In place, a migration to 3 names its backup, its new log, then its vault. Killed after the
    log (before the vault is replaced), it left the older vault beside a log that every tool,
    the same migration run again included, refused as a vault put back (exit 3): a run that
    could not be run again to completion. Run again, it begins its own log anew, saying so;
    every reader meanwhile says it may have been cut off; and an older copy of another revision
    put back beside such a log is still refused."""
    folder = tmp_path
    shutil.copy(FIXTURES / "keys" / "parent.nsec", folder / "parent.nsec")
    os.chmod(folder / "parent.nsec", 0o600)
    original = (FIXTURES / "testkit" / "ok-v2-household.vault").read_bytes()
    (folder / "src.vault").write_bytes(original)
    if source == 1:
        made = tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "1", "--allow-lossy", "-o", "v1.vault", "src.vault", cwd=folder)
        assert made.returncode == 0, made.stderr
        original = (folder / "v1.vault").read_bytes()
    clean = tool("vault-tool", "migrate", "--key-file", "parent.nsec", "--to", "3", "-o", "clean.vault", "src.vault" if source == 2 else "v1.vault", cwd=folder)
    assert clean.returncode == 0, clean.stderr

    def values(name):
        return reveal_document(PARENT.secrets_key, open_envelope((folder / name).read_bytes(), PARENT.vault_key))

    expected = values("clean.vault")
    migrate = ["vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "--in-place", backup, "h.vault"]
    naming = "link,linkat,rename,renameat,renameat2"
    cut_beside_log = 0
    for moment in range(1, 5):
        for name in ("h.vault", "h.log", "h.vault.bak"):
            (folder / name).unlink(missing_ok=True)
        (folder / "h.vault").write_bytes(original)
        killed = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={naming}", "-e", f"inject={naming}:signal=KILL:when={moment}",
                                 str(BIN / migrate[0]), *migrate[1:]], capture_output=True, cwd=folder)
        if killed.returncode == 0:
            break  # past the last name it gives
        assert killed.returncode in (-9, 137), killed.stderr.decode()
        left_beside_log = (folder / "h.log").exists() and (folder / "h.vault").read_bytes() == original
        if left_beside_log:
            cut_beside_log += 1
            shown = tool("vault-tool", "inspect", "--key-file", "parent.nsec", "h.vault", cwd=folder)
            assert shown.returncode == 3 and "put back" in shown.stderr and "cut off" in shown.stderr, shown.stderr
            assert "--to 3 --in-place 'h.vault'" in shown.stderr, shown.stderr
        dry = tool(*migrate, "--dry-run", cwd=folder)
        assert dry.returncode == 0, (moment, dry.stderr)
        finished = tool(*migrate, cwd=folder)
        assert finished.returncode == 0, (moment, finished.stderr)
        assert ("begun anew" in finished.stderr) == left_beside_log, finished.stderr
        assert not list(folder.glob(".hvt-*")), sorted(p.name for p in folder.iterdir())
        verified = tool("vault-tool", "log", "verify", "h.vault", cwd=folder)
        assert verified.returncode == 0 and "ok: 1 event" in verified.stdout, (moment, verified.stdout, verified.stderr)
        assert values("h.vault") == expected
        if backup != "--no-backup":
            assert (folder / "h.vault.bak").read_bytes() == original
    assert cut_beside_log == 1
    # An older copy of another revision beside a cut-off migration's log is no part of that run.
    for name in ("h.vault", "h.log", "h.vault.bak"):
        (folder / name).unlink(missing_ok=True)
    (folder / "h.vault").write_bytes(original)
    moment = 3 if backup != "--no-backup" else 2
    killed = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={naming}", "-e", f"inject={naming}:signal=KILL:when={moment}",
                             str(BIN / migrate[0]), *migrate[1:]], capture_output=True, cwd=folder)
    assert killed.returncode in (-9, 137) and (folder / "h.log").exists(), killed.stderr.decode()
    limited = tool("vault-tool", "device", "limit", "--key-file", "parent.nsec", "-o", "other.vault", "src.vault", "9", cwd=folder)
    assert limited.returncode == 0, limited.stderr
    (folder / "h.vault").write_bytes((folder / "other.vault").read_bytes())
    log_before = (folder / "h.log").read_bytes()
    for argv in (migrate, [*migrate, "--dry-run"]):
        refused = tool(*argv, cwd=folder)
        assert refused.returncode == 3 and "put back" in refused.stderr and "cut off" not in refused.stderr, refused.stderr
    assert (folder / "h.log").read_bytes() == log_before and (folder / "h.vault").read_bytes() == (folder / "other.vault").read_bytes()


def test_expect_event_takes_an_id_as_the_notes_print_it(signed):
    folder, _ = signed
    events = [json.loads(line) for line in (folder / "h.log").read_text().splitlines()]
    assert tool("vault-tool", "log", "verify", "--expect-event", events[1]["id"][:12], "--expect-event", events[3]["id"], "h.vault",
                cwd=folder).returncode == 0
    # The withdrawal cut off, with the vault it named (the same: a withdrawal changes no vault).
    (folder / "cut.log").write_text("\n".join((folder / "h.log").read_text().splitlines()[:3]) + "\n")
    cut = tool("vault-tool", "log", "verify", "--log", "cut.log", "--expect-event", events[3]["id"][:12], "h.vault", cwd=folder)
    assert cut.returncode == 3 and "does not hold the event" in cut.stderr
    assert tool("vault-tool", "log", "verify", "--expect-event", "abc", "h.vault", cwd=folder).returncode == 64


@pytest.mark.parametrize("change,signer", [("add", "support"), ("frobnicate", "parent"), (None, "parent"), ("add", "parent"), ("rename", "support")])
def test_a_device_event_says_which_change_and_only_the_parent_adds_a_device(signed, change, signer):
    """A hostile trial appended support-signed `device` events that verified: one adding a
    device (only the parent key may: its subkey derives from it), one of a change no command
    makes, one of none. The tool and the reference hold each to §10.3; the parent's add and a
    support rename under a grant, each naming the vault it made, verify."""
    folder, agent = signed
    _, npub = new_key(folder, "helper.nsec")
    helper = nip19_decode((folder / "helper.nsec").read_text().strip(), "nsec")
    granted = tool("vault-tool", "log", "grant", "--key-file", "parent.nsec", "--to", npub, "--allow", "device", "--until", "2027-01-01",
                   "--now", "2026-01-05T00:00:00Z", "h.vault", cwd=folder)
    assert granted.returncode == 0, granted.stderr
    lines = (folder / "h.log").read_text().splitlines()
    last = json.loads(lines[-1])
    revision = next(t for t in last["tags"] if t[0] == "vault")[2]
    # The vault the change made (a change naming the vault before it changed nothing).
    changed = bytearray((folder / "h.vault").read_bytes())
    changed[-1] ^= 1
    (folder / "x.vault").write_bytes(bytes(changed))
    tags = [["h", PARENT.household_id.hex()], ["prev", last["id"]], ["action", "device"],
            ["vault", hashlib.sha256(changed).hexdigest(), str(int(revision) + 1)]]
    if change:
        tags.append(["change", change])
    tags.append(["device", "4A1B2C3D-0000-4000-8000-000000000001"])
    secret = PARENT.secret if signer == "parent" else helper
    lines.append(sign_event(secret, last["created_at"] + 60, tags, "changed the devices"))
    (folder / "t.log").write_text("\n".join(lines) + "\n")
    result = tool("vault-tool", "log", "verify", "--log", "t.log", "x.vault", cwd=folder)
    expected = reference_verify("\n".join(lines) + "\n", PARENT.household_id.hex(), bytes(changed))
    assert tool_broken_line(result) == expected, result.stderr
    assert expected == (None if (change, signer) in {("add", "parent"), ("rename", "support")} else len(lines))


@pytest.mark.parametrize("change", ["merge", "rename", "revoke", "add"])
def test_a_change_run_again_after_it_finished_says_it_is_done_and_one_killed_before_its_vault_leaves_nothing(signed, change):
    """Run again after it finished, a change to new outputs finds its own event and vault there:
    it says the change is done and keeps both (exit 0: a trial's rerun was exit 4 and never
    wrote the operations it had lost), not that the log is another household's. Killed between
    publishing its log and its vault (as the vault is named), the rerun finishes it and takes
    back the temporary the kill left."""
    folder, _ = signed
    command = {
        "merge": ["vault-tool", "merge", "--key-file", "parent.nsec", "--base", "h.vault", "--ours", "h.vault", "--theirs", "h.vault",
                  "--now", "2026-01-05T00:00:00Z", "-o", "out.vault"],
        "rename": ["vault-tool", "device", "rename", "--key-file", "parent.nsec", "--now", "2026-01-05T00:00:00Z", "-o", "out.vault",
                   "h.vault", "kitchen ipad", "Hall iPad"],
        "revoke": ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "kitchen ipad",
                   "--allow-empty", "--now", "2026-01-05T00:00:00Z", "--ops", "ops.jsonl", "-o", "out.vault"],
        "add": ["vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", "77777777-0000-4000-8000-000000000001", "--name", "Tab",
                "--now", "2026-01-05T00:00:00Z", "--ops", "ops.jsonl", "-o", "out.vault", "h.vault"],
    }[change]
    # The log is named first (after the operations, for a revocation; an addition's come after
    # its vault), then the vault: each a new file, named by link(2) (a replaced one by rename(2)).
    vault_named = 3 if change == "revoke" else 2
    naming = "link,linkat,rename,renameat,renameat2"
    killed = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={naming}", "-e",
                             f"inject={naming}:signal=KILL:when={vault_named}", str(BIN / command[0]), *command[1:]],
                            capture_output=True, cwd=folder)
    assert killed.returncode in (-9, 137), killed.stderr.decode()
    assert (folder / "out.log").exists() and not (folder / "out.vault").exists(), sorted(p.name for p in folder.iterdir())
    finished = tool(*command, cwd=folder)
    assert finished.returncode == 0, finished.stderr
    assert not list(folder.glob(".hvt-*")), sorted(p.name for p in folder.iterdir())
    assert tool("vault-tool", "log", "verify", "out.vault", cwd=folder).returncode == 0
    written = {name: (folder / name).read_bytes() for name in ("out.vault", "out.log")}
    if change in ("revoke", "add"):
        operations = (folder / "ops.jsonl").read_bytes()
        (folder / "ops.jsonl").unlink()  # lost after the run, as a trial lost them
    again = tool(*command, cwd=folder)
    assert again.returncode == 0, again.stderr
    assert "already records this change" in again.stderr and "another household" not in again.stderr, again.stderr
    # Said as the earlier run's change, not this one's (a trial: "added …", as if made now).
    said = {"merge": "an earlier run made this merge; nothing changed", "rename": "an earlier run made this change (renamed",
            "revoke": "an earlier run made this change; nothing changed: it revoked 1 device", "add": "an earlier run made this change (added"}[change]
    assert said in again.stderr, again.stderr
    assert {name: (folder / name).read_bytes() for name in written} == written
    if change in ("revoke", "add"):  # what else the run writes is written again, as it was
        assert (folder / "ops.jsonl").read_bytes() == operations
    if change in ("rename", "add"):  # and the report says this run changed nothing
        reported = tool(*command, "--json", cwd=folder)
        assert reported.returncode == 0, reported.stderr
        assert json.loads(reported.stdout)["unchanged"] is True, reported.stdout
        assert {name: (folder / name).read_bytes() for name in written} == written
    if change != "merge":  # and its dry run says so, as the real run would (a trial: "would have added")
        dry = tool(*command, "--dry-run", cwd=folder)
        assert dry.returncode == 0, dry.stderr
        assert "dry run: an earlier run made this change" in dry.stderr and "would have" not in dry.stderr, dry.stderr
        assert {name: (folder / name).read_bytes() for name in written} == written
        if change != "revoke":
            reported = tool(*command, "--dry-run", "--json", cwd=folder)
            assert json.loads(reported.stdout)["unchanged"] is True, reported.stdout


def another_change(folder, change):
    """Two runs to the same outputs that make two different changes, for
    test_a_rerun_that_makes_another_change_is_refused (made ready in `folder`)."""
    def ok(*command):
        result = tool(*command, cwd=folder)
        assert result.returncode == 0, result.stderr

    for id_, name in [("77777777-0000-4000-8000-000000000001", "Hall iPad"), ("77777777-0000-4000-8000-000000000002", "Den iPad")]:
        ok("vault-tool", "device", "add", "--key-file", "parent.nsec", "--id", id_, "--name", name, "--ops", "adds.jsonl", "--in-place", "h.vault")
    revoke = ["device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--ops", "ops.jsonl", "-o", "out.vault"]
    if change == "reason":
        return [revoke + ["--device", "hall ipad", "--reason", "lost"], revoke + ["--device", "hall ipad", "--reason", "stolen, police report 42"]]
    if change == "promote":
        return [revoke + ["--device", "kitchen ipad", "--promote", "hall ipad"], revoke + ["--device", "kitchen ipad", "--promote", "den ipad"]]
    if change == "theirs":
        ok("vault-tool", "device", "limit", "--key-file", "parent.nsec", "-o", "t1.vault", "h.vault", "5")
        ok("vault-tool", "device", "limit", "--key-file", "parent.nsec", "-o", "t2.vault", "h.vault", "6")
        merge = ["vault-tool", "merge", "--key-file", "parent.nsec", "--base", "h.vault", "--ours", "h.vault", "-o", "out.vault"]
        return [merge + ["--theirs", "t1.vault"], merge + ["--theirs", "t2.vault"]]
    if change == "base":
        # The same two copies over another common base make another vault (a trial: said done).
        ok("vault-tool", "device", "limit", "--key-file", "parent.nsec", "-o", "t1.vault", "h.vault", "6")
        merge = ["vault-tool", "merge", "--key-file", "parent.nsec", "--ours", "h.vault", "--theirs", "t1.vault", "-o", "out.vault"]
        return [merge + ["--base", "h.vault"], merge + ["--base", "t1.vault"]]
    # Two schema 2 vaults of one household, the second with a device revoked: a migration starts
    # a log, whose first event has no earlier one to say what it changed.
    shutil.copy(FIXTURES / "testkit" / "ok-v2-household.vault", folder / "v2.vault")
    ok("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "v2.vault", "--device", "bedroom ipad", "-o", "v2c.vault")
    migrate = ["vault-tool", "migrate", "vault", "--key-file", "parent.nsec", "--to", "3", "-o", "out.vault"]
    return [migrate + ["v2.vault"], migrate + ["v2c.vault"]]


@pytest.mark.parametrize("change", ["reason", "promote", "theirs", "base", "migrate"])
def test_a_rerun_that_makes_another_change_is_refused(signed, change):
    """A second run to the outputs of a first that would make another change (another reason,
    another device promoted, another copy merged or base merged over, another vault migrated) is not the change
    done: a trial's was said to be ("an earlier run made this change", exit 0) and the second
    change was lost. It is refused (exit 4), the first run's vault and log kept as they were."""
    folder, _ = signed
    first, second = another_change(folder, change)
    made = tool(*first, cwd=folder)
    assert made.returncode == 0, made.stderr
    written = {name: (folder / name).read_bytes() for name in ("out.vault", "out.log")}
    again = tool(*second, cwd=folder)
    assert again.returncode == 4, again.stderr
    assert "earlier run" not in again.stderr and "already records this change" not in again.stderr, again.stderr
    assert {name: (folder / name).read_bytes() for name in written} == written
    # The first command itself, run again, is the change done.
    same = tool(*first, cwd=folder)
    expected = 4 if change == "migrate" else 0  # a change that starts a log is never taken for one done
    assert same.returncode == expected, same.stderr
    assert {name: (folder / name).read_bytes() for name in written} == written


@pytest.mark.parametrize("there", ["the-old-vault", "not-a-vault"])
def test_a_log_whose_last_event_was_edited_to_name_another_vault_is_no_change_done(signed, there):
    """A hostile review: a rerun took the log at its output for the record of its own change
    done when only the last event's vault tag matched the file there, its id and signature
    never checked: the old vault (or a file that is no vault) stayed, with exit 0. That log
    must verify first; an edited one is refused as another log is (exit 4), nothing written."""
    folder, _ = signed
    command = ["vault-tool", "device", "rename", "--key-file", "parent.nsec", "--now", "2026-01-05T00:00:00Z", "-o", "out.vault",
               "h.vault", "kitchen ipad", "Hall iPad"]
    assert tool(*command, cwd=folder).returncode == 0
    (folder / "out.vault").write_bytes((folder / "h.vault").read_bytes() if there == "the-old-vault" else b"not a vault at all\n")
    lines = (folder / "out.log").read_text().splitlines()
    last = json.loads(lines[-1])
    digest = hashlib.sha256((folder / "out.vault").read_bytes()).hexdigest()
    last["tags"] = [[tag[0], digest, *tag[2:]] if tag[0] == "vault" else tag for tag in last["tags"]]
    lines[-1] = json.dumps(last, separators=(",", ":"))
    (folder / "out.log").write_text("\n".join(lines) + "\n")
    before = {name: (folder / name).read_bytes() for name in ("out.vault", "out.log")}
    again = tool(*command, cwd=folder)
    assert again.returncode == 4 and "already records this change" not in again.stderr, again.stderr
    assert {name: (folder / name).read_bytes() for name in before} == before


@pytest.mark.parametrize("where", ["content", "reason"])
def test_a_secret_in_a_log_written_by_other_means_is_shown_withheld(signed, where):
    """A hostile trial: the writers keep no secret in a record, but a log signed by other means
    (a parent-signed event whose text held an nsec) verified, and `log show` printed the key.
    What such a log records is shown withheld, in text and JSON."""
    folder, _ = signed
    parent = PARENT.secret
    child = Household(os.urandom(32)).nsec
    lines = (folder / "h.log").read_text().splitlines()
    last = json.loads(lines[-1])
    tags = last["tags"] + ([["reason", f"lost {child}"]] if where == "reason" else [])
    lines[-1] = sign_event(parent, last["created_at"], tags, f"withdrew {child}" if where == "content" else last["content"])
    (folder / "h.log").write_text("\n".join(lines) + "\n")
    for extra in ([], ["--json"]):
        shown = tool("vault-tool", "log", "show", *extra, "h.vault", cwd=folder)
        assert shown.returncode == 0, shown.stderr
        assert child not in shown.stdout + shown.stderr and "not recorded" in shown.stdout, shown.stdout


@pytest.mark.parametrize("vault", ["an earlier copy put back", "the vault it names"])
def test_every_command_that_shows_a_schema_3_vault_says_when_the_log_beside_it_does_not_hold(signed, vault):
    """A trial: `inspect`, `open`, `diff`, `check` and `rotation-planner plan` showed a vault
    changed without a signed event (an earlier copy put back beside its log) without a word;
    only `log verify` and the writers found it. Each now warns, naming the log, and shows the
    vault as before (exit 0; `check` keeps its own findings); the log as the tools wrote it
    draws no warning. `check --log` gives the finding's hint too."""
    folder, _ = signed
    if vault == "an earlier copy put back":
        (folder / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    shutil.copy(folder / "h.vault", folder / "copy.vault")
    new_key(folder, "new.nsec")
    commands = [
        ("vault-tool", "inspect", "h.vault"),
        ("vault-tool", "inspect", "--vault-key-file", "parent.vaultkey", "--json", "h.vault"),
        ("vault-tool", "open", "--vault-key-file", "parent.vaultkey", "h.vault"),
        ("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "h.vault"),
        ("vault-tool", "check", "vault", "--key-file", "parent.nsec", "--json", "h.vault"),
        ("vault-tool", "diff", "--vault-key-file", "parent.vaultkey", "copy.vault", "h.vault"),
        ("vault-tool", "diff", "--key-file", "parent.nsec", "h.vault", "copy.vault"),
        ("rotation-planner", "plan", "--vault", "h.vault", "--key-file", "parent.nsec", "--new-key-file", "new.nsec", "--mode", "routine"),
    ]
    for name, *arguments in commands:
        result = tool(name, *arguments, cwd=folder)
        assert result.returncode == 0, (arguments, result.stderr)
        warned = "the household log 'h.log' does not hold for this vault" in result.stderr
        assert warned == (vault == "an earlier copy put back"), (arguments, result.stderr)
        if warned:
            assert "is broken at event" in result.stderr and "'vault-tool log verify' says more" in result.stderr, result.stderr
    checked = tool("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "--log", "h.log", "h.vault", cwd=folder)
    reported = tool("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "--json", "--log", "h.log", "h.vault", cwd=folder)
    if vault == "an earlier copy put back":
        assert checked.returncode == 3 and "does not hold" not in checked.stderr, (checked.stdout, checked.stderr)
        assert "household log: the household log is broken" in checked.stdout and "  hint: restore the vault the last event names" in checked.stdout, checked.stdout
        log = json.loads(reported.stdout)["log"]
        assert log["ok"] is False and log["hint"].startswith("restore the vault the last event names"), log
    else:
        assert checked.returncode == 0 and "hint" not in checked.stdout, (checked.stdout, checked.stderr)
        assert json.loads(reported.stdout)["log"]["hint"] is None


@pytest.mark.parametrize("theirs_changed", [True, False])
def test_a_merge_says_when_their_copys_log_holds_events_the_merged_log_does_not(signed, theirs_changed):
    """The merged log continues ours; a change made in their copy (a rename, a support
    revocation) is in the merged vault, and its event only in their log (a design choice: the
    merge event names their vault by its SHA-256). A trial: nothing said so. The merge warns,
    naming their log and what its events did, and goes on; a merge of a copy whose log ours
    already holds says nothing."""
    folder, _ = signed
    for name in ("t", "base"):
        shutil.copy(folder / "h.vault", folder / f"{name}.vault")
        shutil.copy(folder / "h.log", folder / f"{name}.log")
    if theirs_changed:
        renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--now", "2026-01-06T00:00:00Z", "--in-place",
                       "t.vault", "kitchen ipad", "Hall iPad", cwd=folder)
        assert renamed.returncode == 0, renamed.stderr
    merged = tool("vault-tool", "merge", "--key-file", "parent.nsec", "--base", "base.vault", "--ours", "h.vault", "--theirs", "t.vault",
                  "-o", "m.vault", cwd=folder)
    assert merged.returncode == 0, merged.stderr
    warned = "their copy's household log 't.log' holds 1 event ours does not (device)" in merged.stderr
    assert warned == theirs_changed, merged.stderr
    assert tool("vault-tool", "log", "verify", "m.vault", cwd=folder).returncode == 0


@pytest.mark.parametrize("spelling", ["hex", "colons", "upper case", "nsec"])
def test_a_given_up_events_sentence_never_prints_the_key_the_run_holds(signed, spelling):
    """A hostile trial: a last event signed by the parent, naming a vault never written, whose
    sentence held the parent key in hex: the change that gave it up quoted the sentence in its
    warning ("yours: …"), key and all. The sentence is now shown as a record names it, and any
    message holding a whole key the run holds has it withheld, in text and JSON logs."""
    folder, _ = signed
    key = PARENT.secret.hex()
    written = {"hex": key, "colons": ":".join(key[i:i + 2] for i in range(0, 64, 2)), "upper case": key.upper(),
               "nsec": (FIXTURES / "keys" / "parent.nsec").read_text().strip()}[spelling]
    lines = (folder / "h.log").read_text().splitlines()
    last = json.loads(lines[-1])
    tags = [["h", PARENT.household_id.hex()], ["prev", last["id"]], ["action", "device"], ["vault", "ab" * 32, "99"],
            ["change", "rename"], ["device", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01"]]
    lines.append(sign_event(PARENT.secret, last["created_at"] + 10, tags, f"renamed with {written} as its name"))
    (folder / "h.log").write_text("\n".join(lines) + "\n")
    for log_format in ([], ["--log-format", "json"]):
        result = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", *log_format, "-o", "o.vault", "h.vault", "kitchen ipad",
                      "Hall iPad", cwd=folder)
        assert result.returncode == 0, result.stderr
        assert "given up" in result.stderr, result.stderr
        digits = "".join(c for c in result.stderr.lower() if c in "0123456789abcdef")
        assert key not in digits and written not in result.stderr, result.stderr
        for name in ("o.vault", "o.log"):
            (folder / name).unlink()


@pytest.mark.parametrize("log", ["past its size", "a directory", "a FIFO", "through a link"])
def test_a_log_that_cannot_be_read_or_is_reached_through_a_link_is_still_said(signed, log):
    """A hostile trial: the warning of a command showing a vault put back was silenced by a log
    padded past 16 MiB, made a directory or a FIFO, or by naming the vault through a symbolic
    link (the log beside the file it leads to, as `log verify` finds it, went unread)."""
    folder, _ = signed
    (folder / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    name = "h.vault"
    if log == "past its size":
        (folder / "h.log").write_bytes(b"a" * (17 << 20))
    elif log == "a directory":
        (folder / "h.log").unlink()
        (folder / "h.log").mkdir()
    elif log == "a FIFO":
        (folder / "h.log").unlink()
        os.mkfifo(folder / "h.log")
    else:
        (folder / "elsewhere").mkdir()
        os.symlink(folder / "h.vault", folder / "elsewhere" / "link.vault")
        name = "elsewhere/link.vault"
    for command in (["vault-tool", "inspect", name], ["vault-tool", "check", "--vault-key-file", "parent.vaultkey", name]):
        result = tool(*command, cwd=folder)
        assert result.returncode == 0, result.stderr
        assert "does not hold for this vault" in result.stderr, result.stderr


def test_a_log_named_elsewhere_does_not_silence_the_one_beside_the_vault(signed):
    """A hostile trial: an earlier vault put back beside its log, changed with exit 0 by naming
    the earlier log (a prefix of the real one) with --log. The log beside must hold too."""
    folder, _ = signed
    (folder / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    (folder / "early.log").write_text((folder / "h.log").read_text().splitlines()[0] + "\n")
    assert tool("vault-tool", "log", "verify", "--log", "early.log", "h.vault", cwd=folder).returncode == 0
    renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--log", "early.log", "-o", "o.vault", "h.vault",
                   "kitchen ipad", "Hall iPad", cwd=folder)
    assert renamed.returncode == 3 and "which --log does not name" in renamed.stderr, renamed.stderr
    assert not (folder / "o.vault").exists()
    revoked = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--log", "early.log", "--vault", "h.vault", "--device",
                   "old ipad", "--ops", "ops.jsonl", "-o", "o.vault", cwd=folder)
    assert revoked.returncode != 0 and not (folder / "o.vault").exists(), revoked.stderr
    # Every writer that takes --log (a second trial: grant, withdraw, seal and a migration down went on).
    npub = json.loads((folder / "h.log").read_text().splitlines()[1])["tags"]
    npub = nip19_encode("npub", bytes.fromhex(next(t[1] for t in npub if t[0] == "p")))
    assert tool("vault-tool", "open", "--key-file", "parent.nsec", "--reveal-secrets", "-o", "doc.json", "h.vault", cwd=folder).returncode == 0
    for command in (["vault-tool", "log", "grant", "--key-file", "parent.nsec", "--log", "early.log", "--to", npub, "--allow", "revoke",
                     "--until", "2027-01-01", "h.vault"],
                    ["vault-tool", "migrate", "--key-file", "parent.nsec", "--log", "early.log", "--to", "2", "--allow-lossy", "-o", "o.vault",
                     "h.vault"],
                    ["vault-tool", "seal", "--key-file", "parent.nsec", "--log", "early.log", "-o", "h.vault", "--force", "doc.json"]):
        before = (folder / "h.vault").read_bytes(), (folder / "early.log").read_bytes()
        refused = tool(*command, cwd=folder)
        assert refused.returncode == 3 and "which --log does not name" in refused.stderr, (command, refused.stderr)
        assert ((folder / "h.vault").read_bytes(), (folder / "early.log").read_bytes()) == before and not (folder / "o.vault").exists()
    checked = tool("vault-tool", "check", "--vault-key-file", "parent.vaultkey", "--log", "early.log", "h.vault", cwd=folder)
    assert "'h.log' does not hold for this vault" in checked.stderr, checked.stderr
    # The put-back vault is named for what it is, and the hint keeps the log.
    verified = tool("vault-tool", "log", "verify", "h.vault", cwd=folder)
    assert verified.returncode == 3 and "it is the one event 2 names (revision 7)" in verified.stderr and "keep this log" in verified.stderr, verified.stderr


def test_a_log_one_event_ahead_beside_the_vault_does_not_block_a_change_through_another_log(signed):
    """A second trial: with a run cut off beside the vault (its log one event ahead, the same
    signer's) and the log named elsewhere, the change was refused with the cut-off run's
    message. That log is left to the run that made it."""
    folder, _ = signed
    shutil.copy(folder / "h.log", folder / "other.log")
    lines = (folder / "h.log").read_text().splitlines()
    last = json.loads(lines[-1])
    tags = [["h", PARENT.household_id.hex()], ["prev", last["id"]], ["action", "device"], ["vault", "cd" * 32, "99"],
            ["change", "rename"], ["device", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01"]]
    lines.append(sign_event(PARENT.secret, last["created_at"] + 10, tags, "renamed Kitchen iPad to Den iPad"))
    (folder / "h.log").write_text("\n".join(lines) + "\n")
    renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--log", "other.log", "-o", "o.vault", "h.vault",
                   "kitchen ipad", "Hall iPad", cwd=folder)
    assert renamed.returncode == 0, renamed.stderr
    assert tool("vault-tool", "log", "verify", "o.vault", cwd=folder).returncode == 0


def test_a_merge_counts_only_a_log_that_holds_for_their_copy(signed):
    """A second trial: their log edited (or another household's) was warned of as broken, then
    recommended as "the record of who made those changes". Only a log that holds is."""
    folder, _ = signed
    for name in ("t", "base"):
        shutil.copy(folder / "h.vault", folder / f"{name}.vault")
        shutil.copy(folder / "h.log", folder / f"{name}.log")
    assert tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--in-place", "t.vault", "kitchen ipad", "Hall iPad",
                cwd=folder).returncode == 0
    lines = (folder / "t.log").read_text().splitlines()
    edited = json.loads(lines[1])
    edited["content"] += " (edited)"
    lines[1] = json.dumps(edited, separators=(",", ":"), ensure_ascii=False)
    (folder / "t.log").write_text("\n".join(lines) + "\n")
    merged = tool("vault-tool", "merge", "--key-file", "parent.nsec", "--base", "base.vault", "--ours", "h.vault", "--theirs", "t.vault",
                  "-o", "m.vault", cwd=folder)
    assert merged.returncode == 0, merged.stderr
    assert "'t.log' does not hold for this vault" in merged.stderr and "ours does not" not in merged.stderr, merged.stderr


@pytest.mark.parametrize("where", ["a line break", "a carriage return"])
def test_a_held_key_split_by_a_character_shown_escaped_is_never_printed(signed, where):
    """A second trial: the parent key in an output's name, split by a line break, was printed
    with the break shown as `\\u{a}`; and `inspect --key-file` of a missing vault named by the
    key printed it, its key not yet read."""
    folder, _ = signed
    key = PARENT.secret.hex()
    split = key[:32] + {"a line break": "\n", "a carriage return": "\r"}[where] + key[32:]
    for log_format in ([], ["--log-format", "json"]):
        result = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", *log_format, "-o", f"nodir-{split}/x.vault", "h.vault",
                      "kitchen ipad", "Hall iPad", cwd=folder)
        assert result.returncode != 0
        digits = "".join(c for c in result.stderr.lower().replace("\\u{a}", "").replace("\\u{d}", "").replace("\\n", "").replace("\\r", "")
                         if c in "0123456789abcdef")
        assert key not in digits, result.stderr
    missing = tool("vault-tool", "inspect", "--key-file", "parent.nsec", f"missing-{key}.vault", cwd=folder)
    assert missing.returncode != 0 and key not in missing.stderr, missing.stderr


def spellings_of(key: bytes):
    """A third hostile trial's spellings of a key that the pattern rules missed."""
    import base64
    digits = key.hex()
    groups = [digits[i:i + 4] for i in range(0, 64, 4)]
    return {"alternating marks": groups[0] + "".join((":" if i % 2 else "-") + g for i, g in enumerate(groups[1:], 1)),
            "four spaces": "    ".join(groups), "base64": base64.b64encode(key).decode(), "url-safe base64": base64.urlsafe_b64encode(key).decode(),
            "a line break": digits[:32] + "\n" + digits[32:]}


@pytest.mark.parametrize("spelling", ["alternating marks", "four spaces", "base64", "url-safe base64", "a line break"])
def test_a_key_in_a_spelling_the_patterns_missed_is_neither_recorded_nor_shown(signed, spelling):
    """A third hostile trial: another key grouped with separators taking turns (or four
    spaces, or in base64) was recorded for good as a device's new name, a reason or a label,
    and `log show` printed such a key from a signed event; an output's name holding one was
    quoted in the error. Each is refused, withheld, or shown as what stands for it."""
    folder, _ = signed
    other = nip19_decode((FIXTURES / "keys" / "other.nsec").read_text().strip(), "nsec")
    text = spellings_of(other)[spelling]
    if spelling != "a line break":  # a name with a line break is refused as a name anyway
        renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "-o", "o.vault", "h.vault", "kitchen ipad", text, cwd=folder)
        assert renamed.returncode == 64 and not (folder / "o.vault").exists(), renamed.stderr
    revoked = tool("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", "old ipad", "--reason",
                   f"stolen {text}", "--ops", "ops.jsonl", "-o", "o.vault", cwd=folder)
    assert revoked.returncode == 64 and not (folder / "o.vault").exists(), revoked.stderr
    written = tool("vault-tool", "open", "--key-file", "parent.nsec", "-o", f"nope/{text}/x.json", "h.vault", cwd=folder)
    assert written.returncode != 0 and text not in written.stderr and text.replace("\n", "\\u{a}") not in written.stderr, written.stderr
    # A signed event holding it, shown by `log show` to anyone (no key needed).
    lines = (folder / "h.log").read_text().splitlines()
    last = json.loads(lines[-1])
    tags = [["h", PARENT.household_id.hex()], ["prev", last["id"]], ["action", "device"],
            ["vault", hashlib.sha256((folder / "h.vault").read_bytes()).hexdigest(), "99"], ["change", "limit"], ["dropped", "ab" * 32],
            ["reason", f"r {text}"]]
    lines.append(sign_event(PARENT.secret, last["created_at"] + 10, tags, f"renamed x to {text}"))
    (folder / "t.log").write_text("\n".join(lines) + "\n")
    for json_flag in ([], ["--json"]):
        shown = tool("vault-tool", "log", "show", *json_flag, "--log", "t.log", "h.vault", cwd=folder)
        assert shown.returncode == 0, shown.stderr
        for piece in (text, text.replace("\n", "\\u{a}"), text.replace("\n", "\\n")):
            assert piece not in shown.stdout, shown.stdout


def test_log_verify_and_show_with_another_log_say_when_the_one_beside_the_vault_does_not_hold(signed):
    """A third trial: an earlier vault put back, its earlier log named with --log: `log verify`
    said "ok" without a word of the log beside the vault, which every other reader warns of."""
    folder, _ = signed
    (folder / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    (folder / "early.log").write_text((folder / "h.log").read_text().splitlines()[0] + "\n")
    os.link(folder / "h.log", folder / "hard.log")
    for command in (["log", "verify"], ["log", "show"]):
        result = tool("vault-tool", *command, "--log", "early.log", "h.vault", cwd=folder)
        assert result.returncode == 0 and "the household log 'h.log' does not hold for this vault" in result.stderr, result.stderr
        same = tool("vault-tool", *command, "--log", "hard.log", "h.vault", cwd=folder)
        assert same.returncode == 3 and "does not hold for this vault" not in same.stderr, same.stderr


@pytest.mark.parametrize("beside", ["a script's own log", "the past of the log named"])
def test_a_file_beside_the_vault_that_is_no_other_record_does_not_stop_a_change_through_another_log(signed, beside):
    """A review: with --log naming the household log elsewhere, a script's own `h.log` beside
    the vault (no household log at all) refused every change; and a change made in place
    through --log left the log beside it behind, so the next one was refused. Neither is
    another record of the vault: the change goes on, twice."""
    folder, _ = signed
    shutil.copy(folder / "h.log", folder / "other.log")
    if beside == "a script's own log":
        (folder / "h.log").write_text("2026-01-01 backup done\n")
    for name in ("Hall iPad", "Den iPad"):
        renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--log", "other.log", "--in-place", "h.vault",
                       "kitchen ipad" if name == "Hall iPad" else "hall ipad", name, cwd=folder)
        assert renamed.returncode == 0, renamed.stderr
    assert tool("vault-tool", "log", "verify", "--log", "other.log", "h.vault", cwd=folder).returncode == 0


def test_a_log_on_standard_input_is_read_once_when_the_log_beside_the_vault_is_its_past(signed):
    """Rereading the change: the check of the log beside the vault read the named log again,
    which standard input cannot give twice, so a change through `--log -` whose log beside the
    vault is that log's past was refused. It uses the log the change read."""
    folder, _ = signed
    shutil.copy(folder / "h.log", folder / "other.log")
    assert tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--log", "other.log", "--in-place", "h.vault",
                "kitchen ipad", "Hall iPad", cwd=folder).returncode == 0
    with open(folder / "other.log", "rb") as log:
        renamed = subprocess.run([str(BIN / "vault-tool"), "device", "rename", "--key-file", "parent.nsec", "--log", "-", "-o", "o.vault",
                                  "h.vault", "hall ipad", "Den iPad"], capture_output=True, text=True, cwd=folder, stdin=log, timeout=120)
    assert renamed.returncode == 0, renamed.stderr
    assert (folder / "o.vault").exists()


def test_a_writer_or_a_merge_through_a_link_is_held_to_the_log_beside_the_file_it_leads_to(signed):
    """A fourth trial: a vault put back, named through a symbolic link in another folder, was
    changed with exit 0 by naming its earlier log with --log (the log beside the link's name
    was looked for, and there was none); and a merge of their copy named through a link did
    not say what their log held. Logs are found beside the file a link leads to, as `log verify`
    finds them."""
    folder, _ = signed
    shutil.copy(folder / "h.vault", folder / "t.vault")
    shutil.copy(folder / "h.log", folder / "t.log")
    shutil.copy(folder / "h.vault", folder / "base.vault")
    assert tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--in-place", "t.vault", "kitchen ipad", "Hall iPad",
                cwd=folder).returncode == 0
    (folder / "links").mkdir()
    os.symlink(folder / "t.vault", folder / "links" / "theirs.vault")
    merged = tool("vault-tool", "merge", "--key-file", "parent.nsec", "--base", "base.vault", "--ours", "h.vault", "--theirs", "links/theirs.vault",
                  "-o", "m.vault", cwd=folder)
    assert merged.returncode == 0 and "holds 1 event ours does not" in merged.stderr, merged.stderr
    (folder / "early.log").write_text((folder / "h.log").read_text().splitlines()[0] + "\n")
    (folder / "h.vault").write_bytes((FIXTURES / "testkit" / "ok-v3-household.vault").read_bytes())
    os.symlink(folder / "h.vault", folder / "links" / "put-back.vault")
    renamed = tool("vault-tool", "device", "rename", "--key-file", "parent.nsec", "--log", "early.log", "-o", "o.vault", "links/put-back.vault",
                   "kitchen ipad", "Den iPad", cwd=folder)
    assert renamed.returncode == 3 and "which --log does not name" in renamed.stderr, renamed.stderr
    assert not (folder / "o.vault").exists()
