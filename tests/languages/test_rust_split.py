"""Rust's judge and candidate under attack, through the real sandbox and the Rust image (built on demand).

One batch serves every test here (so each problem's judge compiles once per container):

- the attacks: each class of trick a completion can play, around a wrong answer, on several problems. None
  passes, none is `sandbox_error`; those that ended early carry `ended_early`, those that signalled or traced
  the other processes `reached_judge`, those that wrote on their channel out of turn `out_of_turn`;
- the property: for every HumanEval-X problem, the canonical solution beside harmless tricks passes (as under
  the original harness), and a wrong answer inside a hostile wrapper fails;
- the codec: values of the wire's rule (sandbox/runtime/values.py) that Rust's signatures use, rebuilt and
  written again by passk_wire in the image's own judge and candidate, byte for byte as the Python reference
  codec writes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from sandbox.executor import Job, Outcome
from sandbox.images import ensure_language_image, toolchain_version
from sandbox.languages import get, jobs, split
from sandbox.runtime import values as v
from tests.languages.conftest import exceptions, humaneval_x_rows
from tests.sandbox.programs import run_sharded

ROWS = {row["task_id"]: row for row in humaneval_x_rows("rust")}
MEMORY = 256 << 20

# A wrong answer for every problem: the default of its return type (RtnType has none; Rust/4's tests are
# one-sided, `mad(xs) - expected < 1e-6`, which 0.0 passes under the original harness too).
WRONG = {task_id: "    return Default::default();\n" for task_id in ROWS} | {
    "Rust/137": "    return RtnType::Empty();\n", "Rust/4": "    return f32::MAX;\n"}


@dataclass(frozen=True)
class Sample:
    key: str  # the problem (samples of one problem run in one container, after its judge's one compile)
    source: split.TestSource
    time_limit_s: float = 3.0


def _wrong(task_id: str, body: str = "", items: str = "") -> Sample:
    """A wrong answer of a HumanEval-X problem: `body` run at the call, then the wrong return, then the canonical
    solution (unreachable; it defines the other functions the tests call), then top-level `items`."""
    row = ROWS[task_id]
    completion = body + WRONG[task_id] + row["canonical_solution"] + "\n" + items
    return Sample(task_id, split.TestSource("humaneval-x", row["prompt"], row["test"], completion, row["declaration"]))


def _canonical(task_id: str, body: str = "", items: str = "") -> Sample:
    row = ROWS[task_id]
    completion = body + row["canonical_solution"] + "\n" + items
    return Sample(task_id, split.TestSource("humaneval-x", row["prompt"], row["test"], completion, row["declaration"]))


# ------------------------------------------------------------------ the attacks

EXTERN = ('extern "C" { fn kill(pid: i32, sig: i32) -> i32; fn ptrace(request: i64, pid: i32, addr: usize, data: usize) -> i64;'
          ' fn atexit(f: extern "C" fn()) -> i32; fn _exit(code: i32) -> !; fn getpid() -> i32;'
          ' fn process_vm_writev(pid: i32, local: *const [usize; 2], local_count: u64, remote: *const [usize; 2],'
          ' remote_count: u64, flags: u64) -> isize; }\n')
OTHER_PIDS = ("std::fs::read_dir(\"/proc\").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())"
              ".filter(|pid| *pid != unsafe { getpid() })")


def _init(code: str, name: str = "PASSK_INIT") -> str:
    """A function run before main, from .init_array (what #[ctor] expands to)."""
    return (f'#[used]\n#[link_section = ".init_array"]\nstatic {name}: extern "C" fn() = '
            f'{{ extern "C" fn passk_init() {{ {code} }} passk_init }};\n')


def _frame(message: str) -> str:
    """Rust: write `message` (a Vec<u8> expression) framed, twice in one write, on the reply channel."""
    return (f"    {{ let passk_m: Vec<u8> = {message}; let mut passk_f = (passk_m.len() as u32).to_be_bytes().to_vec();\n"
            "      passk_f.extend_from_slice(&passk_m); let passk_twice = [passk_f.clone(), passk_f].concat();\n"
            "      use std::io::Write; use std::os::unix::io::FromRawFd;\n"
            "      let mut passk_out = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(4) });\n"
            "      let _ = passk_out.write_all(&passk_twice); }\n")


# (label, problems, body run at the call, top-level items, the flag it must carry)
ATTACKED = ("Rust/0", "Rust/12", "Rust/22", "Rust/107", "Rust/111", "Rust/162")
ATTACKS: list[tuple[str, tuple[str, ...], str, str, str | None]] = [
    ("initialiser exit(0)", ATTACKED, "", _init("std::process::exit(0);"), "ended_early"),
    ("exit(0) in the call", ATTACKED, "    std::process::exit(0);\n", "", "ended_early"),
    ("exit(0) from another thread", ATTACKED,
     "    std::thread::spawn(|| std::process::exit(0));\n    std::thread::sleep(std::time::Duration::from_secs(1));\n",
     "", "ended_early"),
    ("exit hook turns exit(3) into 0", ATTACKED,
     '    extern "C" fn passk_zero() { unsafe { _exit(0) } }\n    unsafe { atexit(passk_zero); }\n    std::process::exit(3);\n',
     EXTERN, "ended_early"),
    ("panic hook exits 0", ATTACKED, "    let passk_none: Option<i32> = None;\n    passk_none.unwrap();\n",
     _init("std::panic::set_hook(Box::new(|_| std::process::exit(0)));"), "ended_early"),
    ("environment, /proc and the judge's files", ATTACKED,
     "    for (k, val) in std::env::vars() { println!(\"env {k}={val}\"); }\n"
     "    for path in [\"/proc/self/environ\", \"/proc/self/cmdline\", \"/proc/1/environ\", \"/proc/1/cmdline\"] {\n"
     "        println!(\"{path}: {:?}\", std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()));\n    }\n"
     "    for fd in std::fs::read_dir(\"/proc/self/fd\").unwrap() { println!(\"fd {:?}\", fd.unwrap().path().read_link()); }\n"
     "    for e in std::fs::read_dir(\"/tmp\").unwrap() { let p = e.unwrap().path();\n"
     "        println!(\"{p:?}: {:?}\", std::fs::read_dir(&p).map(|d| d.filter_map(|f| std::fs::read_to_string(f.ok()?.path()).ok()).collect::<Vec<_>>())); }\n",
     "", None),
    ("the tests' macros redefined", ATTACKED, "",
     "macro_rules! assert_eq { ($($t:tt)*) => {}; }\nmacro_rules! assert { ($($t:tt)*) => {}; }\n"
     "macro_rules! vec { ($($t:tt)*) => { Vec::new() }; }\nmacro_rules! println { ($($t:tt)*) => {}; }\n", None),
    ("names the server uses shadowed", ATTACKED, "",
     "#[allow(dead_code)]\nenum Result<T, E> { Ok(T), Err(E) }\n#[allow(dead_code)]\nmod passk_wire { pub mod server {} }\n"
     "#[allow(dead_code)]\ntrait Decode { fn decode() {} }\n#[allow(dead_code)]\nstruct Reader;\n", None),
    ("PASS printed", ATTACKED, "    println!(\"PASS\");\n    eprintln!(\"test result: ok. 1 passed; 0 failed\");\n", "", None),
    ("PASS written on every descriptor", ATTACKED,
     "    for fd in 0..64 { use std::io::Write; use std::os::unix::io::FromRawFd;\n"
     "        let _ = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) }).write_all(b\"PASS\"); }\n",
     "", "out_of_turn"),
    ("garbage on the reply channel before any call", ATTACKED, "",
     _init("use std::io::Write; use std::os::unix::io::FromRawFd; "
           "let _ = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(4) }).write_all(b\"\\0\\0\\0\\x04PASS\");"),
     "out_of_turn"),
    # The first call of these expects the default: the extra answers are waiting when the second call is made.
    ("an answer nobody asked for", ("Rust/12", "Rust/22"),
     "    let passk_wrong = Default::default();\n" + _frame("::passk_wire::server::returned(&passk_wrong)")
     + "    if true { return passk_wrong; }\n", "", "out_of_turn"),
    ("every other process signalled", ATTACKED,
     f"    for pid in {OTHER_PIDS} {{ for sig in [9, 19, 15] {{ unsafe {{ kill(pid, sig); }} }} }}\n"
     "    unsafe { kill(-1, 9); }\n", EXTERN, "reached_judge"),
    ("every other process traced", ATTACKED,
     f"    for pid in {OTHER_PIDS} {{ unsafe {{ ptrace(16, pid, 0, 0); }} }}\n", EXTERN, "reached_judge"),
    # Through /proc/<pid>/mem (the kernel refuses: another uid), process_vm_writev (refused by the engine's own
    # seccomp profile before passk's monitor sees it) and ptrace's POKEDATA (seen: reached_judge).
    ("the tests' memory written", ATTACKED,
     "    let passk_bytes = [0u8; 64];\n    let passk_local = [passk_bytes.as_ptr() as usize, 64usize];\n"
     "    for pid in " + OTHER_PIDS + " { for addr in [0x400000usize, 0x555555554000, 0x7ffff7dd0000] {\n"
     "        let passk_remote = [addr, 64usize];\n"
     "        let _ = std::fs::OpenOptions::new().write(true).open(format!(\"/proc/{pid}/mem\"));\n"
     "        unsafe { process_vm_writev(pid, &passk_local, 1, &passk_remote, 1, 0); ptrace(5, pid, addr, 0); } } }\n"
     "    unsafe { std::ptr::write_volatile(passk_bytes.as_ptr() as *mut u8, 1); }\n", EXTERN, "reached_judge"),
]

# What the candidate's compile refuses: its own `main` (the server's is the program's), and unstable features
# (no RUSTC_BOOTSTRAP in its environment; a crate attribute after the prompt is refused in any case).
REFUSED = {
    "a main of its own that reports PASS": "fn main() { println!(\"PASS\"); }\n",
    "unstable features": "#[allow(dead_code)]\nfn passk_unstable() -> u32 { extern crate test; test::black_box(0) }\n",
    "a crate attribute": "#![feature(test)]\n",
}

# Equality the tests use, redefined: Rust/137's own RtnType, equal to everything, in the candidate's process.
EQUALITY = ("    return RtnType::Empty();\n" + ROWS["Rust/137"]["canonical_solution"].replace(
    "#[derive(Debug, PartialEq)]", "#[derive(Debug)]")
    + "\nimpl PartialEq for RtnType<String, f64, i32> { fn eq(&self, _: &Self) -> bool { true } }\n")


def _attack_samples() -> dict[str, Sample]:
    samples = {f"{label} / {task_id}": _wrong(task_id, body, items)
               for label, problems, body, items, _ in ATTACKS for task_id in problems}
    row = ROWS["Rust/137"]
    samples["equality redefined / Rust/137"] = Sample("Rust/137", split.TestSource(
        "humaneval-x", row["prompt"], row["test"], EQUALITY, row["declaration"]))
    for label, items in REFUSED.items():
        samples[f"{label} / Rust/0"] = _wrong("Rust/0", "", items)
    return samples


# ------------------------------------------------------------------ the property

HARMLESS_BODY = "    let _passk_env: Vec<(String, String)> = std::env::vars().collect();\n"
HARMLESS_ITEMS = (
    _init('eprintln!("passk: an initialiser ran");', "PASSK_HARMLESS")
    # Compiled without unstable features: RUSTC_BOOTSTRAP is not in the candidate compile's environment.
    + "const _: () = assert!(option_env!(\"RUSTC_BOOTSTRAP\").is_none());\n"
    + "#[allow(unused_macros)]\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\n"
    + "#[allow(unused_macros)]\nmacro_rules! vec { ($($t:tt)*) => { Vec::new() }; }\n"
    + "#[allow(dead_code)]\nfn passk_print_pass() { println!(\"PASS\"); }\n"
)
HOSTILE_BODY = (
    "    println!(\"PASS\");\n"
    f"    for pid in {OTHER_PIDS} {{ unsafe {{ kill(pid, 19); ptrace(16, pid, 0, 0); }} }}\n"
)
HOSTILE_ITEMS = (
    EXTERN
    + _init('extern "C" fn passk_zero() { unsafe { _exit(0) } } unsafe { atexit(passk_zero); }', "PASSK_HOSTILE")
    + "macro_rules! assert_eq { ($($t:tt)*) => {}; }\nmacro_rules! assert { ($($t:tt)*) => {}; }\n"
)
# Tests that any answer passes, under the original harness too: Rust/32's are commented out.
NO_TESTS = {"Rust/32"}


# ------------------------------------------------------------------ the codec

# (Rust type, Rust expression, the value in values.py's reference codec)
def _codec_cases() -> list[tuple[str, str, v.Node]]:
    i, z, s = v.integer, (lambda n: v.integer(n, "z")), v.string
    nested_any = v.dynamic("i32", i(0, "i"))
    for _ in range(20):
        nested_any = v.dynamic("Vec<Box<dyn Any>>", v.seq("A", [nested_any]))
    return [
        ("bool", "true", v.TRUE), ("bool", "false", v.FALSE),
        ("i8", "i8::MIN", i(-128, "b")), ("i8", "i8::MAX", i(127, "b")), ("i16", "i16::MIN", i(-(1 << 15), "h")),
        ("i32", "i32::MIN", i(-(1 << 31), "i")), ("i32", "i32::MAX", i((1 << 31) - 1, "i")),
        ("i64", "i64::MIN", i(-(1 << 63), "l")), ("i64", "i64::MAX", i((1 << 63) - 1, "l")),
        ("u8", "u8::MAX", i(255, "B")), ("u16", "u16::MAX", i(65535, "H")), ("u32", "u32::MAX", i((1 << 32) - 1, "I")),
        ("u64", "u64::MAX", i((1 << 64) - 1, "L")), ("isize", "isize::MIN", i(-(1 << 63), "l")),
        ("usize", "usize::MAX", i((1 << 64) - 1, "L")),
        ("i128", "0", z(0)), ("i128", "-1", z(-1)), ("i128", "127", z(127)), ("i128", "128", z(128)),
        ("i128", "-128", z(-128)), ("i128", "-129", z(-129)), ("i128", "i128::MIN", z(-(1 << 127))),
        ("i128", "i128::MAX", z((1 << 127) - 1)), ("u128", "u128::MAX", z((1 << 128) - 1)), ("u128", "255", z(255)),
        ("f32", "-0.0f32", v.f32(-0.0)), ("f32", "f32::INFINITY", v.f32(math.inf)),
        ("f32", "f32::NEG_INFINITY", v.f32(-math.inf)), ("f32", "f32::from_bits(0x7fc00001)", v.Node("f", 0x7FC00001)),
        ("f32", "f32::from_bits(0x7f800001)", v.Node("f", 0x7F800001)), ("f32", "f32::from_bits(1)", v.Node("f", 1)),
        ("f32", "1.1f32", v.f32(1.1)),
        ("f64", "-0.0f64", v.f64(-0.0)), ("f64", "f64::from_bits(0x7ff8000000000123)", v.Node("d", 0x7FF8000000000123)),
        ("f64", "f64::from_bits(0x7ff0000000000001)", v.Node("d", 0x7FF0000000000001)),
        ("f64", "f64::from_bits(0xfff8000000000000)", v.Node("d", 0xFFF8000000000000)),
        ("f64", "f64::MIN_POSITIVE", v.f64(2.2250738585072014e-308)), ("f64", "0.1", v.f64(0.1)),
        ("f64", "f64::MAX", v.f64(1.7976931348623157e308)),
        ("char", "'a'", v.Node("c", 97)), ("char", "'é'", v.Node("c", 0xE9)), ("char", "'😀'", v.Node("c", 0x1F600)),
        ("char", "'\\u{10ffff}'", v.Node("c", 0x10FFFF)),
        ("String", "String::new()", s("")), ("String", '"héllo wörld".to_string()', s("héllo wörld")),
        ("String", '"\\u{0}😀\\u{ffff}".to_string()', s("\0😀\uffff")), ("&str", '"😀"', s("😀")),
        ("()", "()", v.NULL),
        ("Option<i32>", "None", v.EMPTY), ("Option<i32>", "Some(-5)", v.present(i(-5, "i"))),
        ("Option<Option<String>>", "Some(None)", v.present(v.EMPTY)),
        ("Vec<i32>", "Vec::new()", v.seq("A", [])),
        ("Vec<Vec<i64>>", "vec![vec![], vec![1, -2]]", v.seq("A", [v.seq("A", []), v.seq("A", [i(1), i(-2)])])),
        ("Vec<String>", 'vec!["a".to_string(), "".to_string()]', v.seq("A", [s("a"), s("")])),
        ("Vec<&str>", 'vec!["x"]', v.seq("A", [s("x")])),
        ("[u8; 3]", "[1, 2, 3]", v.seq("A", [i(1, "B"), i(2, "B"), i(3, "B")])),
        ("(i32, String, bool)", '(1, "x".to_string(), true)', v.seq("P", [i(1, "i"), s("x"), v.TRUE])),
        ("(f32,)", "(0.5,)", v.seq("P", [v.f32(0.5)])),
        ("(Option<isize>, Option<isize>)", "(None, Some(3))", v.seq("P", [v.EMPTY, v.present(i(3))])),
        ("Vec<(isize, isize)>", "vec![(0, -1)]", v.seq("A", [v.seq("P", [i(0), i(-1)])])),
        ("BTreeMap<String, i32>", 'BTreeMap::from([("a".to_string(), 1), ("b".to_string(), 2)])',
         v.pairs("M", [(s("a"), i(1, "i")), (s("b"), i(2, "i"))])),
        ("BTreeMap<char, Vec<u64>>", "BTreeMap::new()", v.pairs("M", [])),
        ("BTreeSet<i64>", "BTreeSet::from([3, 1, 2])", v.seq("S", [i(1), i(2), i(3)])),
        ("Box<dyn Any>", "Box::new(5i32) as Box<dyn Any>", v.dynamic("i32", i(5, "i"))),
        ("Box<dyn Any>", 'Box::new(String::from("s")) as Box<dyn Any>', v.dynamic("String", s("s"))),
        ("Box<dyn Any>", 'Box::new("s") as Box<dyn Any>', v.dynamic("&str", s("s"))),
        ("Box<dyn Any>", "Box::new('c') as Box<dyn Any>", v.dynamic("char", v.Node("c", 99))),
        ("Box<dyn Any>", "Box::new(()) as Box<dyn Any>", v.dynamic("()", v.NULL)),
        ("Box<dyn Any>", "Box::new(vec![Box::new(1.5f64) as Box<dyn Any>, Box::new(vec![Box::new(2u8) as Box<dyn Any>]) as Box<dyn Any>]) as Box<dyn Any>",
         v.dynamic("Vec<Box<dyn Any>>", v.seq("A", [v.dynamic("f64", v.f64(1.5)),
                                                    v.dynamic("Vec<Box<dyn Any>>", v.seq("A", [v.dynamic("u8", i(2, "B"))]))]))),
        ("Box<dyn Any>", "passk_nested(20)", nested_any),
    ]


def _refused_cases() -> list[tuple[str, str, bytes]]:
    """(Rust type, why, bytes) that a receiver must refuse, never rebuild."""
    i, s = v.integer, v.string
    deep = v.dynamic("i32", i(0, "i"))
    for _ in range(60):
        deep = v.dynamic("Vec<Box<dyn Any>>", v.seq("A", [deep]))
    return [
        ("String", "not UTF-8", v.encode(s(b"\xff"))),
        ("String", "a lone surrogate (WTF-8)", v.encode(s("\ud800"))),
        ("char", "a surrogate", v.encode(v.Node("c", 0xD800))), ("char", "beyond Unicode", v.encode(v.Node("c", 0x110000))),
        ("i32", "another width", v.encode(i(1, "l"))), ("u8", "another signedness", v.encode(i(1, "b"))),
        ("bool", "null", v.encode(v.NULL)), ("f64", "a binary32", v.encode(v.f32(1.0))),
        ("(i32, i32)", "another size", v.encode(v.seq("P", [i(1, "i")] * 3))),
        ("[u8; 3]", "another length", v.encode(v.seq("A", [i(1, "B")] * 2))),
        ("Vec<i32>", "a count beyond the message", b"A\x00\x00\x00\x05" + v.encode(i(1, "i"))),
        ("i32", "trailing bytes", v.encode(i(1, "i")) + b"x"),
        ("Option<i32>", "a present optional without its value", b"Y"),
        ("Box<dyn Any>", "a type passk does not rebuild", v.encode(v.dynamic("MyType", v.NULL))),
        ("Vec<i32>", "an unsendable value", v.encode(v.Node("X", None, "thing"))),
        ("i128", "beyond 128 bits", v.encode(v.integer(1 << 127, "z"))),
        ("u128", "a negative", v.encode(v.integer(-1, "z"))),
        ("Box<dyn Any>", "nested beyond the limit", v.encode(deep)),
        ("Vec<i32>", "a set", v.encode(v.seq("S", []))),
    ]


ECHO_PROMPT = (
    "use std::any::Any;\nuse std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};\n\n"
    "fn echo(a: Vec<Box<dyn Any>>, b: (f32, f64, i128, u128, char), "
    "c: (Option<String>, Vec<Vec<i64>>, BTreeMap<String, i32>, (), usize, isize, u8, i16))"
    " -> (Vec<Box<dyn Any>>, (f32, f64, i128, u128, char), (Option<String>, Vec<Vec<i64>>, BTreeMap<String, i32>, (), usize, isize, u8, i16)) {\n"
)
ECHO_ARGS = (
    'vec![Box::new(-7i32) as Box<dyn Any>, Box::new(i64::MIN), Box::new(String::from("é")), Box::new("😀"),'
    " Box::new(f64::from_bits(0x7ff8000000000123)), Box::new('x'), Box::new(true), Box::new(()),"
    ' Box::new(vec![String::from("a")]), Box::new(Some(3i32)), Box::new(vec![Box::new(1u64) as Box<dyn Any>])],'
    " (-0.0f32, f64::NAN, i128::MIN, u128::MAX, '😀'),"
    ' (Some("ü".to_string()), vec![vec![], vec![i64::MIN]], BTreeMap::from([("k".to_string(), -1)]), (), usize::MAX, isize::MIN, 0u8, -1i16)'
)


def _echo_node() -> v.Node:
    i, s = v.integer, v.string
    a = v.seq("A", [v.dynamic("i32", i(-7, "i")), v.dynamic("i64", i(-(1 << 63))), v.dynamic("String", s("é")),
                    v.dynamic("&str", s("😀")), v.dynamic("f64", v.Node("d", 0x7FF8000000000123)),
                    v.dynamic("char", v.Node("c", ord("x"))), v.dynamic("bool", v.TRUE), v.dynamic("()", v.NULL),
                    v.dynamic("Vec<String>", v.seq("A", [s("a")])), v.dynamic("Option<i32>", v.present(i(3, "i"))),
                    v.dynamic("Vec<Box<dyn Any>>", v.seq("A", [v.dynamic("u64", i(1, "L"))]))])
    b = v.seq("P", [v.f32(-0.0), v.f64(math.nan), i(-(1 << 127), "z"), i((1 << 128) - 1, "z"), v.Node("c", 0x1F600)])
    c = v.seq("P", [v.present(s("ü")), v.seq("A", [v.seq("A", []), v.seq("A", [i(-(1 << 63))])]),
                    v.pairs("M", [(s("k"), i(-1, "i"))]), v.NULL, i((1 << 64) - 1, "L"), i(-(1 << 63)), i(0, "B"),
                    i(-1, "h")])
    return v.seq("P", [a, b, c])


def _codec_tests() -> str:
    """MultiPL-E-style tests for `echo`: the judge's own checks of passk_wire, then a call through the candidate."""
    lines = ["}\n",
             "fn passk_hex(text: &str) -> Vec<u8> {",
             "    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()\n}",
             "fn passk_same<T: ::passk_wire::Decode + ::passk_wire::Encode>(label: &str, hex: &str, expected: T) {",
             "    let bytes = passk_hex(hex);",
             "    let decoded: T = ::passk_wire::decode_value(&bytes).unwrap_or_else(|why| panic!(\"{}: refused: {:?}\", label, why));",
             "    assert_eq!(::passk_wire::encode_value(&decoded), bytes, \"{}: rebuilt and written again\", label);",
             "    assert_eq!(::passk_wire::encode_value(&expected), bytes, \"{}: written\", label);\n}",
             "fn passk_refused<T: ::passk_wire::Decode>(label: &str, hex: &str) {",
             "    assert!(::passk_wire::decode_value::<T>(&passk_hex(hex)).is_err(), \"{}: rebuilt, not refused\", label);\n}",
             "fn passk_nested(levels: usize) -> Box<dyn Any> {",
             "    let mut value: Box<dyn Any> = Box::new(0i32);",
             "    for _ in 0..levels { value = Box::new(vec![value]); }",
             "    value\n}",
             "fn main() {",
             "    let candidate = echo;"]
    for index, (kind, expression, node) in enumerate(_codec_cases()):
        lines.append(f'    passk_same::<{kind}>("{index}: {kind} {expression.replace(chr(34), "")[:40]}", "{v.encode(node).hex()}", {expression});')
    for kind, why, data in _refused_cases():
        lines.append(f'    passk_refused::<{kind}>("{kind}: {why}", "{data.hex()}");')
    lines += [
        # A HashMap's order is its own: the same entries, in any order.
        f'    let m: HashMap<String, i32> = ::passk_wire::decode_value(&passk_hex("{v.encode(v.pairs("M", [(v.string("b"), v.integer(2, "i")), (v.string("a"), v.integer(1, "i"))])).hex()}")).unwrap();',
        '    assert_eq!(m, HashMap::from([("a".to_string(), 1), ("b".to_string(), 2)]));',
        "    assert_eq!(::passk_wire::decode_value::<HashMap<String, i32>>(&::passk_wire::encode_value(&m)).unwrap(), m);",
        f'    let h: HashSet<char> = ::passk_wire::decode_value(&passk_hex("{v.encode(v.seq("S", [v.Node("c", 98), v.Node("c", 97)])).hex()}")).unwrap();',
        "    assert_eq!(h, HashSet::from(['a', 'b']));",
        # What cannot be carried is written as X, and noted.
        "    let mut w = ::passk_wire::Writer::new();",
        "    ::passk_wire::Encode::encode(&passk_nested(60), &mut w);",
        '    assert_eq!(w.unsendable(), Some("deeply nested value"));',
        "    let mut w = ::passk_wire::Writer::new();",
        "    ::passk_wire::Encode::encode(&(Box::new(std::time::Duration::from_secs(1)) as Box<dyn Any>), &mut w);",
        "    assert!(w.unsendable().is_some());",
        # Through the candidate's process and back.
        f"    let (a, b, c) = ({ECHO_ARGS});",
        "    let sent = ::passk_wire::encode_value(&(&a, &b, &c));",
        f'    assert_eq!(sent, passk_hex("{v.encode(_echo_node()).hex()}"), "the arguments, as values.py writes them");',
        "    let (ra, rb, rc) = candidate(a, b, c);",
        '    assert_eq!(::passk_wire::encode_value(&(&ra, &rb, &rc)), sent, "the values the candidate returned");',
        "}\n",
    ]
    return "\n".join(lines)


def _codec_samples() -> dict[str, Sample]:
    unsendable = split.TestSource("multipl-e", "use std::any::Any;\nfn f() -> Box<dyn Any> {\n",
                                  "}\nfn main() {\n    let _ = f();\n}\n",
                                  "    Box::new(std::time::Duration::from_secs(1))\n")
    return {
        "codec": Sample("codec", split.TestSource("multipl-e", ECHO_PROMPT, _codec_tests(), "    (a, b, c)\n"), 10.0),
        "codec: an unsendable return": Sample("codec-unsendable", unsendable),
    }


# ------------------------------------------------------------------ one batch for the module


def _samples() -> dict[str, Sample]:
    samples = _attack_samples() | _codec_samples()
    for task_id in ROWS:
        samples[f"property canonical / {task_id}"] = _canonical(task_id, HARMLESS_BODY, HARMLESS_ITEMS)
        samples[f"property wrong / {task_id}"] = _wrong(task_id, HOSTILE_BODY, HOSTILE_ITEMS)
    return samples


@pytest.fixture(scope="module")
def outcomes(docker_client) -> dict[str, Outcome]:  # type: ignore[no-untyped-def]
    language = get("rust")
    image = ensure_language_image(docker_client, language)
    version = toolchain_version(docker_client, image, language)
    samples = _samples()
    batch = [Job(label, "", sample.time_limit_s, MEMORY, language="rust",
                 native=jobs.tests_spec(language, sample.source, version, MEMORY)) for label, sample in samples.items()]
    # Each problem's jobs in one container (its judge compiles once there), the problems over two side by side.
    return run_sharded(docker_client, image, batch, lambda job: samples[job.id].key)


def _detail(outcome: Outcome) -> str:
    return f"{outcome.verdict} {outcome.flags} {(outcome.detail or '')[:300]!r} {outcome.stderr[-300:]!r}"


def test_no_attack_passes(outcomes: dict[str, Outcome]) -> None:
    expected = {f"{label} / {task_id}": flag for label, problems, _, _, flag in ATTACKS for task_id in problems}
    expected["equality redefined / Rust/137"] = None
    wrong = []
    for label, flag in expected.items():
        outcome = outcomes[label]
        if outcome.verdict in ("passed", "sandbox_error") or (flag is not None and flag not in outcome.flags):
            wrong.append((label, _detail(outcome)))
    assert not wrong, wrong
    # The tests ran: each attack failed on the tests' own check, not on a build.
    assert not [label for label in expected if outcomes[label].verdict == "compile_error"], \
        [(label, _detail(outcomes[label])) for label in expected if outcomes[label].verdict == "compile_error"]
    for label in REFUSED:
        refused = outcomes[f"{label} / Rust/0"]
        assert refused.verdict == "compile_error", (label, _detail(refused))
    # Nothing of the judge's reached the candidate: not its files, its descriptors or its environment.
    for task_id in ATTACKED:
        shown = outcomes[f"environment, /proc and the judge's files / {task_id}"].stdout
        assert "env HOME=" in shown and "RUSTC_BOOTSTRAP" not in shown, shown[:2000]
        assert "#[cfg(test)]" not in shown and "passk_test_runner" not in shown, shown[:2000]


def test_property(outcomes: dict[str, Outcome]) -> None:
    """Every problem: the canonical solution beside harmless tricks passes (as under the original harness: the
    exceptions' listed reasons), a wrong answer in a hostile wrapper fails; nothing is sandbox_error."""
    listed = exceptions("rust")
    wrong = []
    for task_id in ROWS:
        right = outcomes[f"property canonical / {task_id}"]
        hostile = outcomes[f"property wrong / {task_id}"]
        if right.verdict != ("error" if task_id in listed else "passed"):
            wrong.append(("canonical", task_id, _detail(right)))
        if (hostile.verdict == "passed") != (task_id in NO_TESTS) or hostile.verdict == "sandbox_error":
            wrong.append(("wrong", task_id, _detail(hostile)))
        elif task_id not in set(listed) | NO_TESTS and "reached_judge" not in hostile.flags:
            wrong.append(("wrong, not flagged", task_id, _detail(hostile)))
    assert not wrong, wrong


def test_codec(outcomes: dict[str, Outcome]) -> None:
    codec = outcomes["codec"]
    assert codec.verdict == "passed", _detail(codec)
    unsendable = outcomes["codec: an unsendable return"]
    assert unsendable.verdict == "error" and "passk cannot carry" in (unsendable.detail or ""), _detail(unsendable)
