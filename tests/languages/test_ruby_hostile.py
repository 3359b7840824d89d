"""Ruby's judge against hostile candidates, through the real sandbox (the Ruby image, built on demand).

- Attacks: each trick a forger has in Ruby (test/unit's asserts redefined, `==` monkey-patched on every core
  class, `at_exit` hooks, `exit`/`exit!` early, the environment and /proc, lines that look like a pass, garbage and
  forged answers on the reply descriptor, objects that claim to equal anything, signals and ptrace of every other
  process, killing the parent, child processes), each around a wrong answer, on several problems: none passes,
  none is `sandbox_error`, and each carries the flag its trick must raise.
- The property: for every MultiPL-E Ruby row, the right completion inside a harmless trick still passes, and a
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

ROWS = {row["name"]: row for row in multipl_e_rows("rb")}
SOLUTIONS = json.loads((DATA / "multipl-e" / "solutions" / "rb.json").read_text())
# Problems the attacks run on: integers, strings, booleans from a hash, floats, arrays, a hash, nil in an array.
ATTACKED = ("HumanEval_23_strlen", "HumanEval_89_encrypt", "HumanEval_95_check_dict_case", "HumanEval_2_truncate_number",
            "HumanEval_25_factorize", "HumanEval_111_histogram", "HumanEval_136_largest_smallest_integers")
# Every stored problem's tests fail this answer.
WRONG = "  'passk-wrong'\nend\n"
# A framed answer `R T` (true), as the candidate's server would write it.
FORGED = "[0, 0, 0, 2, 0x52, 0x54].pack('C*')"
EVERY_OTHER_PID = "Dir.children('/proc').grep(/\\A\\d+\\z/).map(&:to_i).reject { |p| p == Process.pid }"

# name -> (completion, flag it must raise or None). Each completion is a wrong answer with a trick.
ATTACKS: dict[str, tuple[str, str | None]] = {
    "test/unit's asserts redefined": (
        WRONG + "require 'test/unit'\nmodule Test::Unit::Assertions\n  def assert_equal(*) = true\n"
        "  def assert_block(*) = true\n  def assert(*) = true\nend\n"
        "class Test::Unit::TestCase\n  def run(result) = yield(:finished, name)\nend\n"
        "Test::Unit::AutoRunner.need_auto_run = false\nat_exit { exit!(0) }\n", None),
    "== monkey-patched on every core class": (
        WRONG + "[Object, BasicObject, String, Integer, Float, Array, Hash, NilClass, TrueClass, FalseClass].each do |k|\n"
        "  k.class_eval { def ==(other) = true; def eql?(other) = true; def equal?(other) = true; def hash = 0 }\nend\n",
        None),
    "an object that equals anything": (
        "  o = Object.new\n  def o.==(other) = true\n  def o.method_missing(*) = true\n"
        "  def o.respond_to_missing?(*) = true\n  o\nend\n", None),
    "a String subclass that equals anything": (
        "  Class.new(String) { def ==(other) = true }.new('passk')\nend\n", None),
    "at_exit hooks": (WRONG + "at_exit { exit!(0) }\nat_exit { $stdout.puts 'PASS' }\nEND { exit!(0) }\n", None),
    "exit 0 at the top level": (WRONG + "exit 0\n", "ended_early"),
    "exit! in the call": ("  exit!(0)\nend\n", "ended_early"),
    "exit 0 in the call": ("  exit(0)\nend\n", "ended_early"),
    "a SystemExit raised and rescued": ("  begin\n    exit(0)\n  rescue SystemExit\n    'passk-wrong'\n  end\nend\n", None),
    "the environment and /proc": (
        WRONG + "puts ENV.to_h.inspect\n"
        "['/proc/self/environ', '/proc/1/environ', '/proc/1/cmdline'].each { |f| puts(File.binread(f)) rescue puts($!.class) }\n"
        f"{EVERY_OTHER_PID}.each do |p|\n"
        "  %w[environ cmdline mem].each { |w| puts(File.binread(\"/proc/#{p}/#{w}\")) rescue puts($!.class) }\n"
        "  puts(Dir.children(\"/proc/#{p}/fd\")) rescue puts($!.class)\n"
        "  File.binwrite(\"/proc/#{p}/mem\", 'x') rescue puts($!.class)\nend\n", None),
    "lines that look like a pass": (
        WRONG + "puts 'PASS'; $stderr.puts 'PASS'; $stdout.write(\"\\nPASS\\n\")\n"
        "puts \"0 tests, 0 assertions, 0 failures, 0 errors\\n100% passed\"\n"
        "[5, 6, 7].each { |fd| IO.for_fd(fd, autoclose: false).syswrite('PASS') rescue nil }\n", None),
    "garbage on the reply descriptor": (WRONG + "IO.for_fd(4, autoclose: false).syswrite('garbage')\n", "out_of_turn"),
    "forged answers before any call": (
        WRONG + f"64.times {{ IO.for_fd(4, autoclose: false).syswrite({FORGED}) }}\n", "out_of_turn"),
    "an extra answer with each call": (f"  IO.for_fd(4, autoclose: false).syswrite({FORGED})\n" + WRONG, "out_of_turn"),
    "the server replaced by one that answers true": (
        WRONG + "module PasskServer\n  def self.serve(name)\n    calls = IO.for_fd(3, autoclose: false)\n"
        "    replies = IO.for_fd(4, autoclose: false)\n    while (header = calls.read(4))\n"
        "      calls.read(header.unpack1('N'))\n      replies.syswrite([0, 0, 0, 2, 0x52, 0x54].pack('C*'))\n"
        "    end\n  end\nend\n", None),
    "signals to every other process": (
        WRONG + f"{EVERY_OTHER_PID}.each {{ |p| %w[STOP TERM KILL].each {{ |s| Process.kill(s, p) rescue nil }} }}\n",
        "reached_judge"),
    "killing the parent": (WRONG + "Process.kill('KILL', Process.ppid) rescue nil\nProcess.kill('KILL', 1) rescue nil\n",
                           "reached_judge"),
    "ptrace and kill from a child process": (WRONG + "system('python3', '-c', <<~'PY')\n" + PTRACE.replace("\\n", "\n") + "PY\n",
                                             "reached_judge"),
    "child processes left behind": (
        WRONG + "Process.detach(Process.spawn('sh', '-c', 'sleep 2; echo PASS'))\nsystem('sh', '-c', 'kill -9 -1')\n",
        "reached_judge"),
}

# Harmless tricks around a right answer (they must not stop it passing).
TRICKS = (
    "puts 'PASS'; $stderr.puts 'FLAG out_of_turn'; $stdout.write(\"\\nPASS\\n\")\n",
    "at_exit { $stderr.puts 'bye' }\nclass Object; def passk_helper = 1; end\n",
    "File.binread('/proc/self/environ') rescue nil\nFile.binread('/proc/1/environ') rescue nil\n",
    "Thread.new { sleep 0.01 }.join\nObjectSpace.each_object(Class).count\n",
    "require 'set'\nrequire 'prime'\nclass Integer; def passk_double = self * 2; end\n",
)
# Hostile wrappers around a wrong answer (they must not make it pass).
HOSTILE = tuple(ATTACKS[name][0].removeprefix(WRONG) for name in (
    "test/unit's asserts redefined", "== monkey-patched on every core class", "at_exit hooks",
    "exit 0 at the top level", "forged answers before any call", "the server replaced by one that answers true",
))


@pytest.fixture(scope="module")
def ruby(docker_client) -> Iterator[tuple]:  # type: ignore[no-untyped-def]
    yield language_image(docker_client, "ruby")


@pytest.mark.slow
def test_attacks_around_a_wrong_answer_never_pass(ruby) -> None:  # type: ignore[no-untyped-def]
    by_label = attack(ruby, ROWS, ATTACKED, ATTACKS)
    # An object of the model's own class never reaches the judge: the answer is refused as a type.
    anything = by_label["HumanEval_23_strlen an object that equals anything"]
    assert anything.verdict is Verdict.ERROR and "type Object" in (anything.detail or ""), anything
    # A subclass of String crosses as the string it holds, compared by the tests' own ==.
    subclass = by_label["HumanEval_89_encrypt a String subclass that equals anything"]
    assert subclass.verdict is Verdict.FAILED, subclass
    assert "before its tests finished" in (by_label["HumanEval_23_strlen exit 0 at the top level"].detail or "")


@pytest.mark.slow
def test_every_problem_keeps_its_verdict_inside_tricks(ruby) -> None:  # type: ignore[no-untyped-def]
    assert_verdicts_survive_tricks(ruby, ROWS, SOLUTIONS, ROWS, TRICKS, HOSTILE)
