"""The whole service for real: Postgres, the API over HTTP and worker processes with Docker sandboxes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from passk_dev.localstack import LocalStack
from passk_dev.localstack import wait_for_run as wait_for_run  # re-exported for the tests

Stack = LocalStack
T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout_s: float, what: str, poll_s: float = 0.1) -> T:
    """Poll until `predicate` returns something true (returned); fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
        time.sleep(poll_s)


@pytest.fixture(scope="session")
def stack() -> Iterator[LocalStack]:
    # Short leases so the SIGKILL test does not wait a minute for reclaiming.
    with LocalStack(prefix="passk_e2e", extra_env={"PASSK_LEASE_SECONDS": "6"}) as running:
        yield running
