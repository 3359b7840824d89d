"""SandboxFusion's `pytest` on /run_code: the program is a Python file of tests, run by pytest (Debian's
python3-pytest) in an image of its own; it passes when pytest exits 0 (every test collected passed). A /run_code
mode of Python, not a language for datasets."""

import dataclasses

from sandbox.languages.python import LANGUAGE as PYTHON

LANGUAGE = dataclasses.replace(
    PYTHON,
    name="python-pytest",
    title="Python (pytest)",
    packages=("python3-pytest",),
    # No cache directory (the scratch directory is the program's; pytest would leave .pytest_cache in it).
    run=("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "main.py"),
    version=("python3", "-m", "pytest", "--version"),
    aliases=(),
    run_code_names=("pytest",),
    reference_commands=(),
    variant_of="python",
    run_code_only=True,
    run_code_args=True,  # e.g. `-k name`, `-x`, `--junitxml=report.xml` (then fetched with `fetch_files`)
    run_code_warm=False,  # `python3 -m pytest`, exec'd: script.py runs a file, not a module
    notes="SandboxFusion's `pytest` on /run_code: the program's tests run by pytest.",
)
