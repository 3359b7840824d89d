"""The name of a precompiled header in a cache: a pure function of what it was built from.

Standalone (no other imports), so that the C++ image's build (sandbox/languages/cpp_pch/prebuild.py) names the
headers it precompiles exactly as the supervisor (native.py) looks them up.
"""

from __future__ import annotations

import hashlib
import json


def pch_key(toolchain: str, build: list, limits: list, header: str) -> str:
    """`pch-<sha256>` of the toolchain version, the build argv, the compile limits and the header's text."""
    material = json.dumps([toolchain, list(build), list(limits), header], ensure_ascii=False)
    return "pch-" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
