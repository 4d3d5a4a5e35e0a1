"""Sizes (issue 48, item 5): each release tool stripped, the two Debian packages and the fleet
image, beside age, restic and rclone as Debian ships them (their .debs, downloaded by
scripts/bench, and the binary in each, stripped the same way). Writes one JSON file for
bench_report.py; a figure that cannot be had (a package not built, a peer not downloaded) is
null, and the report says so.

    bench_sizes.py BIN PACKAGE_DIR IMAGE PEERS_DIR OUT.json
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]
PEERS = {"age": "usr/bin/age", "restic": "usr/bin/restic", "rclone": "usr/bin/rclone"}


def stripped(binary, scratch):
    """The size of `binary` with its symbols and debug sections removed (strip -o)."""
    out = Path(scratch) / (Path(binary).name + ".stripped")
    subprocess.run(["strip", "-o", str(out), str(binary)], check=True)
    return out.stat().st_size


def main():
    bin_dir, package_dir, image, peers_dir, out = map(Path, sys.argv[1:6])
    sizes = {"tools": {}, "packages": {}, "image": None, "peers": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for tool in TOOLS:
            sizes["tools"][tool] = stripped(bin_dir / tool, scratch)
        for deb in sorted(package_dir.glob("household-vault-tools*_amd64.deb")):
            if "dbgsym" not in deb.name:
                sizes["packages"][deb.name.split("_")[0]] = deb.stat().st_size
        sizes["image"] = image.stat().st_size if image.exists() else None
        for peer, path in PEERS.items():
            debs = sorted(peers_dir.glob(f"{peer}_*.deb"))
            if not debs:
                sizes["peers"][peer] = None
                continue
            root = Path(scratch) / peer
            subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(root)], check=True)
            sizes["peers"][peer] = {"package": debs[-1].stat().st_size, "binary": stripped(root / path, scratch),
                                    "version": debs[-1].name.split("_")[1]}
    out.write_text(json.dumps(sizes, indent=2) + "\n")


main()
