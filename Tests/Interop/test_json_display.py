"""JSON output shows untrusted text as text output does (issue 44): a name holding a line
separator, a bidirectional control, a zero-width or invisible character reaches standard output
as a `\\u` escape, in every JSON a tool writes (a `--json` report, a revealed document, the
operations), and reads back as the same name. A hostile trial found the text reports escaped
them and the JSON ones passed them raw to the terminal. The rule is one (DisplayRule) and so is
the door (`JSONValue.reported`, held by test_layers)."""
import json
import os
import shutil
import subprocess

from workspace import BIN, ROOT

HOSTILE = "Kitchen\u2028iPad\u202e\u200b\ufeff\u2066x\u0085\U000e0041"
NOW = "2026-11-22T10:00:00Z"
RAW = [c for c in HOSTILE if ord(c) >= 0x7f]


def run(tool, *arguments, cwd):
    return subprocess.run([str(BIN / tool), *arguments], capture_output=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60)


def assert_escaped(result, name=HOSTILE):
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    text = result.stdout.decode()
    assert not any(c in text for c in RAW), f"raw invisible characters on standard output: {text!r}"
    return text


def test_a_hostile_device_name_is_escaped_in_every_json_of_a_vault(tmp_path):
    shutil.copy(ROOT / "Examples" / "household.nsec", tmp_path / "parent.nsec")
    os.chmod(tmp_path / "parent.nsec", 0o600)
    document = json.loads((ROOT / "Examples" / "household.json").read_text())
    document["devices"][1]["deviceName"] = HOSTILE
    (tmp_path / "h.json").write_text(json.dumps(document, ensure_ascii=False))
    sealed = run("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "h.vault", "h.json", cwd=tmp_path)
    assert sealed.returncode == 0, sealed.stderr
    opened = json.loads(assert_escaped(run("vault-tool", "open", "--key-file", "parent.nsec", "h.vault", cwd=tmp_path)))
    assert opened["devices"][1]["deviceName"] == HOSTILE
    json.loads(assert_escaped(run("vault-tool", "inspect", "--key-file", "parent.nsec", "--json", "h.vault", cwd=tmp_path)))
    device = document["devices"][1]["deviceId"]
    planned = json.loads(assert_escaped(run("device-revoker", "vault", "--key-file", "parent.nsec", "--vault", "h.vault", "--device", device,
                                            "--now", NOW, "--dry-run", "--json", cwd=tmp_path)))
    assert [d["deviceName"] for d in planned["revoke"]] == [HOSTILE]
    # The revealed document, escaped, seals back to the same vault content.
    (tmp_path / "again.json").write_bytes(run("vault-tool", "open", "--key-file", "parent.nsec", "h.vault", cwd=tmp_path).stdout)
    assert run("vault-tool", "seal", "--key-file", "parent.nsec", "-o", "again.vault", "again.json", cwd=tmp_path).returncode == 0
    assert json.loads(run("vault-tool", "open", "--key-file", "parent.nsec", "again.vault", cwd=tmp_path).stdout)["devices"][1]["deviceName"] == HOSTILE


def test_a_hostile_device_name_is_escaped_in_the_registrys_json(tmp_path):
    assert run("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=tmp_path).returncode == 0
    (tmp_path / "d.jsonl").write_text(json.dumps({"user_did": "did:plc:u", "device_id": "d1", "device_mls_did": "did:plc:u#d1", "device_name": HOSTILE,
                                                  "signature_public_key": "01"}, ensure_ascii=False) + "\n")
    imported = run("device-revoker", "registry", "import", "--db", "r.sqlite", "--devices", "d.jsonl", "--now", NOW, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    listed = json.loads(assert_escaped(run("device-revoker", "registry", "devices", "--db", "r.sqlite", "--json", cwd=tmp_path)))
    rows = listed if isinstance(listed, list) else next(v for v in listed.values() if isinstance(v, list))
    assert [row.get("deviceName", row.get("device_name")) for row in rows] == [HOSTILE]
