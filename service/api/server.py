"""The API under uvicorn, with a shutdown that does not wait for what never ends by itself.

On SIGTERM (a rollout, `docker compose stop`, Ctrl-C) uvicorn stops accepting connections, then waits for the
responses under way. A live-event stream only ends with its run, so one open stream used to hold the process
until the orchestrator killed it. Streams now end at once, after the events they had (their clients resume on
another process with Last-Event-ID), and requests waiting for a run get `api_shutdown_grace_s` to be answered.
"""

from __future__ import annotations

import socket

import uvicorn
from fastapi import FastAPI

from service.api.delivery.events import end_streams
from service.core.settings import Settings


class _Server(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        end_streams(self.config.app)  # before uvicorn waits for the responses under way
        await super().shutdown(sockets)


def serve(app: FastAPI, settings: Settings, host: str, port: int) -> None:
    """Serve `app` until SIGTERM or SIGINT, then shut down as above."""
    config = uvicorn.Config(
        app, host=host, port=port, proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips,
        timeout_graceful_shutdown=settings.api_shutdown_grace_s,
    )
    _Server(config).run()
