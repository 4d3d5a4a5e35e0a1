"""Each tool links only the layers it uses (issue 26): its C libraries, read from the binary's
DT_NEEDED entries, are exactly those Tests/link-table.txt lists, and never one the layers
keep from it (device-link: no libcurl, libpq, SQLite or FreeType; and so on); and no tool
carries ICU (issue 39; the size budgets are checked on the release build by scripts/package)."""
import sys
from pathlib import Path

import pytest

from workspace import BIN, ROOT

sys.path.insert(0, str(ROOT / "scripts" / "lib"))
import check_links  # noqa: E402


@pytest.mark.parametrize("tool,expected", check_links.table().items(), ids=list(check_links.table()))
def test_a_tool_links_what_the_table_says(tool, expected):
    found = check_links.linked(BIN / tool)
    assert found == expected, f"{tool} links {sorted(found)}; the table says {sorted(expected)}"
    assert not found & check_links.NEVER.get(tool, set()), f"{tool} links {sorted(found & check_links.NEVER[tool])}"


@pytest.mark.parametrize("tool", check_links.table(), ids=list(check_links.table()))
def test_no_tool_carries_icu(tool):
    """Issue 39: FoundationEssentials only, NFKC from libunistring; ICU neither linked nor inside
    (a waiver in the table only while a tool still needs one)."""
    problem = check_links.icu_problem(tool, BIN / tool)
    assert problem is None, f"{tool} {problem}"


def test_the_table_names_every_tool():
    assert set(check_links.table()) == {"vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"}
    assert set(check_links.budgets()) == set(check_links.table()) | {"packages"}
    assert all(limit <= 20 for tool, limit in check_links.budgets().items() if tool != "packages") and check_links.budgets()["packages"] <= 25
    assert Path(BIN / "device-link").exists()
