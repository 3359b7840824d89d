"""OCaml end to end: MultiPL-E's OCaml rows with right and wrong completions, broken variants (an exception, an infinite
loop, a memory hog, `exit 0` in the function and at the top level, a syntax error) and a stdio problem, through the
API over HTTP, a worker process and the OCaml sandbox image (built on demand), then /run_code; and the split of
every stored MultiPL-E OCaml row into a judge and a candidate, typed from the prompt's signature (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, ocaml, resolve, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "ml.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/ml.json. A problem marked unsolvable has
# prompt or tests that do not compile: every completion is an error saying so.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "exits": "failed",
            "memory": "memory", "syntax_error": "compile_error", "exit_top_level": "failed"}


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every completion of the solutions file."""
    return {problem: {f"{problem} {kind}": (text, "error" if "unsolvable" in variants else VERDICTS[kind])
                      for kind, text in variants.items() if kind in VERDICTS}
            for problem, variants in SOLUTIONS.items()}


STDIO_SOLUTION = (
    "let () =\n  try\n    while true do\n"
    "      Scanf.scanf \" %d %d\" (fun a b -> Printf.printf \"%d\\n\" (a + b))\n"
    "    done\n  with End_of_file | Scanf.Scan_failure _ -> ()\n"
)


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("ml")
    assert len(rows) == 23 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", " failwith \"none\"\n")
        programs = ocaml.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        name = row["name"].split("_", 2)[2]
        # The candidate is the original program up to its tests, and passk's server apart; the tests are the judge's.
        assert programs.candidate["main.ml"] == row["prompt"] + completion + "\n"
        assert f"Main.{name} " in programs.candidate["passk_server.ml"]
        judge = programs.judge["judge.ml"]
        assert row["tests"] in judge and completion not in judge and row["tests"] not in "".join(programs.candidate.values())
        assert judge.startswith(ocaml._JUDGE_START + row["prompt"][:row["prompt"].rindex("\nlet ") + 1])
        assert f'Passk_wire.Judge.call "{name}" [' in judge and judge.endswith(ocaml._JUDGE_END)
        # problem.lines: the prompt's lines, the signature's, and the tests' (judge.ml's own lines).
        lines = judge.splitlines()
        (first, signature), (tests_first, tests_last) = (
            tuple(map(int, line.split())) for line in programs.judge["problem.lines"].splitlines())
        assert first == 2 and lines[signature - 1].startswith(f"let {name} ")
        assert "\n".join(lines[tests_first - 1:tests_last]).strip() == row["tests"].strip()


def test_stubs_and_servers_are_typed_from_the_signature() -> None:
    head = "(** A comment with let f (x : string) : int = and (* nested *) *)\nlet helper x = x\n"
    cases = {
        "let f (x : int) (ys : (int * string) list) : float option =":
            ('Passk_wire.Judge.call "f" [Passk_wire.arg Passk_wire.int passk_0; Passk_wire.arg '
             "(Passk_wire.list (Passk_wire.tuple2 Passk_wire.int Passk_wire.string)) passk_1] "
             "(Passk_wire.option Passk_wire.float)"),
        "let rec g () : bool array =": 'Passk_wire.Judge.call "g" [Passk_wire.arg Passk_wire.unit ()] '
                                       "(Passk_wire.array Passk_wire.bool)",
        "let h (c : char)\n  (s : string list list) :  int * int =":
            ('Passk_wire.Judge.call "h" [Passk_wire.arg Passk_wire.char passk_0; Passk_wire.arg '
             "(Passk_wire.list (Passk_wire.list Passk_wire.string)) passk_1] "
             "(Passk_wire.tuple2 Passk_wire.int Passk_wire.int)"),
        # The problem's own type error: the compiler refuses the signature before the stub's body.
        "let k (d : (string, string) list) : bool =": 'Passk_wire.Judge.call "k" [Passk_wire.arg (assert false) '
                                                      "passk_0] Passk_wire.bool",
    }
    for signature, call in cases.items():
        programs = ocaml.programs(split.TestSource("multipl-e", head + signature, "\nlet t = 1\n", " 1\n"))
        judge = programs.judge["judge.ml"]
        assert judge.startswith(ocaml._JUDGE_START + head) and f"  {call}\n" in judge, judge
    server = ocaml.programs(split.TestSource("multipl-e", head + "let f (a : int) (b : string) : int list =",
                                             "", " []\n")).candidate["passk_server.ml"]
    assert "let passk_0 = Passk_wire.read Passk_wire.int passk_r in" in server
    assert "let passk_1 = Passk_wire.read Passk_wire.string passk_r in" in server
    assert "Passk_wire.Server.answer (Passk_wire.list Passk_wire.int) (fun () -> Main.f passk_0 passk_1)" in server
    for bad in ("let f (x : 'a list) : int =", "let f (x : (int, int) Hashtbl.t) : int =", "let f x : int =",
                "let f (x : int) =", "let f (x : int -> int) : int =", "let f (x : int) : int = 1\nlet y = 2",
                "let f (x : int * int * int * int * int * int) : int =", "x"):
        with pytest.raises(split.SplitError):
            ocaml.programs(split.TestSource("multipl-e", bad, "\nlet t = 1\n", " 1\n"))


def test_reference_rule() -> None:
    language = get("ocaml")
    assert language.reference_commands == ("ocaml main.ml",) and language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "Warning") and not language.reference_pass.passes(2, "", "")
    assert language.run_argv(256 << 20) == ("./main",) and language.run_code_names == ("ocaml",)
    assert resolve("ml") is language


@pytest.mark.slow
def test_ocaml_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("ml", completions())
    results = endtoend.check_language(stack, "ocaml", {
        "multipl-e-ocaml": multipl_e,
        "stdio-ocaml": endtoend.stdio_case("ocaml", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("a + b", "a - b"),
                                           compile_error='let () = print_int "x"\n', more=(
            ("stdio error", 'let () = failwith "boom"\n', "error"),
        )),
    })
    assert 'Assert_failure("judge.ml"' in results["HumanEval_23_strlen wrong"]["detail"]
    assert "raised Failure: boom" in results["HumanEval_23_strlen throws"]["detail"]
    for kind in ("exits", "exit_top_level"):
        exits = results[f"HumanEval_23_strlen {kind}"]
        assert "before its tests finished" in exits["detail"] and "ended_early" in exits["flags"]
    assert "does not compile" in results["HumanEval_12_longest correct"]["detail"]
    endtoend.assert_toolchain(stack, "ocaml", "multipl-e-ocaml", "The OCaml toplevel, version 4.13")

    # /run_code under passk's own name (SandboxFusion has no OCaml).
    answers = endtoend.check_run_code(
        stack, "ocaml", prints='let () = print_endline "123"', raises="let () = assert (1 = 2)",
        loops="let () = while true do () done", broken='let () = print_int "x"',
        echoes='let () = Scanf.scanf " %d" (fun n -> Printf.printf "%d\\n" n)')
    assert answers["raises"]["run_result"]["return_code"] == 2, answers["raises"]
    assert "Assert_failure" in answers["raises"]["run_result"]["stderr"], answers["raises"]
