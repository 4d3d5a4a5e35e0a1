"""Fixtures shared by the interop tests. The tools are found in one place (workspace.py: BIN
and a name for each tool); the servers scripts/test starts are checked here, so a test whose
server is missing fails, never skips."""
import os

import pytest

import s3fleet


@pytest.fixture
def postgres_server():
    """The throwaway PostgreSQL server scripts/test starts and names in HVT_TEST_PGHOST."""
    assert os.environ.get("HVT_TEST_PGHOST"), "needs the throwaway PostgreSQL server that scripts/test starts: run through scripts/test"


@pytest.fixture
def s3_server():
    """The throwaway SeaweedFS S3 server scripts/test starts and names in HVT_TEST_S3_ENDPOINT."""
    assert s3fleet.ENDPOINT, "needs the throwaway S3 server that scripts/test starts: run through scripts/test"
