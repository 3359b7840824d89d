"""The differential tests' comparison: passk's verdicts against MultiPL-E's own command for each program, run in
the same image by passk_dev/reference.py (the language's `reference_commands`, its timeout and its pass rule)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from passk_dev.reference import rerun_alone, run_reference
from sandbox.executor import Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get
from sandbox.verdicts import Verdict
from tests.languages.conftest import multipl_e_rows
from tests.languages.hostile import job
from tests.languages.test_javascript_hostile import run_parallel


@dataclass
class Comparison:
    outcomes: dict[str, Outcome]  # passk's, by label
    reference: dict[str, dict]  # the original harness's, by label ({"passed", "exit_code", ...})
    differ: set[str]  # the labels on which they disagree about a pass


def compare_with_multipl_e(docker_client: Any, name: str, rows_code: str, chosen: dict[str, tuple[str, str]],
                           differences: Iterable[str], env: dict[str, str] | None = None) -> Comparison:
    """Each chosen program (label -> (problem, completion)) through passk's sandbox and through MultiPL-E's own
    command in the same image (with `env` added to its environment): no sandbox error, and they disagree on exactly
    the listed `differences`."""
    language = get(name)
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    rows = {row["name"]: row for row in multipl_e_rows(rows_code)}
    texts = {label: rows[problem]["prompt"] + completion + "\n" + rows[problem]["tests"]
             for label, (problem, completion) in chosen.items()}
    reference = run_reference(docker_client, image, language, texts, env=env)
    jobs = [job(language, version, rows[problem], completion, label) for label, (problem, completion) in chosen.items()]
    outcomes = {j.id: o for j, o in zip(jobs, run_parallel(docker_client, image, jobs), strict=True)}
    assert not [label for label, o in outcomes.items() if o.verdict is Verdict.SANDBOX_ERROR]
    rerun_alone(docker_client, image, language, texts, reference,
                {label for label, o in outcomes.items() if o.verdict is Verdict.PASSED}, env=env)
    differ = {label for label in chosen if (outcomes[label].verdict is Verdict.PASSED) != reference[label]["passed"]}
    listed = set(differences)
    assert differ == listed, {label: (outcomes[label].verdict.value, reference[label]["exit_code"])
                              for label in differ ^ listed}
    return Comparison(outcomes, reference, differ)
