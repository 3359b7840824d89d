"""Python: today's image and judges (sandbox/runtime/trusted_tests.py, driver.py), registered here so
the registry lists every language. Nothing is compiled; the judges run the program in-process."""

from sandbox.languages.base import Language

LANGUAGE = Language(
    name="python",
    title="Python",
    source_file="main.py",
    run=("python3", "main.py"),
    version=("python3", "--version"),
    aliases=("py", "python3"),
    run_code_names=("python",),
    reference_commands=("python3 main.py",),
    native=False,
    run_code_warm=True,
)
