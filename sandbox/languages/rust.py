"""Rust: Debian bookworm's rustc (1.63) with the `rand`, `regex` and `md5` crates (librust-*-dev).

HumanEval-X's Rust programs are `fn main(){}` + declaration + prompt + completion + tests, whose tests are
libtest `#[test]` functions (the original harness runs `cargo check`, then `cargo test`); MultiPL-E's are
prompt + completion + tests, whose tests are a `fn main` of asserts (a plain `rustc` binary). passk builds
two programs from them (sandbox/languages/split.py), each with `rustc` against rlibs of the three crates and
of passk's wire (rust/passk_wire.rs), all built at image build time, linked to the shared libstd
(`-C prefer-dynamic`: half the link time) by gold. Not optimised (`-O` doubles the compile time), as cargo's debug
builds are: overflow checks stay on.

- The candidate, `main.rs`: the original program's text up to the tests (declaration + prompt + completion;
  never the harness's `fn main(){}`), then passk's server for it: a generated dispatch per function the
  tests call (decode the arguments into owned values, call the real function with them or references to
  them, encode what it returned; a panic crosses as 'E' "panic") and a `fn main` that serves calls. The
  generated code names everything by absolute path and uses no macro, so nothing the model defines (a
  `macro_rules! assert_eq`, a shadowed prelude name) changes what it does; the codec itself is the
  precompiled rlib. Compiled without RUSTC_BOOTSTRAP: `#![feature]` is a compile error, as on stable rustc.
- The judge, `judge.rs` (the same for every sample of a problem: compiled once per container): the prompt's
  code before the function to complete, a stub with the function's signature that calls the candidate's
  process, the tests, and a custom test runner (`#![test_runner]`: the one unstable feature, so only the
  judge's compile has RUSTC_BOOTSTRAP) that reports the pass once libtest's `test_main_static` returned
  (it exits 101 if a test failed) or, for MultiPL-E, once the tests' `main` returned. rust/build-judge.sh
  compiles it; a problem whose own tests do not compile gets a judge that reports so (an `error` for every
  sample: HumanEval-X's Rust/50 calls rand 0.4's API, which Debian's rand 0.8 lacks).

HumanEval-X's Rust port leaves to the completion some code its tests use that the other languages' prompts
give (`_PORT_GAPS`): more functions the tests call (Rust/10's `make_palindrome`, Rust/38's `encode_cyclic`,
Rust/50's `decode_shift`: the candidate serves them, as the original program had them from the completion)
and Rust/137's `RtnType`, which the judge gets as the canonical solution defines it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.languages import split as splitting
from sandbox.languages.base import MB, Language
from sandbox.languages.split import Entry, Programs, SplitError, Syntax, TestSource

SYNTAX = Syntax(nested_block_comments=True, rust_raw_strings=True)
ROOT = "/opt/passk/rust"
REFERENCE = f"{ROOT}/reference"
WIRE = f"{ROOT}/libpassk_wire.rlib"
BUILD_JUDGE = f"{ROOT}/build-judge.sh"
CRATES = ("rand", "regex", "md5")

# ------------------------------------------------------------------ the function to complete

_FN = re.compile(r"\s*(?:pub(?:\s*\([^()]*\))?\s+)?(?:(?:const|async|unsafe|extern\s*(?:\"[^\"]*\")?)\s+)*"
                 r"fn\s+(?P<name>[A-Za-z_]\w*)\s*")
_PATTERN = re.compile(r"(?:mut\s+)?(?P<name>[A-Za-z_]\w*)")
_LIFETIME = re.compile(r"'[A-Za-z_]\w*")
# The names a signature's types may use: those the wire carries (rust/passk_wire.rs) and their paths.
_CARRIED = frozenset((
    "i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec VecDeque HashMap "
    "BTreeMap HashSet BTreeSet Option Box dyn Any Send Sync std alloc collections vec string boxed any"
).split())


def _closing(text: str, start: int) -> int:
    """The index of the bracket closing the one at `start` (`<` / `(`; a `->` is no bracket), or -1."""
    opener = text[start]
    closer = {"<": ">", "(": ")"}[opener]
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == opener:
            depth += 1
        elif char == closer and not (closer == ">" and index > 0 and text[index - 1] == "-"):
            depth -= 1
            if depth == 0:
                return index
    return -1


def _top_level_colon(text: str) -> int:
    """The first `:` outside brackets that is not half of a `::`, or -1."""
    depth = 0
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == ":" and depth == 0 and text[index + 1:index + 2] != ":" and text[index - 1:index] != ":":
            return index
    return -1


def _skip_attributes(code: str, start: int, end: int) -> int:
    """Past the outer attributes (`#[...]`) that begin code[start:end]."""
    while True:
        while start < end and code[start].isspace():
            start += 1
        if not code.startswith("#[", start):
            return start
        depth = 0
        for index in range(start + 1, end):
            depth += {"[": 1, "]": -1}.get(code[index], 0)
            if depth == 0:
                start = index + 1
                break
        else:
            return start


def entry(head: str, code: str, brace: int) -> Entry:
    """The Rust function whose body the prompt leaves open: `[pub] fn name[<'lifetimes>](params) [-> type]`."""
    start = splitting.statement_start(code, brace)
    fn_start = _skip_attributes(code, start, brace)
    text = code[fn_start:brace]
    found = _FN.match(text)
    if not found:
        raise SplitError("the prompt does not end with a Rust function's signature and its '{'")
    name, at = found.group("name"), found.end()
    if re.search(r"\basync\b", text[:found.start("name")]):
        raise SplitError(f"{name}() is async: the tests would await what passk's stub cannot give them")
    if name == "main":
        raise SplitError("the function to complete is `main`: the candidate's program needs its own to serve the tests")
    generics = ""
    if text.startswith("<", at):
        close = _closing(text, at)
        if close < 0:
            raise SplitError(f"the generics of {name}() do not close")
        generics = text[at:close + 1]
        for param in splitting.split_params(generics[1:-1]):
            if not param.startswith("'"):
                raise SplitError(f"{name}() is generic over {param!r}: passk cannot choose the type of its arguments")
        at = close + 1
    while at < len(text) and text[at].isspace():
        at += 1
    if not text.startswith("(", at) or _closing(text, at) < 0:
        raise SplitError(f"the signature of {name}() has no parameter list")
    close = _closing(text, at)
    params = tuple(_param(name, param) for param in splitting.split_params(text[at + 1:close]))
    rest = text[close + 1:].strip()
    where = re.search(r"\bwhere\b", rest)
    clause = rest[where.start():].strip() if where else ""
    rest = rest[:where.start()].strip() if where else rest
    returns = ""
    if rest.startswith("->"):
        returns = " ".join(rest[2:].split())
    elif rest:
        raise SplitError(f"the signature of {name}() has {rest!r} where its return type would be")
    signature = " ".join(f"{text[:close + 1]} {'-> ' + returns if returns else ''} {clause}".split())
    return Entry(start=start, brace=brace, name=name, params=params, returns=returns, signature=signature)


def _param(function: str, text: str) -> tuple[str, str]:
    colon = _top_level_colon(text)
    pattern = _PATTERN.fullmatch(text[:colon].strip()) if colon > 0 else None
    if pattern is None:
        raise SplitError(f"a parameter of {function}() is not `name: type`: {text!r}")
    return pattern.group("name"), " ".join(text[colon + 1:].split())


def _check_types(e: Entry, extra: frozenset[str]) -> None:
    """SplitError unless the wire carries every type of the signature (as the judge and the server rebuild them)."""
    typed = [(f"its parameter {name}", kind) for name, kind in e.params]
    for what, kind in typed + ([("its return type", e.returns)] if e.returns else []):
        if re.search(r"&\s*(?:'\w+\s*)?mut\b", kind):
            raise SplitError(f"{e.name}() takes a mutable reference ({what}): the program's changes to it could not "
                             "reach the tests")
        for word in re.findall(r"[A-Za-z_]\w*", _LIFETIME.sub("", kind)):
            if word not in _CARRIED and word not in extra:
                raise SplitError(f"{what} of {e.name}(), {kind!r}, uses {word!r}: a type passk does not carry between "
                                 "the tests' process and the program's")


# ------------------------------------------------------------------ what HumanEval-X's port leaves out


@dataclass(frozen=True)
class _Gap:
    """Code HumanEval-X's Rust tests use that the port's prompt leaves to the completion (the prompts of the
    other languages give it): more functions to call in the candidate, and trusted types for the judge."""

    calls: tuple[str, ...] = ()  # signatures of the other functions the tests call (the candidate's)
    types: tuple[str, ...] = ()  # type names the signatures may use beyond what the wire carries
    judge: str = ""  # the types' definitions and their Decode, for the judge
    server: str = ""  # Encode of the candidate's same-named types, for the server


_RTN_TYPE_JUDGE = """
#[derive(Debug, PartialEq)]
pub enum RtnType<S, F, I> {
    Empty(),
    String(S),
    Float(F),
    Int(I),
}

impl<S: ::passk_wire::Decode, F: ::passk_wire::Decode, I: ::passk_wire::Decode> ::passk_wire::Decode for RtnType<S, F, I> {
    fn decode(passk_r: &mut ::passk_wire::Reader<'_>) -> ::std::result::Result<Self, ::passk_wire::Refused> {
        ::passk_wire::decode_variant(passk_r, |passk_variant, passk_fields, passk_r| match (passk_variant, passk_fields) {
            ("RtnType::Empty", 0) => ::std::result::Result::Ok(RtnType::Empty()),
            ("RtnType::String", 1) => ::std::result::Result::Ok(RtnType::String(::passk_wire::Decode::decode(passk_r)?)),
            ("RtnType::Float", 1) => ::std::result::Result::Ok(RtnType::Float(::passk_wire::Decode::decode(passk_r)?)),
            ("RtnType::Int", 1) => ::std::result::Result::Ok(RtnType::Int(::passk_wire::Decode::decode(passk_r)?)),
            _ => ::passk_wire::unknown_variant(passk_variant),
        })
    }
}
"""

# The tests compare with String, Float and Int values only: any other variant of the candidate's own RtnType
# crosses as Empty(), which equals none of them (as the candidate's variant would not in one process).
_RTN_TYPE_SERVER = """
impl ::passk_wire::Encode for RtnType<String, f64, i32> {
    fn encode(&self, passk_w: &mut ::passk_wire::Writer) {
        #[allow(unreachable_patterns)]
        match self {
            RtnType::String(passk_v) => ::passk_wire::encode_variant(passk_w, "RtnType::String", &[passk_v]),
            RtnType::Float(passk_v) => ::passk_wire::encode_variant(passk_w, "RtnType::Float", &[passk_v]),
            RtnType::Int(passk_v) => ::passk_wire::encode_variant(passk_w, "RtnType::Int", &[passk_v]),
            _ => ::passk_wire::encode_variant(passk_w, "RtnType::Empty", &[]),
        }
    }
}
"""

# Keyed by the function to complete's signature (whitespace-normalised), as HumanEval-X's declarations give it.
_PORT_GAPS = {
    "fn is_palindrome_10(str: &str) -> bool": _Gap(calls=("fn make_palindrome(str: &str) -> String",)),
    "fn decode_cyclic(s: &str) -> String": _Gap(calls=("fn encode_cyclic(s: &str) -> String",)),
    "fn encode_shift(s: &str) -> String": _Gap(calls=("fn decode_shift(s: &str) -> String",)),
    "fn compare_one<'a>(a:&'a dyn Any, b:&'a dyn Any) -> RtnType<String,f64,i32>": _Gap(
        types=("RtnType",), judge=_RTN_TYPE_JUDGE, server=_RTN_TYPE_SERVER),
}


def _gap(parts: splitting.Parts) -> tuple[_Gap, list[Entry]]:
    """The port's gap for this function (if any) and the entries of the functions the tests call."""
    gap = _PORT_GAPS.get(parts.entry.signature, _Gap())
    entries = [parts.entry]
    for signature in gap.calls:
        text = signature + " {"
        entries.append(entry(text, splitting.blank(text, SYNTAX), len(text) - 1))
    for e in entries:
        _check_types(e, frozenset(gap.types))
    return gap, entries


# ------------------------------------------------------------------ the two programs

_JUDGE_HEAD = "#![feature(test, custom_test_frameworks)]\n#![test_runner(crate::passk_test_runner)]\n"
_JUDGE_RUNNER = """
extern crate test as passk_libtest;

/// passk's test runner: the pass is reported only once the tests returned (libtest exits 101 when one failed).
#[doc(hidden)]
pub fn passk_test_runner(passk_tests: &[&passk_libtest::TestDescAndFn]) {{
    {run}
    ::passk_wire::judge::pass();
}}
"""
_RUN_LIBTEST = "passk_libtest::test_main_static(passk_tests);"
_RUN_MAIN = "let _ = passk_tests;\n    main();"


def _stub(e: Entry) -> str:
    """The judge's stand-in for a function of the candidate's: the same types, the call sent over the wire."""
    opening = e.signature.index("(")
    head, tail = e.signature[:opening], e.signature[_closing(e.signature, opening) + 1:]
    params = ", ".join(f"passk_{index}: {kind}" for index, (_, kind) in enumerate(e.params))
    args = ", ".join(f"&passk_{index}" for index in range(len(e.params)))
    return f'{head}({params}){tail} {{\n    ::passk_wire::judge::call("{e.name}", &[{args}])\n}}\n'


def _owned(kind: str) -> tuple[str, str]:
    """(the type the server decodes a parameter of type `kind` into, how it passes it: `{}` is the value)."""
    if kind.startswith("&"):
        inner = re.sub(r"^&\s*(?:'\w+\s+)?", "", kind)
        if re.fullmatch(r"dyn\s+Any(?:\s*\+\s*\w+)*", inner):
            return f"Box<{inner}>", "&*{}"  # `&boxed` would coerce to a dyn Any holding the Box itself
        if inner == "str":
            return "String", "&{}"
        if inner.startswith("[") and inner.endswith("]"):
            return f"Vec<{inner[1:-1]}>", "&{}"
        return _LIFETIME.sub("'static", inner), "&{}"
    return _LIFETIME.sub("'static", kind), "{}"


_SERVE = """
fn passk_serve_{index}(passk_r: &mut ::passk_wire::Reader<'_>) -> ::std::result::Result<::std::vec::Vec<u8>, ::passk_wire::Refused> {{
    ::passk_wire::server::arguments(passk_r, {count})?;
{decode}    passk_r.finish()?;
    ::std::result::Result::Ok(::passk_wire::server::answer(|| ::passk_wire::server::returned(&{call})))
}}
"""


def _server(entries: list[Entry], gap: _Gap) -> str:
    """passk's server for the candidate's program: a dispatch per function, and the program's `main`."""
    parts = ["\n\n// passk's server for this program (sandbox/languages/rust.py): it answers the tests' calls.\n",
             gap.server]
    table = []
    for index, e in enumerate(entries):
        decode, args = [], []
        for position, (_, kind) in enumerate(e.params):
            owned, passed = _owned(kind)
            decode.append(f"    let passk_a{position}: {owned} = ::passk_wire::Decode::decode(passk_r)?;\n")
            args.append(passed.format(f"passk_a{position}"))
        call = f"{e.name}({', '.join(args)})"
        if re.search(r"\bunsafe\b", e.signature[:e.signature.index("(")]):
            call = f"unsafe {{ {call} }}"
        parts.append(_SERVE.format(index=index, count=len(e.params), decode="".join(decode), call=call))
        table.append(f'("{e.name}", passk_serve_{index} as ::passk_wire::server::Serve)')
    parts.append(f"\nfn main() {{\n    ::passk_wire::server::serve(&[{', '.join(table)}]);\n}}\n")
    return "".join(parts)


def programs(source: TestSource) -> Programs:
    """The judge's and the candidate's files for a HumanEval-X or MultiPL-E problem and a completion."""
    head = source.declaration + source.prompt
    parts = splitting.split(head, source.completion, source.tests, SYNTAX, entry)
    gap, entries = _gap(parts)
    before = _JUDGE_HEAD + parts.before + "\n" + gap.judge + "\n" + "".join(_stub(e) for e in entries) + "\n"
    run = _RUN_LIBTEST if source.format == "humaneval-x" else _RUN_MAIN
    judge = before + parts.judge_tests + "\n" + _JUDGE_RUNNER.format(run=run)
    # The problem's own lines of judge.rs: a compile error there is the problem's (rust/build-judge.sh).
    own = [(_JUDGE_HEAD.count("\n") + 1, _JUDGE_HEAD.count("\n") + parts.before.count("\n") + 1)]
    first = before.count("\n") + 1
    own.append((first, first + parts.judge_tests.count("\n")))
    return Programs(candidate={"main.rs": parts.candidate + _server(entries, gap)},
                    judge={"judge.rs": judge, "problem.lines": "".join(f"{a} {b}\n" for a, b in own)})


def humaneval_x_program(prompt: str, declaration: str, completion: str, test: str) -> str:
    # As HumanEval-X's harness builds it (CodeGeeX): main + declaration + prompt + completion + test.
    return "\nfn main(){ \n } \n" + declaration + prompt + completion + test


_CARGO_ENV = "CARGO_HOME=/tmp/passk-cargo-home CARGO_TARGET_DIR=/tmp/passk-reference/target"
_LIBS = ("-L", f"dependency={ROOT}/deps",
         *(arg for crate in CRATES for arg in ("--extern", f"{crate}={ROOT}/lib{crate}.rlib")))
# -fuse-ld=gold: binutils' other linker (in the image already), the same libraries; linking is most of a small
# program's compile, and gold takes a fifth less of it than ld.bfd.
_RUSTC = ("rustc", "--edition", "2021", "-C", "prefer-dynamic", "-C", "link-arg=-fuse-ld=gold")
_WIRE = ("--extern", f"passk_wire={WIRE}")

LANGUAGE = Language(
    name="rust",
    title="Rust",
    packages=("rustc", "cargo", "librust-rand-dev", "librust-regex-dev", "librust-md5-dev",
              "librust-aho-corasick-dev", "librust-memchr-dev"),
    context_files=(
        ("sandbox/languages/rust/Cargo.toml", "rust/Cargo.toml"),
        ("sandbox/languages/rust/cargo-config.toml", "rust/cargo-config.toml"),
        ("sandbox/languages/rust/passk_wire.rs", "rust/passk_wire.rs"),
        ("sandbox/languages/rust/build-judge.sh", "rust/build-judge.sh"),
    ),
    image_setup=(
        # One crate depending on the three, built offline from Debian's sources: its rlibs are what passk
        # links programs against, and it stays (checked and built) for bench/languages.py's reference.
        f"mkdir -p {REFERENCE}/src {REFERENCE}/.cargo {ROOT}/deps",
        f"cp /passk-context/rust/Cargo.toml {REFERENCE}/ && cp /passk-context/rust/cargo-config.toml"
        f" {REFERENCE}/.cargo/config.toml && printf 'fn main() {{}}\\n' > {REFERENCE}/src/main.rs",
        f"cd {REFERENCE} && CARGO_HOME=/tmp/passk-cargo-home cargo build --offline -q"
        " && CARGO_HOME=/tmp/passk-cargo-home cargo check --offline -q",
        f"cp {REFERENCE}/target/debug/deps/*.rlib {ROOT}/deps/ && for c in {' '.join(CRATES)}; do"
        f" cp {ROOT}/deps/lib$c-*.rlib {ROOT}/lib$c.rlib; done",
        # passk's wire, compiled once: a sample's compile pays only for its own code and its dispatch.
        f"rustc --edition 2021 --crate-type rlib --crate-name passk_wire -O -o {WIRE} /passk-context/rust/passk_wire.rs",
        f"cp /passk-context/rust/build-judge.sh {BUILD_JUDGE}",
        f"rm -rf /tmp/passk-cargo-home && chmod -R a+rX,go-w {ROOT}",
    ),
    source_file="main.rs",
    programs=programs,
    humaneval_x_program=humaneval_x_program,
    compile=(*_RUSTC, "-o", "main", "main.rs", *_LIBS),
    candidate_compile=(*_RUSTC, "-o", "main", "main.rs", *_LIBS, *_WIRE),
    judge_compile=("sh", BUILD_JUDGE, *_RUSTC[1:], *_LIBS, *_WIRE),
    # One test thread (tests run in order, on the main thread, as cargo test runs one test); --nocapture: a
    # failed assertion's message goes to stderr, where stderr_verdicts tell it (failed) from another panic.
    judge_run=("./judge", "--test-threads=1", "--nocapture"),
    run=("./main",),
    version=("rustc", "--version"),
    compile_time_limit_s=30.0,
    compile_memory_bytes=2048 * MB,
    # The judges of a dataset's problems and the candidates of its samples (~150 KB a build, linked to the
    # shared libstd): a run of HumanEval-X's 164 problems fits with room to spare.
    compile_cache_bytes=128 * MB,
    pids=64,
    stderr_verdicts=(
        (r"memory allocation of \d+ bytes failed", "memory"),
        (r"panicked at 'assertion failed", "failed"),
        (r"panicked at", "error"),
    ),
    aliases=("rs",),
    run_code_names=("rust",),
    # HumanEval-X's execution.py: `cargo check --bin X` then `cargo test --bin X` in one crate whose
    # dependencies are built; here each sample is that crate's main.rs, sharing one warm target directory.
    reference_commands=(
        f"flock /tmp/passk-reference.lock sh -c '[ -d /tmp/passk-reference ] || cp -a {REFERENCE} /tmp/passk-reference'"
        f" && mkdir -p src .cargo && mv main.rs src/main.rs && cp {REFERENCE}/Cargo.toml {REFERENCE}/Cargo.lock ."
        f" && cp {REFERENCE}/.cargo/config.toml .cargo/ && {_CARGO_ENV} cargo check --offline --message-format json",
        # `cargo test` builds, then runs: the build is made a step of its own so that the run's time limit
        # (the bench applies it to the last command only) is not spent compiling.
        f"{_CARGO_ENV} cargo test --no-run --offline --message-format json",
        f"{_CARGO_ENV} cargo test --offline --message-format json",
    ),
    extra={
        "bench": (
            lambda row: '    panic!("passk: wrong");\n' + row["canonical_solution"],
            lambda row: "    loop {}\n" + row["canonical_solution"],
        ),
    },
    notes="rustc against pre-built rand/regex/md5 and passk-wire rlibs; the judge is a libtest binary with one "
          "thread, the candidate a plain binary serving its calls",
)
