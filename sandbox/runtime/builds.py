"""Compiling a native job's builds: the compile cache, precompiled headers, and what a failed compile means.

Compile cache (`bin/` of CACHE_ROOT, a tmpfs of the judge's uid): keyed by sha256(toolchain version, compile
argv, source files, compile limits); what a compile left is copied there by PID 1 as the judge's uid and copied
into the scratch directory of the next identical build. Only the judge's uid can read it: no candidate, and no
candidate's compiler, ever sees another program's files or another problem's tests.

Precompiled headers (C++; `pch/` of CACHE_ROOT, which the candidate's compiler may read but not list): a build
may carry `pch`, the indices of its source's leading `#include <...>` lines (chosen by the language so that
moving them, in order, to a header of their own leaves the program's meaning unchanged: see
sandbox/languages/cpp.py). The header is exactly those lines, precompiled once per container (as the
candidate's uid, in a fresh directory, under the compile limits, with the compile's own flags) under
pch-<key>, key = sha256(toolchain, build argv, compile limits, header text): a pure function of standard header
names, so no program can change what another program's header means. The program then compiles as
its text with those lines blank and the first of them `#include "<that header>"` (every line keeps its number
and its text). The
image may hold headers precompiled when it was built, under the same keys, in PREBUILT_ROOT: used first, and
the only ones a build of the judge's uid uses (its compile reads nothing a candidate's uid wrote).

A compile that fails is the verdict `compile_error` (the model's failure, with the compiler's first errors); one
stopped at its wall-clock backstop may only measure the machine's load, and is re-run alone like a run's wall
timeout; one that used no CPU for COMPILE_IDLE_S is blocked (an include of a device that never answers):
`compile_error` at once. A language whose compiler reads no file a program names (Scala) is not watched so
(Language.watch_compile_idle): its compile can only stall on a loaded machine, and waits. A trusted build (the
judge's) that stalls is a wall-clock timeout (sandbox/runtime/native.py), never the problem's failed build.
"""

from __future__ import annotations

import json
import os

from . import failure, process
from .job import Build, Native
from .pchkey import PCH_HEADER, PREBUILT_ROOT, pch_key
from .steps import Step

CACHE_ROOT = "/var/cache/passk"
BIN_CACHE = f"{CACHE_ROOT}/bin"
PCH_CACHE = f"{CACHE_ROOT}/pch"
MAX_CACHED_BYTES = 64 * 1024 * 1024
COMPILE_IDLE_S = 5.0

# Per container, for the host (reported with each result): the counters' names, and their values.
STATS = ("compiles", "compile_hits", "pch_builds", "pch_hits", "pch_prebuilt", "pch_rejected")
stats = dict.fromkeys(STATS, 0)
# Header keys whose build failed or whose PCH is too big for the cache: compiled without a PCH.
_PCH_REFUSED: set = set()
# Keys of the cached judge and support builds (kept when the cache makes room), and of those that did not build
# (the problem's own failure: the same answer for its every sample, without compiling again).
TRUSTED: set = set()
FAILED_TRUSTED: dict = {}


def cache_key(spec: Native, build: Build) -> str:
    files = sorted((name, text) for name, text in build.files.items())
    # The compile limits too: a compile that fit a generous limit says nothing about a tighter one.
    limits = [spec.compile_time_limit_s, spec.compile_memory_bytes]
    material = json.dumps([spec.toolchain, build.compile, files, limits], ensure_ascii=False)
    import hashlib  # on use: OpenSSL's bindings would otherwise be in PID 1's memory, which every fork copies

    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def read_tree(root: str, max_bytes: int = MAX_CACHED_BYTES) -> list | None:
    """[(relative path, mode, bytes)] of the regular files under root (as the current uid); None if too big."""
    found, total = [], 0
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
            total += len(data)
            if total > max_bytes:
                return None
            found.append((os.path.relpath(path, root), os.stat(path).st_mode & 0o777, data))
    return found


def write_tree(root: str, files: list) -> None:
    for relative, mode, data in files:
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, mode)


def _cache_dirs() -> bool:
    """The cache's two parts, made on first use by the judge's uid: bin/ (0700) and pch/ (0711)."""
    if not os.path.isdir(CACHE_ROOT):
        return False
    with process.as_uid(process.JUDGE_UID):
        for path, mode in ((BIN_CACHE, 0o700), (PCH_CACHE, 0o711)):
            if not os.path.isdir(path):
                try:
                    os.mkdir(path, mode)
                except FileExistsError:
                    pass
                except OSError:
                    return False
    return True


def cache_store(key: str, scratch: str, owner: int, root: str = BIN_CACHE, max_bytes: int = MAX_CACHED_BYTES,
                readable: bool = False) -> bool:
    """Copy what `owner` left in `scratch` into the cache under `key` (0700, or 0755 when `readable`)."""
    if not _cache_dirs():
        return False
    with process.as_uid(owner):
        files = read_tree(scratch, max_bytes)
    if files is None:
        return False
    target = os.path.join(root, key)
    partial = target + ".partial"
    directory_mode = 0o755 if readable else 0o700

    def mode(original: int) -> int:
        executable = original & 0o100
        if readable:
            return 0o755 if executable else 0o644
        return 0o700 if executable else 0o600

    with process.as_uid(process.JUDGE_UID):
        for attempt in range(3):
            try:
                if os.path.lexists(partial):
                    process.remove_tree(partial)
                os.mkdir(partial, directory_mode)
                write_tree(partial, [(r, mode(m), d) for r, m, d in files])
                for directory, _, _ in os.walk(partial):
                    os.chmod(directory, directory_mode)
                os.rename(partial, target)
                if owner == process.JUDGE_UID and root == BIN_CACHE:
                    TRUSTED.add(key)
                return True
            except OSError:
                if os.path.lexists(partial):
                    process.remove_tree(partial)
                _evict(everything=attempt > 0)
    return False


def _evict(everything: bool) -> None:
    """Make room (as the judge's uid): the candidates' builds first, since one serves one program while a judge
    or support build serves every sample of its problem; everything, precompiled headers included, if that was
    not enough."""
    for part in (BIN_CACHE, PCH_CACHE) if everything else (BIN_CACHE,):
        for entry in os.listdir(part):
            if everything or entry not in TRUSTED:
                process.remove_tree(os.path.join(part, entry))
                TRUSTED.discard(entry)


def cache_fetch(key: str, scratch: str, owner: int) -> bool:
    source = os.path.join(BIN_CACHE, key)
    if not os.path.isdir(CACHE_ROOT):
        return False
    with process.as_uid(process.JUDGE_UID):
        if not os.path.isdir(source):
            return False
        files = read_tree(source)
    if files is None:
        return False
    with process.as_uid(owner):
        write_tree(scratch, [(r, m | 0o600, d) for r, m, d in files])
    return True


# ------------------------------------------------------------------ precompiled headers


def pch_split(spec: Native, build: Build) -> tuple[str, str, str] | None:
    """(key, header text, the source with the header's lines blank) for a build with `pch`, else None."""
    pch = build.pch
    if pch is None or not pch.lines:
        return None
    lines = build.files[pch.file].split("\n")
    picked = sorted(set(int(index) for index in pch.lines))
    if picked[-1] >= len(lines):
        return None
    header = "".join(lines[index] + "\n" for index in picked)
    for index in picked:
        lines[index] = ""
    limits = [spec.compile_time_limit_s, spec.compile_memory_bytes]
    return pch_key(spec.toolchain, pch.build, limits, header), header, "\n".join(lines)


def prepare_pch(spec: Native, build: Build, scratch: str, owner: int, build_dir: str, run_step) -> tuple[str | None, Step | None]:
    """Rewrite the build's source to include its precompiled header; returns (how: "prebuilt" | "hit" | "built" |
    None, the header build's Step if one ran). Without a usable header the source is left as it came. A build
    of the judge's uid uses only headers from the image (its compile reads nothing a candidate's uid wrote)."""
    split = pch_split(spec, build)
    if split is None or not _cache_dirs():
        return None, None
    key, header, body = split
    prebuilt = os.path.join(PREBUILT_ROOT, key)
    entry = os.path.join(PCH_CACHE, key)
    how, step = "hit", None
    if os.path.isfile(os.path.join(prebuilt, PCH_HEADER + ".gch")):
        how, entry = "prebuilt", prebuilt
        stats["pch_prebuilt"] += 1
    elif key in _PCH_REFUSED or owner != process.CANDIDATE_UID:
        return None, None
    elif not _pch_present(entry):
        how = "built"
        # A fresh directory holding nothing but the header: the build sees only the header's own text.
        with process.as_uid(process.CANDIDATE_UID):
            os.mkdir(build_dir, 0o700)
            with open(os.path.join(build_dir, PCH_HEADER), "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(header)
        try:
            step = run_step(list(build.pch.build), build_dir)  # type: ignore[union-attr]
            built = (compile_verdict(step, spec.compile_time_limit_s) is None
                     and cache_store(key, build_dir, process.CANDIDATE_UID, PCH_CACHE,
                                     int(build.pch.max_bytes or MAX_CACHED_BYTES), readable=True))  # type: ignore[union-attr]
        finally:
            process.remove_as(process.CANDIDATE_UID, build_dir)
        if not built or not _pch_present(entry):
            if not step.wall_timeout:  # a wall timeout may only measure the load: the next program tries again
                _PCH_REFUSED.add(key)
            return None, step
        stats["pch_builds"] += 1
    else:
        stats["pch_hits"] += 1
    name = build.pch.file  # type: ignore[union-attr]
    # On the header's first line (only blank lines and comments come before it): every line keeps its number
    # and its text, so the compiler's errors point at, and quote, the program's own lines.
    lines = body.split("\n")
    lines[min(build.pch.lines)] = f'#include "{entry}/{PCH_HEADER}"'  # type: ignore[union-attr]
    text = "\n".join(lines)
    with process.as_uid(owner):
        with open(os.path.join(scratch, name), "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    return how, step


def _pch_present(entry: str) -> bool:
    with process.as_uid(process.JUDGE_UID):
        return os.path.isfile(os.path.join(entry, PCH_HEADER + ".gch"))


def compile_verdict(step: Step, limit_s: float) -> dict | None:
    """None if the compile succeeded; else the job's verdict."""
    base = {"exit_code": step.exit_code if step.exit_code >= 0 else None, "signal": step.signum}
    if step.idle:
        return {**base, "verdict": "compile_error",
                "detail": f"compile: blocked, using no CPU for {COMPILE_IDLE_S:g} s (the program's compile waits on "
                          "something that never comes)"}
    if step.wall_timeout:
        # May only measure the machine's load: a wall timeout is re-run alone before it is final.
        return {**base, "verdict": "timeout", "timeout_kind": "wall",
                "detail": f"compile: wall-clock limit exceeded (compile CPU limit {limit_s:g} s)"}
    if step.cpu_timeout(limit_s):
        return {**base, "verdict": "compile_error", "detail": f"compile: CPU time limit of {limit_s:g} s exceeded"}
    if step.oom:
        return {**base, "verdict": "compile_error", "detail": "compile: memory limit exceeded"}
    if step.exit_code != 0:
        stderr = step.stderr.text()  # type: ignore[union-attr]
        errors = [line for line in stderr.splitlines() if "error" in line.lower()]
        shown = "\n".join(errors[:5]) if errors else stderr
        reason = f"killed by signal {process.signal_name(step.signum)}" if step.signum else f"status {step.exit_code}"
        return {**base, "verdict": "compile_error", "detail": f"compile failed ({reason}): " + failure.clean(shown.strip(), 1500)}
    return None
