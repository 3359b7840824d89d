"""Run at the C++ image's build (its `image_setup`, as root, offline): precompile the headers listed in
headers.json into PREBUILT_ROOT/<key>/, under the same keys the supervisor computes (pchkey.py).

    python3 prebuild.py '{"build": [...], "limits": [20.0, 1073741824]}'

Each header is built exactly as a container would build it (sandbox/runtime/builds.py `prepare_pch`): in a
fresh directory holding only the header, with the compile's own flags, under the default compile limits (CPU
seconds and address space), which are part of the key. A build that fails fails the image build: the list is
made from HumanEval-X's and MultiPL-E's include blocks (tests/test_cpp_header.py checks it), so a failure is a
bug. The toolchain is named as the worker's probe names it: the first line of `g++ --version`.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pchkey import PCH_HEADER, PREBUILT_ROOT, pch_key  # noqa: E402


def main() -> None:
    config = json.loads(sys.argv[1])
    build, limits = config["build"], config["limits"]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "headers.json"), encoding="utf-8") as handle:
        headers = json.load(handle)["headers"]
    version = subprocess.run(["g++", "--version"], check=True, capture_output=True).stdout
    text = version.decode("utf-8", "replace").strip()
    toolchain = text.splitlines()[0].strip() if text else "unknown"
    cpu_s, memory = limits

    def limited() -> None:
        cpu = max(1, math.ceil(cpu_s))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    os.makedirs(PREBUILT_ROOT, exist_ok=True)
    for header in headers:
        key = pch_key(toolchain, build, limits, header)
        work = tempfile.mkdtemp()
        try:
            with open(os.path.join(work, PCH_HEADER), "w", encoding="utf-8") as handle:
                handle.write(header)
            subprocess.run(build, cwd=work, check=True, preexec_fn=limited)
            target = os.path.join(PREBUILT_ROOT, key)
            os.mkdir(target, 0o755)
            for name in (PCH_HEADER, PCH_HEADER + ".gch"):
                shutil.copyfile(os.path.join(work, name), os.path.join(target, name))
                os.chmod(os.path.join(target, name), 0o644)
        finally:
            shutil.rmtree(work)
    os.chmod(PREBUILT_ROOT, 0o755)
    print(f"precompiled {len(headers)} headers for {toolchain!r} into {PREBUILT_ROOT}")


if __name__ == "__main__":
    main()
