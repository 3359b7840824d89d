"""The formats passk knows: one module per format, each defining `FORMAT = Format(...)`.

A format owns its problem schema (the API's pydantic model), the problem columns it fills, the
published row shapes it recognises (for `passk datasets import` and the loader), the languages it
serves, and how a sample becomes a program. Adding a format is one module plus its name in MODULES:
the API's validation, the dataset service, the loader and the worker all ask this registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, reduce
from operator import or_
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails

from sandbox import languages
from service.formats.program import Program

RowTest = Callable[[dict[str, Any]], bool]
RowConvert = Callable[[dict[str, Any]], dict[str, Any]]

# Module names under service/formats/, in their listing (and row detection) order.
MODULES = ("humaneval", "mbpp", "stdio", "call", "run_code", "humaneval_x", "multipl_e")
NATIVE = ("<every language but python>",)


@dataclass(frozen=True)
class Format:
    name: str  # the value of a problem's `format`
    program: Callable[[Any, str], Program]  # (problem row, completion) -> the program the sandbox runs
    # The API's model for a problem of this format; None: the format is not posted in datasets (`run_code`, the
    # problem behind POST /run_code).
    model: type[BaseModel] | None = None
    # A validated model -> the problem's columns (see service.core.models.Problem).
    columns: Callable[[Any], dict[str, Any]] | None = None
    # Published row shapes this format recognises: (is it one?, convert it to API form).
    rows: tuple[tuple[RowTest, RowConvert], ...] = ()
    # The languages a dataset of this format may have; None: every language in sandbox/languages; NATIVE:
    # every one but Python (whose self-checking programs have formats of their own).
    languages: tuple[str, ...] | None = ("python",)
    summary: str = ""


@cache
def formats() -> dict[str, Format]:
    found: dict[str, Format] = {}
    for module_name in MODULES:
        module = importlib.import_module(f"service.formats.{module_name}")
        found[module.FORMAT.name] = module.FORMAT
    return found


def get(name: str) -> Format:
    try:
        return formats()[name]
    except KeyError:
        raise ValueError(f"unknown problem format {name!r}") from None


def postable() -> dict[str, Format]:
    """Formats a dataset's problems may have, by name."""
    return {name: fmt for name, fmt in formats().items() if fmt.model is not None}


@cache
def models() -> dict[str, type[BaseModel]]:
    """The problem model of every postable format, by name, in MODULES order."""
    return {name: fmt.model for name, fmt in postable().items() if fmt.model is not None}


def problem_union() -> Any:
    """The union of every postable format's model: the schema of a dataset's problem (OpenAPI, the client)."""
    return reduce(or_, models().values())


def parse_problem(value: Any) -> BaseModel:
    """Validate one problem with the model of its `format` (absent: humaneval).

    Dispatching by hand, rather than with a tagged union, keeps error locations without a format name
    inserted: ["body", "problems", 3, "test_list"].
    """
    found = models()
    if isinstance(value, tuple(found.values())):
        return value
    format_ = value.get("format", "humaneval") if isinstance(value, dict) else "humaneval"
    model = found.get(format_) if isinstance(format_, str) else None
    if model is None:
        expected = ", ".join(repr(name) for name in found)
        raise ValidationError.from_exception_data(
            "Problem", [InitErrorDetails(type="literal_error", loc=("format",), input=format_, ctx={"expected": expected})]
        )
    return model.model_validate(value)


def for_model(model: Any) -> Format:
    for name, cls in models().items():
        if isinstance(model, cls):
            return formats()[name]
    raise ValueError(f"no format has the model {type(model).__name__}")


def row_sources() -> tuple[tuple[RowTest, RowConvert], ...]:
    """Every format's published row shapes, in MODULES order (first match wins)."""
    return tuple(source for fmt in formats().values() for source in fmt.rows)


def allows_language(format_name: str, language: str) -> bool:
    """Whether a dataset of this format may have this language (a variant, `python-science`, as its family)."""
    allowed = get(format_name).languages
    if language not in languages.all_languages():
        return allowed is None
    if languages.get(language).run_code_only:  # only in the formats datasets do not have (/run_code's)
        return get(format_name).model is None
    if allowed == NATIVE:
        return languages.get(language).native
    return allowed is None or languages.get(language).family in allowed


def program_for(problem: Any, completion: str) -> Program:
    return get(getattr(problem, "format", None) or "humaneval").program(problem, completion)


# Every problem row names every column: a multi-row INSERT takes its columns from the first row.
UNUSED_COLUMNS: dict[str, Any] = {"setup_code": None, "cases": None, "comparison": None, "abs_tol": None, "rel_tol": None}


def columns_with_test_code(fmt: str, prompt: str, test: str, canonical_solution: str | None, *, entry_point: str = "",
                      setup_code: str | None = None) -> dict[str, Any]:
    """The problem row of a format whose tests are code (no cases)."""
    return {**UNUSED_COLUMNS, "format": fmt, "prompt": prompt, "test": test, "entry_point": entry_point,
            "canonical_solution": canonical_solution, "setup_code": setup_code}


def language_of(problem: Any) -> str:
    """The language of a problem's dataset (the worker's problem rows carry it); Python if absent."""
    return getattr(problem, "language", None) or languages.DEFAULT
