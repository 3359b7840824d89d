"""Perl's judge against hostile candidates, through the real sandbox (the Perl image, built on demand).

- Attacks: each trick a forger has in Perl (Test::Deep's eq_deeply redefined, `exit` overridden before the tests
  are compiled, END blocks that reset the exit status, a `$SIG{__DIE__}` hook that exits 0, `exit`/`POSIX::_exit`
  early, `__END__` before the tests, the environment and /proc, lines that look like a pass, garbage and forged
  answers on the reply descriptor, a replaced server, objects that claim to equal anything, signals and ptrace of
  every other process, killing the parent, child processes), each around a wrong answer, on several problems: none
  passes, none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every MultiPL-E Perl row, the right completion inside a harmless trick still passes, and a
  wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("pl")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "pl.json").read_text())
# Problems the attacks run on: integers, strings, a hash argument, floats, arrays, a hash, undef in an array.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_95_check_dict_case", "HumanEval_2_truncate_number",
            "HumanEval_25_factorize", "HumanEval_111_histogram", "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer.
WRONG = "    return 'passk-wrong';\n}\n"
# A framed answer `R A[T]` (a list holding true), as the candidate's server would write it.
FORGED = "pack('N', 6) . 'RA' . pack('N', 1) . 'T'"
EVERY_OTHER_PID = "(grep { /^\\d+$/ && $_ != $$ } do { opendir(my $d, '/proc'); readdir($d) })"

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "Test::Deep's eq_deeply redefined": (
        WRONG + "no warnings;\n*main::eq_deeply = sub { 1 };\n*Test::Deep::eq_deeply = sub { 1 };\n", None),
    "exit overridden before the tests are compiled": (
        WRONG + "BEGIN { *CORE::GLOBAL::exit = sub { CORE::exit(0) } }\n", None),
    "END blocks": (WRONG + "END { $? = 0; print \"PASS\\n\" }\n", None),
    "a die hook that exits 0": ("    $SIG{__DIE__} = sub { CORE::exit(0) };\n    die 'no';\n}\n", "ended_early"),
    "an object that equals anything": (
        "    package PasskAny { use overload '==' => sub { 1 }, 'eq' => sub { 1 }, '\"\"' => sub { '0' },"
        " 'bool' => sub { 1 }, fallback => 1; }\n    return bless {}, 'PasskAny';\n}\n", None),
    "exit 0 at the top level": (WRONG + "exit 0;\n", "ended_early"),
    "exit 0 in the call": ("    exit 0;\n}\n", "ended_early"),
    "POSIX::_exit(0) in the call": ("    require POSIX;\n    POSIX::_exit(0);\n}\n", "ended_early"),
    "__END__ before the tests": (WRONG + "__END__\n", "ended_early"),
    "the environment and /proc": (
        WRONG + "print join(',', %ENV), \"\\n\";\n"
        "for my $f ('/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline') {\n"
        "    open(my $h, '<', $f) ? print(<$h>) : print(\"$!\\n\");\n}\n"
        f"for my $p ({EVERY_OTHER_PID}) {{\n"
        "    for my $w ('environ', 'cmdline', 'mem') { open(my $h, '<', \"/proc/$p/$w\") ? print(<$h>) : print(\"$!\\n\") }\n"
        "    opendir(my $d, \"/proc/$p/fd\") ? print(readdir($d)) : print(\"$!\\n\");\n"
        "    open(my $m, '>', \"/proc/$p/mem\") ? print($m 'x') : print(\"$!\\n\");\n}\n", None),
    "lines that look like a pass": (
        WRONG + "print \"PASS\\n\"; print STDERR \"PASS\\n\"; print \"ok!ok!ok!\\n\";\n"
        "for my $fd (5, 6, 7) { open(my $h, '>&=', $fd) and syswrite($h, 'PASS') }\n", None),
    "garbage on the reply descriptor": (WRONG + "open(my $passk_h, '>&=', 4); syswrite($passk_h, 'garbage');\n",
                                        "out_of_turn"),
    "forged answers before any call": (
        WRONG + f"open(my $passk_h, '>&=', 4); syswrite($passk_h, {FORGED}) for 1 .. 64;\n", "out_of_turn"),
    "an extra answer with each call": (f"    open(my $h, '>&=', 4); syswrite($h, {FORGED});\n" + WRONG, "out_of_turn"),
    "the server replaced by one that answers true": (
        WRONG + "no warnings;\n*PasskServer::serve = sub {\n    open(my $c, '<&=', 3); open(my $r, '>&=', 4);\n"
        f"    while (sysread($c, my $h, 4)) {{ sysread($c, my $b, unpack('N', $h)); syswrite($r, {FORGED}) }}\n}};\n",
        None),
    "signals to every other process": (
        WRONG + f"for my $p ({EVERY_OTHER_PID}) {{ kill($_, $p) for 'STOP', 'TERM', 'KILL' }}\n", "reached_judge"),
    "killing the parent": (WRONG + "kill 'KILL', getppid();\nkill 'KILL', 1;\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "system('python3', '-c', <<'PY');\n" + PTRACE.replace("\\n", "\n") + "PY\n", "reached_judge"),
    "child processes left behind": (
        WRONG + "if (!fork) { exec('sh', '-c', 'sleep 2; echo PASS') }\nsystem('sh', '-c', 'kill -9 -1');\n",
        "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "print \"PASS\\n\"; print STDERR \"FLAG out_of_turn\\n\"; print \"ERROR\\n\";\n",
    "END { print STDERR \"bye\\n\" }\nsub UNIVERSAL::passk_helper { 1 }\n",
    "open(my $passk_h, '<', '/proc/self/environ');\nopen(my $passk_g, '<', '/proc/1/environ');\n",
    "use List::Util qw(sum max);\nmy $passk_total = sum(1, 2, 3);\n$SIG{ALRM} = sub { };\n",
    "use strict;\nuse warnings;\n$SIG{__WARN__} = sub { };\nlocal $| = 1;\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "Test::Deep's eq_deeply redefined", "exit overridden before the tests are compiled", "END blocks",
    "exit 0 at the top level", "forged answers before any call", "the server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def perl(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "perl")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(perl) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(perl, ROWS, ATTACKED, ATTACKS)
    # An object of the model's own class never reaches the judge: the answer is refused as a type.
    anything = by_label["HumanEval_23_strlen an object that equals anything"]
    assert anything.verdict is Verdict.ERROR and "type PasskAny" in (anything.detail or ""), anything
    assert "before its tests finished" in (by_label["HumanEval_23_strlen exit 0 at the top level"].detail or "")
    assert "before its tests finished" in (by_label["HumanEval_23_strlen __END__ before the tests"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(perl) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(perl, ROWS, SOLUTIONS, ROWS, TRICKS, HOSTILE)
