"""Elixir's judge against hostile candidates, through the real sandbox (the Elixir image, built on demand).

- Attacks: each trick a forger has in Elixir (ExUnit's assertions or runner redefined, `System.at_exit` hooks,
  `System.halt` early, the environment and /proc, lines that look like a pass, garbage and forged answers on the
  reply descriptor, a replaced server, a struct of the model's own module, a function as the answer, signals and
  ptrace of every other process, killing the parent, child processes), each around a wrong answer: none passes,
  none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for solved MultiPL-E Elixir rows of every kind of answer, the right completion inside a harmless
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

ROWS = {row["name"]: row for row in multipl_e_rows("elixir")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "elixir.json").read_text())
ATTACKED = ("HumanEval_23_strlen",)
# Problems whose right and wrong answers run inside the tricks: an integer, a string, a list, a float, nil.
TRICKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_14_all_prefixes", "HumanEval_2_truncate_number",
           "HumanEval_12_longest")
# Every stored problem's tests fail this answer; it closes the function and the module.
WRONG = "    \"passk-wrong\"\n  end\nend\n"
# A framed answer `R T` (true), as the candidate's server would write it.
FORGED = "<<0, 0, 0, 2, ?R, ?T>>"
REPLIES = "Port.open({:fd, 0, 4}, [:out, :binary])"
EVERY_OTHER_PID = ("(File.ls!(\"/proc\") |> Enum.filter(&(&1 =~ ~r/^\\d+$/)) "
                   "|> Enum.reject(&(&1 == List.to_string(:os.getpid()))))")

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "ExUnit's assertions redefined": (
        WRONG + "defmodule ExUnit.Assertions do\n  defmacro assert(_), do: true\n  defmacro refute(_), do: true\n"
        "  def flunk(_ \\\\ \"\"), do: true\nend\n", None),
    "ExUnit's runner redefined": (
        WRONG + "defmodule ExUnit.Runner do\n  def run(_, _), do: %{total: 1, failures: 0, excluded: 0, skipped: 0}\nend\n",
        None),
    "an exit hook that halts with 0": (WRONG + "System.at_exit(fn _ -> System.halt(0) end)\n", None),
    "System.halt(0) at the top level": (WRONG + "System.halt(0)\n", "ended_early"),
    "System.halt(0) in the call": ("    System.halt(0)\n  end\nend\n", "ended_early"),
    ":erlang.halt(0) in the call": ("    :erlang.halt(0)\n  end\nend\n", "ended_early"),
    "exit(:normal) in the call": ("    exit(:normal)\n  end\nend\n", None),
    "an exception that says PASS": ("    raise \"PASS\"\n  end\nend\n", None),
    "a struct of the model's own module": ("    %{__struct__: Evil, equal: :anything}\n  end\nend\n", None),
    "a function as the answer": ("    fn _ -> true end\n  end\nend\n", None),
    "the environment and /proc": (
        WRONG + "IO.inspect(System.get_env())\n"
        "for f <- [\"/proc/self/environ\", \"/proc/1/environ\", \"/proc/1/cmdline\"], do: IO.inspect(File.read(f))\n"
        f"for p <- {EVERY_OTHER_PID}, w <- [\"environ\", \"cmdline\", \"mem\"] do\n"
        "  IO.inspect(File.read(\"/proc/#{p}/#{w}\"))\n  IO.inspect(File.ls(\"/proc/#{p}/fd\"))\n"
        "  IO.inspect(File.write(\"/proc/#{p}/mem\", \"x\"))\nend\n", None),
    "lines that look like a pass": (
        WRONG + "IO.puts(\"PASS\")\nIO.puts(:stderr, \"PASS\")\nIO.puts(\"1 test, 0 failures\")\n"
        "for fd <- [5, 6, 7] do\n  try do\n    Port.command(Port.open({:fd, 0, fd}, [:out, :binary]), \"PASS\")\n"
        "  rescue\n    _ -> nil\n  end\nend\n", None),
    "garbage on the reply descriptor": (WRONG + f"Port.command({REPLIES}, \"garbage\")\n", "out_of_turn"),
    "forged answers before any call": (
        WRONG + f"replies = {REPLIES}\nfor _ <- 1..64, do: Port.command(replies, {FORGED})\n", "out_of_turn"),
    "an extra answer with each call": (
        f"    Port.command({REPLIES}, {FORGED})\n" + WRONG, "out_of_turn"),
    "the server replaced by one that answers true": (
        WRONG + "defmodule PasskServer do\n  def serve(_, _) do\n"
        "    port = Port.open({:fd, 3, 4}, [:binary, :stream, :eof])\n    loop(port)\n  end\n"
        "  defp loop(port) do\n    receive do\n"
        f"      {{^port, {{:data, _}}}} -> Port.command(port, {FORGED}); loop(port)\n"
        "      {^port, :eof} -> :ok\n    end\n  end\nend\n", None),
    "signals to every other process": (
        WRONG + f"for p <- {EVERY_OTHER_PID}, s <- [\"STOP\", \"TERM\", \"KILL\"] do\n"
        "  System.cmd(\"sh\", [\"-c\", \"kill -#{s} #{p}\"], stderr_to_stdout: true)\nend\n", "reached_judge"),
    "killing the parent": (
        WRONG + "ppid = File.read!(\"/proc/self/stat\") |> String.split(\" \") |> Enum.at(3)\n"
        "System.cmd(\"sh\", [\"-c\", \"kill -9 #{ppid}; kill -9 1\"], stderr_to_stdout: true)\n", "reached_judge"),
    "ptrace and kill from a child process": (
        WRONG + "System.cmd(\"python3\", [\"-c\", \"\"\"\n" + PTRACE.replace("\\n", "\n") + "\"\"\"], stderr_to_stdout: true)\n",
        "reached_judge"),
    "child processes left behind": (
        WRONG + ":os.cmd(~c\"(sleep 2; echo PASS) > /dev/null 2>&1 &\")\n"
        "System.cmd(\"sh\", [\"-c\", \"kill -9 -1\"], stderr_to_stdout: true)\n", "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "IO.puts(\"PASS\")\nIO.puts(:stderr, \"FLAG out_of_turn\")\n",
    "System.at_exit(fn _ -> IO.puts(:stderr, \"bye\") end)\ndefmodule PasskHelper do\n  def double(x), do: x * 2\nend\n",
    "File.read(\"/proc/self/environ\")\nFile.read(\"/proc/1/environ\")\n",
    "Task.await(Task.async(fn -> Process.sleep(10) end))\nspawn(fn -> Process.sleep(:infinity) end)\n",
    "defmodule ExUnit.Assertions do\n  defmacro assert(_), do: true\nend\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "ExUnit's assertions redefined", "ExUnit's runner redefined", "an exit hook that halts with 0",
    "System.halt(0) at the top level", "forged answers before any call", "the server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def elixir(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "elixir")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(elixir) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(elixir, ROWS, ATTACKED, ATTACKS)
    # A function never reaches the judge: the answer is refused as a type.
    function = by_label["HumanEval_23_strlen a function as the answer"]
    assert function.verdict is Verdict.ERROR and "type Function" in (function.detail or ""), function
    # A struct crosses as the map it is; the tests' == compares it, and printing it runs none of its module's code.
    struct = by_label["HumanEval_23_strlen a struct of the model's own module"]
    assert struct.verdict is Verdict.FAILED, struct
    said = by_label["HumanEval_23_strlen an exception that says PASS"]
    assert said.verdict is Verdict.ERROR and "RuntimeError: PASS" in (said.detail or ""), said
    assert "before its tests finished" in (by_label["HumanEval_23_strlen System.halt(0) at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(elixir) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(elixir, ROWS, SOLUTIONS, TRICKED, TRICKS, HOSTILE)
