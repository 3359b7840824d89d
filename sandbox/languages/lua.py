"""Lua: Lua 5.4 from Debian bookworm (`lua5.4`), with LuaUnit (`lua-unit`), the framework MultiPL-E's tests use, and
luv (`lua-luv`, libuv's bindings), which gives Lua the descriptors its wire needs (standard Lua cannot read or
write descriptors 3 to 5, and Debian's luaposix stops at Lua 5.3).

Self-checking problems (MultiPL-E) run as two Lua processes (sandbox/languages/split.py, blocks closed by `end`):

- the candidate, `main.lua`: the original program up to the tests (the prompt and the model's completion, which
  closes the function itself), then one statement that serves the function to the judge (lua/server.lua, loaded
  with `-e` before any of the model's code), placed where the tests began in one program;
- the judge, `main.lua` in a directory of its own, loaded by passk's judge runtime (lua/judge.lua): the prompt's
  code before the function to complete, a stub for that function (the prompt's signature; its body calls the
  candidate's process), then the tests. The tests end with `os.exit(lu.LuaUnit.run())`; the runtime takes that
  exit as the tests' end and reports the pass once LuaUnit ran every test and none failed.

Values cross as data (lua/wire.lua, the rule in sandbox/runtime/values.py): nothing the model wrote (a table
whose `__eq` says yes, a replaced `lu.assertEquals`, a finalizer that exits, `os.exit`) ever runs in the judge.
In one process, `os.exit(0)` in the function ends the tests with status 0 before LuaUnit reports (Debian's LuaUnit
3.4 catches an `os.exit` inside a test; one at the top level it cannot); here only the judge's report does.

The runtime files are installed in the image under /opt/passk/lua.
"""

from __future__ import annotations

import re

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language, ReferencePass, RuntimeFiles
from sandbox.languages.split import Keywords, Programs, SplitError, Syntax, TestSource

RUNTIME_DIR = "/opt/passk/lua"
RUNTIME = RuntimeFiles("lua", ("wire.lua", "judge.lua", "server.lua"), RUNTIME_DIR)
# Lua's long comments and strings (`--[[ ]]`, `[[ ]]`) are not in MultiPL-E's prompts; a prompt holding one that
# looks like code is refused by the signature's match, never misread silently.
SYNTAX = Syntax(line_comments=("--",), block_comment=None, quotes="\"'")
# `local function name(params)` or `function name(params)`, as the prompt's last line of code.
FAMILY = Keywords(
    syntax=SYNTAX,
    signature=re.compile(r"\s*(?:local\s+)?function\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*"),
)
_PARAM = re.compile(r"[A-Za-z_]\w*|\.\.\.")


def stub(parts: splitting.Parts) -> str:
    """The judge's function with the prompt's signature: it sends its arguments, as the tests passed them (a
    trailing nil too: table.pack counts it), and returns every value the candidate's function returned."""
    entry = parts.entry
    arguments = ", ".join(param for param, _ in entry.params)
    return f"{entry.signature}\n  return PasskJudge.call({entry.name!r}, table.pack({arguments}))\nend\n"


def serve_statement(name: str) -> str:
    """What follows the candidate's program: its function served to the judge (lua/server.lua)."""
    return f"\n;PasskServer.serve({name!r}, {name})\n"


def split_problem(source: TestSource) -> splitting.Parts:
    parts = splitting.top_level(splitting.split_keywords(source.prompt, source.completion, source.tests, FAMILY))
    for param, _ in parts.entry.params:
        if not _PARAM.fullmatch(param.strip()):
            raise SplitError(f"a parameter passk cannot pass on: {param.strip()!r}")
    return parts


def programs(source: TestSource) -> Programs:
    parts = split_problem(source)
    return splitting.served(parts, "main.lua", serve_statement(parts.entry.name), stub(parts), judge_end="")


STDERR_VERDICTS = (
    (r"not enough memory", "memory"),
    # The judge's line for a test LuaUnit failed (judge.lua); its errors are "LuaUnit error: ...".
    (r"(?m)^LuaUnit failure:", "failed"),
    # The interpreter's report of an uncaught error (a syntax error too): "lua: main.lua:3: ...".
    (r"(?m)^(?:lua|LuaUnit error): ", "error"),
)

LANGUAGE = Language(
    name="lua",
    title="Lua",
    packages=("lua5.4", "lua-unit", "lua-luv"),
    image_setup=(
        RUNTIME.install() + " && chmod -R a+rX /opt/passk",
        # `lua` is Debian's alternative for the newest installed Lua: this image has only 5.4.
        "test -x /usr/bin/lua || ln -s /usr/bin/lua5.4 /usr/bin/lua",
        f"lua -e 'dofile(\"{RUNTIME_DIR}/server.lua\"); require(\"luaunit\"); require(\"luv\")'",
    ),
    context_files=RUNTIME.context_files,
    source_file="main.lua",
    programs=programs,
    run=("lua", "main.lua"),
    candidate_run=("lua", "-e", f"dofile('{RUNTIME_DIR}/server.lua')", "main.lua"),
    judge_run=("lua", f"{RUNTIME_DIR}/judge.lua"),
    judge_memory_bytes=32 * MB,
    version=("lua", "-v"),
    stderr_verdicts=STDERR_VERDICTS,
    aliases=("lua5.4",),
    run_code_names=("lua",),
    # MultiPL-E's evaluation/src/eval_lua.py: `lua <file>` under safe_subprocess's default 15 s; exit status 0 passes.
    reference_commands=("lua main.lua",),
    reference_pass=ReferencePass(timeout_s=15.0),
)
