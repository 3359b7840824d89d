"""The whole service for real: Postgres, the API over HTTP and worker processes with Docker sandboxes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.localstack import LocalStack
from service.localstack import wait_for_run as wait_for_run  # re-exported for the tests

Stack = LocalStack


@pytest.fixture(scope="session")
def stack() -> Iterator[LocalStack]:
    # Short leases so the SIGKILL test does not wait a minute for reclaiming.
    with LocalStack(prefix="passk_e2e", extra_env={"PASSK_LEASE_SECONDS": "6"}) as running:
        yield running
