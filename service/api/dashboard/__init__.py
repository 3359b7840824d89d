"""The web dashboard, served by the API itself (same origin, no separate front-end server).

Pages are server-rendered shells (Jinja2); small vanilla ES modules under /static fetch the
/v1 JSON API with the session cookie for data and live updates. Nothing is loaded from a CDN.
"""

from __future__ import annotations

from service.api.dashboard.router import STATIC_DIR, install, router

__all__ = ["STATIC_DIR", "install", "router"]
