"""The worker's engine watch (service/worker/engine.py) on the machine's real Docker engine, and on a hung one: a
Unix socket that accepts connections and never answers, as an engine stuck in its start-up does."""

from __future__ import annotations

import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from service.worker.engine import EngineWatch
from tests.e2e.conftest import wait_until


@pytest.fixture
def hung_engine() -> Iterator[str]:
    """unix://… of a socket whose connections are accepted (by the kernel's backlog) and never read."""
    with tempfile.TemporaryDirectory(prefix="passk-hung-engine-") as root:
        path = Path(root) / "docker.sock"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(64)
        try:
            yield f"unix://{path}"
        finally:
            server.close()


@pytest.fixture
def stopping() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _watching(watch: EngineWatch) -> threading.Thread:
    thread = threading.Thread(target=watch.watch, name="engine-watch", daemon=True)
    thread.start()
    return thread


def test_a_live_engine_answers_and_a_thread_waiting_for_it_goes_on(
    docker_client: docker.DockerClient, stopping: threading.Event
) -> None:
    watch = EngineWatch(stopping)
    assert watch.answers()
    thread = _watching(watch)
    # A claiming thread whose sandbox failed marks the engine down; the watch sees it answer, sweeps and lets it go.
    waiter = threading.Thread(target=watch.wait, daemon=True)
    waiter.start()
    wait_until(lambda: not waiter.is_alive(), 30, "the watch to see the engine answer")
    assert watch.up
    stopping.set()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_a_hung_engine_is_down_and_never_holds_a_thread_past_the_probe(
    hung_engine: str, stopping: threading.Event
) -> None:
    watch = EngineWatch(stopping, base_url=hung_engine)
    # A claiming thread's question gets an answer (no) after the probe's timeout, not after the SDK's two minutes.
    asked = threading.Thread(target=lambda: setattr(asked, "answer", watch.answers()), daemon=True)
    asked.start()
    wait_until(lambda: not asked.is_alive(), 60, "the probe of a hung engine to give up")
    assert asked.answer is False  # type: ignore[attr-defined]
    thread = _watching(watch)
    wait_until(lambda: not watch.up, 60, "the watch to mark a hung engine down")
    # Threads waiting for it stop waiting when the worker stops.
    waiter = threading.Thread(target=watch.wait, daemon=True)
    waiter.start()
    stopping.set()
    wait_until(lambda: not waiter.is_alive() and not thread.is_alive(), 60, "the waiting threads to see the worker stop")
    assert not watch.up
