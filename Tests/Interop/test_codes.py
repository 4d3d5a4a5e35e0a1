"""Recovery codes, device links and pairing codes checked by independent code (issue 7).

Blobs: made by recovery-sheet, opened with cryptography's PBKDF2HMAC and AESGCM, and the
reverse. QR codes: every image decodes with zbarimg and zxing-cpp to the exact payload, also
after the recovery sheet's simulated print and scan.
"""
import base64
import json
import secrets
import subprocess
import time
import urllib.parse
import uuid

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from mnemonic import Mnemonic

from test_recovery_sheet import print_and_scan, zbar, zxing
from vaultref import Household
from workspace import DEVICE_LINK, RECOVERY_SHEET


def tool(*args, expect=0, program=RECOVERY_SHEET):
    result = subprocess.run([program, *args], capture_output=True)
    assert result.returncode == expect, result.stderr.decode()
    return result


def secret_file(path, text):
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def derive(words, salt, iterations=100_000):
    return PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=iterations).derive(words.encode())


def python_blob(path):
    """A recovery-code blob sealed by the reference (PBKDF2, AES-GCM): its master key and words."""
    master, code = secrets.token_bytes(32), secrets.token_bytes(32)
    words = Mnemonic("english").to_mnemonic(code)
    salt, nonce = secrets.token_bytes(16), secrets.token_bytes(12)
    sealed = AESGCM(derive(words, salt)).encrypt(nonce, master, None)
    path.write_text(json.dumps({"user_id": "adult-a", "encrypted_master_key": base64.b64encode(nonce + sealed).decode(),
                                "salt": base64.b64encode(salt).decode()}))
    return master, words


def readable_everywhere(path, expected, tmp_path):
    for picture in [path] + [tmp_path / f"{path.stem}-{dpi}.jpg" for dpi in (150, 100)]:
        if picture != path:
            print_and_scan(path, picture, int(picture.stem.rsplit("-", 1)[1]))
        assert zbar(picture) == expected, f"zbarimg on {picture.name}"
        assert expected in zxing(picture), f"zxing-cpp on {picture.name}"


def test_blob_made_by_the_tool_opens_in_python(tmp_path):
    master = secrets.token_bytes(32)
    args = ["code", "new", "--master-key-file", secret_file(tmp_path / "mk", master.hex()), "--user-id", "emma",
            "-o", str(tmp_path / "blob.json"), "--sheet", str(tmp_path / "code.png"), "--code-out", str(tmp_path / "words.txt")]
    result = tool(*args)
    words = (tmp_path / "words.txt").read_text().strip()
    assert words.encode() not in result.stdout + result.stderr
    blob = json.loads((tmp_path / "blob.json").read_text())
    assert blob["user_id"] == "emma" and blob["kdf"] == "PBKDF2-HMAC-SHA256" and blob["iterations"] == 100_000 and blob["cipher"] == "AES-256-GCM"
    raw = base64.b64decode(blob["encrypted_master_key"])
    key = derive(words, base64.b64decode(blob["salt"]))
    assert AESGCM(key).decrypt(raw[:12], raw[12:], None) == master
    # The sheet's SeedQR: the code's word indexes, four digits each.
    digits = "".join(f"{Mnemonic('english').wordlist.index(w):04d}" for w in words.split())
    readable_everywhere(tmp_path / "code.png", digits, tmp_path)


@pytest.mark.parametrize("paper,lang", [(paper, lang) for paper in ("a4", "letter") for lang in ("en", "es")])
def test_code_sheet_reads_back_after_print_and_scan(tmp_path, paper, lang):
    """Every paper and language of the code sheet: its SeedQR survives print and scan, and both the
    new sheet of `code rotate` and `code verify` read it."""
    args = ["code", "new", "--master-key-file", secret_file(tmp_path / "mk", secrets.token_bytes(32).hex()), "--user-id", "emma",
            "--paper", paper, "--lang", lang, "--label", "Familia García", "--date", "2026-11-22",
            "-o", str(tmp_path / "blob.json"), "--sheet", str(tmp_path / "code.png"), "--code-out", str(tmp_path / "words.txt")]
    tool(*args)
    words = (tmp_path / "words.txt").read_text().strip()
    digits = "".join(f"{Mnemonic('english').wordlist.index(w):04d}" for w in words.split())
    readable_everywhere(tmp_path / "code.png", digits, tmp_path)
    assert tool("code", "verify", "--blob", str(tmp_path / "blob.json"), "--sheet", str(tmp_path / "code-100.jpg")).stdout == b"code: the code reads; its checksum passes; it opens the blob of account emma\n"
    # The sheet alone (what a parent holds): the photo's code and the typed words are one code.
    assert tool("code", "verify", "--sheet", str(tmp_path / "code-100.jpg"), "--code-file", str(tmp_path / "words.txt")).stdout == \
        b"code: the sheet's code and the typed words are one code; its checksum passes\n"
    secret_file(tmp_path / "other.txt", Mnemonic("english").to_mnemonic(secrets.token_bytes(32)))
    tool("code", "verify", "--sheet", str(tmp_path / "code-100.jpg"), "--code-file", str(tmp_path / "other.txt"), expect=3)
    tool("code", "rotate", "--blob", str(tmp_path / "blob.json"), "--sheet", str(tmp_path / "code-100.jpg"), "-o", str(tmp_path / "new.json"),
         "--sheet", str(tmp_path / "new.png"), "--paper", paper, "--lang", lang)
    tool("code", "verify", "--blob", str(tmp_path / "new.json"), "--sheet", str(tmp_path / "new.png"))
    tool("code", "verify", "--blob", str(tmp_path / "new.json"), "--sheet", str(tmp_path / "code.png"), expect=3)


def test_blob_made_in_python_opens_with_the_tool(tmp_path):
    master, words = python_blob(tmp_path / "blob.json")
    out = tool("code", "unwrap", "--blob", str(tmp_path / "blob.json"), "--code-file", secret_file(tmp_path / "w", words.upper()),
               "-o", str(tmp_path / "mk")).stdout
    assert (tmp_path / "mk").read_text() == master.hex() + "\n" and out == b""
    wrong = Mnemonic("english").to_mnemonic(secrets.token_bytes(32))
    tool("code", "unwrap", "--blob", str(tmp_path / "blob.json"), "--code-file", secret_file(tmp_path / "x", wrong), "-o", str(tmp_path / "no"), expect=3)
    assert not (tmp_path / "no").exists()


def test_link_and_pairing_codes_read_everywhere(tmp_path):
    h = Household(secrets.token_bytes(32))
    url = f"https://minio.example/bucket/{h.vault_path}"
    tool("create", "--key-file", secret_file(tmp_path / "k", h.nsec), "--vault-url", url, "--now", "2026-11-22T10:00:00Z",
         "--expires-in", "300", "-o", str(tmp_path / "link.png"), program=DEVICE_LINK)
    link = {"vaultURL": url, "nsec": h.nsec, "parentPubkey": h.pubkey, "expiresAt": "2026-11-22T10:05:00Z"}
    readable_everywhere(tmp_path / "link.png", json.dumps(link, separators=(",", ":")), tmp_path)

    tool("pairing", "create", "--share-url", "https://www.icloud.com/share/0abc", "--parent-device-id", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
         "--shared-zone-id", "FamilyZone", "--now", "2026-11-22T10:00:00Z", "-o", str(tmp_path / "pair.png"), program=DEVICE_LINK)
    payload = json.loads(zbar(tmp_path / "pair.png"))
    assert payload["shareURL"] == "https://www.icloud.com/share/0abc" and payload["timestamp"] == "2026-11-22T10:00:00Z"
    readable_everywhere(tmp_path / "pair.png", json.dumps(payload, separators=(",", ":")), tmp_path)


@pytest.mark.parametrize("form,accepted", [
    ("http://minio.example/bucket/{path}", False), ("HTTP://minio.example/bucket/{path}", False),
    ("ftp://minio.example/bucket/{path}", False), ("https://ana:secret@minio.example/bucket/{path}", False),
    ("https://ana@minio.example/bucket/{path}", False), ("https:///bucket/{path}", False), ("{path}", False),
    ("https://minio.example /bucket/{path}", False), ("https://a b/{path}", False), ("https://minio.example:0/{path}", False),
    ("https://minio.example:99999/{path}", False), ("https://.../{path}", False), ("https://-/{path}", False),
    ("https://minio.example%40evil.com/{path}", False), ("https://[fe80::1%25eth0]/{path}", False), ("https://minio.example:/{path}", False),
    ("HTTPS://minio.example/bucket/{path}", True), ("https://minio.example/bucket/{path}?X-Amz-Signature=abc&X-Amz-Expires=300", True),
    ("https://minio.example:9000/{path}", True), ("https://[::1]:8443/{path}", True), ("https://10.0.0.1/{path}", True),
    ("https://minio.example./{path}", True),
])
def test_a_link_fetches_its_vault_over_https_only(tmp_path, form, accepted):
    """The new device fetches its vault from the link's URL, beside the key the same code holds:
    plain HTTP, another scheme, a URL without a host or with credentials in it are refused when
    the code is made and when it is read (a trial's finding: http:// was taken), and so is a
    host no resolver could be asked for or a port none could listen on (a space, `...`, `%40`,
    port 0, a zone: Foundation's parser took them); https in any case is a scheme (RFC 3986),
    and a presigned URL's query is kept."""
    h = Household(secrets.token_bytes(32))
    url = form.format(path=h.vault_path)
    made = tool("create", "--key-file", secret_file(tmp_path / "k", h.nsec), "--vault-url", url, "--now", "2026-11-22T10:00:00Z",
                "-o", str(tmp_path / "link.png"), program=DEVICE_LINK, expect=0 if accepted else 2)
    if not accepted:
        assert b"vaultURL should be an https URL" in made.stderr and not (tmp_path / "link.png").exists()
        assert b"secret" not in made.stderr
    link = {"vaultURL": url, "nsec": h.nsec, "parentPubkey": h.pubkey, "expiresAt": "2026-11-22T10:05:00Z"}
    read = tool("read", str(qr_png(json.dumps(link), tmp_path / "written.png")), "--now", "2026-11-22T10:00:00Z",
                program=DEVICE_LINK, expect=0 if accepted else 2)
    if accepted:
        assert url.encode() in read.stdout


REFERENCE_DATE = 978_307_200  # 2001-01-01T00:00:00Z, Foundation's reference date


def app_json(value):
    """JSON as the seeds' Swift code writes it with JSONEncoder's defaults: `/` escaped as `\\/`."""
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/")


def qr_png(text, path):
    """A QR of `text`, drawn by zxing-cpp's own encoder (not the suite's)."""
    from PIL import Image
    import zxingcpp
    pixels = memoryview(zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.QRCode).to_image(scale=8, add_quiet_zones=True))
    Image.frombytes("L", (pixels.shape[1], pixels.shape[0]), pixels.tobytes()).save(path)
    return path


def test_codes_as_the_app_writes_them_read_back_and_the_app_form_written_is_the_apps(tmp_path):
    """Issue 47, item 5: the app's JSONEncoder defaults (a Date as seconds since 2001, Data as
    base64, `/` escaped), in a QR another encoder drew, read by `read` and `pairing read`, which
    say so; and `create --encoding app` writes exactly those conventions."""
    h = Household(secrets.token_bytes(32))
    url = f"https://minio.example/bucket/{h.vault_path}"
    expires = 1_795_000_000  # seconds since 1970
    link = {"vaultURL": url, "nsec": base64.b64encode(h.secret).decode(), "parentPubkey": h.pubkey, "expiresAt": expires - REFERENCE_DATE + 0.25}
    read = subprocess.run([DEVICE_LINK, "read", str(qr_png(app_json(link), tmp_path / "app-link.png")), "--now", "2026-11-18T11:00:00Z",
                           "-o", str(tmp_path / "restored.nsec")], capture_output=True)
    assert read.returncode == 0, read.stderr
    assert (tmp_path / "restored.nsec").read_text().strip() == h.nsec and b"the app's form" in read.stdout
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "C0FFEE00-0000-4000-8000-000000000000", "sharedZoneID": "FamilyZone", "timestamp": expires - REFERENCE_DATE}
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(app_json(pairing), tmp_path / "app-pair.png")), "--json",
                           "--now", "2026-11-18T11:06:50Z"], capture_output=True)
    assert read.returncode == 0, read.stderr
    shown = json.loads(read.stdout)
    assert shown["encoding"] == "app" and shown["timestamp"] == "2026-11-18T11:06:40Z" and shown["shareURL"] == pairing["shareURL"]
    # What --encoding app writes, decoded here as the app's JSONDecoder would.
    tool("create", "--key-file", secret_file(tmp_path / "k", h.nsec), "--vault-url", url, "--now", "2026-11-22T10:00:00Z", "--encoding", "app",
         "-o", str(tmp_path / "ours.png"), program=DEVICE_LINK)
    raw = zbar(tmp_path / "ours.png")
    assert "\\/" in raw and "https://" not in raw
    ours = json.loads(raw)
    assert base64.b64decode(ours["nsec"], validate=True) == h.secret and ours["expiresAt"] == 817_034_700  # 2026-11-22T10:05:00Z
    assert ours["vaultURL"] == url and ours["parentPubkey"] == h.pubkey
    tool("pairing", "create", "--share-url", pairing["shareURL"], "--parent-device-id", pairing["parentDeviceID"], "--shared-zone-id", "FamilyZone",
         "--now", "2026-11-22T10:00:00Z", "--encoding", "app", "-o", str(tmp_path / "ours-pair.png"), program=DEVICE_LINK)
    assert json.loads(zbar(tmp_path / "ours-pair.png"))["timestamp"] == 817_034_400  # 2026-11-22T10:00:00Z


@pytest.mark.parametrize("zone", ["left out", None, "named"])
@pytest.mark.parametrize("form", ["app", "documented"])
def test_a_pairing_code_without_a_zone_reads_back(tmp_path, zone, form):
    """Seed 004 adds `sharedZoneID: String?`: the app's JSONEncoder leaves a nil zone out, and a
    trial's code without one was refused ("sharedZoneID is missing", exit 2), `null` too. Read
    in either form, reported as null; `create` without --shared-zone-id writes such a code."""
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "4CF92AE3-C8E0-45D1-982E-71C3FC986138"}
    if zone != "left out":
        pairing["sharedZoneID"] = zone and "FamilyZone"
    pairing["timestamp"] = 817_034_400 if form == "app" else "2026-11-22T10:00:00Z"
    text = app_json(pairing) if form == "app" else json.dumps(pairing)
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(text, tmp_path / "pair.png")), "--json", "--now", "2026-11-22T10:01:00Z"], capture_output=True)
    assert read.returncode == 0, read.stderr
    shown = json.loads(read.stdout)
    assert shown["sharedZoneID"] == (None if zone != "named" else "FamilyZone") and shown["encoding"] == form, shown
    table = subprocess.run([DEVICE_LINK, "pairing", "read", str(tmp_path / "pair.png"), "--now", "2026-11-22T10:01:00Z"], capture_output=True, text=True)
    assert table.returncode == 0 and ("shared zone" in table.stdout) == (zone == "named"), table.stdout
    assert ("names no shared zone" in table.stderr) == (zone != "named"), table.stderr
    made = subprocess.run([DEVICE_LINK, "pairing", "create", "--share-url", pairing["shareURL"], "--parent-device-id", pairing["parentDeviceID"],
                           "--now", "2026-11-22T10:00:00Z", "--encoding", form, "-o", str(tmp_path / "ours.png")], capture_output=True)
    assert made.returncode == 0, made.stderr
    assert "sharedZoneID" not in zbar(tmp_path / "ours.png")


@pytest.mark.parametrize("name", ["León 🦁", "Zoë/Ünal", "家族", "x\\/y", "ñ"])
@pytest.mark.parametrize("encoding", ["documented", "app"])
def test_a_code_with_any_text_reads_back_as_written_and_read_minus_o_minus_prints_only_the_key(tmp_path, name, encoding):
    """The bytes a code holds are UTF-8, read as such (zbar's character-set guess once turned
    "León" into "Le籀n" and `\\/` into `¥/`), in the suite's form and in the app's; with `-o -`
    standard output holds the key alone, the table going to standard error."""
    h = Household(secrets.token_bytes(32))
    url = f"https://minio.example/{name}/{h.vault_path}"
    tool("create", "--key-file", secret_file(tmp_path / "k", h.nsec), "--vault-url", url, "--now", "2026-11-22T10:00:00Z", "--encoding", encoding,
         "-o", str(tmp_path / "link.png"), program=DEVICE_LINK)
    read = subprocess.run([DEVICE_LINK, "read", str(tmp_path / "link.png"), "--now", "2026-11-22T10:01:00Z", "-o", "-"], capture_output=True)
    assert read.returncode == 0, read.stderr
    assert read.stdout.decode().strip() == h.nsec
    assert url in read.stderr.decode()
    shared = subprocess.run([DEVICE_LINK, "pairing", "create", "--share-url", "https://www.icloud.com/share/0abc", "--parent-device-id",
                             "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--shared-zone-id", name, "--now", "2026-11-22T10:00:00Z", "--encoding", encoding,
                             "-o", str(tmp_path / "pair.png")], capture_output=True)
    assert shared.returncode == 0, shared.stderr
    shown = subprocess.run([DEVICE_LINK, "pairing", "read", str(tmp_path / "pair.png"), "--json", "--now", "2026-11-22T10:01:00Z"], capture_output=True)
    assert shown.returncode == 0 and json.loads(shown.stdout)["sharedZoneID"] == name, shown.stderr


@pytest.mark.parametrize("bad", ["a\x1bb", "a\u202eb", "a\u2028b", "a\u200bb", "\ufeffa", "a\x7fb"])
def test_no_code_carries_a_control_or_invisible_character(tmp_path, bad):
    made = subprocess.run([DEVICE_LINK, "pairing", "create", "--share-url", "https://www.icloud.com/share/0abc", "--parent-device-id",
                           "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--shared-zone-id", bad, "-o", str(tmp_path / "pair.png")], capture_output=True)
    assert made.returncode != 0 and not (tmp_path / "pair.png").exists()
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "t", "sharedZoneID": bad, "timestamp": "2026-11-22T10:00:00Z"}
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == 2 and b"control or invisible" in read.stderr


@pytest.mark.parametrize("form", ["documented", "app"])
@pytest.mark.parametrize("ahead", [86_400 + 61, 10 * 365 * 86_400])
def test_a_link_claiming_to_last_longer_than_any_link_is_made_for_is_refused(tmp_path, form, ahead):
    """A hostile trial: a link valid for decades (forged, or made by a wrong clock) handed its
    key over with exit 0. No link is made for more than a day (the app's last 5 minutes); a day
    and the allowed clock skew is read, more is refused (exit 3) and no key is written."""
    h = Household(secrets.token_bytes(32))
    now = 1_795_000_000
    expires = now + ahead
    link = {"vaultURL": f"https://minio.example/b/{h.vault_path}", "parentPubkey": h.pubkey,
            "nsec": h.nsec if form == "documented" else base64.b64encode(h.secret).decode(),
            "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)) if form == "documented" else expires - REFERENCE_DATE}
    text = json.dumps(link) if form == "documented" else app_json(link)
    read = subprocess.run([DEVICE_LINK, "read", str(qr_png(text, tmp_path / "long.png")), "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
                           "-o", str(tmp_path / "k.nsec")], capture_output=True)
    assert read.returncode == 3 and b"longer than the day" in read.stderr, read.stderr
    assert not (tmp_path / "k.nsec").exists() and h.nsec.encode() not in read.stdout + read.stderr
    # A day ahead, the longest `create` makes, is read.
    link["expiresAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 86_400)) if form == "documented" else now + 86_400 - REFERENCE_DATE
    text = json.dumps(link) if form == "documented" else app_json(link)
    read = subprocess.run([DEVICE_LINK, "read", str(qr_png(text, tmp_path / "day.png")), "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))],
                          capture_output=True)
    assert read.returncode == 0, read.stderr


@pytest.mark.parametrize("field", ["verificationToken", "sharedZoneID"])
@pytest.mark.parametrize("blank", ["", " ", "\u3000\u00a0 "])
def test_a_pairing_code_with_a_blank_token_or_zone_is_refused(tmp_path, field, blank):
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "C0FFEE00-0000-4000-8000-000000000000", "sharedZoneID": "FamilyZone", "timestamp": "2026-11-22T10:00:00Z"}
    pairing[field] = blank
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    # The empty one is named, not both (a hostile trial).
    other = {"verificationToken": "sharedZoneID", "sharedZoneID": "verificationToken"}[field]
    assert read.returncode == 2 and f"{field} is empty or blank".encode() in read.stderr and other.encode() not in read.stderr, read.stderr


def key_spellings(h):
    """The key as each spelling a trial hid it in: 40 of its hex digits, its base64 after a
    letter, its hex whole, its URL-safe base64."""
    standard = base64.b64encode(h.secret).decode()
    return {"hex-piece": h.secret.hex()[:40], "base64": "x" + standard, "hex": h.secret.hex(),
            "url-safe-base64": base64.urlsafe_b64encode(h.secret).decode().rstrip("="),
            # Behind one or two other bytes, every character of the key's base64 differs.
            "base64-behind-one-byte": "x" + base64.b64encode(b"\0" + h.secret).decode(),
            "base64-behind-two-bytes": base64.b64encode(b"\0\0" + h.secret).decode(),
            "percent-encoded-base64": urllib.parse.quote(standard, safe=""),
            # A query's `+` is a space: the key split by them every four characters (a trial).
            "base64-split-by-plus": "+".join(standard[i:i + 4] for i in range(0, len(standard), 4))}


# Where a link hides its key, in which spelling: a field's name is not a URL, so nothing
# percent-decodes it.
HIDINGS = [(spelling, where) for spelling in ["hex-piece", "base64", "hex", "url-safe-base64", "base64-behind-one-byte", "base64-behind-two-bytes",
                                              "percent-encoded-base64", "base64-split-by-plus"]
           for where in ["field-name", "repeated-field-name", "url-path", "url-query", "url-fragment"]
           if not (spelling in ("percent-encoded-base64", "base64-split-by-plus") and where.endswith("field-name"))]


@pytest.mark.parametrize("form", ["documented", "app"])
@pytest.mark.parametrize("spelling,where", HIDINGS, ids=[f"{spelling}-in-{where}" for spelling, where in HIDINGS])
def test_a_link_that_hides_its_key_elsewhere_never_shows_it(tmp_path, form, spelling, where):
    """A hostile trial: a link whose extra field was named by 40 of its key's hex digits, or by
    its base64, was refused by quoting the name (the key, or most of it, in the error); one
    whose vault URL held the key was read, and its summary printed the URL. The link's key is
    held before any other field is looked at, so an error withholds every piece of it, and a URL
    holding it is refused (exit 2) without it."""
    h = Household(secrets.token_bytes(32))
    hidden = key_spellings(h)[spelling]
    now = 1_795_000_000
    url = f"https://minio.example/b/{h.vault_path}"
    url = {"field-name": url, "url-path": f"https://minio.example/{hidden}/{h.vault_path}", "url-query": f"{url}?k={hidden}",
           "url-fragment": f"{url}#{hidden}"}.get(where, url)
    link = {"vaultURL": url, "parentPubkey": h.pubkey, "nsec": h.nsec if form == "documented" else base64.b64encode(h.secret).decode(),
            "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60)) if form == "documented" else now + 60 - REFERENCE_DATE}
    if where == "field-name":
        link[hidden] = 1
    text = json.dumps(link) if form == "documented" else app_json(link)
    if where == "repeated-field-name":  # refused by the parser, before any field is read
        text = text[:-1] + f',"{hidden}":1,"{hidden}":2}}'
    url = url if where.startswith("url") else None
    for json_output in ([], ["--json"]):
        read = subprocess.run([DEVICE_LINK, "read", str(qr_png(text, tmp_path / "l.png")), "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
                               *json_output], capture_output=True)
        assert read.returncode == 2, read.stderr
        shown = (read.stdout + read.stderr).decode()
        for piece in (h.secret.hex()[i:i + 12] for i in range(0, 53, 4)):
            assert piece not in shown.lower(), shown
        assert base64.b64encode(h.secret).decode()[:20] not in shown and h.nsec[5:25] not in shown, shown
    if url:
        key = secret_file(tmp_path / "k.nsec", h.nsec)
        made = subprocess.run([DEVICE_LINK, "create", "--key-file", key, "--vault-url", url, "-o", str(tmp_path / "out.png")], capture_output=True)
        assert made.returncode == 2 and b"vaultURL holds the link's key" in made.stderr and not (tmp_path / "out.png").exists(), made.stderr


@pytest.mark.parametrize("token", ["abc", "00000000-0000-0000-0000-000000000000", "00000000-0000-4000-8000-000000000000", "C232AB00-9414-11EC-B3C8-9E6BDECED846",
                                   "C0FFEE00-0000-4000-C000-000000000000", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "6f1c2b7e-0d4a-4c55-9e1b-2a7f3c9d8e01"],
                         ids=["not-a-uuid", "nil", "version-4-in-form-only", "version-1", "wrong-variant", "the-device-id", "the-device-id-lower-case"])
def test_a_pairing_code_whose_token_is_not_random_is_refused(tmp_path, token):
    """A hostile trial: any non-blank token was read, a guessable one (`abc`, the nil UUID, a
    time-based one, the parent device's own id) included. The app makes it with `UUID()`: a
    random version 4 UUID, as the documents say, which is what is read."""
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": token, "sharedZoneID": "FamilyZone", "timestamp": "2026-11-22T10:00:00Z"}
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == 2 and b"verificationToken should be a random UUID (version 4)" in read.stderr, read.stderr
    pairing["verificationToken"] = str(uuid.uuid4())  # lower case, as any other UUID reader writes it
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "q.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == 0, read.stderr


@pytest.mark.parametrize("arguments", [["create", "--vault-url", "https://x/y.vault", "--expires-in", "0"],
                                       ["create", "--vault-url", "https://x/y.vault", "--expires-in", "86401"],
                                       ["pairing", "read", "--max-age", "0", "p.png"], ["pairing", "read", "--max-age", "86401", "p.png"]])
def test_an_option_out_of_its_range_is_a_usage_error(tmp_path, arguments):
    """A number outside what its option takes is a usage error (64), as every other tool's are
    (`device limit 0`, `--max-share 101`); it was 2, the code of a malformed file."""
    key = secret_file(tmp_path / "k.nsec", Household(secrets.token_bytes(32)).nsec)
    extra = ["--key-file", key, "-o", str(tmp_path / "out.png")] if arguments[0] == "create" else []
    result = subprocess.run([DEVICE_LINK, *arguments, *extra], capture_output=True, cwd=tmp_path)
    assert result.returncode == 64 and b"takes 1 to 86400" in result.stderr, result.stderr
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("spelling,expected", [
    ("817034400", "2026-11-22T10:00:00Z"), ("8.170344E8", "2026-11-22T10:00:00Z"), ("8.1703440025e+8", "2026-11-22T10:00:00.25Z"),
    ("81703440000E-2", "2026-11-22T10:00:00Z"), ("817034400.0e0", "2026-11-22T10:00:00Z"),
])
def test_a_time_in_any_json_spelling_of_its_number_is_read(tmp_path, spelling, expected):
    """A hostile trial: `"timestamp": 8.176741E8` is JSON's spelling of a number of seconds since
    2001, and was called no such number. Every spelling JSON allows is read exactly (no floating
    point); one out of a date's range says so."""
    pairing = ('{"shareURL":"https:\\/\\/www.icloud.com\\/share\\/0abc","parentDeviceID":"6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",'
               '"verificationToken":"C0FFEE00-0000-4000-8000-000000000000","sharedZoneID":"FamilyZone","timestamp":' + spelling + '}')
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(pairing, tmp_path / "p.png")), "--json", "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["timestamp"] == expected


@pytest.mark.parametrize("spelling", ["1e308", "-1e308", "1e31", "8.17E-40"])
def test_a_time_out_of_range_says_so(tmp_path, spelling):
    pairing = ('{"shareURL":"https://www.icloud.com/share/0abc","parentDeviceID":"6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",'
               '"verificationToken":"C0FFEE00-0000-4000-8000-000000000000","sharedZoneID":"FamilyZone","timestamp":' + spelling + '}')
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(pairing, tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == 2 and b"out of the range" in read.stderr, read.stderr


@pytest.mark.parametrize("field", ["sharedZoneID", "verificationToken"])
@pytest.mark.parametrize("kind", ["nsec", "hex", "words", "nsec-in-text"])
def test_a_pairing_code_carrying_a_key_is_refused_and_the_key_not_shown(tmp_path, field, kind):
    """A hostile trial: `pairing read` printed a zone named `nsec1…` whole (a pairing code carries
    no key; `device-link read` already withheld key-like text). Such a code is refused (exit 2)
    by `read`, in text and JSON, and by `create`; the key is never shown."""
    h = Household(secrets.token_bytes(32))
    secret = {"nsec": h.nsec, "hex": h.secret.hex(), "words": " ".join(["abandon"] * 11 + ["about"]), "nsec-in-text": f"zone {h.nsec} here"}[kind]
    pairing = {"shareURL": "https://www.icloud.com/share/0abc", "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "C0FFEE00-0000-4000-8000-000000000000", "sharedZoneID": "FamilyZone", "timestamp": "2026-11-22T10:00:00Z"}
    pairing[field] = secret
    for extra in ([], ["--json"]):
        read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z",
                               *extra], capture_output=True)
        said = read.stdout + read.stderr
        assert read.returncode == 2 and b"reads as a key" in read.stderr, read.stderr
        assert secret.encode() not in said and h.secret.hex().encode() not in said.lower()
    if field == "sharedZoneID":
        made = subprocess.run([DEVICE_LINK, "pairing", "create", "--share-url", "https://www.icloud.com/share/0abc", "--parent-device-id",
                               "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01", "--shared-zone-id", secret, "-o", str(tmp_path / "made.png")], capture_output=True)
        assert made.returncode != 0 and not (tmp_path / "made.png").exists() and secret.encode() not in made.stdout + made.stderr


@pytest.mark.parametrize("url,readable", [("HTTPS://www.icloud.com/share/0abc", True), ("https://user:pass@evil.example/share", False),
                                          ("https://user@www.icloud.com/share/0abc", False), ("http://www.icloud.com/share/0abc", False)])
def test_a_share_url_is_https_in_any_case_and_carries_no_credentials(tmp_path, url, readable):
    """A hostile trial: `HTTPS://` (a scheme is any case) was refused, and a share URL with a user
    and password in it was read and printed."""
    pairing = {"shareURL": url, "parentDeviceID": "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
               "verificationToken": "C0FFEE00-0000-4000-8000-000000000000", "sharedZoneID": "FamilyZone", "timestamp": "2026-11-22T10:00:00Z"}
    read = subprocess.run([DEVICE_LINK, "pairing", "read", str(qr_png(json.dumps(pairing), tmp_path / "p.png")), "--now", "2026-11-22T10:01:00Z"],
                          capture_output=True)
    assert read.returncode == (0 if readable else 2), read.stderr
    if not readable:
        assert b"pass" not in read.stdout


@pytest.mark.parametrize("share,accepted", [
    ("https://www.icloud.com/share/0abc", True), ("HTTPS://www.icloud.com/share/0abc", True),
    ("https://www.icloud.com:0/share/0abc", False), ("https://www.icloud .com/share/0abc", False),
    ("https://www.icloud.com%40evil.example/share/0abc", False), ("https://ana:pw@www.icloud.com/share/0abc", False),
    ("http://www.icloud.com/share/0abc", False),
])
def test_a_pairing_share_url_follows_the_links_rule(tmp_path, share, accepted):
    """A pairing code's share URL and a link's vault URL are one rule (a host a resolver could
    be asked for, a port one could listen on, no credentials, https)."""
    made = subprocess.run([DEVICE_LINK, "pairing", "create", "--share-url", share, "--parent-device-id", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                           "--shared-zone-id", "FamilyZone", "--now", "2026-11-22T10:00:00Z", "-o", str(tmp_path / "pair.png")], capture_output=True)
    assert made.returncode == (0 if accepted else 2), made.stderr.decode()
    assert (tmp_path / "pair.png").exists() == accepted


@pytest.mark.parametrize("encoding", ["documented", "app"])
def test_a_link_read_as_json_says_its_form_and_never_its_key(tmp_path, encoding):
    """docs/tools.md promised `read --json` with the form read (`"encoding"`) for both codes;
    only the pairing code had it (a support agent's trial)."""
    h = Household(secrets.token_bytes(32))
    url = f"https://minio.example/bucket/{h.vault_path}"
    tool("create", "--key-file", secret_file(tmp_path / "k", h.nsec), "--vault-url", url, "--now", "2026-11-22T10:00:00Z",
         "--encoding", encoding, "-o", str(tmp_path / "link.png"), program=DEVICE_LINK)
    read = tool("read", str(tmp_path / "link.png"), "--now", "2026-11-22T10:01:00Z", "--json", "-o", str(tmp_path / "new.nsec"), program=DEVICE_LINK)
    report = json.loads(read.stdout)
    assert report == {"vaultURL": url, "npub": h.npub, "parentPubkey": h.pubkey, "expiresAt": "2026-11-22T10:05:00Z", "encoding": encoding}
    assert h.nsec.encode() not in read.stdout + read.stderr and (tmp_path / "new.nsec").read_text().strip() == h.nsec


@pytest.mark.parametrize("case", ["upper", "lower"])
def test_a_links_nsec_is_read_in_either_case(tmp_path, case):
    """A trial: a link whose nsec was all upper case (as a QR code's alphanumeric mode carries
    bech32, which BIP-173 says decoders must accept) was refused as neither nsec nor base64."""
    h = Household(secrets.token_bytes(32))
    now = 1_795_000_000
    link = {"vaultURL": f"https://minio.example/b/{h.vault_path}", "parentPubkey": h.pubkey,
            "nsec": h.nsec.upper() if case == "upper" else h.nsec, "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 300))}
    read = subprocess.run([DEVICE_LINK, "read", str(qr_png(json.dumps(link), tmp_path / "link.png")), "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
                           "-o", str(tmp_path / "k.nsec")], capture_output=True)
    assert read.returncode == 0, read.stderr
    assert (tmp_path / "k.nsec").read_text().strip() == h.nsec
    shown = subprocess.run([DEVICE_LINK, "read", str(tmp_path / "link.png"), "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), "--json"],
                           capture_output=True)
    assert shown.returncode == 0 and json.loads(shown.stdout)["encoding"] == "documented", shown.stdout


@pytest.mark.parametrize("encoding", ["documented", "app"])
@pytest.mark.parametrize("field", ["--shared-zone-id", "--share-url"])
def test_a_pairing_code_too_long_for_a_qr_code_is_a_usage_error(tmp_path, field, encoding):
    """A trial: a 2,000-character `--shared-zone-id` was "libqrencode could not encode", exit 1,
    an I/O failure for what the options made. It is a usage error (64) saying how much one code
    holds, and nothing is written."""
    values = {"--share-url": "https://www.icloud.com/share/0abc", "--shared-zone-id": "FamilyZone"}
    values[field] = values[field] + "Z" * 2000
    arguments = [DEVICE_LINK, "pairing", "create", "--share-url", values["--share-url"], "--parent-device-id", "6F1C2B7E-0D4A-4C55-9E1B-2A7F3C9D8E01",
                 "--shared-zone-id", values["--shared-zone-id"], "--encoding", encoding, "-o", str(tmp_path / "z.png")]
    made = subprocess.run(arguments, capture_output=True)
    assert made.returncode == 64 and b"more than one QR code holds" in made.stderr, (made.returncode, made.stderr)
    assert not (tmp_path / "z.png").exists()


@pytest.mark.parametrize("where", ["an output's missing folder, before the code is read", "an output refused after it is read"])
def test_no_message_says_four_words_of_a_recovery_code_given(tmp_path, where):
    """A hostile trial: `code unwrap --code-file … -o nodir/‹its first four words›/mk` quoted
    the words, where four words of a key given are withheld: the code read (or named by
    --code-file when a refusal comes first) is held as the 32 bytes its words spell."""
    master, words = python_blob(tmp_path / "blob.json")
    piece = "-".join(words.split()[3:7])
    if where.startswith("an output's missing folder"):
        output = str(tmp_path / "nodir" / piece / "mk")
    else:
        (tmp_path / piece).mkdir()
        output = str(tmp_path / piece)
    result = subprocess.run([RECOVERY_SHEET, "code", "unwrap", "--blob", str(tmp_path / "blob.json"), "--code-file", secret_file(tmp_path / "w", words), "-o", output],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and result.stdout == "", (result.returncode, result.stderr)
    assert piece not in result.stderr and " ".join(words.split()[3:7]) not in result.stderr, result.stderr
