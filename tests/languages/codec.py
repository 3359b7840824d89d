"""What the codec tests of the MultiPL-E languages share (Ruby, Lua, PHP, Perl, R): building reference values and
raw bytes, running a language's codec script in its image, checking what it answered against
sandbox/runtime/values.py, and running an echo problem through the real sandbox.

Each language's test keeps its own values (what its receiver rebuilds, its literals, what it must refuse), its
script, and how the script is fed and answers."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.executor import Outcome
from sandbox.images import toolchain_version
from sandbox.languages import get
from sandbox.runtime import values as v
from tests.languages.hostile import job
from tests.sandbox.programs import image_sandbox

S = v.string
D = v.f64


def U32(n: int) -> bytes:  # noqa: N802  (named like the wire's field)
    return struct.pack(">I", n)


def bits(value: int) -> v.Node:
    """A double given by its exact bits (NaN payloads, the other zero)."""
    return v.Node("d", value)


def nested(depth: int) -> v.Node:
    node = v.seq("A", [])
    for _ in range(depth):
        node = v.seq("A", [node])
    return node


def raw(*parts: bytes | str) -> bytes:
    """Bytes as written: text as latin-1, so a tag is one byte."""
    return b"".join(part.encode("latin-1") if isinstance(part, str) else part for part in parts)


def container_stdout(docker_client: Any, image: str, command: list[str], environment: dict | None = None) -> str:
    """A codec script's standard output, run in the language's image as the candidate's user, with no network."""
    container = docker_client.containers.run(image, command, entrypoint=[], user="10002:10002", network_mode="none",
                                             detach=True, environment=environment or {})
    try:
        assert container.wait(timeout=120)["StatusCode"] == 0, container.logs()
        return container.logs(stdout=True, stderr=False).decode()
    finally:
        container.remove(force=True)


def assert_matches_the_reference(round_trip: list[v.Node], round_trip_back: Iterable[str],
                                 literals: Mapping[str, v.Node], literals_back: Iterable[str],
                                 refused: Mapping[str, bytes], refused_back: Iterable[str], malformed: str) -> None:
    """Every round trip came back as the reference's bytes (hex), every literal encoded to them, and every refused
    input was answered `malformed` (the language's name for the codec's refusal)."""
    for node, back in zip(round_trip, round_trip_back, strict=True):
        assert back == v.encode(node).hex(), (node, back)
        assert v.same(v.decode(bytes.fromhex(back)), node)
    for (expression, node), back in zip(literals.items(), literals_back, strict=True):
        assert back == v.encode(node).hex(), (expression, v.decode(bytes.fromhex(back)))
    answers = dict(zip(refused, refused_back, strict=True))
    assert all(result == malformed for result in answers.values()), answers


def echo_outcomes(docker_client: Any, image: str, name: str, prompt: str, tests: str,
                  completions: list[str]) -> list[Outcome]:
    """An echo problem's tests against each completion, through the real sandbox, in order."""
    language = get(name)
    version = toolchain_version(docker_client, image, language)
    row = {"prompt": prompt, "tests": tests}
    jobs = [job(language, version, row, completion, f"echo {index}", time_limit_s=5.0)
            for index, completion in enumerate(completions)]
    box = image_sandbox(docker_client, image)
    try:
        return box.run(jobs)
    finally:
        box.close()
