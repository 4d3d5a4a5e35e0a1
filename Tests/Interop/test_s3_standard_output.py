"""A bucket run whose standard output is lost fails and is finished by running it again (issue
37's promise, which test_standard_streams.py sweeps over every other command; its workspace has
no object store). Since issue 39 the bucket modes are commands of their own (`migrate bucket`,
`check bucket`), so they are swept here, against the SeaweedFS server scripts/test starts: on a
full disk and on a closed pipe each exits 1 saying so, and the same command then finishes, every
vault in its report once (a migration's done before the failure as `previously-done`)."""
import os
import subprocess

import pytest

import s3fleet
from s3fleet import Fleet, report_lines, tool_environment
from workspace import VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")
HOUSEHOLDS = 3


def lost_output(fault):
    """A descriptor whose first write fails: /dev/full, or a pipe whose reading end is closed."""
    if fault == "full-disk":
        return os.open("/dev/full", os.O_WRONLY)
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("mode", ["migrate bucket", "check bucket"])
@pytest.mark.parametrize("fault", ["full-disk", "closed-pipe"])
def test_a_bucket_run_whose_standard_output_is_lost_fails_and_a_rerun_finishes(tmp_path, mode, fault):
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, HOUSEHOLDS, tmp_path / "keys")
    arguments = [*mode.split(), "--source", f"s3://{bucket}/vaults/", "--vault-key-dir", "keys"]
    if mode == "migrate bucket":
        arguments += ["--to", "2", "--in-place"]
    descriptor = lost_output(fault)
    try:
        # Python gives the child SIGPIPE's default back: a tool that did not ignore it dies of it.
        lost = subprocess.run([VAULT_TOOL, *arguments], cwd=tmp_path, env=tool_environment(), stdin=subprocess.DEVNULL,
                              stdout=descriptor, stderr=subprocess.PIPE, timeout=600)
    finally:
        os.close(descriptor)
    stderr = lost.stderr.decode()
    assert lost.returncode == 1, f"{mode} on a {fault}: exit {lost.returncode}: {stderr}"
    expected = "no space left on device" if fault == "full-disk" else "the reading end of the pipe was closed"
    assert "could not write standard output" in stderr and expected in stderr, stderr
    again = subprocess.run([VAULT_TOOL, *arguments], cwd=tmp_path, env=tool_environment(), stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr.decode()
    lines = report_lines(again.stdout)
    named = sorted(line["vault" if mode == "migrate bucket" else "object"] for line in lines)
    assert named == sorted(f"s3://{bucket}/{path}" for path in fleet.by_path), lines
    statuses = {line["status"] for line in lines}
    assert statuses <= ({"migrated", "previously-done"} if mode == "migrate bucket" else {"ok"}), lines
