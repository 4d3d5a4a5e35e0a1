"""scripts/image reuses the fleet package scripts/package made unless a source is newer
(fleet_deb_is_current): the folder debian/ itself, which the package's closing `debian/rules
clean` touches, does not count; a file of the sources changed, added or removed does."""
import os
import re
import subprocess

from workspace import ROOT

FUNCTION = re.search(r"^fleet_deb_is_current\(\) \{\n.*?^\}\n", (ROOT / "scripts" / "image").read_text(), re.MULTILINE | re.DOTALL).group(0)
OLD, NEW = 1_700_000_000, 1_700_000_100


def current(tree):
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", FUNCTION + 'fleet_deb_is_current && echo current || echo stale'],
                            cwd=tree, env={"PATH": "/usr/bin:/bin", "FLEET_DEB": "out/fleet.deb"}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip() == "current"


def make_tree(tmp_path):
    files = ["Sources/A/x.swift", "Sources/A/y.swift", "Templates/t.txt", "Package.swift", "Package.resolved", "VERSION",
             "debian/control", "debian/source/format", "scripts/lib/package-stage.sh"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    for folder, names, found in os.walk(tmp_path, topdown=False):
        for name in names + found:
            os.utime(os.path.join(folder, name), (OLD, OLD))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "fleet.deb").write_text("deb")
    os.utime(tmp_path / "out" / "fleet.deb", (NEW, NEW))
    return tmp_path


def test_debian_rules_clean_leaves_the_package_current(tmp_path):
    tree = make_tree(tmp_path)
    assert current(tree)
    (tree / "debian" / "files").write_text("staged")
    (tree / "debian" / "files").unlink()  # what `debian/rules clean` does: debian/ itself is newer
    assert current(tree)


def test_a_source_changed_added_or_removed_makes_it_stale(tmp_path):
    for change in ["changed", "added", "removed"]:
        tree = make_tree(tmp_path / change)
        if change == "changed":
            (tree / "Sources/A/x.swift").write_text("new")
        elif change == "added":
            (tree / "Sources/A/z.swift").write_text("new")
        else:
            (tree / "Sources/A/y.swift").unlink()  # a file removed (or renamed away by git)
        assert not current(tree), change
