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
