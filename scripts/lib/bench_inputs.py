"""Generates scripts/bench's inputs (never committed): a large household vault sealed by the
independent Python reference, 10,000 small v1 vaults with a manifest, and 100,000 files for the
census. Usage: bench_inputs.py WORK_FOLDER MIGRATE_VAULTS CENSUS_FILES"""
import os
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import vaultref  # noqa: E402
from test_rotation import big_household  # noqa: E402
from vaultref import Household, nip19_encode  # noqa: E402


def key_file(path: Path, household: Household):
    path.write_text(household.nsec + "\n")
    path.chmod(0o600)


def child(index: int) -> dict:
    secret = secrets.token_bytes(32)
    return {"profileId": f"child-{index}", "name": f"Child {index}", "theme": "ocean", "mlsGroupIds": [f"group-{index}"],
            "nsec": nip19_encode("nsec", secret), "npub": nip19_encode("npub", bytes.fromhex(vaultref.xonly_pubkey(secret)))}


def household(h: Household, devices: int, children: int, groups: int, members: int) -> dict:
    """The rotation test's large household (devices, and groups of `members` members, half the
    family's device subkeys and half people outside it), with `children` children, each the
    owner of one group."""
    doc = big_household(h, devices, groups, members)
    doc["childProfiles"] = [child(i) for i in range(children)]
    for g in range(min(children, groups)):
        doc["groupMemberships"][g]["childProfileId"] = f"child-{g}"
    return doc


def main():
    work, migrate_count, census_count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    parent, new = Household(secrets.token_bytes(32)), Household(secrets.token_bytes(32))
    key_file(work / "parent.nsec", parent)
    key_file(work / "new.nsec", new)
    # Bench keys are throwaway, so the bare-QR peer may take one on its command line.
    (work / "parent.nsec.public-for-bench").write_text(parent.nsec)
    (work / "big.vault").write_bytes(vaultref.seal_document(parent, household(parent, 50, 20, 500, 10)))

    small = vaultref.seal_document(parent, household(parent, 3, 2, 4, 4))
    vaults = work / "migrate" / "vaults"
    vaults.mkdir(parents=True, exist_ok=True)
    with open(work / "migrate" / "manifest.jsonl", "w") as manifest:
        for index in range(migrate_count):
            (vaults / f"v-{index:05}.vault").write_bytes(small)
            manifest.write(f'{{"vault": "vaults/v-{index:05}.vault", "keyFile": "../parent.nsec"}}\n')

    census = work / "census"
    for index in range(census_count):
        folder = census / f"{index // 1000:03}"
        if index % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"h-{index:06}.vault").write_bytes(small)
    print(f"big.vault {os.path.getsize(work / 'big.vault')} bytes; {migrate_count} vaults to migrate; {census_count} for the census")


if __name__ == "__main__":
    main()
