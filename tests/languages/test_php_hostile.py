"""PHP's judge against hostile candidates, through the real sandbox (the PHP image, built on demand).

- Attacks: each trick a forger has in PHP (the tests' own functions declared first, objects that stand for the
  answer, `exit`/`die` early, shutdown functions, destructors and an exception handler that exit 0, an error handler
  that swallows everything, the environment and /proc, lines that look like a pass, garbage and forged answers on
  the reply descriptor, a server of its own that answers true, signals and ptrace of every other process, killing
  the parent, child processes), each around a wrong answer, on several problems: none passes, none is
  `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every solvable MultiPL-E PHP row, the right completion inside a harmless trick still passes,
  and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("php")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "php.json").read_text())
SOLVABLE = [name for name, variants in SOLUTIONS.items() if "unsolvable" not in variants]
# Problems the attacks run on: integers, strings, a list, floats, an array as a map (returned and passed), nulls.
ATTACKED = ("HumanEval_53_add", "HumanEval_89_encrypt", "HumanEval_14_all_prefixes", "HumanEval_2_truncate_number",
            "HumanEval_111_histogram", "HumanEval_95_check_dict_case", "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer.
WRONG = "    return 'passk-wrong';\n}\n"
# A framed answer `R T` (true), as the candidate's server would write it.
FORGED = '"\\x00\\x00\\x00\\x02RT"'
EVERY_OTHER_PID = "for p in /proc/[0-9]*; do p=${p#/proc/}; [ $p = $$ ] || { kill -STOP $p; kill -TERM $p; kill -KILL $p; }; done"

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "the tests' own functions declared first": (
        WRONG + "function candidate(...$args) { return true; }\nfunction test(): void {}\n", None),
    "an object that stands for the answer": (
        "    return new class { public function __toString(): string { return 'passk'; } };\n}\n", None),
    "an ArrayObject for a list": ("    return new ArrayObject([]);\n}\n", None),
    "exit(0) at the top level": (WRONG + "exit(0);\n", "ended_early"),
    "exit(0) in the call": ("    exit(0);\n}\n", "ended_early"),
    "die with a message in the call": ("    die('PASS');\n}\n", "ended_early"),
    "shutdown functions, destructors and an exception handler": (
        WRONG + "register_shutdown_function(function () { exit(0); });\n"
        "$GLOBALS['passk_keep'] = new class { public function __destruct() { exit(0); } };\n"
        "set_exception_handler(function () { exit(0); });\n", None),
    "an error handler that swallows everything": (
        WRONG + "set_error_handler(fn() => true);\nerror_reporting(0);\nini_set('display_errors', '0');\n", None),
    "the environment and /proc": (
        WRONG + "var_dump(getenv());\n"
        "foreach (['/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline', '/proc/1/mem'] as $f) {\n"
        "    var_dump(@file_get_contents($f));\n}\n"
        "foreach (glob('/proc/[0-9]*') as $p) {\n    @file_get_contents(\"$p/environ\");\n    @scandir(\"$p/fd\");\n"
        "    @file_put_contents(\"$p/mem\", 'x');\n}\n", None),
    "lines that look like a pass": (
        WRONG + "echo \"PASS\\n\";\nfwrite(STDERR, \"PASS\\n\");\necho \"\\nOK\\n\";\n"
        "foreach ([5, 6, 7] as $fd) {\n    $s = @fopen(\"php://fd/$fd\", 'wb');\n    if ($s) { @fwrite($s, 'PASS'); }\n}\n",
        None),
    "garbage on the reply descriptor": (WRONG + "fwrite(fopen('php://fd/4', 'wb'), 'garbage');\n", "out_of_turn"),
    "forged answers before any call": (
        WRONG + f"$r = fopen('php://fd/4', 'wb');\nfor ($i = 0; $i < 64; $i++) {{ fwrite($r, {FORGED}); }}\n",
        "out_of_turn"),
    "an extra answer with each call": (f"    fwrite(fopen('php://fd/4', 'wb'), {FORGED});\n" + WRONG, "out_of_turn"),
    "a server of its own that answers true": (
        WRONG + "$c = fopen('php://fd/3', 'rb');\n$r = fopen('php://fd/4', 'wb');\n"
        "while (($h = fread($c, 4)) !== false && strlen($h) === 4) {\n"
        f"    fread($c, unpack('N', $h)[1]);\n    fwrite($r, {FORGED});\n}}\n", None),
    "signals to every other process": (WRONG + f"system('{EVERY_OTHER_PID} 2>/dev/null');\n", "reached_judge"),
    "killing the parent": (WRONG + "@posix_kill(posix_getppid(), 9);\n@posix_kill(1, 9);\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "system(<<<'SH'\npython3 -c '" + PTRACE.replace("\\n", "\n") + "'\nSH);\n", "reached_judge"),
    "child processes left behind": (
        WRONG + "exec('(sleep 2; echo PASS) > /dev/null 2>&1 & kill -9 -1');\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "echo 'PASS';\nfwrite(STDERR, \"FLAG out_of_turn\\n\");\necho \"\\nPASS\\n\";\n",
    "register_shutdown_function(function () { fwrite(STDERR, \"bye\\n\"); });\nfunction passk_helper() { return 1; }\n",
    "@file_get_contents('/proc/self/environ');\n@file_get_contents('/proc/1/environ');\n",
    "set_error_handler(fn() => false);\n$passk_generator = (function () { yield 1; })();\n$passk_generator->current();\n"
    "gc_collect_cycles();\n",
    "ini_set('precision', '3');\nmt_srand(1);\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "the tests' own functions declared first", "shutdown functions, destructors and an exception handler",
    "an error handler that swallows everything", "exit(0) at the top level", "forged answers before any call",
    "a server of its own that answers true",
))


@pytest.fixture(scope="module")
def php(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "php")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(php) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(php, ROWS, ATTACKED, ATTACKS)
    # An object never reaches the judge: the answer is refused as a type.
    anything = by_label["HumanEval_89_encrypt an object that stands for the answer"]
    assert anything.verdict is Verdict.ERROR and "type class@anonymous" in (anything.detail or ""), anything
    assert "before its tests finished" in (by_label["HumanEval_53_add exit(0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(php) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(php, ROWS, SOLUTIONS, SOLVABLE, TRICKS, HOSTILE)
