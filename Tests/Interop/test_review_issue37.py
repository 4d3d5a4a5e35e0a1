"""Review of issue 37 (h-review): what a hostile or unlucky user still gets through. Each test
is a promise of issue 37 that fails on main at 4b82d6d; see the review report."""
import json
import shutil
import subprocess

from workspace import BIN, FIXTURES


def run(tool, *arguments, cwd, **options):
    return subprocess.run([str(BIN / tool), *arguments], capture_output=True, cwd=cwd, **options)


def keys(folder):
    shutil.copytree(FIXTURES / "keys", folder / "keys")
    for key in (folder / "keys").iterdir():
        key.chmod(0o600)


def test_recovery_words_by_their_four_letter_prefixes_are_never_replaced(tmp_path):
    # words --decode reads four-letter prefixes; the key-file rule must see them as a key.
    keys(tmp_path)
    assert run("recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "words.txt", cwd=tmp_path).returncode == 0
    short = " ".join(word[:4] for word in (tmp_path / "words.txt").read_text().split()) + "\n"
    (tmp_path / "short.txt").write_text(short)
    npub = (tmp_path / "keys/parent.npub").read_text().strip()
    assert run("recovery-sheet", "words", "--decode", "short.txt", "--npub", npub, "-o", "back.nsec", cwd=tmp_path).returncode == 0
    result = run("recovery-sheet", "words", "--key-file", "keys/other.nsec", "-o", "short.txt", cwd=tmp_path)
    assert result.returncode == 4, result.stderr
    assert (tmp_path / "short.txt").read_text() == short


def nsec_bytes(text):
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    accumulator, bits, out = 0, 0, []
    for value in (charset.index(c) for c in text.strip()[5:-6]):
        accumulator, bits = accumulator << 5 | value, bits + 5
        while bits >= 8:
            bits -= 8
            out.append(accumulator >> bits & 255)
    return bytes(out[:32])


def test_a_share_with_its_sheet_title_or_no_break_spaces_is_never_replaced(tmp_path):
    # combine reads a share's words under the sheet's title, and words split by any Unicode space.
    import shamir_mnemonic
    keys(tmp_path)
    secret = nsec_bytes((tmp_path / "keys/parent.nsec").read_text())
    shares = shamir_mnemonic.generate_mnemonics(1, [(2, 3)], secret, b"", extendable=True, iteration_exponent=0)[0]
    titled = "Family key share 1 of 3\n" + shares[0] + "\n"
    spaced = "\u00a0".join(shares[1].split()) + "\n"
    (tmp_path / "titled.txt").write_text(titled)
    (tmp_path / "spaced.txt").write_text(spaced)
    npub = (tmp_path / "keys/parent.npub").read_text().strip()
    assert run("recovery-sheet", "combine", "titled.txt", "spaced.txt", "--npub", npub, "-o", "back.nsec", cwd=tmp_path).returncode == 0
    for name, text in [("titled.txt", titled), ("spaced.txt", spaced)]:
        result = run("recovery-sheet", "words", "--key-file", "keys/other.nsec", "-o", name, cwd=tmp_path)
        assert result.returncode == 4, (name, result.stderr)
        assert (tmp_path / name).read_text() == text


def test_a_merge_never_brings_back_a_device_revoked_in_the_base(tmp_path):
    keys(tmp_path)
    shutil.copy(FIXTURES / "testkit" / "ok-v2-household.vault", tmp_path / "base.vault")
    document = json.loads(run("vault-tool", "open", "base.vault", "--key-file", "keys/parent.nsec", cwd=tmp_path).stdout)
    revoked = [device["deviceId"] for device in document["devices"] if device["status"] == "revoked"]
    assert revoked
    document["revision"] += 1
    for device in document["devices"]:
        device["status"] = "active"
        for field in ("revokedAt", "revocationReason"):
            device.pop(field, None)
    (tmp_path / "theirs.json").write_text(json.dumps(document))
    assert run("vault-tool", "seal", "--key-file", "keys/parent.nsec", "theirs.json", "-o", "theirs.vault", cwd=tmp_path).returncode == 0
    result = run("vault-tool", "merge", "--key-file", "keys/parent.nsec", "--base", "base.vault", "--ours", "base.vault",
                 "--theirs", "theirs.vault", "-o", "merged.vault", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    merged = json.loads(run("vault-tool", "open", "merged.vault", "--key-file", "keys/parent.nsec", cwd=tmp_path).stdout)
    assert all(device["status"] == "revoked" for device in merged["devices"] if device["deviceId"] in revoked)


def test_a_revoke_whose_standard_output_fails_leaves_its_operations_to_a_rerun(tmp_path):
    run("device-revoker", "registry", "init", "--db", "r.sqlite", cwd=tmp_path)
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({
        "user_did": f"did:plc:u{i % 8}", "device_id": f"d{i}", "device_mls_did": f"did:plc:u{i % 8}#d{i}",
        "signature_public_key": f"{i + 1:064x}"}) + "\n" for i in range(40)))
    assert run("device-revoker", "registry", "import", "--db", "r.sqlite", "--devices", "d.jsonl", cwd=tmp_path).returncode == 0
    arguments = ["registry", "revoke", "--db", "r.sqlite", "--device", "did:plc:u1#d1", "--reason", "lost", "--ops", "ops.jsonl"]
    with open("/dev/full", "wb") as full:
        first = subprocess.run([str(BIN / "device-revoker"), *arguments], stdout=full, stderr=subprocess.PIPE, cwd=tmp_path)
    assert first.returncode == 1
    # Either nothing was committed, or the message names the batch; and a rerun completes the job.
    again = run("device-revoker", *arguments, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "ops.jsonl").exists() or b"batch" in first.stderr
