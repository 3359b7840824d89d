"""Haskell end to end: MultiPL-E's Haskell rows with right and wrong completions, broken variants (an `error`, an
infinite loop, a memory hog, a syntax error) and a stdio problem, through the API over HTTP, a worker process and the
Haskell sandbox image (built on demand), then /run_code; and the split of every stored MultiPL-E Haskell row into a
judge and a candidate (no container)."""

from __future__ import annotations

import json

import pytest

from sandbox.languages import get, haskell, resolve, split
from sandbox.languages.base import ReferencePass
from tests.e2e.conftest import Stack
from tests.languages import endtoend
from tests.languages.conftest import DATA, multipl_e_rows

SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "hs.json").read_text())
# The verdict of each kind of completion in tests/data/multipl-e/solutions/hs.json. A problem marked unsolvable has
# prompt or tests that do not compile: every completion is an error saying so.
VERDICTS = {"correct": "passed", "wrong": "failed", "throws": "error", "loops": "timeout", "memory": "memory",
            "syntax_error": "compile_error"}


# The problems whose wrong answers run end to end too (every sample compiles with GHC; the hostile tests' property runs
# wrong answers of others).
WRONG_TOO = ("HumanEval_23_strlen", "HumanEval_85_add", "HumanEval_14_all_prefixes", "HumanEval_79_decimal_to_binary")


def completions() -> dict[str, dict[str, tuple[str, str]]]:
    """problem -> label -> (completion, verdict): every right answer of the solutions file, and the other completions
    of the WRONG_TOO problems."""
    return {problem: {f"{problem} {kind}": (text, "error" if "unsolvable" in variants else VERDICTS[kind])
                      for kind, text in variants.items()
                      if kind in VERDICTS and (kind == "correct" or problem in WRONG_TOO)}
            for problem, variants in SOLUTIONS.items()}


STDIO_SOLUTION = "main :: IO ()\nmain = interact $ unlines . map (show . sum . map read . words) . lines\n"


def test_every_row_splits_into_a_judge_and_a_candidate() -> None:
    rows = multipl_e_rows("hs")
    assert len(rows) == 24 and set(SOLUTIONS) <= {row["name"] for row in rows} and len(SOLUTIONS) >= 10
    for row in rows:
        completion = SOLUTIONS.get(row["name"], {}).get("correct", " error \"none\"\n")
        programs = haskell.programs(split.TestSource("multipl-e", row["prompt"], row["tests"], completion))
        signature = next(line for line in row["prompt"].splitlines() if " :: " in line)
        name = signature.split(" ::")[0]
        # The candidate is the original program up to its tests, as a module, and passk's server apart.
        assert programs.candidate["Candidate.hs"] == "module Candidate where\n" + row["prompt"] + completion + "\n"
        assert f"PasskWire.handler {signature.count('->')} Candidate.{name})" in programs.candidate["Main.hs"]
        judge = programs.judge["Main.hs"]
        assert row["tests"] in judge and completion not in judge
        assert row["tests"] not in "".join(programs.candidate.values())
        assert judge.startswith(haskell._JUDGE_START + row["prompt"][:row["prompt"].index(signature)] + signature + "\n")
        assert f' = PasskWire.call "{name}" [' in judge and judge.endswith(haskell._JUDGE_END)
        lines = judge.splitlines()
        (first, at), (tests_first, tests_last) = (
            tuple(map(int, line.split())) for line in programs.judge["problem.lines"].splitlines())
        assert first == 2 and lines[at - 1] == signature
        assert "\n".join(lines[tests_first - 1:tests_last]).strip() == row["tests"].strip()


def test_stubs_keep_the_signature() -> None:
    head = "-- | A comment with f :: Int -> Int and {- nested {- -} -}\nhelper :: Int\nhelper = 1\n"
    cases = {
        "f :: Int -> [(String, Integer)] -> Maybe Double\nf x ys =":
            'f :: Int -> [(String, Integer)] -> Maybe Double\nf passk0 passk1 = PasskWire.call "f" '
            "[PasskWire.arg passk0, PasskWire.arg passk1]\n",
        "g :: (Bool, Char, Float)\ng =": 'g :: (Bool, Char, Float)\ng = PasskWire.call "g" []\n',
        "h :: [String]\n  -> ()\nh _ =": 'h :: [String] -> ()\nh passk0 = PasskWire.call "h" [PasskWire.arg passk0]\n',
    }
    for prompt, stub in cases.items():
        judge = haskell.programs(split.TestSource("multipl-e", head + prompt, "\nmain = pure ()\n", " 1\n")).judge
        assert judge["Main.hs"].startswith(haskell._JUDGE_START + head + stub), judge["Main.hs"]
    for bad in ("f :: a -> Int\nf x =", "f :: Ord a => [a] -> Int\nf x =", "f :: (Int -> Int) -> Int\nf g =",
                "f :: Map.Map Int Int -> Int\nf m =", "f :: Int -> Int\nf x = 1\n", "f x =", "x",
                "{-# LANGUAGE GADTs #-}\nf :: Int\nf =", "module Main where\nf :: Int\nf ="):
        with pytest.raises(split.SplitError):
            haskell.programs(split.TestSource("multipl-e", bad, "\nmain = pure ()\n", " 1\n"))


def test_reference_rule() -> None:
    language = get("haskell")
    assert language.reference_commands == ("runghc main.hs",) and language.reference_pass == ReferencePass(timeout_s=15.0)
    assert language.reference_pass.passes(0, "", "Warning") and not language.reference_pass.passes(1, "", "")
    assert language.run_argv(256 << 20) == ("./main", "+RTS", "-M256m", "-RTS")
    assert language.run_code_names == ("haskell",) and resolve("hs") is language


@pytest.mark.slow
def test_haskell_end_to_end(stack: Stack) -> None:
    multipl_e = endtoend.multipl_e_case("hs", completions())
    results = endtoend.check_language(stack, "haskell", {
        "multipl-e-haskell": multipl_e,
        "stdio-haskell": endtoend.stdio_case("haskell", STDIO_SOLUTION, wrong=STDIO_SOLUTION.replace("sum", "product"),
                                             compile_error="main :: IO ()\nmain = putStrLn (1 :: Int)\n", more=(
            ("stdio error", 'main :: IO ()\nmain = error "boom"\n', "error"),
        )),
    })
    assert "assertion failed" in results["HumanEval_23_strlen wrong"]["detail"]
    assert "raised ErrorCall: boom" in results["HumanEval_23_strlen throws"]["detail"]
    endtoend.assert_toolchain(stack, "haskell", "multipl-e-haskell", "The Glorious Glasgow Haskell Compilation System, version 9.0")

    # /run_code under passk's own name (SandboxFusion has no Haskell).
    answers = endtoend.check_run_code(
        stack, "haskell", prints='main :: IO ()\nmain = putStrLn "123"', compile_timeout=30,
        raises='main :: IO ()\nmain = if 1 + 1 == (3 :: Int) then pure () else error "assertion failed"',
        loops="main :: IO ()\nmain = print (length [1 ..])", broken="main :: IO ()\nmain = putStrLn (1 :: Int)",
        echoes="main :: IO ()\nmain = getLine >>= print . (read :: String -> Int)")
    assert "assertion failed" in answers["raises"]["run_result"]["stderr"], answers["raises"]
