"""The README's walk-through blocks and who runs each (issue 38): every ```sh block of the
"Walk-throughs" section is run, as pasted, by test_readme.py on the test servers, except those
marked ``IMAGE_MARK`` on the line before them, which use the fleet image and are run by
`scripts/image --check` (scripts/lib/image_check.py), where the image is loaded. No other mark
is taken, so no block is left out without a test failing."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
IMAGE_MARK = "<!-- readme: run by scripts/image --check -->"


def sh_blocks(section_title="Walk-throughs", document=README):
    """(heading, mark, text) of each sh block between "## <section_title>" and the next "## ";
    mark is the HTML comment on the line just before the block, or None."""
    text = document.read_text()
    section = text.split(f"\n## {section_title}", 1)[1].split("\n## ", 1)[0]
    blocks, heading = [], None
    pattern = r"(^### [^\n]*$|(?:^<!--[^\n]*-->\n)?^```sh\n.*?^```$)"
    for part in re.split(pattern, section, flags=re.MULTILINE | re.DOTALL):
        if part.startswith("### "):
            heading = part[4:].strip()
        elif part.startswith("```sh") or (part.startswith("<!--") and "\n```sh\n" in part):
            mark, _, block = part.partition("```sh\n") if part.startswith("<!--") else (None, "", part[len("```sh\n"):])
            blocks.append((heading, mark.strip() if mark else None, block[:-len("```")]))
    return blocks


def image_blocks():
    """(heading, text) of the blocks scripts/image --check runs."""
    return [(heading, text) for heading, mark, text in sh_blocks() if mark == IMAGE_MARK]
