"""vault-tool census over a folder of 100,000 generated files (issue 4).

The files are envelopes of both schema versions, one of an unknown future version, and some
files that are not vaults, spread over nested folders as a bucket mirror would be. Only headers
are read, so the files are header plus random bytes, as long as a small vault (a file shorter
than the smallest vault is counted as truncated). The elapsed time is printed for docs/performance.md.
"""
import pytest
import json
import os
import subprocess
import time
from workspace import VAULT_TOOL

FILES = int(os.environ.get("CENSUS_FILES", "100000"))


@pytest.mark.long
def test_census_of_100000_files(tmp_path):
    root = tmp_path / "mirror"
    # Schema 7: a version no build reads (3 is read since issue 45).
    expected = {(1, 1, 1): 0, (1, 1, 2): 0, (1, 1, 7): 0}
    not_vaults = 0
    body = os.urandom(700)
    for index in range(FILES):
        folder = root / "vaults" / f"{index % 256:02x}"
        if index % 256 == index:
            folder.mkdir(parents=True)
        path = folder / f"{index:08d}.vault"
        if index % 1000 == 7:
            path.write_bytes(b"not a vault at all")
            not_vaults += 1
            continue
        schema = 7 if index % 5000 == 11 else (2 if index % 3 == 0 else 1)
        path.write_bytes(b"MTVAULT" + bytes([1, 1, schema]) + body)
        expected[(1, 1, schema)] += 1

    start = time.monotonic()
    result = subprocess.run([VAULT_TOOL, "census", "--json", str(root)], capture_output=True)
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stderr.decode()
    census = json.loads(result.stdout)
    assert census["files"] == FILES
    assert census["vaults"] == FILES - not_vaults
    counts = {(k["format"], k["suite"], k["schemaVersion"]): k["count"] for k in census["kinds"]}
    assert counts == expected
    assert [k["supported"] for k in census["kinds"]] == [True, True, False]
    assert len(census["notVaults"]) == not_vaults
    assert census["truncated"] == []
    print(f"\ncensus of {FILES} files: {elapsed:.2f} s ({FILES / elapsed:,.0f} files/s)")


def test_census_list_names_every_vault_with_its_version_and_household(tmp_path):
    """`census --list --json`: one line a vault, read here from the headers independently."""
    root = tmp_path / "mirror"
    expected = {}
    for index in range(300):
        household = os.urandom(32)
        schema = 2 if index % 3 == 0 else 1
        path = root / f"{index % 7}" / f"{household.hex()}.vault"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"MTVAULT" + bytes([1, 1, schema]) + household + os.urandom(24 + 16 + 600))
        expected[str(path.relative_to(root))] = (schema, household.hex())
    (root / "notes.txt").write_text("not a vault\n")
    result = subprocess.run([VAULT_TOOL, "census", "--list", "--json", str(root)], capture_output=True)
    assert result.returncode == 0, result.stderr
    listed = {entry["path"]: (entry["schemaVersion"], entry["householdId"]) for entry in map(json.loads, result.stdout.decode().splitlines())}
    assert listed == expected
