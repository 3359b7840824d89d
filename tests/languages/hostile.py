"""What the hostile tests of the MultiPL-E languages share (Ruby, Lua, PHP, Perl, Bash, R): a language's image,
a MultiPL-E row's job, the attacks around a wrong answer, and right and wrong answers inside tricks.

Each language's test module keeps what is its own: its attacks (completion -> the flag it must carry), its
harmless tricks and hostile wrappers, and what it asserts of particular outcomes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.executor import Job, Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, split
from sandbox.languages import jobs as native_jobs
from sandbox.verdicts import Verdict
from tests.languages.test_javascript_hostile import run_parallel

MIB = 1024 * 1024


def language_image(docker_client: Any, name: str) -> tuple:
    """(client, language, image, toolchain version): what every test below takes, built once per module."""
    language = get(name)
    image = ensure_language_image(docker_client, language)
    return docker_client, language, image, toolchain_version(docker_client, image, language)


def job(language: Any, version: str, row: dict, completion: str, label: str, time_limit_s: float = 3.0) -> Job:
    """A MultiPL-E row's program with `completion`, as the worker would send it."""
    source = split.TestSource("multipl-e", row["prompt"], row["tests"], completion)
    return Job(label, "", time_limit_s, 256 * MIB, language=language.name,
               native=native_jobs.tests_spec(language, source, version, 256 * MIB))


def attack(sandbox: tuple, rows: Mapping[str, dict], attacked: Iterable[str],
           attacks: Mapping[str, tuple[str, str | None]]) -> dict[str, Outcome]:
    """Every attack around each attacked problem's wrong answer: none passes or becomes a sandbox error, and each
    carries its flag. The outcomes, by "<problem> <attack>"."""
    client, language, image, version = sandbox
    jobs, expected = [], {}
    for name in attacked:
        for label, (completion, flag) in attacks.items():
            jobs.append(job(language, version, rows[name], completion, f"{name} {label}"))
            expected[jobs[-1].id] = flag
    outcomes = run_parallel(client, image, jobs)
    wrong = [(j.id, o.verdict.value, o.flags, (o.detail or "")[:300]) for j, o in zip(jobs, outcomes, strict=True)
             if o.verdict in (Verdict.PASSED, Verdict.SANDBOX_ERROR)
             or (expected[j.id] and expected[j.id] not in o.flags)]
    assert not wrong, wrong
    return {j.id: o for j, o in zip(jobs, outcomes, strict=True)}


def assert_verdicts_survive_tricks(sandbox: tuple, rows: Mapping[str, dict], solutions: Mapping[str, dict],
                                   names: Iterable[str], tricks: tuple[str, ...], hostile: tuple[str, ...]) -> None:
    """Each problem's right answer inside a harmless trick passes; its wrong answer inside a hostile wrapper never
    does; nothing becomes a sandbox error."""
    client, language, image, version = sandbox
    jobs, kinds = [], []
    for index, name in enumerate(names):
        row, variants = rows[name], solutions[name]
        jobs.append(job(language, version, row, variants["correct"] + tricks[index % len(tricks)], f"{name} right"))
        kinds.append("right")
        jobs.append(job(language, version, row, variants["wrong"] + hostile[index % len(hostile)], f"{name} wrong",
                        time_limit_s=2.0))
        kinds.append("wrong")
    outcomes = run_parallel(client, image, jobs)
    errors = [(j.id, o.detail) for j, o in zip(jobs, outcomes, strict=True) if o.verdict is Verdict.SANDBOX_ERROR]
    forged = [(j.id, o.detail) for j, o, kind in zip(jobs, outcomes, kinds, strict=True)
              if kind == "wrong" and o.verdict is Verdict.PASSED]
    lost = [(j.id, o.verdict.value, (o.detail or "")[:200]) for j, o, kind in zip(jobs, outcomes, kinds, strict=True)
            if kind == "right" and o.verdict is not Verdict.PASSED]
    assert not errors, errors
    assert not forged, forged
    assert not lost, lost
