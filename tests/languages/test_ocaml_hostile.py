"""OCaml's judge against hostile candidates, through the real sandbox (the OCaml image, built on demand).

- Attacks: each trick a forger has in OCaml (`=` and `<>` redefined for the tests that follow, an at_exit handler
  or an uncaught-exception handler that exits 0, `exit 0` early, an exception whose message says PASS, the
  environment and /proc, lines that look like a pass, garbage and forged answers on the reply descriptor, passk's own
  server called with forged answers, signals and ptrace of every other process, killing the parent, child
  processes), each around a wrong answer, on several problems: none passes, none is `sandbox_error`, and each
  carries the flag its trick must raise.
- The property: for every solved MultiPL-E OCaml row, the right completion inside a harmless trick still passes, and
  a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("ml")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "ml.json").read_text())
# Problems the attacks run on (each returns an int, so one wrong answer fits them all): a string, two arguments.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_53_add")
# Every attacked problem's tests fail this answer.
WRONG = " -7\n"
# A framed answer `R l 7`, as the candidate's server would write it.
FORGED = '"\\000\\000\\000\\010Rl\\000\\000\\000\\000\\000\\000\\000\\007"'
REPLIES = "(Obj.magic 4 : Unix.file_descr)"


def shell(command: str) -> str:
    return f"let () = ignore (Sys.command {{passk|{command}|passk}})\n"


# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "equality redefined": (WRONG + "let (=) _ _ = true\nlet (<>) _ _ = false\nlet compare _ _ = 0\n", None),
    "an at_exit handler that exits 0": (WRONG + "let () = at_exit (fun () -> exit 0)\n", None),
    "an uncaught-exception handler that exits 0": (
        WRONG + "let () = Printexc.set_uncaught_exception_handler (fun _ _ -> exit 0)\n", None),
    "exit 0 at the top level": (WRONG + "let () = exit 0\n", "ended_early"),
    "exit 0 in the call": (" exit 0\n", "ended_early"),
    "an exception that says PASS": (' raise (Failure "PASS")\n', None),
    "the environment and /proc": (
        WRONG + "let () = print_endline (try Sys.getenv \"HOME\" with Not_found -> \"\")\n"
        "let () = List.iter (fun f -> try let c = open_in_bin f in print_endline (input_line c) with _ -> ())"
        " [\"/proc/self/environ\"; \"/proc/1/environ\"; \"/proc/1/cmdline\"; \"/proc/1/mem\"]\n"
        + shell("cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; ls -l /proc/[0-9]*/fd; echo x > /proc/1/mem"), None),
    "lines that look like a pass": (
        WRONG + "let () = print_endline \"PASS\"; prerr_endline \"PASS\"; print_string \"\\nOK\\n\"\n"
        "let () = List.iter (fun fd -> try ignore (Unix.write_substring (Obj.magic fd : Unix.file_descr) \"PASS\" 0 4)"
        " with _ -> ()) [5; 6; 7]\n", None),
    "garbage on the reply descriptor": (
        WRONG + f"let () = ignore (Unix.write_substring {REPLIES} \"garbage\" 0 7)\n", "out_of_turn"),
    "forged answers before any call": (
        WRONG + f"let () = for _ = 1 to 64 do ignore (Unix.write_substring {REPLIES} {FORGED} 0 14) done\n",
        "out_of_turn"),
    "an extra answer with each call": (
        f" ignore (Unix.write_substring {REPLIES} {FORGED} 0 14);\n" + WRONG, "out_of_turn"),
    "passk's server called with forged answers": (
        WRONG + 'let () = Passk_wire.Server.serve (List.map (fun name -> (name, fun _ -> "RT")) ["strlen"; "add"])\n',
        None),
    "signals to every other process": (
        WRONG + shell("for p in /proc/[0-9]*; do p=${p#/proc/}; [ $p = $$ ] || "
                      "{ kill -STOP $p; kill -TERM $p; kill -KILL $p; }; done 2>/dev/null"), "reached_judge"),
    "killing the parent": (WRONG + shell("kill -KILL $(cut -d' ' -f4 /proc/$PPID/stat); kill -KILL 1"),
                           "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + shell("python3 -c '" + PTRACE.replace("\\n", "\n") + "'"), "reached_judge"),
    "child processes left behind": (WRONG + shell("(sleep 2; echo PASS) & kill -9 -1"), "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    'let () = print_string "PASS"; prerr_string "FLAG out_of_turn\\n"; print_string "\\nPASS\\n"\n',
    'let () = at_exit (fun () -> prerr_endline "bye")\nlet passk_helper x = x + 1\n',
    "let () = List.iter (fun f -> try close_in (open_in_bin f) with _ -> ()) "
    '["/proc/self/environ"; "/proc/1/environ"]\n',
    "let () = Gc.full_major (); Random.self_init ()\nexception Passk_mine of string\n",
    'let () = Printexc.record_backtrace true\nlet (=) a b = compare a b = 0\n',
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "equality redefined", "an at_exit handler that exits 0", "an uncaught-exception handler that exits 0",
    "exit 0 at the top level", "forged answers before any call", "passk's server called with forged answers",
))


@pytest.fixture(scope="module")
def ocaml(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "ocaml")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(ocaml) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(ocaml, ROWS, ATTACKED, ATTACKS)
    # `=` redefined in the model's program: the tests' `=` is OCaml's own.
    equal = by_label["HumanEval_53_add equality redefined"]
    assert equal.verdict is Verdict.FAILED and "Assert_failure" in (equal.detail or ""), equal
    raised = by_label["HumanEval_23_strlen an exception that says PASS"]
    assert raised.verdict is Verdict.ERROR and "raised Failure: PASS" in (raised.detail or ""), raised
    assert "before its tests finished" in (by_label["HumanEval_23_strlen exit 0 at the top level"].detail or "")
    forged = by_label["HumanEval_53_add passk's server called with forged answers"]
    assert forged.verdict is Verdict.FAILED and "out_of_turn" in forged.flags, forged


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(ocaml) -> None:  # type: ignore[no-untyped-def]
    solved = [name for name, variants in SOLUTIONS.items() if "unsolvable" not in variants]
    assert_verdicts_survive_tricks(ocaml, ROWS, SOLUTIONS, solved, TRICKS, HOSTILE)
