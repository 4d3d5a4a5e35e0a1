"""Fixtures shared by the interop tests. The tools are found in one place (workspace.py: BIN
and a name for each tool); the servers scripts/test starts are checked here, so a test whose
server is missing fails, never skips."""
import os

import pytest

# No test asks EC2's instance metadata at 169.254.169.254, which is no address of this machine's:
# a tool that finds no credentials would try it last. The credential tests serve IMDS on loopback
# and set their own environment.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")

import s3fleet
from s3fleet import proxy, s3  # noqa: F401 (the object-store tests' fixtures, defined there)


def pytest_configure(config):
    config.addinivalue_line("markers", "long: takes half a minute or more; run first")


def pytest_collection_modifyitems(items):
    """The tests marked long first, the rest in their order: pytest-xdist hands out tests in this
    order, and a minute-long test begun last kept one worker busy while the other had nothing
    left (scripts/test's interop phase)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture
def postgres_server():
    """The throwaway PostgreSQL server scripts/test starts and names in HVT_TEST_PGHOST."""
    assert os.environ.get("HVT_TEST_PGHOST"), "needs the throwaway PostgreSQL server that scripts/test starts: run through scripts/test"


@pytest.fixture
def s3_server():
    """The throwaway SeaweedFS S3 server scripts/test starts and names in HVT_TEST_S3_ENDPOINT."""
    assert s3fleet.ENDPOINT, "needs the throwaway S3 server that scripts/test starts: run through scripts/test"


@pytest.fixture(autouse=True)
def dev_null_stays_writable():
    """Every test leaves /dev/null a character device anyone may write (mode 0666): a tool or a
    test that changed its mode would break every program run by another user after it (the
    test PostgreSQL's initdb, run unprivileged, was stopped so once in a session). Checked
    after every test, so the one that did it fails; put back as root."""
    yield
    import os
    import stat
    info = os.stat("/dev/null")
    if stat.S_ISCHR(info.st_mode) and stat.S_IMODE(info.st_mode) != 0o666:
        if os.geteuid() == 0:
            os.chmod("/dev/null", 0o666)
        raise AssertionError(f"/dev/null was left with mode {oct(stat.S_IMODE(info.st_mode))} (put back to 0o666)")
