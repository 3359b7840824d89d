"""`passk languages compare` against the whole service over HTTP: one model's runs in two languages side by side.

Runs are made as for the /languages page (stdio datasets in C++ and Java, verdicts written directly), so no
language image runs here."""

from __future__ import annotations

import json

from tests.e2e.conftest import Stack
from tests.e2e.test_cli import fails_with, ok, passk
from tests.e2e.test_languages_page import _language_run


def test_languages_compare(stack: Stack) -> None:
    with stack.client() as client:
        cpp = _language_run(stack, client, "cpp", [4] * 9 + [0] * 3)  # pass@1 = 75 % over 12 problems
        java = _language_run(stack, client, "java", [2, 0, 0, 2])  # pass@1 = 25 % over 4, pass@4 = 50 %
        api = client.get("/v1/languages/compare", params={"runs": f"{cpp['id']},{java['id']}", "k": "1,4"}).json()

    # Run ids or unique prefixes, as every run command takes them.
    table = ok(passk(stack, "languages", "compare", cpp["id"][:8], java["id"], "-k", "1,4")).stdout
    lines = table.splitlines()
    assert lines[0] == f"model {api['model']}: 2 languages", table
    header = next(line for line in lines if line.startswith("language"))
    assert header.split() == ["language", "toolchain", "run", "problems", "pass@1", "pass@4"], header
    rows = {line.split()[0]: line for line in lines[lines.index(header) + 1:] if line.strip()}
    assert cpp["id"] in rows["cpp"] and " 12 " in rows["cpp"] and "75.00% [" in rows["cpp"], rows
    assert java["id"] in rows["java"] and "25.00% [" in rows["java"] and "50.00% [" in rows["java"], rows
    micro = next(line for line in lines if line.startswith(api["micro"]["label"]))
    assert f"{api['micro']['pass_at_k'][0]['pass_at_k']['estimate']:.2%}" in micro and " 16 " in micro, micro
    macro = next(line for line in lines if line.startswith(api["macro"]["label"]))
    assert "50.00% [" in macro, macro  # (75 % + 25 %) / 2
    # cpp/0..3 and java/0..3 are one problem each in two languages: the averages resample them together
    assert "95% intervals: BCa bootstrap over problems, averages resample the 4 problems shared by languages " \
        "together (12 units; matched by the id after its language prefix) (10000 resamples, seed 0)" in table, table
    assert "warning: 8 of the cpp problems (cpp/4, cpp/5, cpp/6, cpp/7, cpp/8, ...) match no problem" in table
    assert "warning: fewer than 30 problems in cpp, java" in table, table

    as_json = json.loads(ok(passk(stack, "languages", "compare", cpp["id"], java["id"], "-k", "1,4", "--json")).stdout)
    assert as_json == api
    # `passk languages` alone still lists the languages.
    assert "cpp" in ok(passk(stack, "languages")).stdout

    # Mistakes a user can make: one clear line, exit 1.
    fails_with(passk(stack, "languages", "compare", cpp["id"], cpp["id"]), "distinct run ids")
    fails_with(passk(stack, "languages", "compare", cpp["id"], "-k", "9"), "k=9")
