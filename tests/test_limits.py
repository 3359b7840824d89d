"""The one rule for the limits in force (service/core/limits.py): run, then problem, then dataset, then the
default; compile limits from the run, then the dataset, then the language, and none for an interpreted one."""

from __future__ import annotations

from types import SimpleNamespace

from sandbox import languages
from service.core.limits import DEFAULT_MEMORY_MB, DEFAULT_TIME_LIMIT_S, Limits, limits_in_force, limits_of
from service.core.settings import Settings

CPP, PYTHON = languages.get("cpp"), languages.get("python")


def level(**limits: float | None) -> SimpleNamespace:
    return SimpleNamespace(**{"time_limit_s": None, "memory_mb": None, "compile_time_limit_s": None,
                              "compile_memory_mb": None, **limits})


def test_the_first_level_that_sets_a_limit_wins() -> None:
    run, problem, dataset = level(time_limit_s=1.5), level(time_limit_s=2.0, memory_mb=300), level(memory_mb=700)
    assert limits_in_force(run=run, problem=problem, dataset=dataset, default_time_limit_s=9, default_memory_mb=99) \
        == Limits(time_limit_s=1.5, memory_mb=300)
    assert limits_in_force(dataset=dataset, default_time_limit_s=9, default_memory_mb=99) == Limits(9.0, 700)
    assert limits_in_force(run=level(), problem=level(), dataset=level()) == Limits(DEFAULT_TIME_LIMIT_S, DEFAULT_MEMORY_MB)


def test_the_declared_defaults_are_the_settings_defaults() -> None:
    settings = Settings()
    assert (DEFAULT_TIME_LIMIT_S, DEFAULT_MEMORY_MB) == (settings.default_time_limit_s, settings.default_memory_mb)


def test_compile_limits_come_from_the_run_the_dataset_then_the_language() -> None:
    plain = limits_in_force(language=CPP)
    assert plain.compile_time_limit_s == CPP.compile_time_limit_s
    assert plain.compile_memory_bytes == CPP.compile_memory_bytes
    # A problem has no compile limits of its own: only the run's and the dataset's count.
    chosen = limits_in_force(run=level(compile_memory_mb=2048), problem=level(compile_time_limit_s=1.0),
                             dataset=level(compile_time_limit_s=30.0, compile_memory_mb=1024), language=CPP)
    assert (chosen.compile_time_limit_s, chosen.compile_memory_mb) == (30.0, 2048)
    assert limits_in_force(run=level(compile_time_limit_s=30.0), language=PYTHON).compile_time_limit_s is None


def test_a_program_reads_the_limits_the_worker_attached_else_its_problems() -> None:
    attached = Limits(time_limit_s=4.0, memory_mb=128)
    assert limits_of(SimpleNamespace(time_limit_s=1.0, limits=attached)) is attached
    assert limits_of(SimpleNamespace(time_limit_s=1.0, memory_mb=None)) == Limits(1.0, DEFAULT_MEMORY_MB)
