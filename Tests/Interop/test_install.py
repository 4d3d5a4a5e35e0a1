"""The install step (issue 12): scripts/install puts the tools, a manual page per tool generated
from its parser, and bash/zsh/fish completions under a prefix, where man and the shells find
them. Run against the binaries under test (--from), into a temporary prefix."""
import os
import subprocess
from pathlib import Path

import pytest

from workspace import BIN

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ["vault-tool", "recovery-sheet", "rotation-planner", "device-revoker", "device-link"]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    result = subprocess.run([str(ROOT / "scripts/install"), "--prefix", str(prefix), "--from", str(BIN)],
                            capture_output=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr.decode()
    return prefix


def environment(prefix):
    # MANPATH, when set, would replace the search man derives from PATH.
    inherited = {key: value for key, value in os.environ.items() if key != "MANPATH"}
    return {**inherited, "PATH": f"{prefix}/bin:{os.environ['PATH']}", "MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat"}


@pytest.mark.parametrize("tool", TOOLS)
def test_man_finds_the_page_of_every_tool_and_it_renders_cleanly(prefix, tool):
    located = subprocess.run(["man", "-w", tool], capture_output=True, env=environment(prefix), timeout=30)
    assert located.stdout.decode().strip() == f"{prefix}/share/man/man1/{tool}.1", located.stderr
    rendered = subprocess.run(["man", tool], capture_output=True, env=environment(prefix), timeout=30)
    assert rendered.returncode == 0 and rendered.stderr == b"", rendered.stderr.decode()
    text = rendered.stdout.decode()
    assert "Examples:" in text and "EXIT STATUS" in text


def test_the_manual_has_every_subcommand_and_option(prefix):
    text = subprocess.run(["man", "device-revoker"], capture_output=True, env=environment(prefix), timeout=30).stdout.decode()
    for expected in ("registry", "devices", "--not-seen-since", "--keep-last-device", "rejoin-plan"):
        assert expected in text, expected


@pytest.mark.parametrize("tool", TOOLS)
def test_bash_completes_subcommands(prefix, tool):
    script = prefix / "share/bash-completion/completions" / tool
    probe = f'source "{script}"; COMP_WORDS=({tool} ""); COMP_CWORD=1; COMP_LINE="{tool} "; COMP_POINT=${{#COMP_LINE}}; _{tool}; printf "%s\\n" "${{COMPREPLY[@]}}"'
    result = subprocess.run(["bash", "-c", probe], capture_output=True, env=environment(prefix), timeout=30)
    assert result.returncode == 0, result.stderr.decode()
    offered = set(result.stdout.decode().split())
    expected = {"vault-tool": {"migrate", "census"}, "recovery-sheet": {"generate", "verify", "split"},
                "rotation-planner": {"plan", "apply", "verify"}, "device-revoker": {"vault", "registry"},
                "device-link": {"create", "read", "pairing"}}[tool]
    assert expected <= offered, offered


@pytest.mark.parametrize("tool", TOOLS)
def test_zsh_and_fish_completions_and_the_binary_are_installed(prefix, tool):
    assert (prefix / "share/zsh/site-functions" / f"_{tool}").read_text().startswith("#compdef")
    assert f"complete -c '{tool}'" in (prefix / "share/fish/vendor_completions.d" / f"{tool}.fish").read_text()
    assert subprocess.run([str(prefix / "bin" / tool), "--version"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_and_its_manual_page_say_the_one_version(prefix, tool):
    """VERSION is the one source: --version's first line, the manual page's header, the Debian
    changelog's newest entry (which scripts/package also checks) all say it."""
    version = (ROOT / "VERSION").read_text().strip()
    assert version and version.count(".") == 2, version
    said = subprocess.run([str(prefix / "bin" / tool), "--version"], capture_output=True, timeout=30)
    lines = said.stdout.decode().splitlines()
    assert said.returncode == 0 and lines[0] == version, lines
    assert lines[1] == ("reads and writes vaults of envelope format 1, cipher suite 1, schema versions 1, 2 and 3 "
                        "(new vaults: 2)"), lines
    assert lines[2] == "reads and writes rotation plans of version 2", lines
    page = (prefix / "share/man/man1" / f"{tool}.1").read_text()
    assert f"\n.Os household-vault-tools {version}\n" in page
    changelog = (ROOT / "debian/changelog").read_text().splitlines()[0]
    assert changelog.startswith(f"household-vault-tools ({version}) "), changelog
