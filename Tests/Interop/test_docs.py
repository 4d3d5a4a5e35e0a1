"""The README stays a front page (issue 39): at most 15,000 bytes, the rest in docs/, and every
page of docs/ is reachable from it, directly or through another page."""
import re

from workspace import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"


def linked_pages(page):
    """The docs/*.md pages a page links to, resolved from the page's own folder."""
    found = set()
    for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
        path = (page.parent / target).resolve()
        if path.parent == DOCS.resolve():
            found.add(path)
    return found


def test_the_readme_is_at_most_15000_bytes():
    size = len(README.read_bytes())
    assert size <= 15_000, f"README.md is {size} bytes; move detail into docs/ (issue 39: ≤ 15 KB)"


def test_every_docs_page_is_reachable_from_the_readme():
    reached, frontier = set(), linked_pages(README)
    while frontier:
        page = frontier.pop()
        reached.add(page)
        frontier |= linked_pages(page) - reached
    unreached = {p.name for p in DOCS.resolve().glob("*.md")} - {p.name for p in reached}
    assert not unreached, f"docs/ pages no link reaches from README.md: {sorted(unreached)}"


def test_every_test_the_threat_model_names_exists():
    """docs/threat-model.md (issue 47): each mitigation names the test that shows it; a name
    written `::name` is of the file named before it."""
    text = (DOCS / "threat-model.md").read_text()
    last, named = None, 0
    for path, name in re.findall(r"`((?:Interop|VaultCoreTests|CLITests)/[A-Za-z0-9_/]+\.(?:py|swift))?::([A-Za-z0-9_]+)`", text):
        path = path or last
        last = path
        assert path, f"{name}: no file named before it"
        source = (ROOT / "Tests" / path).read_text()
        assert (f"def {name}(" if path.endswith(".py") else f"func {name}(") in source, f"docs/threat-model.md names {path}::{name}, which does not exist"
        named += 1
    assert named >= 20, named
    for party in ("A thief with a family iPad", "A support agent", "An operator with the bucket", "Someone with an old recovery sheet",
                  "A relative with one family share"):
        assert f"## {party}" in text
