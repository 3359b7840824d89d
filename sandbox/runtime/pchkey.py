"""Where precompiled headers live and what names them: a pure function of what a header was built from.

Standalone (no other imports), so that the C++ image's build (sandbox/languages/cpp/prebuild.py) names and
places the headers it precompiles exactly as the supervisor (builds.py) looks them up.
"""

from __future__ import annotations

import json

# The header's file name in its build directory (its PCH is this + ".gch").
PCH_HEADER = "passk_pch.h"
# Headers precompiled when the image was built: part of the image (read-only, root's), never evicted, shared by
# every container of the image.
PREBUILT_ROOT = "/var/lib/passk/pch"


def pch_key(toolchain: str, build: list, limits: list, header: str) -> str:
    """`pch-<sha256>` of the toolchain version, the build argv, the compile limits and the header's text.

    The limits (CPU seconds, address-space bytes; None where unset) count as numbers, so that a limit of 20
    names the same header as 20.0, whatever type it came in."""
    time_s, memory = limits
    numbers = [None if time_s is None else float(time_s), None if memory is None else int(memory)]
    material = json.dumps([toolchain, list(build), numbers, header], ensure_ascii=False)
    import hashlib  # on use: OpenSSL's bindings would otherwise be in PID 1's memory, which every fork copies

    return "pch-" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
