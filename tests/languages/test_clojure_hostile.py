"""Clojure's judge against hostile candidates, through the real sandbox (the Clojure image, built on demand).

- Attacks: each trick a forger has in Clojure (clojure.test's `is` redefined or its report replaced, `=` patched,
  an object equal to everything, `(System/exit 0)` early, a shutdown hook, the environment and
  /proc, lines that look like a pass, garbage and forged answers on the reply descriptor, a server of its own, a
  function as the answer, signals and ptrace of every other process, killing the parent, child processes), each
  around a wrong answer: none passes, none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for solved MultiPL-E Clojure rows of every kind of answer, the right completion inside a harmless
  trick still passes, and a wrong one inside a hostile wrapper fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sandbox.verdicts import Verdict
from tests.languages.conftest import DATA, multipl_e_rows
from tests.languages.hostile import assert_verdicts_survive_tricks, attack, language_image
from tests.languages.test_javascript_hostile import PTRACE

ROWS = {row["name"]: row for row in multipl_e_rows("clj")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "clj.json").read_text())
ATTACKED = ("HumanEval_53_add",)
# Problems whose right and wrong answers run inside the tricks: an integer, a float, vectors, nils.
TRICKED = ("HumanEval_53_add", "HumanEval_2_truncate_number", "HumanEval_25_factorize",
           "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer; it closes the function.
WRONG = "  \"passk-wrong\")\n"


def _descriptor(fd: int) -> str:
    return (f"(let [d (java.io.FileDescriptor.) f (.getDeclaredField java.io.FileDescriptor \"fd\")]"
            f" (.setAccessible f true) (.setInt f d (int {fd})) d)")


# Bytes written on the reply descriptor (the candidate's fd 4); FORGED is a framed answer `R T` (true).
REPLIES = f"(defn passk-forge [^bytes b] (doto (java.io.FileOutputStream. {_descriptor(4)}) (.write b) (.flush)))\n"
FORGED = "(byte-array [0 0 0 2 82 84])"
SHELL = ("(defn passk-sh [command] (.waitFor (.start (ProcessBuilder. [\"sh\" \"-c\" command]))))\n"
         "(def passk-others (for [p (.list (java.io.File. \"/proc\")) :when (re-matches #\"\\d+\" p)"
         " :when (not= p (str (.pid (java.lang.ProcessHandle/current))))] p))\n")

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "clojure.test's is redefined": (
        WRONG + "(require 'clojure.test)\n(in-ns 'clojure.test)\n(defmacro is ([form] true) ([form msg] true))\n"
        "(in-ns 'user)\n", None),
    "clojure.test's report replaced": (
        WRONG + "(require 'clojure.test)\n(alter-var-root #'clojure.test/report (constantly (fn [m] (when (= :summary"
        " (:type m)) (println \"\\n0 failures, 0 errors.\")))))\n", None),
    "equality patched": (WRONG + "(alter-var-root #'clojure.core/= (constantly (fn [& _] true)))\n", None),
    "an object equal to everything": ("  (reify Object (equals [_ _] true) (hashCode [_] 1)))\n", None),
    "(System/exit 0) at the top level": (WRONG + "(System/exit 0)\n", "ended_early"),
    "(System/exit 0) in the call": ("  (System/exit 0))\n", "ended_early"),
    "a shutdown hook that halts with 0": (
        WRONG + "(.addShutdownHook (Runtime/getRuntime) (Thread. #(.halt (Runtime/getRuntime) 0)))\n", None),
    "a thrown value that says PASS": ("  (throw (ex-info \"PASS\" {})))\n", None),
    "a function as the answer": ("  (fn [& _] true))\n", None),
    "the environment and /proc": (
        WRONG + SHELL + "(println (System/getenv))\n"
        "(doseq [f [\"/proc/self/environ\" \"/proc/1/environ\" \"/proc/1/cmdline\"]]\n"
        "  (println (try (slurp f) (catch Exception e (.getMessage e)))))\n"
        "(doseq [p passk-others w [\"environ\" \"cmdline\" \"mem\"]]\n"
        "  (println (try (slurp (str \"/proc/\" p \"/\" w)) (catch Exception e (.getMessage e)))))\n", None),
    "lines that look like a pass": (
        WRONG + "(println \"PASS\")\n(println \"\\n0 failures, 0 errors.\")\n"
        "(binding [*out* *err*] (println \"PASS\"))\n",
        None),
    "garbage on the reply descriptor": (WRONG + REPLIES + "(passk-forge (.getBytes \"garbage\"))\n", "out_of_turn"),
    "forged answers before any call": (WRONG + REPLIES + f"(dotimes [_ 64] (passk-forge {FORGED}))\n", "out_of_turn"),
    "an extra answer with each call": (f"  ((resolve 'user/passk-forge) {FORGED})\n" + WRONG + REPLIES, "out_of_turn"),
    "a server of its own that answers true": (
        WRONG + REPLIES + f"(let [calls (java.io.DataInputStream. (java.io.FileInputStream. {_descriptor(3)}))]\n"
        "  (try (loop [] (.readFully calls (byte-array (.readInt calls)))\n"
        f"             (passk-forge {FORGED}) (recur))\n"
        "    (catch java.io.EOFException _ nil)))\n(System/exit 0)\n", None),
    "signals to every other process": (
        WRONG + SHELL
        + "(doseq [p passk-others] (passk-sh (str \"kill -STOP \" p \"; kill -TERM \" p \"; kill -KILL \" p)))\n",
        "reached_judge"),
    "killing the parent": (
        WRONG + SHELL + "(passk-sh \"kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); kill -9 1\")\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "(.waitFor (.start (ProcessBuilder. [\"/usr/bin/env\" \"python3\" \"-c\" "
        + json.dumps(PTRACE.replace("\\n", "\n")) + "])))\n", "reached_judge"),
    "child processes left behind": (
        WRONG + SHELL + "(passk-sh \"(sleep 2; echo PASS) > /dev/null 2>&1 &\")\n(passk-sh \"kill -9 -1\")\n",
        "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "(println \"PASS\")\n(try (slurp \"/proc/self/environ\") (catch Exception _ nil))\n",
    "(defn passk-helper [x] (* 2 x))\n(.addShutdownHook (Runtime/getRuntime) (Thread. #(println \"bye\")))\n",
    "@(future (Thread/sleep 10))\n",
    "(require 'clojure.test)\n(alter-var-root #'clojure.test/report (constantly (fn [m] nil)))\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "clojure.test's is redefined", "clojure.test's report replaced", "equality patched",
    "a server of its own that answers true",
))


@pytest.fixture(scope="module")
def clojure(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "clojure")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(clojure) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(clojure, ROWS, ATTACKED, ATTACKS)
    function = by_label["HumanEval_53_add a function as the answer"]
    assert function.verdict is Verdict.ERROR and "type function" in (function.detail or ""), function
    equal = by_label["HumanEval_53_add an object equal to everything"]
    assert equal.verdict is Verdict.ERROR and "which passk cannot compare" in (equal.detail or ""), equal
    said = by_label["HumanEval_53_add a thrown value that says PASS"]
    assert said.verdict is Verdict.ERROR and "clojure.lang.ExceptionInfo: PASS" in (said.detail or ""), said
    assert "before its tests finished" in (by_label["HumanEval_53_add (System/exit 0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(clojure) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(clojure, ROWS, SOLUTIONS, TRICKED, TRICKS, HOSTILE)
