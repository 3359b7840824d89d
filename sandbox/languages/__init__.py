"""The languages passk runs: one module per language, each defining `LANGUAGE` (see base.py).

To add a language: write `sandbox/languages/<name>.py` with `LANGUAGE = Language(...)`, add its name to
`MODULES` below, and add `tests/languages/test_<name>.py`. Nothing else names languages.
"""

from __future__ import annotations

import importlib
from functools import cache

from sandbox.languages.base import Language

__all__ = ["DEFAULT", "MODULES", "Language", "all_languages", "get", "image_of", "resolve"]

# Module names under sandbox/languages/, in the order they are listed.
MODULES = ("python", "python_science", "python_pytest", "cpp", "java", "java_junit", "javascript", "typescript",
           "typescript_jest", "go", "go_test", "rust", "ruby", "lua", "php", "perl", "bash", "r", "csharp", "d",
           "elixir", "racket", "ocaml", "haskell", "clojure", "scala")
# The language of a dataset that names none.
DEFAULT = "python"


@cache
def all_languages() -> dict[str, Language]:
    """name -> Language, in the order of MODULES."""
    modules = (importlib.import_module(f"sandbox.languages.{module_name}") for module_name in MODULES)
    return {module.LANGUAGE.name: module.LANGUAGE for module in modules}


def get(name: str) -> Language:
    try:
        return all_languages()[name]
    except KeyError:
        raise ValueError(f"unknown language {name!r}; known: {', '.join(all_languages())}") from None


def image_of(language: Language) -> Language:
    """The language whose image `language` runs in: its family's, for a variant that adds nothing to it (`go-test`
    runs in Go's image), else its own."""
    if language.variant_of:
        family = get(language.variant_of)
        image = ("packages", "npm_packages", "image_setup", "context_files")
        if all(getattr(language, field) == getattr(family, field) for field in image):
            return family
    return language


def resolve(name: str) -> Language:
    """A language by its name or one of its aliases ("c++", "js", "rs"), case-insensitive."""
    wanted = name.strip().lower()
    for language in all_languages().values():
        if wanted == language.name or wanted in language.aliases:
            return language
    return get(wanted)
