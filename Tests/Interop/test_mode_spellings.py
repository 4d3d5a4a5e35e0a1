"""Every documented spelling of `migrate` and `check` still works (issue 39): each mode is now a
subcommand (`migrate vault|batch|bucket`, `check vault|bucket`), and a command line that leaves
the mode out runs as the mode its options name.

The command lines are every `vault-tool migrate`/`vault-tool check` line of a fenced block in
README.md and docs/*.md, and every example in the tools' own help for these commands. Each runs
twice in a folder holding a key folder as a job mounts it, the object store pointed at a closed
port: as written, and with the mode named by the rule the help states, written out here apart
from the tool's own reading (--source, --inventory, or --manifest with --in-place or --out: a
bucket; --manifest: a batch; for check, --source or --manifest: a bucket; else one vault). Both
must give the same exit code, standard output and standard error, and neither may be a usage
error: whatever fails (no store here, no such file), it is not the command line."""
import hashlib
import json
import os
import re
import shlex
import subprocess

import pytest

from workspace import BIN, ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND = re.compile(r"(?:^|[\s/=])(vault-tool (?:migrate|check)\b.*)$")
SHELL_END = {">", ">>", "|", "2>&1", "&&", ";", "#"}


def command_lines(text):
    """The `vault-tool migrate|check` command lines of the fenced blocks of a Markdown text, a
    continued line (` \\`) joined; a line holding two commands side by side is left out."""
    found, fenced, lines = [], False, text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced or line.count("vault-tool ") != 1 or not COMMAND.search(line):
            continue
        command = line
        while command.rstrip().endswith("\\") and index < len(lines):
            command = command.rstrip()[:-1] + " " + lines[index].strip()
            index += 1
        prefix = line[:line.index("vault-tool")].split()
        environment = dict(word.split("=", 1) for word in prefix if re.fullmatch(r"[A-Z_]+=\S*", word))
        found.append((COMMAND.search(command).group(1), environment))
    return found


def help_examples():
    """The example lines of `migrate` and `check` and of each of their modes, from the tool's help."""
    result = subprocess.run([str(BIN / "vault-tool"), "--experimental-dump-help"], capture_output=True, timeout=20)
    assert result.returncode == 0, result.stderr
    found = []

    def walk(command):
        discussion = command.get("discussion") or ""
        if "Examples:" in discussion:
            found.extend(command_lines("```\n" + discussion.split("Examples:", 1)[1] + "\n```"))
        for sub in command.get("subcommands") or []:
            walk(sub)

    for command in json.loads(result.stdout)["command"]["subcommands"]:
        if command["commandName"] in ("migrate", "check"):
            walk(command)
    return found


def arguments(line, environment):
    """The tool's arguments: the words up to the first redirection or pipe, variables expanded."""
    words = []
    for word in shlex.split(line, comments=False)[1:]:
        if word in SHELL_END or word.startswith(">") or word.startswith("2>"):
            break
        words.append(re.sub(r"\$(\w+)", lambda m: environment.get(m.group(1), m.group(0)), word))
    return words


def expected_mode(words):
    given = set(word.split("=", 1)[0] for word in words)
    if words[0] == "check":
        return "bucket" if given & {"--source", "--manifest"} else "vault"
    if given & {"--source", "--inventory"} or ("--manifest" in given and given & {"--in-place", "--out"}):
        return "bucket"
    return "batch" if "--manifest" in given else "vault"


DOCUMENTED = [(f"{document.name}: {line}", line, environment) for document in DOCUMENTS
              for line, environment in command_lines(document.read_text())]
EXAMPLES = [(f"--help: {line}", line, environment) for line, environment in help_examples()]


def test_the_documents_and_the_help_were_read():
    modes = {expected_mode(arguments(line, environment)) + " " + arguments(line, environment)[0] for _, line, environment in DOCUMENTED}
    assert len(DOCUMENTED) >= 15 and modes == {"vault migrate", "batch migrate", "bucket migrate", "vault check", "bucket check"}, DOCUMENTED
    assert len(EXAMPLES) >= 20, EXAMPLES


def run(words, environment, folder):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "AKIDSPELLING",
           "AWS_SECRET_ACCESS_KEY": "not-a-secret", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
           "AWS_MAX_ATTEMPTS": "1", "AWS_REGION": "us-east-1", **environment}
    return subprocess.run([str(BIN / "vault-tool"), *words], cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)


@pytest.mark.parametrize("name,line,environment", DOCUMENTED + EXAMPLES, ids=[name for name, _, _ in DOCUMENTED + EXAMPLES])
def test_a_documented_spelling_runs_as_its_mode(tmp_path, name, line, environment):
    words = arguments(line, environment)
    # Key folders as a job mounts them, wherever the line names one: a folder with no key is
    # refused (64) before anything is read, which would hide what the test is after.
    for index, word in enumerate(words[:-1]):
        if word == "--vault-key-dir":
            keys = tmp_path / "run" / words[index + 1].lstrip("/")
            keys.mkdir(parents=True, exist_ok=True)
            (keys / (hashlib.sha256(b"spelling household").hexdigest() + ".vaultkey")).write_text(hashlib.sha256(b"k").hexdigest() + "\n")
            words[index + 1] = str(keys)
    # A shard of `--shard auto` is the job engine's: the line runs as in the first pod.
    if "--shard" in words and words[words.index("--shard") + 1] == "auto":
        environment = {"JOB_COMPLETION_INDEX": "0", **environment}
    mode = expected_mode(words)
    results = []
    for spelling in (words, [words[0], mode, *words[1:]]) if words[1] not in ("vault", "batch", "bucket") else (words,):
        folder = tmp_path / f"run-{len(results)}"
        folder.mkdir()
        results.append(run(spelling, environment, folder))
    for result in results:
        stderr = result.stderr.decode(errors="replace")
        assert result.returncode != 64, f"{line}: exit 64: {stderr}"
        for text in ("nknown option", "nexpected argument", "issing expected argument", "belong to different modes", "has no option", "takes no "):
            assert text not in stderr, f"{line}: {stderr}"
    if len(results) == 2:
        old, new = results
        assert (old.returncode, old.stdout, old.stderr.replace(b"run-0", b"run-1")) == (new.returncode, new.stdout, new.stderr), \
            f"{line}: without the mode {old.returncode} {old.stderr!r}, with '{mode}' {new.returncode} {new.stderr!r}"
