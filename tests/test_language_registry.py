"""The language and format registries, without Docker: what each module declares, row detection, programs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from sandbox import languages
from sandbox.runtime.job import to_dict
from service.api.datasets.schemas import DatasetCreate
from service.api.datasets.service import format_columns
from service.formats import registry
from service.formats.loader import to_problem
from service.core.limits import limits_in_force
from service.formats.run_code import completion_for
from service.formats.program import program_for
from tests.languages.conftest import humaneval_x_rows, multipl_e_rows


def test_every_language_module_is_complete() -> None:
    found = languages.all_languages()
    assert {"python", "cpp"} <= set(found)
    for language in found.values():
        assert language.run and language.version and language.source_file, language.name
        if language.native:
            assert language.reference_commands, language.name
            # Self-checking problems run as a judge and a candidate, in two processes.
            assert language.programs is not None and language.judge_run, language.name
    assert languages.resolve("C++").name == "cpp"
    with pytest.raises(ValueError, match="unknown language"):
        languages.get("cobol")


def test_every_format_is_in_the_registry() -> None:
    names = set(registry.formats())
    assert names == {"humaneval", "mbpp", "stdio", "call", "run_code", "humaneval-x", "multipl-e"}
    assert "run_code" not in registry.postable()
    assert registry.allows_language("stdio", "cpp") and registry.allows_language("humaneval-x", "cpp")
    assert not registry.allows_language("humaneval-x", "python") and not registry.allows_language("humaneval", "cpp")


def test_humaneval_x_and_multipl_e_rows_load_as_published() -> None:
    row = humaneval_x_rows("cpp")[0]
    problem = to_problem(row)
    assert problem["format"] == "humaneval-x"
    body = DatasetCreate(name="x", language="cpp", problems=[problem])
    columns = format_columns(body.problems[0])
    context = SimpleNamespace(**columns, language="cpp", key=row["task_id"], memory_mb=256)
    program = program_for(context, row["canonical_solution"])
    assert program.language == "cpp" and program.native is not None
    # The candidate is the original program's text up to the tests; the tests are the judge's alone.
    candidate = program.native.candidate.files["main.cpp"]
    assert candidate == row["prompt"] + row["canonical_solution"] + "\n"
    assert row["test"] in program.native.judge.files["judge.cpp"]
    assert json.loads(program.text) == to_dict(program.native)

    m_row = multipl_e_rows("cpp")[0]
    m_problem = to_problem(m_row)
    assert m_problem["format"] == "multipl-e" and m_problem["id"] == m_row["name"]
    m_body = DatasetCreate(name="m", language="cpp", problems=[m_problem])
    m_columns = format_columns(m_body.problems[0])
    m_context = SimpleNamespace(**m_columns, language="cpp", key=m_row["name"], memory_mb=256)
    m_program = program_for(m_context, "    return true;")
    # MultiPL-E's tests start by closing the function: the candidate closes it the same way.
    assert m_program.native.candidate.files["main.cpp"] == m_row["prompt"] + "    return true;" + "\n}"


def test_stdio_in_cpp_is_compiled_once_and_run_per_case() -> None:
    problem = SimpleNamespace(format="stdio", language="cpp", cases=[{"input": "1\n", "output": "1\n"}], comparison=None,
                              abs_tol=None, rel_tol=None, setup_code=None, time_limit_s=2.0,
                              memory_mb=256)
    program = program_for(problem, "int main(){}\n")
    assert program.native.mode == "stdio" and program.native.case_time_limit_s == 2.0
    assert program.native.candidate.files == {"main.cpp": "int main(){}\n"} and program.native.judge is None


def test_every_language_has_its_own_run_code_name() -> None:
    names = [name for language in languages.all_languages().values() for name in language.run_code_names]
    assert len(names) == len(set(names)) and all(language.run_code_names for language in languages.all_languages().values())


def test_only_python_files_run_warm_on_run_code() -> None:
    """script.py runs `python3 FILE` in the zygote's interpreter: a language may ask for it only with that command,
    in an image of the sandbox's own Python (not a toolchain of its own)."""
    warm = {name for name, language in languages.all_languages().items() if language.run_code_warm}
    assert "python" in warm and "python-pytest" not in warm
    for name in warm:
        language = languages.get(name)
        assert language.run == ("python3", language.source_file) and not language.native, name


def test_run_code_in_java_is_one_native_run_with_the_clients_limits() -> None:
    problem = SimpleNamespace(format="run_code", language="java")
    # The run carries the client's limits (run_timeout, memory_limit_MB, compile_timeout); the worker attaches them.
    problem.limits = limits_in_force(run=SimpleNamespace(time_limit_s=0.5, memory_mb=256, compile_time_limit_s=4.0),
                                     language=languages.get("java"))
    program = program_for(problem, completion_for("public class Main { public static void main(String[] a) {} }",
                                                  "7\n", {"in/x.txt": "eA=="}, ["out.txt"]))
    spec = program.native
    assert spec.mode == "run" and spec.judge is None and spec.stdin == "7\n" and spec.compile_time_limit_s == 4.0
    assert spec.inputs == {"in/x.txt": "eA=="} and spec.fetch == ["out.txt"] and program.time_limit_s == 0.5
