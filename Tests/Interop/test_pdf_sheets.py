"""Every sheet kind as a PDF, checked with poppler's own tools and read back by independent decoders.

For each sheet kind (recovery, encrypted recovery, recovery code, share) in each language on each
paper: the PDF has one page of the paper's exact size (`pdfinfo`), embeds its fonts (`pdffonts`),
holds no raster image (`pdfimages -list`: the QR codes are filled squares), and says nothing
secret in its metadata; drawn by `pdftoppm` at 300 and 150 dpi it decodes with zbar and with
zxing-cpp to the payload the key gives, which the independent references turn back into the key
(or the code, or the shares). The PDF also survives a simulated print and scan, and the tool
reads its own PDFs back (`scan`, `combine`, `code verify`).
"""
import base64
import hashlib
import json
import os
import pty
import random
import re
import resource
import secrets
import subprocess
import threading
import unicodedata
import zlib

import bech32
import pytest
import shamir_mnemonic
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from mnemonic import Mnemonic
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt
from PIL import Image

from test_recovery_sheet import _bech32_decode_long, print_and_scan, zbar, zxing
from test_slip39 import digits
from vaultref import Household
from workspace import RECOVERY_SHEET

PAPER_POINTS = {"a4": (595.28, 841.89), "letter": (612.0, 792.0)}
KINDS = ["recovery", "encrypted", "code", "share"]
CASES = [(kind, lang, paper) for kind in KINDS for lang in ("en", "es") for paper in ("a4", "letter")]
PASSPHRASE = "correct horse battery staple orbit"


def tool(*args, expect=0):
    result = subprocess.run([RECOVERY_SHEET, *map(str, args)], capture_output=True)
    assert result.returncode == expect, result.stderr.decode()
    return result


def secret_file(path, text):
    path.write_text(text)
    path.chmod(0o600)
    return path


def make(tmp_path, kind, lang, paper):
    """The sheet's PDF, what its QR code must hold, and the secret words or key it stands for."""
    household = Household(secrets.token_bytes(32))
    key = secret_file(tmp_path / "parent.nsec", household.nsec + "\n")
    common = ["--paper", paper, "--lang", lang, "--date", "2026-11-22", "--label", "Familia García"]
    if kind in ("recovery", "encrypted"):
        extra = ["--passphrase-file", secret_file(tmp_path / "pass.txt", PASSPHRASE + "\n"), "--log-n", "10"] if kind == "encrypted" else []
        tool("generate", "--key-file", key, *common, *extra, "-o", tmp_path / "sheet.pdf")
        check = (lambda text: text.startswith("ncryptsec1")) if kind == "encrypted" else (lambda text: text == household.nsec)
        return tmp_path / "sheet.pdf", check, household
    if kind == "code":
        master = secret_file(tmp_path / "mk.hex", secrets.token_hex(32) + "\n")
        tool("code", "new", "--master-key-file", master, "--user-id", "emma@example.org", *common,
             "--code-out", tmp_path / "code.words", "-o", tmp_path / "blob.json", "--sheet", tmp_path / "sheet.pdf")
        words = (tmp_path / "code.words").read_text().strip()
        seedqr = "".join(f"{Mnemonic('english').wordlist.index(word):04d}" for word in words.split())
        return tmp_path / "sheet.pdf", (lambda text: text == seedqr), words
    tool("split", "--key-file", key, "--threshold", 2, "--shares", 3, *common, "--holder", "Abuela Rosa", "--text",
         "--iteration-exponent", 0, "--format", "pdf", "-o", tmp_path / "shares")
    words = (tmp_path / "shares" / "share-1-of-3.txt").read_text().splitlines()[0].strip()
    return tmp_path / "shares" / "share-1-of-3.pdf", (lambda text: text == digits(words)), household


def pdfinfo(path):
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, check=True).stdout.decode()
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)


@pytest.mark.parametrize("kind,lang,paper", CASES)
def test_the_pdf_is_one_true_size_page_with_embedded_fonts_and_vector_codes(tmp_path, kind, lang, paper):
    pdf, check, _ = make(tmp_path, kind, lang, paper)
    info = pdfinfo(pdf)
    assert info["Pages"].strip() == "1"
    width, height = map(float, re.match(r"\s*([\d.]+) x ([\d.]+) pts", info["Page size"]).groups())
    assert (width, height) == pytest.approx(PAPER_POINTS[paper], abs=0.01)
    fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, check=True).stdout.decode().splitlines()[2:]
    assert fonts and all(line.split()[-5] == "yes" for line in fonts), fonts  # the "emb" column
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, check=True).stdout.decode().splitlines()[2:]
    assert images == [], "a QR code or anything else is a raster image"
    # The metadata: the kind of sheet, the tool and the date; nothing of the key.
    metadata = " ".join(value.strip() for name, value in info.items() if name in ("Title", "Subject", "Keywords", "Author", "Creator"))
    assert metadata and not re.search(r"nsec1|ncryptsec1|npub1|\d{40}|García|Rosa|emma", metadata), metadata
    assert info["CreationDate"].strip().endswith("2026 UTC") and "Nov 22" in info["CreationDate"]


@pytest.mark.parametrize("kind,lang,paper", CASES)
def test_the_pdf_drawn_by_poppler_reads_with_both_decoders(tmp_path, kind, lang, paper):
    pdf, check, _ = make(tmp_path, kind, lang, paper)
    for dpi in (300, 150):
        subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", "-singlefile", str(pdf), str(tmp_path / f"page-{dpi}")], check=True)
        picture = tmp_path / f"page-{dpi}.png"
        decoded = zbar(picture) or ""
        if kind == "share":  # two codes: the share and its public check code
            found = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(picture)], capture_output=True)
            decoded = next((text for text in found.stdout.decode().split("\n") if check(text)), "")
        assert check(decoded), f"zbarimg at {dpi} dpi"
        assert any(check(text) for text in zxing(picture)), f"zxing-cpp at {dpi} dpi"


def test_each_kind_restores_through_the_references_from_its_pdf(tmp_path):
    # Recovery: the nsec and the ncryptsec (checked as NIP-49 in test_recovery_sheet).
    for kind in ("recovery", "encrypted"):
        folder = tmp_path / kind
        folder.mkdir()
        pdf, _, household = make(folder, kind, "en", "a4")
        subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", str(pdf), str(folder / "page")], check=True)
        args = ["scan", pdf] + (["--passphrase-file", folder / "pass.txt"] if kind == "encrypted" else [])
        assert tool(*args).stdout.decode().strip() == household.nsec, "the tool reads its own PDF"
        tool("verify", pdf, "--npub", household.npub, *args[2:])
        assert tool(*args[:1], folder / "page.png", *args[2:]).stdout.decode().strip() == household.nsec
    # Encrypted: the ncryptsec read from the PDF by zxing-cpp decrypts with the NIP-49 steps
    # written out in Python (scrypt, XChaCha20-Poly1305), as test_recovery_sheet checks a PNG's.
    folder = tmp_path / "encrypted"
    ncryptsec = next(text for text in zxing(folder / "page.png") if text.startswith("ncryptsec1"))
    hrp, data = _bech32_decode_long(ncryptsec)
    payload = bytes(bech32.convertbits(data, 5, 8, False))
    key = hashlib.scrypt(unicodedata.normalize("NFKC", PASSPHRASE).encode(), salt=payload[2:18], n=2 ** payload[1], r=8, p=1, dklen=32)
    secret = crypto_aead_xchacha20poly1305_ietf_decrypt(payload[43:], payload[42:43], payload[18:42], key)
    assert secret == household.secret
    # Code: the SeedQR digits are BIP-39 word numbers; the reference's mnemonic of them opens the
    # blob with PBKDF2 and AES-256-GCM written out in Python.
    folder = tmp_path / "code"
    folder.mkdir()
    pdf, check, words = make(folder, "code", "en", "a4")
    subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", str(pdf), str(folder / "page")], check=True)
    digits_read = next(text for text in zxing(folder / "page.png") if check(text))
    mnemonic = " ".join(Mnemonic("english").wordlist[int(digits_read[i:i + 4])] for i in range(0, len(digits_read), 4))
    assert Mnemonic("english").check(mnemonic) and mnemonic == words
    blob = json.loads((folder / "blob.json").read_text())
    sealed = base64.b64decode(blob["encrypted_master_key"])
    code_key = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=base64.b64decode(blob["salt"]), iterations=blob["iterations"]).derive(mnemonic.encode())
    assert AESGCM(code_key).decrypt(sealed[:12], sealed[12:], None) == bytes.fromhex((folder / "mk.hex").read_text().strip())
    assert tool("code", "verify", "--sheet", pdf, "--code-file", folder / "code.words").stdout.decode().startswith("code: the sheet's code and")
    assert tool("code", "verify", "--sheet", pdf, "--blob", folder / "blob.json").returncode == 0
    # Shares: any two PDFs combine, with the tool and with the SLIP-39 reference.
    folder = tmp_path / "share"
    folder.mkdir()
    _, _, household = make(folder, "share", "en", "a4")
    shares = [folder / "shares" / f"share-{n}-of-3.pdf" for n in (1, 3)]
    assert tool("combine", *shares).stdout.decode().strip() == household.nsec
    tool("verify", "--shares", *shares, "--npub", household.npub)  # the fire drill reads PDFs as it reads photos
    tool("verify", "--share", shares[0], "--npub", household.npub)
    mnemonics = [(folder / "shares" / f"share-{n}-of-3.txt").read_text().splitlines()[0].strip() for n in (1, 3)]
    assert shamir_mnemonic.combine_mnemonics(mnemonics) == household.secret


@pytest.mark.parametrize("kind", KINDS)
def test_the_pdf_reads_after_print_and_scan(tmp_path, kind):
    pdf, check, _ = make(tmp_path, kind, "en", "letter")
    subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", str(pdf), str(tmp_path / "page")], check=True)
    for dpi in (150, 100):
        scan = tmp_path / f"scan-{dpi}.jpg"
        print_and_scan(tmp_path / "page.png", scan, dpi)
        found = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(scan)], capture_output=True)
        assert any(check(text) for text in found.stdout.decode().split("\n")), f"zbarimg after a {dpi} dpi scan"
        assert any(check(text) for text in zxing(scan)), f"zxing-cpp after a {dpi} dpi scan"


def test_the_same_sheet_gives_the_same_pdf(tmp_path):
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    for name in ("one.pdf", "two.pdf"):
        tool("generate", "--key-file", key, "--date", "2026-11-22", "-o", tmp_path / name)
    assert (tmp_path / "one.pdf").read_bytes() == (tmp_path / "two.pdf").read_bytes()
    assert oct((tmp_path / "one.pdf").stat().st_mode & 0o777) == "0o600"


def test_the_format_follows_the_extension_or_format(tmp_path):
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    assert tool("generate", "--key-file", key, "--format", "pdf", "-o", "-").stdout.startswith(b"%PDF-")
    assert tool("generate", "--key-file", key, "--format", "png", "--dpi", "72", "-o", "-").stdout.startswith(b"\x89PNG")
    for args in (["-o", "-"], ["-o", tmp_path / "sheet"], ["--format", "pdf", "-o", tmp_path / "sheet.png"]):
        result = tool("generate", "--key-file", key, *args, expect=64)  # a usage error
        assert result.stdout == b""
    assert not (tmp_path / "sheet").exists() and not (tmp_path / "sheet.png").exists()


def test_a_pdf_of_several_pages_is_refused_naming_it(tmp_path):
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    tool("generate", "--key-file", key, "-o", tmp_path / "one.pdf")
    subprocess.run(["pdfunite", str(tmp_path / "one.pdf"), str(tmp_path / "one.pdf"), str(tmp_path / "two.pdf")], check=True)
    result = tool("scan", tmp_path / "two.pdf", expect=2)  # invalid input
    assert b"has 2 pages" in result.stderr


def test_without_dejavu_the_sheet_is_refused_naming_the_package(tmp_path):
    """Fontconfig with no fonts at all: Pango would silently set the page in another font."""
    (tmp_path / "fonts.conf").write_text('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig></fontconfig>\n')
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    result = subprocess.run([RECOVERY_SHEET, "generate", "--key-file", str(key), "-o", str(tmp_path / "sheet.pdf")], capture_output=True,
                            env={"FONTCONFIG_FILE": str(tmp_path / "fonts.conf"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode != 0 and b"fonts-dejavu-core" in result.stderr, result.stderr.decode()
    assert not (tmp_path / "sheet.pdf").exists()


def harfbuzz_advance(text, font, points, features=None):
    """The advance of `text` set in `font` at `points`, by HarfBuzz's own shaping."""
    import uharfbuzz
    face = uharfbuzz.Face(uharfbuzz.Blob.from_file_path(font))
    shaper = uharfbuzz.Font(face)
    buffer = uharfbuzz.Buffer()
    buffer.add_str(text)
    buffer.guess_segment_properties()
    uharfbuzz.shape(shaper, buffer, features or {})
    return sum(position.x_advance for position in buffer.glyph_positions) / face.upem * points


@pytest.mark.parametrize("text", ["MyTube", "Technical", "AVATAR Tower"])
def test_text_is_kerned_as_harfbuzz_shapes_it(tmp_path, text):
    """The sheet's label (DejaVu Sans Bold, 14 pt) is as wide as HarfBuzz sets it, kerning
    included, and not as wide as its letters set one by one (the hand-placed glyphs of old)."""
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    tool("generate", "--key-file", key, "--label", text, "--format", "layout", "-o", tmp_path / "page.json")
    page = json.loads((tmp_path / "page.json").read_text())
    label = next(element for element in page["elements"] if element["name"] == "label")
    font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    shaped = harfbuzz_advance(text, font, 14)
    letter_by_letter = sum(harfbuzz_advance(letter, font, 14) for letter in text)
    assert float(label["width"]) == pytest.approx(shaped, abs=0.02)
    assert abs(shaped - letter_by_letter) > 1, "the test would not tell kerned text from unkerned"


def pdf_file(objects):
    """A PDF file of `objects` (numbered from 1, the catalog first) with its cross-reference table."""
    out, offsets = b"%PDF-1.5\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def pdf_bomb(depth=40):
    """8 KB of PDF whose page draws a form that draws the next form twice, 40 deep: 2^40 fills."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /X 5 0 R >> >> /Contents 4 0 R >>",
               b"<< /Length 9 >>\nstream\nq /X Do Q\nendstream"]
    for k in range(depth):
        last = k == depth - 1
        body = b"0 0 595 842 re f" if last else b"q /X Do Q q 0.5 0 0 0.5 10 10 cm /X Do Q"
        resources = b"" if last else b"/Resources << /XObject << /X %d 0 R >> >>" % (6 + k)
        objects.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 595 842] %s /Length %d >>\nstream\n%s\nendstream" % (resources, len(body), body))
    return pdf_file(objects)


@pytest.mark.long
def test_a_hostile_pdf_is_stopped_at_its_limits_and_writes_nothing(tmp_path):
    """poppler reads a PDF in a child process limited in processing time and memory: a few
    kilobytes that would draw for hours are refused in seconds, naming the file."""
    for name in ("bomb.pdf", "bomb2.pdf"):
        (tmp_path / name).write_bytes(pdf_bomb())
    assert len(pdf_bomb()) < 16_384
    for args in (["scan", tmp_path / "bomb.pdf", "-o", tmp_path / "out.nsec"], ["combine", tmp_path / "bomb.pdf", tmp_path / "bomb2.pdf", "-o", tmp_path / "out.nsec"]):
        result = subprocess.run([RECOVERY_SHEET, *map(str, args)], capture_output=True, timeout=60)
        assert result.returncode == 2 and b"bomb.pdf' took more than" in result.stderr, result.stderr.decode()
        assert not (tmp_path / "out.nsec").exists()


# Machine values on paper (issue 37): a key, an npub, an id, a path, a check code or a word is
# printed as its own characters plus spaces and line breaks between its groups of four (counted
# from its start and again after each / and each of its own spaces), never with a hyphen Pango
# added or a break inside a group.

def group_breaks(value):
    """The indexes of `value` before which a printed line may break or a space may stand."""
    points, run = set(), 0
    for index, character in enumerate(value):
        if character == " ":
            points.update((index, index + 1))
            run = 0
            continue
        run += 1
        if run == 4 or character == "/":
            points.add(index + 1)
            run = 0
    return points


def assert_printed(text, value, grouped=True, where=""):
    """`value` is in `text` as its characters with white space only at its group boundaries (or,
    not `grouped`, only at its own spaces), and each of its own spaces printed."""
    kept = [(index, character) for index, character in enumerate(value) if character != " "]
    pattern = "".join(re.escape(character) + (r"(\s*)" if n < len(kept) - 1 else "") for n, (_, character) in enumerate(kept))
    found = re.search(pattern, text)
    assert found, f"{value!r} is not printed whole{where}:\n{text}"
    allowed = group_breaks(value) if grouped else {index + 1 for index, character in enumerate(value) if character == " "}
    for n, gap in enumerate(found.groups()):
        boundary = kept[n][0] + 1
        own_space = kept[n + 1][0] != boundary
        assert not own_space or gap, f"{value!r} lost its space{where}"
        assert not gap or own_space or boundary in allowed, f"{value!r} breaks inside a group, before {value[boundary:]!r}{where}"


def machine_values(kind, household, extra):
    """What a sheet prints that a parent compares or types, as (value, grouped); `extra` is
    the sheet's ncryptsec, share words or code words (None: unknown, not checked)."""
    values = []
    if kind in ("recovery", "encrypted", "share"):
        household_id = household.household_id.hex()
        values += [(household.npub, True), (household_id[:12], True)]
    if kind == "recovery":
        words = Mnemonic("english").to_mnemonic(household.secret).split()
        values += [(household.nsec, True), (household.vault_path, True)] + [(f"{n} {word}", False) for n, word in enumerate(words, 1)]
    if kind == "encrypted":
        values += [(household.vault_path, True)] + ([(extra, True)] if extra else [])
    if kind == "share":
        words = extra.split()
        identifier = shamir_mnemonic.share.Share.from_mnemonic(extra).identifier
        values += [(f"HVT-SHARE {identifier} {household.household_id.hex()[:12]}", True)] + [(f"{n} {word}", False) for n, word in enumerate(words, 1)]
    if kind == "code":
        values += [(f"{n} {word}", False) for n, word in enumerate(extra.split(), 1)]
    return values


def make_sheets(folder, kind, secret, paper, dpi):
    """The sheet of `kind` for `secret` as a PDF and as the page description of its PNG at
    `dpi`, each made on its own; returns the household and, for each of the two, its file and
    what is random in it (the ncryptsec, the share's words, the code's words), None unknown."""
    household = Household(secret)
    key = secret_file(folder / "parent.nsec", household.nsec + "\n")
    common = ["--paper", paper, "--date", "2026-11-22", "--label", "Familia García"]
    if kind in ("recovery", "encrypted"):
        extra = ["--passphrase-file", secret_file(folder / "pass.txt", PASSPHRASE + "\n"), "--log-n", "4", "--weak-passphrase"] if kind == "encrypted" else []
        tool("generate", "--key-file", key, *common, *extra, "-o", folder / "sheet.pdf")
        tool("generate", "--key-file", key, *common, *extra, "--dpi", dpi, "--format", "layout", "-o", folder / "sheet.layout")
        ncryptsec = None
        if kind == "encrypted":
            subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", str(folder / "sheet.pdf"), str(folder / "page")], check=True)
            ncryptsec = zbar(folder / "page.png")
            assert ncryptsec.startswith("ncryptsec1")
        return household, [(folder / "sheet.pdf", ncryptsec), (folder / "sheet.layout", None)]
    if kind == "code":
        master = secret_file(folder / "mk.hex", secret.hex() + "\n")
        made = []
        for name, extra in (("sheet.pdf", []), ("sheet.layout", ["--format", "layout", "--dpi", dpi])):
            tool("code", "new", "--master-key-file", master, "--user-id", "emma@example.org", *common, "--code-out", folder / f"{name}.words",
                 "-o", folder / f"{name}.json", "--sheet", folder / name, *extra)
            made.append((folder / name, (folder / f"{name}.words").read_text().strip()))
        return household, made
    made = []
    for out, format_ in (("shares", ["--format", "pdf"]), ("layouts", ["--format", "layout", "--dpi", dpi])):
        tool("split", "--key-file", key, "--threshold", 2, "--shares", 3, *common, "--holder", "Abuela Rosa", "--text",
             "--iteration-exponent", 0, *format_, "-o", folder / out)
        sheet = next((folder / out).glob("share-1-of-3.[pl]*"))
        made.append((sheet, (folder / out / "share-1-of-3.txt").read_text().splitlines()[0].strip()))
    return household, made


def sheet_text(path):
    """A PDF's text as pdftotext extracts it, in drawing order; a page description's text runs."""
    if path.suffix == ".pdf":
        return subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True).stdout.decode()
    return "\n".join(item["text"] for item in json.loads(path.read_text())["items"] if "text" in item)


SWEEP = [(kind, seed) for kind in KINDS for seed in range(3)]


@pytest.mark.parametrize("kind,seed", SWEEP)
def test_machine_values_are_printed_whole_and_break_only_between_groups(tmp_path, kind, seed):
    """Seeded random keys of every sheet kind, on both papers, as a PDF (its text as pdftotext
    extracts it) and as a PNG at a random resolution (its page description, which the PNG is
    drawn from: the breaks depend on the resolution, which sizes the QR code beside them)."""
    chance = random.Random(f"{kind}-{seed}")
    secret = chance.randbytes(32)
    paper = chance.choice(["a4", "letter"])
    dpi = chance.randint(72, 800)
    household, made = make_sheets(tmp_path, kind, secret, paper, dpi)
    for (sheet, extra), where in zip(made, ["the PDF", f"the {dpi} dpi PNG"]):
        text = sheet_text(sheet)
        values = machine_values(kind, household, extra)
        assert len(values) >= (3 if kind == "encrypted" else 24)
        for value, grouped in values:
            assert_printed(text, value, grouped, where=f" in {where} ({kind}, {paper})")


@pytest.mark.parametrize("dpi", [72, 800])
@pytest.mark.parametrize("kind", ["recovery", "share", "code"])
def test_every_resolution_the_tool_takes_reads_back(tmp_path, kind, dpi):
    """Both ends of --dpi, as a PNG and as a PDF, read back with the tool's own readers: above
    800 an A4 PNG would pass the picture limit scan reads (issue 37), so --dpi stops there."""
    household = Household(secrets.token_bytes(32))
    key = secret_file(tmp_path / "parent.nsec", household.nsec + "\n")
    for format_ in ("png", "pdf"):
        folder = tmp_path / format_
        folder.mkdir()
        common = ["--paper", "a4", "--dpi", dpi, "--date", "2026-11-22", "--format", format_]
        if kind == "recovery":
            tool("generate", "--key-file", key, *common, "-o", folder / f"sheet.{format_}")
            assert tool("scan", folder / f"sheet.{format_}").stdout.decode().strip() == household.nsec, f"{format_} at {dpi} dpi"
        elif kind == "share":
            tool("split", "--key-file", key, "--threshold", 2, "--shares", 3, "--iteration-exponent", 0, *common, "-o", folder / "shares")
            shares = [folder / "shares" / f"share-{n}-of-3.{format_}" for n in (1, 3)]
            assert tool("combine", *shares).stdout.decode().strip() == household.nsec, f"{format_} at {dpi} dpi"
        else:
            master = secret_file(folder / "mk.hex", secrets.token_hex(32) + "\n")
            tool("code", "new", "--master-key-file", master, "--user-id", "emma@example.org", *common, "--code-out", folder / "code.words",
                 "-o", folder / "blob.json", "--sheet", folder / f"sheet.{format_}")
            tool("code", "verify", "--sheet", folder / f"sheet.{format_}", "--code-file", folder / "code.words")
    for outside in (dpi - 1 if dpi == 72 else dpi + 1,):
        result = tool("generate", "--key-file", key, "--dpi", outside, "-o", tmp_path / "outside.png", expect=64)
        assert f"--dpi takes 72 to 800, not {outside}".encode() in result.stderr
        assert not (tmp_path / "outside.png").exists()


# The child that reads a PDF (issue 37): poppler runs in a process of its own, limited, with a
# clean environment, no core file, and output only into the tool's pipes.

def noisy_sheet_pdf(png, extra_operators=2000):
    """A PDF of one page holding a sheet's picture, whose page also has operators poppler does
    not know: it reads, and poppler has something to say about it."""
    with Image.open(png) as picture:
        gray = picture.convert("L")
        width, height, pixels = gray.width, gray.height, zlib.compress(gray.tobytes())
    dpi = 100
    w, h = width * 72 / dpi, height * 72 / dpi
    content = b"foo " * extra_operators + b"q %.2f 0 0 %.2f 0 0 cm /Im Do Q" % (w, h)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im 5 0 R >> >> /Contents 4 0 R >>" % (w, h),
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
               b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream"
               % (width, height, len(pixels), pixels)]
    return pdf_file(objects)


def test_the_pdf_reader_ignores_the_callers_glib_debugging(tmp_path):
    """G_MESSAGES_DEBUG=all makes GLib print poppler's messages to standard output: in the
    child, into the page's pixels. The child gets none of the caller's environment."""
    household = Household(secrets.token_bytes(32))
    key = secret_file(tmp_path / "parent.nsec", household.nsec + "\n")
    tool("generate", "--key-file", key, "--dpi", 100, "-o", tmp_path / "sheet.png")
    (tmp_path / "noisy.pdf").write_bytes(noisy_sheet_pdf(tmp_path / "sheet.png"))
    messages = subprocess.run(["pdftoppm", "-r", "10", "-singlefile", str(tmp_path / "noisy.pdf"), str(tmp_path / "small")], capture_output=True).stderr
    assert b"Unknown operator" in messages, "poppler would say nothing: the test would test nothing"
    for debug in ({}, {"G_MESSAGES_DEBUG": "all", "G_DEBUG": "fatal-warnings"}):
        result = subprocess.run([RECOVERY_SHEET, "scan", str(tmp_path / "noisy.pdf")], capture_output=True, env={**os.environ, **debug})
        assert result.returncode == 0 and result.stdout.decode().strip() == household.nsec, (debug, result.stderr.decode())


def raise_core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def test_a_pdf_that_kills_the_reader_leaves_no_core_file(tmp_path):
    """The bomb runs the child out of processing time (SIGXCPU, a signal that dumps core), a
    truncated sheet is refused: with core files allowed in the caller's shell, neither leaves
    a `core` (which would hold the page, a key) in the folder the tool was run in."""
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    assert not pattern.startswith("|"), f"core files go to {pattern}: the test could not see one"
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    tool("generate", "--key-file", key, "-o", tmp_path / "sheet.pdf")
    whole = (tmp_path / "sheet.pdf").read_bytes()
    (tmp_path / "truncated.pdf").write_bytes(whole[:len(whole) // 2])
    (tmp_path / "bomb.pdf").write_bytes(pdf_bomb())
    for name, message in (("bomb.pdf", b"took more than"), ("truncated.pdf", b"truncated.pdf")):
        result = subprocess.run([RECOVERY_SHEET, "scan", name, "-o", "out.nsec"], capture_output=True, cwd=tmp_path,
                                preexec_fn=raise_core_limit, timeout=60)
        assert result.returncode == 2 and message in result.stderr, (name, result.stderr.decode())
        left = sorted(path.name for path in tmp_path.iterdir())
        assert not any(name.startswith("core") for name in left), left
        assert not (tmp_path / "out.nsec").exists()


def test_the_pdf_reader_writes_only_into_a_pipe(tmp_path):
    """Run by hand, the internal child would write the page (a key) to the terminal or a file:
    it refuses both, before reading anything."""
    key = secret_file(tmp_path / "parent.nsec", Household(secrets.token_bytes(32)).nsec + "\n")
    tool("generate", "--key-file", key, "-o", tmp_path / "sheet.pdf")
    primary, secondary = pty.openpty()
    shown = []

    def read_terminal():  # read while it writes: a full terminal would stall it
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the other end is closed: all it got has been read
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    try:
        with open(tmp_path / "sheet.pdf", "rb") as sheet:
            result = subprocess.run([RECOVERY_SHEET, "_read-pdf"], stdin=sheet, stdout=secondary, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(secondary)
        reader.join()
        os.close(primary)
    shown = b"".join(shown)
    assert result.returncode == 64 and b"writes only into a pipe" in result.stderr, result.stderr.decode()
    assert shown == b""
    with open(tmp_path / "sheet.pdf", "rb") as sheet, open(tmp_path / "page.out", "wb") as out:
        result = subprocess.run([RECOVERY_SHEET, "_read-pdf"], stdin=sheet, stdout=out, stderr=subprocess.PIPE)
    assert result.returncode == 64 and (tmp_path / "page.out").read_bytes() == b""
