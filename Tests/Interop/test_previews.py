"""The sheet previews committed under docs/images (issue 12: "the rendered sheets are committed
as small previews and still pass every read-back test"). Each must still read back as what it
shows, at its preview resolution: a recovery sheet restores the example household's published
test key (an encrypted one with the demo's passphrase), a share sheet's check code names that
household, and a code sheet's SeedQR is 24 valid BIP-39 words (checked with trezor's
python-mnemonic). A preview that drifts from what the tools print fails here, not in a reader's
hands."""
import shutil
import subprocess
from pathlib import Path

import pytest
import zxingcpp
from mnemonic import Mnemonic
from PIL import Image

from workspace import BIN

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs/images"
PASSPHRASE = "correct horse battery staple\n"  # scripts/demo's, for the encrypted previews


def previews(prefix):
    """The PNG previews and the PDF of a sheet kind; the tools read both."""
    found = sorted(IMAGES.glob(f"{prefix}*.png")) + sorted(IMAGES.glob(f"{prefix}*.pdf"))
    assert any(path.suffix == ".png" for path in found) and any(path.suffix == ".pdf" for path in found), f"{prefix}: a PNG and a PDF"
    return found


@pytest.fixture
def key_file(tmp_path):
    key = tmp_path / "household.nsec"
    shutil.copy(ROOT / "Examples/household.nsec", key)
    key.chmod(0o600)
    return key


def recovery_sheet(*arguments):
    return subprocess.run([str(BIN / "recovery-sheet"), *map(str, arguments)], capture_output=True, timeout=120)


@pytest.mark.parametrize("image", previews("recovery-sheet-"), ids=lambda p: p.name)
def test_each_recovery_sheet_preview_restores_the_example_key(image, key_file, tmp_path):
    passphrase = []
    if "encrypted" in image.name:
        (tmp_path / "pass.txt").write_text(PASSPHRASE)
        passphrase = ["--passphrase-file", tmp_path / "pass.txt"]
    result = recovery_sheet("verify", image, "--key-file", key_file, *passphrase)
    assert result.returncode == 0, result.stderr.decode()
    assert b"match: it is the key in" in result.stdout


@pytest.mark.parametrize("image", previews("share-sheet-"), ids=lambda p: p.name)
def test_each_share_sheet_preview_names_the_example_household(image, key_file):
    result = recovery_sheet("verify", "--share", image, "--key-file", key_file)
    assert result.returncode == 0, result.stderr.decode()
    assert b"match: the sheet's check code names household" in result.stdout


@pytest.mark.parametrize("image", previews("recovery-code-"), ids=lambda p: p.name)
def test_each_code_sheet_preview_holds_a_valid_code(image, tmp_path):
    if image.suffix == ".pdf":  # drawn by poppler's own pdftoppm, not by the tool
        subprocess.run(["pdftoppm", "-r", "150", "-gray", "-png", "-singlefile", str(image), str(tmp_path / "page")], check=True)
        image = tmp_path / "page.png"
    with Image.open(image) as picture:
        codes = [result.text for result in zxingcpp.read_barcodes(picture)]
    assert len(codes) == 1 and len(codes[0]) == 96 and codes[0].isdigit(), codes
    english = Mnemonic("english")
    words = [english.wordlist[int(codes[0][i:i + 4])] for i in range(0, 96, 4)]
    assert english.check(" ".join(words))
