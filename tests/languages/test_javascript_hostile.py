"""JavaScript's judge against hostile candidates, through the real sandbox (the JavaScript image, built on demand).

- Attacks: each class of trick a forger has in node (top-level code and exit hooks, exiting with status 0
  early, the environment and /proc, replaced asserts, prototypes and JSON, getters, Proxies and valueOf, lines
  that look like a pass, garbage and forged answers on the reply descriptor, signals and ptrace of every other
  process, child processes), each around a wrong answer, on several problems: none passes, none is
  `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every HumanEval-X JavaScript problem, the canonical solution inside a harmless trick still
  passes, and a wrong answer inside a hostile wrapper fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.executor import Job, Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, split
from sandbox.languages import jobs as native_jobs
from sandbox.verdicts import Verdict
from tests.languages.conftest import exceptions, humaneval_x_rows
from tests.sandbox.programs import run_sharded

MIB = 1024 * 1024
ROWS = humaneval_x_rows("js")
# Problems the attacks run on: booleans, floats, strings, arrays, integers, and a helper in the prompt.
ATTACKED = ("JavaScript/0", "JavaScript/2", "JavaScript/10", "JavaScript/29", "JavaScript/53", "JavaScript/100")
# Every HumanEval-X JavaScript problem's tests fail this answer.
WRONG = "  return 'passk-wrong';\n}\n"

# A framed answer `R T` (true), as the candidate's server would write it.
FORGED = "Buffer.from([0, 0, 0, 2, 0x52, 0x54])"
EVERY_OTHER_PID = ("require('fs').readdirSync('/proc').filter((p) => /^\\d+$/.test(p) && +p !== process.pid).map(Number)")
PTRACE = (
    "import ctypes, os\\nlibc = ctypes.CDLL(None)\\n"
    "for p in os.listdir(\"/proc\"):\\n    if p.isdigit() and int(p) not in (os.getpid(), os.getppid()):\\n"
    "        libc.ptrace(16, int(p), 0, 0)\\n        os.kill(int(p), 9)\\n"
)

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "top-level process.exit(0)": (WRONG + "process.exit(0);\n", "ended_early"),
    "process.exit(0) in the call": ("  process.exit(0);\n}\n", "ended_early"),
    "process.reallyExit(0) in the call": ("  process.reallyExit(0);\n}\n", "ended_early"),
    "exit hooks": (WRONG + "process.on('exit', () => { process.exitCode = 0; });\n"
                   "process.on('uncaughtException', () => process.exit(0));\n"
                   "process.on('beforeExit', () => process.exit(0));\n", None),
    "replaced asserts, prototypes and JSON": (
        WRONG + "console.assert = () => {};\nconst passkAssert = require('node:assert');\n"
        "passkAssert.deepEqual = passkAssert.strictEqual = passkAssert.ok = () => {};\n"
        "JSON.stringify = () => '\"\"';\nString.prototype.valueOf = () => 'passk';\n"
        "Array.prototype.toString = () => '';\nObject.prototype.toJSON = function () { return 1; };\n"
        "Function.prototype.toString = () => 'function () { [native code] }';\n", None),
    "getters, a Proxy and valueOf": (
        "  const lie = { valueOf() { return true; }, toString() { return 'true'; }, get length() { return 0; } };\n"
        "  return new Proxy(lie, { get: (target, key) => (key in target ? target[key] : true) });\n}\n", None),
    "a Proxy of an array": ("  return new Proxy([], { get: (target, key) => (key === 'length' ? 1 : true) });\n}\n", None),
    "environment and /proc": (
        WRONG + "const passkFs = require('fs');\nconsole.log(JSON.stringify(process.env));\n"
        "for (const p of ['/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline']) {\n"
        "  try { console.log(passkFs.readFileSync(p, 'latin1')); } catch (e) { console.log(e.code); }\n}\n"
        f"for (const p of {EVERY_OTHER_PID}) {{\n"
        "  for (const what of ['environ', 'cmdline', 'fd', 'mem']) {\n"
        "    try { console.log(what === 'fd' ? passkFs.readdirSync(`/proc/${p}/fd`) : passkFs.readFileSync(`/proc/${p}/${what}`)); }\n"
        "    catch (e) { console.log(e.code); }\n"
        "    try { passkFs.writeFileSync(`/proc/${p}/mem`, 'x'); } catch (e) { console.log(e.code); }\n  }\n}\n", None),
    "lines that look like a pass": (
        WRONG + "console.log('PASS'); console.error('PASS'); process.stdout.write('\\nPASS\\n');\n"
        "for (const fd of [3, 5, 6, 7]) { try { require('fs').writeSync(fd, 'PASS'); } catch (e) {} }\n", None),
    "garbage on the reply descriptor": (WRONG + "require('fs').writeSync(4, 'garbage');\n", "out_of_turn"),
    "forged answers before any call": (WRONG + f"for (let i = 0; i < 64; i++) require('fs').writeSync(4, {FORGED});\n",
                                       "out_of_turn"),
    "an extra answer with each call": (f"  require('fs').writeSync(4, {FORGED});\n" + WRONG, "out_of_turn"),
    "signals to every other process": (
        WRONG + f"for (const p of {EVERY_OTHER_PID}) {{\n"
        "  for (const s of ['SIGSTOP', 'SIGTERM', 'SIGKILL']) { try { process.kill(p, s); } catch (e) {} }\n}\n",
        "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + f"require('child_process').spawnSync('python3', ['-c', '{PTRACE}']);\n", "reached_judge"),
    "child processes left behind": (
        WRONG + "const passkChild = require('child_process');\n"
        "passkChild.spawn('sh', ['-c', 'sleep 2; echo PASS'], { detached: true, stdio: 'ignore' }).unref();\n"
        "passkChild.spawnSync('sh', ['-c', 'kill -9 -1']);\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing), after the canonical solution.
TRICKS = (
    "console.log('PASS'); console.error('FLAG out_of_turn'); process.stdout.write('\\nPASS\\n');\n",
    "process.on('exit', () => {}); process.on('uncaughtException', (e) => { throw e; });\n",
    "try { require('fs').readFileSync('/proc/self/environ'); require('fs').readFileSync('/proc/1/environ'); } catch (e) {}\n",
    f"for (const p of {EVERY_OTHER_PID}) {{ try {{ process.kill(p, 'SIGKILL'); }} catch (e) {{}} }}\n",
    "Object.defineProperty(Array.prototype, 'passkSum', { value() { return 0; } }); setTimeout(() => {}, 10);\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "top-level process.exit(0)", "exit hooks", "replaced asserts, prototypes and JSON", "garbage on the reply descriptor",
    "forged answers before any call", "signals to every other process",
))


@pytest.fixture(scope="module")
def javascript(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    language = get("javascript")
    image = ensure_language_image(docker_client, language)
    yield docker_client, language, image, toolchain_version(docker_client, image, language)


def run_parallel(docker_client, image: str, jobs: list[Job]) -> list[Outcome]:  # type: ignore[no-untyped-def]
    """`jobs` through two sandboxes at once (the machine's cores), in their order."""
    outcomes = run_sharded(docker_client, image, jobs)
    return [outcomes[job.id] for job in jobs]


def job(language, version: str, row: dict, completion: str, label: str, time_limit_s: float = 3.0) -> Job:  # type: ignore[no-untyped-def]
    source = split.TestSource("humaneval-x", row["prompt"], row["test"], completion, row["declaration"])
    return Job(label, "", time_limit_s, 256 * MIB, language=language.name,
               native=native_jobs.tests_spec(language, source, version, 256 * MIB))


def judged(outcomes: list[Outcome], labels: list[str], expected: dict[str, tuple[str, str | None]]) -> list[tuple]:
    """What went wrong: (label, verdict, flags, detail) of every attack that passed, got sandbox_error, or lacks
    its flag."""
    wrong = []
    for label, outcome in zip(labels, outcomes, strict=True):
        flag = expected[label][1]
        if outcome.verdict in (Verdict.PASSED, Verdict.SANDBOX_ERROR) or (flag and flag not in outcome.flags):
            wrong.append((label, outcome.verdict.value, outcome.flags, (outcome.detail or "")[:300]))
    return wrong


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(javascript) -> None:  # type: ignore[no-untyped-def]
    client, language, image, version = javascript
    rows = {row["task_id"]: row for row in ROWS}
    jobs, labels, expected = [], [], {}
    for task in ATTACKED:
        for name, (completion, flag) in ATTACKS.items():
            label = f"{task} {name}"
            jobs.append(job(language, version, rows[task], completion, label))
            labels.append(label)
            expected[label] = (completion, flag)
    outcomes = run_parallel(client, image, jobs)
    assert not judged(outcomes, labels, expected), judged(outcomes, labels, expected)
    by_label = dict(zip(labels, outcomes, strict=True))
    # Nothing the candidate prints reaches the report; a Proxy's traps never run in the judge.
    assert by_label["JavaScript/0 getters, a Proxy and valueOf"].verdict is Verdict.ERROR
    assert "cannot compare" in (by_label["JavaScript/0 getters, a Proxy and valueOf"].detail or "")
    assert "before its tests finished" in (by_label["JavaScript/0 top-level process.exit(0)"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(javascript) -> None:  # type: ignore[no-untyped-def]
    client, language, image, version = javascript
    listed = exceptions("javascript")
    jobs, kinds = [], []
    for index, row in enumerate(ROWS):
        if row["task_id"] not in listed:
            trick = TRICKS[index % len(TRICKS)]
            jobs.append(job(language, version, row, row["canonical_solution"] + "\n" + trick, f"{row['task_id']} right"))
            kinds.append("right")
        hostile = HOSTILE[index % len(HOSTILE)]
        jobs.append(job(language, version, row, WRONG + hostile, f"{row['task_id']} wrong", time_limit_s=2.0))
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
