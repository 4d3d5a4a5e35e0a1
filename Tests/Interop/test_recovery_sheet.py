"""Recovery sheets read back by independent decoders, before and after a simulated print and scan.

Every sheet's QR code must decode to exactly the key with zbar's `zbarimg` and with zxing-cpp,
and still does after the page is downscaled to 150 and to 100 dpi, rotated 2 degrees, blurred
with a 1-pixel Gaussian and saved as JPEG quality 50. The 24 words must decode with
trezor's python-mnemonic to the key's 32 bytes.
"""
import hashlib
import random
import secrets
import subprocess
import unicodedata

import bech32

import pytest
import zxingcpp
from mnemonic import Mnemonic
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt
from nacl.exceptions import CryptoError
from PIL import Image, ImageFilter

from vaultref import Household
from workspace import RECOVERY_SHEET

SHEETS = [(paper, lang, encrypted) for paper in ("a4", "letter") for lang in ("en", "es") for encrypted in (False, True)]


def tool(*args, expect=0):
    result = subprocess.run([RECOVERY_SHEET, *args], capture_output=True)
    assert result.returncode == expect, result.stderr.decode()
    return result.stdout


def zbar(path):
    result = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(path)], capture_output=True)
    return result.stdout.decode().split("\n")[0] if result.returncode == 0 else None


def zxing(path):
    with Image.open(path) as image:
        results = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
    return [result.text for result in results]


def print_and_scan(source, target, dpi):
    """What a printer and a cheap scanner or phone do to a page."""
    with Image.open(source) as page:
        factor = dpi / 300
        scanned = page.convert("L").resize((round(page.width * factor), round(page.height * factor)), Image.LANCZOS)
        scanned = scanned.rotate(2, resample=Image.BICUBIC, expand=True, fillcolor=255)
        scanned = scanned.filter(ImageFilter.GaussianBlur(radius=1))
        scanned.save(target, "JPEG", quality=50)


def make_sheet(tmp_path, paper, lang, encrypted):
    household = Household(secrets.token_bytes(32))
    key_file = tmp_path / "parent.nsec"
    key_file.write_text(household.nsec + "\n")
    key_file.chmod(0o600)
    args = ["generate", "--key-file", str(key_file), "--paper", paper, "--lang", lang, "--date", "2026-11-22",
            "--label", "Familia García", "-o", str(tmp_path / "sheet.png")]
    if encrypted:
        (tmp_path / "pass.txt").write_text("correct horse battery staple\n")
        (tmp_path / "pass.txt").chmod(0o600)
        args += ["--passphrase-file", str(tmp_path / "pass.txt"), "--log-n", "10"]
    tool(*args)
    return household, key_file


@pytest.mark.parametrize("paper,lang,encrypted", SHEETS)
def test_sheet_reads_back_after_print_and_scan(tmp_path, paper, lang, encrypted):
    household, _ = make_sheet(tmp_path, paper, lang, encrypted)
    sheet = tmp_path / "sheet.png"
    with Image.open(sheet) as image:
        assert image.mode == "L" and image.info["dpi"][0] == pytest.approx(300, abs=0.1)

    def expected(text):
        if not encrypted:
            return text == household.nsec
        return text.startswith("ncryptsec1")

    for picture in [sheet] + [tmp_path / f"scan-{dpi}.jpg" for dpi in (150, 100)]:
        if picture != sheet:
            print_and_scan(sheet, picture, int(picture.stem.split("-")[1]))
        assert expected(zbar(picture) or ""), f"zbarimg could not read {picture.name}"
        assert [text for text in zxing(picture) if expected(text)], f"zxing-cpp could not read {picture.name}"
        args = ["scan", str(picture)] + (["--passphrase-file", str(tmp_path / "pass.txt")] if encrypted else [])
        assert tool(*args).decode().strip() == household.nsec


def test_words_decode_with_python_mnemonic(tmp_path):
    for _ in range(20):
        secret = secrets.token_bytes(32)
        household = Household(secret)
        key_file = tmp_path / "k.nsec"
        key_file.write_text(household.nsec)
        key_file.chmod(0o600)
        words = tool("words", "--key-file", str(key_file)).decode().strip()
        assert len(words.split()) == 24
        assert Mnemonic("english").to_entropy(words) == secret
        (tmp_path / "w.txt").write_text(Mnemonic("english").to_mnemonic(secret))
        (tmp_path / "w.txt").chmod(0o600)
        assert tool("words", "--decode", str(tmp_path / "w.txt")).decode().strip() == household.nsec


def test_ncryptsec_from_the_sheet_is_standard_nip49(tmp_path):
    """The QR payload of an encrypted sheet decrypts with an independent NIP-49 implementation."""
    household, _ = make_sheet(tmp_path, "a4", "en", True)
    text = zbar(tmp_path / "sheet.png")
    hrp, data = bech32.bech32_decode(text) if len(text) <= 90 else _bech32_decode_long(text)
    payload = bytes(bech32.convertbits(data, 5, 8, False))
    assert hrp == "ncryptsec" and payload[0] == 2 and payload[1] == 10 and payload[42] == 2
    key = hashlib.scrypt(unicodedata.normalize("NFKC", "correct horse battery staple").encode(), salt=payload[2:18],
                         n=2 ** payload[1], r=8, p=1, dklen=32)
    secret = crypto_aead_xchacha20poly1305_ietf_decrypt(payload[43:], payload[42:43], payload[18:42], key)
    assert secret == household.secret


# Passphrases NFKC changes: ligatures, fullwidth and halfwidth forms, circled and superscript
# digits, decomposed and composed letters, Hangul jamo and syllables, unit and letterlike symbols.
NFKC_POOLS = ["\ufb01\ufb02\ufb00\ufb03", "\uff21\uff22\uff41\uff42\uff11\uff12", "\u2460\u2461\u2474\u2475", "\u00b2\u00b3\u00b9\u2074\u207f",
              "\u00c5\u03a9\u1e69\u00e9", "e\u0301a\u030a\u0323s\u0307", "\u1100\u1161\u11a8", "\uac00\uac01", "\u338f\u3392\u2103\u2122",
              "\uff76\uff9e\uff77\uff9e", "\u212b\u2126\u212a", "\u00a0 \u3000", "\ufdfa\u0644\u0627", "horse"]


@pytest.mark.parametrize("seed", range(8))
def test_an_encrypted_sheets_passphrase_is_nfkc_as_python_normalises_it(tmp_path, seed):
    """NIP-49's NFKC (libunistring, issue 39) gives the bytes Python's unicodedata gives: a sheet
    encrypted under a seeded passphrase that NFKC changes decrypts with the passphrase Python
    normalised, and not with the passphrase as typed."""
    rng = random.Random(seed)
    passphrase = "".join(rng.choice(rng.choice(NFKC_POOLS)) for _ in range(rng.randint(8, 20)))
    assert unicodedata.normalize("NFKC", passphrase) != passphrase
    household = Household(secrets.token_bytes(32))
    (tmp_path / "parent.nsec").write_text(household.nsec + "\n")
    (tmp_path / "parent.nsec").chmod(0o600)
    (tmp_path / "pass.txt").write_bytes(passphrase.encode())
    (tmp_path / "pass.txt").chmod(0o600)
    tool("generate", "--key-file", str(tmp_path / "parent.nsec"), "--date", "2026-11-22", "--passphrase-file", str(tmp_path / "pass.txt"),
         "--weak-passphrase", "--log-n", "10", "-o", str(tmp_path / "sheet.png"))
    text = zbar(tmp_path / "sheet.png")
    hrp, data = bech32.bech32_decode(text) if len(text) <= 90 else _bech32_decode_long(text)
    payload = bytes(bech32.convertbits(data, 5, 8, False))

    def decrypt(password):
        key = hashlib.scrypt(password, salt=payload[2:18], n=2 ** payload[1], r=8, p=1, dklen=32)
        return crypto_aead_xchacha20poly1305_ietf_decrypt(payload[43:], payload[42:43], payload[18:42], key)

    assert decrypt(unicodedata.normalize("NFKC", passphrase).encode()) == household.secret
    with pytest.raises(CryptoError):
        decrypt(passphrase.encode())


def _bech32_decode_long(text):
    """bech32's reference refuses strings over 90 characters; NIP-49 strings are longer."""
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    hrp, data = text[:text.rindex("1")], [charset.find(c) for c in text[text.rindex("1") + 1:]]
    assert bech32.bech32_verify_checksum(hrp, data)
    return hrp, data[:-6]


@pytest.mark.parametrize("second", ["same set", "another set"])
def test_two_share_sheets_in_one_picture_are_refused_not_one_dropped(tmp_path, second):
    """A parents' trial: two share sheets photographed together were combined from one of them,
    the other dropped without a word. A picture is one sheet (exit 2), nothing written."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    for folder in ("a", "b"):
        tool("split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--iteration-exponent", "0", "--dpi", "72",
             "-o", str(tmp_path / folder))
    first = Image.open(tmp_path / "a" / "share-1-of-3.png")
    other = Image.open(tmp_path / ("a" if second == "same set" else "b") / "share-2-of-3.png")
    both = Image.new(first.mode, (first.width + other.width, max(first.height, other.height)), 255)
    both.paste(first, (0, 0))
    both.paste(other, (first.width, 0))
    both.save(tmp_path / "two.png")
    result = subprocess.run([RECOVERY_SHEET, "combine", str(tmp_path / "two.png"), str(tmp_path / "a" / "share-3-of-3.png"),
                             "-o", str(tmp_path / "restored.nsec")], capture_output=True, text=True)
    assert result.returncode == 2 and "more than one sheet's codes" in result.stderr, result.stderr
    assert not (tmp_path / "restored.nsec").exists()


def key_texts(h):
    """Ways a label or a holder's name could carry the key a sheet is made from, or the vault key
    it gives: whole, or a piece of 12 hex digits or more."""
    return {"nsec": h.nsec, "hex": f"Fam {h.secret.hex()}", "hex piece": f"Gran {h.secret.hex()[10:24]}",
            "vault key piece": f"vk {h.vault_key.hex()[:16].upper()}", "secrets key piece": f"Rosa {h.secrets_key.hex()[40:56]}"}


@pytest.mark.parametrize("where", ["--label", "--holder", "--app-name"])
@pytest.mark.parametrize("spelling", ["nsec", "hex", "hex piece", "vault key piece", "secrets key piece"])
def test_no_share_sheet_prints_the_key_it_splits(tmp_path, where, spelling):
    """A trial: `split --label "Fam <the key's hex>"` (or a holder named so) printed the key on
    every share sheet, exit 0: each holder held it whole, and the 2-of-3 split protected
    nothing. What a sheet prints keeps no key the run holds, nor the vault key it gives: refused
    (exit 64), nothing written."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    text = key_texts(h)[spelling]
    result = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--format", "layout",
                             where, text, "-o", str(tmp_path / "shares")], capture_output=True, text=True)
    assert result.returncode == 64 and "holds a key" in result.stderr, (result.returncode, result.stderr)
    assert not (tmp_path / "shares").exists()
    assert h.secret.hex() not in result.stderr and h.nsec not in result.stderr
    plain = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--format", "layout",
                            where, "Smith family 2026", "-o", str(tmp_path / "plain")], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
