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
import shamir_mnemonic
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
    it gives (whole, or a piece of 12 hex digits or more), or its recovery words, or any key,
    words or share at all (a second trial: the key's 24 words as a holder were printed on
    every share sheet)."""
    other = secrets.token_bytes(32)
    share = shamir_mnemonic.generate_mnemonics(1, [(2, 3)], other, b"", extendable=False, iteration_exponent=0)[0][0]
    return {"nsec": h.nsec, "hex": f"Fam {h.secret.hex()}", "hex piece": f"Gran {h.secret.hex()[10:24]}",
            "vault key piece": f"vk {h.vault_key.hex()[:16].upper()}", "secrets key piece": f"Rosa {h.secrets_key.hex()[40:56]}",
            "words": Mnemonic("english").to_mnemonic(h.secret), "words, numbered": " ".join(
                f"{n}. {w}" for n, w in enumerate(Mnemonic("english").to_mnemonic(h.secret).split(), 1)),
            "another key's words": Mnemonic("english").to_mnemonic(other), "a share": share,
            "another key's hex": f"key: {other.hex()}", "another nsec": bech32.bech32_encode("nsec", bech32.convertbits(other, 8, 5))}


KEY_SPELLINGS = ["nsec", "hex", "hex piece", "vault key piece", "secrets key piece", "words", "words, numbered", "another key's words",
                 "a share", "another key's hex", "another nsec"]


@pytest.mark.parametrize("where", ["--label", "--holder", "--app-name"])
@pytest.mark.parametrize("spelling", KEY_SPELLINGS)
def test_no_share_sheet_prints_the_key_it_splits(tmp_path, where, spelling):
    """A trial: `split --label "Fam <the key's hex>"` (or a holder named so) printed the key on
    every share sheet, exit 0: each holder held it whole, and the 2-of-3 split protected
    nothing. What a sheet prints keeps no key, words or share, nor a piece of a key the run
    holds or the vault key it gives: refused (exit 64), nothing written."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    text = key_texts(h)[spelling]
    result = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--format", "layout",
                             where, text, "-o", str(tmp_path / "shares")], capture_output=True, text=True)
    assert result.returncode == 64 and "holds a key" in result.stderr, (result.returncode, result.stderr)
    assert not (tmp_path / "shares").exists()
    assert h.secret.hex() not in result.stderr and h.nsec not in result.stderr and text not in result.stderr
    plain = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--format", "layout",
                            where, "Smith family 2026", "-o", str(tmp_path / "plain")], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr


@pytest.mark.parametrize("command", ["generate", "code new"])
@pytest.mark.parametrize("where", ["--label", "--app-name"])
@pytest.mark.parametrize("spelling", KEY_SPELLINGS)
def test_no_sheet_prints_a_key_words_or_a_share(tmp_path, command, where, spelling):
    """The rule of a share sheet's text holds for every sheet (PrintedText, their one door): a
    recovery sheet's or a code sheet's label or app name holding a key, recovery words or a
    share, or a piece of the key the run read (the parent key, the master key), is refused
    (exit 64), nothing written; plain text is printed."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    master = tmp_path / "mk.hex"
    master_hex = secrets.token_hex(32)
    master.write_text(master_hex + "\n")
    for file in (key, master):
        file.chmod(0o600)

    def run(text, out):
        args = (["generate", "--key-file", str(key), "-o", str(out / "sheet.layout")] if command == "generate" else
                ["code", "new", "--master-key-file", str(master), "--user-id", "emma", "-o", str(out / "blob.json"),
                 "--sheet", str(out / "code.layout")])
        out.mkdir(mode=0o700)
        return subprocess.run([RECOVERY_SHEET, *args, "--format", "layout", where, text], capture_output=True, text=True)

    text = key_texts(h)[spelling]
    if command == "code new" and spelling.endswith("piece"):
        # A code sheet's run holds the master key, not the parent key: pieces of that one (a
        # trial: 40 of its hex digits were printed as the label).
        text = {"hex piece": f"Gran {master_hex[10:24]}", "vault key piece": f"mk {master_hex[:16].upper()}",
                "secrets key piece": f"Rosa {master_hex[24:64]}"}[spelling]
    result = run(text, tmp_path / "refused")
    assert result.returncode == 64 and "holds a key" in result.stderr, (result.returncode, result.stderr)
    assert not any((tmp_path / "refused").iterdir())
    assert text not in result.stderr and h.nsec not in result.stderr
    plain = run("Smith family 2026", tmp_path / "plain")
    assert plain.returncode == 0, plain.stderr
    assert any("Smith family 2026" in f.read_text() for f in (tmp_path / "plain").iterdir() if f.suffix == ".layout")


SPREADS = ["11, 11 and 2", "6 and 6", "label and app name", "3 and 3", "other words between", "capitalised, run together"]


@pytest.mark.parametrize("spread", SPREADS)
def test_words_spread_over_a_sheets_texts_are_refused(tmp_path, spread):
    """A trial: the 24 words given as a label (words 1-11), a holder (12-22) and the app's name
    (23-24) were each under the twelve words a text is refused at, and all 24 were printed on
    every share sheet, exit 0. A run of four of the key's words, whatever stands between them,
    is a piece of the key the run holds (HeldSecrets), and what a sheet prints as given is also
    read together: refused (exit 64), nothing written."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    words = Mnemonic("english").to_mnemonic(h.secret).split()
    options = {"11, 11 and 2": ["--label", " ".join(words[:11]), "--holder", " ".join(words[11:22]), "--holder", "Bob",
                                "--app-name", " ".join(words[22:])],
               "6 and 6": ["--label", " ".join(words[:6]), "--holder", " ".join(words[6:12]), "--holder", "Bob"],
               "label and app name": ["--label", " ".join(words[:6]), "--app-name", " ".join(words[6:12])],
               "3 and 3": ["--label", " ".join(words[:3]), "--app-name", " ".join(words[3:6])],
               "other words between": ["--label", " x ".join(words[:8])],
               "capitalised, run together": ["--label", "".join(w.capitalize() for w in words[:6])]}[spread]
    result = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "2", "--format", "layout",
                             *options, "-o", str(tmp_path / "shares")], capture_output=True, text=True)
    assert result.returncode == 64 and "holds a key, recovery words or a share" in result.stderr, (result.returncode, result.stderr)
    assert spread != "3 and 3" or "read together" in result.stderr, result.stderr
    assert not (tmp_path / "shares").exists()
    assert " ".join(words[:3]) not in result.stderr and " ".join(words[6:9]) not in result.stderr, result.stderr
    if spread in ("label and app name", "3 and 3"):
        one = subprocess.run([RECOVERY_SHEET, "generate", "--key-file", str(key), "-o", str(tmp_path / "sheet.layout"), "--format", "layout",
                              *options], capture_output=True, text=True)
        assert one.returncode == 64 and "holds a key, recovery words or a share" in one.stderr, one.stderr
        assert not (tmp_path / "sheet.layout").exists()


def test_a_family_whose_names_are_list_words_prints_its_sheets(tmp_path):
    """A review: many names people give holders are BIP-39 words (mom, dad, sister, rose,
    grace…); twelve of them over a sheet's texts are no phrase and no piece of the key, and
    the sheets are printed."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    holders = ["Mom", "Dad", "Sister", "Brother", "Aunt Rose", "Uncle Jack", "Grace", "Cousin"]
    result = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", str(len(holders)), "--format",
                             "layout", "--label", "Smith family 2026", *[a for name in holders for a in ("--holder", name)],
                             "-o", str(tmp_path / "shares")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "shares").iterdir())) == len(holders)


@pytest.mark.parametrize("holder", ["", " ", "\u0301", "\ue000", "Rosa  Luis", "Rosa)"])
def test_a_holder_named_as_nobody_is_refused(tmp_path, holder):
    """A review: `split --holder ""` printed "The other sheets are kept by: , Cy." on a sheet,
    and the first sheet had no "For …" line; a combining mark alone, likewise. A holder is named
    as a record names a person: refused (64), nothing written."""
    h = Household(secrets.token_bytes(32))
    key = tmp_path / "k.nsec"
    key.write_text(h.nsec + "\n")
    key.chmod(0o600)
    result = subprocess.run([RECOVERY_SHEET, "split", "--key-file", str(key), "--threshold", "2", "--shares", "3", "--format", "layout",
                             "--holder", holder, "--holder", "Bob", "--holder", "Cy", "-o", str(tmp_path / "shares")], capture_output=True, text=True)
    assert result.returncode == 64 and "a holder's name" in result.stderr, (result.returncode, result.stderr)
    assert not (tmp_path / "shares").exists()
