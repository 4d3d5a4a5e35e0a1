"""Inputs that are not regular files (issue 37): a FIFO, a character device, a socket, named as
any input of any command (an option, an argument, a line of a manifest or list), is refused
before it is opened, so nothing blocks: opening a FIFO for reading waits for a writer forever,
and /dev/zero never ends. Every input token of every command of the standard-output sweep and
of the nothing-lost table is tried, and the files a manifest names."""
import os
import socket

import pytest

from test_nothing_lost import TIMEOUT, WRITERS, template, tool, workspace  # noqa: F401
from test_standard_streams import STDOUT

# "… is a FIFO, not a regular file", or for a link given as an output "… not to a regular file".
NOT_REGULAR = "regular file"


def token_cases():
    cases = []
    for command, entry in sorted(STDOUT.items()):
        argv = entry.arguments.split()
        for index, token in enumerate(argv):
            if "/" in token or "." in token:
                cases.append(pytest.param(command, argv, index, entry, id=f"{command}:{token}"))
    # Every input slot of the writers, those a manifest names included.
    for writer in WRITERS:
        for name, (kind, default) in writer.slots.items():
            if kind == "in":
                cases.append(pytest.param(writer.command, writer, name, None, id=f"{writer.id}:{name}"))
    return cases


def make_fifo(path):
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def make_socket(path):
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    return server


@pytest.mark.parametrize("command,argv,index,entry", token_cases())
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_non_regular_input_is_refused_without_blocking(workspace, command, argv, index, entry, kind):
    if entry is not None:
        entry.prepare(workspace)
        argv = list(argv)
        token = argv[index]
        if not (workspace / token).is_file():
            return assert_is_an_output_or_a_name(command, token)
    else:
        writer, name = argv, index
        values = writer.defaults()
        argv = writer.render(values, workspace)
        token = values[name]
        if not (workspace / token).is_file():
            pytest.fail(f"{writer.id}: input slot {name} ({token}) is not a file of the workspace")
    target = workspace / token
    keep = None
    if kind == "fifo":
        make_fifo(target)
    elif kind == "socket":
        keep = make_socket(target)
    else:
        target.unlink()
        os.symlink("/dev/zero", target)
    try:
        result = tool(command.split()[0], argv, workspace, timeout=TIMEOUT)
    finally:
        if keep:
            keep.close()
    assert result.returncode != 0, f"{command} {' '.join(argv)} read {token} as a {kind}: {result}"
    text = result.message + result.stdout.decode(errors="replace")
    assert NOT_REGULAR in text, f"{command} {' '.join(argv)} with {token} a {kind}: {result}"


def assert_is_an_output_or_a_name(command, token):
    """A token that names no workspace file is an output, a folder or a value such as a URL."""
    assert not token.endswith((".nsec", ".vaultkey", ".hex")), f"{command}: {token} names a key the workspace lacks"


@pytest.mark.parametrize("line_file", ["vault", "key"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_fifo_named_in_a_manifest_is_refused_without_blocking(workspace, line_file, dry_run):
    (workspace / "fifo.manifest.jsonl").write_text(
        '{"vault": "fifo.vault", "keyFile": "keys/parent.nsec"}\n' if line_file == "vault" else
        '{"vault": "batch-0.vault", "keyFile": "fifo.nsec"}\n')
    make_fifo(workspace / ("fifo.vault" if line_file == "vault" else "fifo.nsec"))
    result = tool("vault-tool", f"migrate --to 2 --manifest fifo.manifest.jsonl --out-dir fifo-out{' --dry-run' if dry_run else ''}",
                  workspace, timeout=TIMEOUT)
    assert result.returncode == 1, result
    assert NOT_REGULAR in result.stdout.decode(), result


@pytest.mark.parametrize("command,argv,index,entry", [case for case in token_cases() if case.values[3] is not None][:8])
def test_a_socket_input_is_refused(workspace, command, argv, index, entry):
    test_a_non_regular_input_is_refused_without_blocking(workspace, command, argv, index, entry, "socket")


def test_a_fifo_as_a_devices_list_is_refused(workspace):
    make_fifo(workspace / "list.fifo")
    result = tool("device-revoker", "registry revoke --db registry.sqlite --devices-file list.fifo --dry-run --now 2026-01-01T00:00:00Z",
                  workspace, timeout=TIMEOUT)
    assert result.returncode == 2, result
    assert NOT_REGULAR in result.message, result


def test_standard_input_still_reads_a_pipe(workspace):
    """`-` is standard input, a pipe here: the refusal is for names, not for standard input."""
    result = tool("vault-tool", "inspect --key-file keys/parent.nsec -", workspace, stdin=(workspace / "work.vault").read_bytes())
    assert result.returncode == 0, result
