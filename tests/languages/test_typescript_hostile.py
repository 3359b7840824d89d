"""TypeScript's judge against hostile candidates, through the real sandbox (the TypeScript image): the attacks of
tests/languages/test_javascript_hostile.py that TypeScript's compile lets through, each around a wrong answer, on
MultiPL-E rows. None passes, none is `sandbox_error`, each carries the flag its trick must raise; a completion that
tries to swallow the statement passk appends (an open comment or template literal) is the model's compile error."""

from __future__ import annotations

import pytest

from sandbox.executor import Job
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, jobs as native_jobs, split
from sandbox.verdicts import Verdict
from tests.languages.conftest import multipl_e_rows
from tests.languages.test_javascript_hostile import FORGED, run_parallel

# TypeScript without node's types reaches Buffer through globalThis.
TS_FORGED = FORGED.replace("Buffer", "(globalThis as any).Buffer")

MIB = 1024 * 1024
WRONG = "  return 0 as any;\n}\n"
PROCESS = "(globalThis as any).process"
NODE = "declare var require: any;\n"
ATTACKS: dict[str, tuple[str, str | None, Verdict | None]] = {
    "top-level process.exit(0)": (WRONG + f"{PROCESS}.exit(0);\n", "ended_early", None),
    "exit hooks and replaced asserts": (
        WRONG + NODE + f"{PROCESS}.on('exit', () => {{ {PROCESS}.exitCode = 0; }});\n"
        "const passkAssert = require('node:assert'); passkAssert.deepEqual = () => {};\n", None, None),
    "garbage on the reply descriptor": (WRONG + NODE + "require('fs').writeSync(4, 'garbage');\n", "out_of_turn", None),
    "forged answers": (WRONG + NODE + f"for (let i = 0; i < 64; i++) require('fs').writeSync(4, {TS_FORGED});\n",
                       "out_of_turn", None),
    "signals to every other process": (
        WRONG + NODE + "for (const p of require('fs').readdirSync('/proc')) {\n"
        f"  if (/^\\d+$/.test(p) && +p !== {PROCESS}.pid) {{ try {{ {PROCESS}.kill(+p, 'SIGKILL'); }} catch (e) {{}} }}\n}}\n",
        "reached_judge", None),
    "an open comment swallowing what follows": (WRONG + "/*", None, Verdict.COMPILE_ERROR),
    "an open template literal": (WRONG + "const passkOpen = `", None, Verdict.COMPILE_ERROR),
}


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(docker_client) -> None:  # type: ignore[no-untyped-def]
    language = get("typescript")
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    rows = {row["name"]: row for row in multipl_e_rows("ts")}
    jobs, expected = [], {}
    for name in ("HumanEval_23_strlen", "HumanEval_136_largest_smallest_integers"):
        row = rows[name]
        for attack, (completion, flag, verdict) in ATTACKS.items():
            source = split.TestSource("multipl-e", row["prompt"], row["tests"], completion)
            jobs.append(Job(f"{name} {attack}", "", 3.0, 256 * MIB, language="typescript",
                            native=native_jobs.tests_spec(language, source, version, 256 * MIB)))
            expected[jobs[-1].id] = (flag, verdict)
    outcomes = run_parallel(docker_client, image, jobs)
    wrong = [(job.id, o.verdict.value, o.flags, (o.detail or "")[:200]) for job, o in zip(jobs, outcomes, strict=True)
             if o.verdict in (Verdict.PASSED, Verdict.SANDBOX_ERROR)
             or (expected[job.id][0] and expected[job.id][0] not in o.flags)
             or (expected[job.id][1] and o.verdict is not expected[job.id][1])]
    assert not wrong, wrong
