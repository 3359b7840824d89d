"""passk/wire, Go's codec of the value wire, against the Python reference codec (sandbox/runtime/values.py), in the
real Go image: bytes the reference encodes are decoded by Go as the type named and encoded again, and must come
back byte for byte; bytes that are not a value of that type must be refused; values only Go can make (a named
type inside an interface{}, a signalling NaN, a cycle) must encode as the reference says."""

from __future__ import annotations

import base64

import docker
import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.languages.go import ENV
from sandbox.runtime import values as v

# Decodes each input line (`<Go type name> <hex>`) as that type and prints the value encoded again (or `ERR`);
# then encodes each Go-made value of FIXTURES by name.
PROGRAM = r'''package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"

	"passk/wire"
)

type MyInt int

func fixtures() map[string]interface{} {
	deep := interface{}(nil)
	for i := 0; i < 150; i++ {
		deep = []interface{}{deep}
	}
	cycle := []interface{}{nil}
	cycle[0] = cycle
	var nilMap map[string]int
	var nilPointer *int
	three := 3
	return map[string]interface{}{
		"named":         []interface{}{MyInt(3)},
		"named slice":   []interface{}{[]MyInt{1}},
		"struct":        []interface{}{struct{ A int }{1}},
		"complex":       complex(1, 2),
		"func":          []interface{}{func() {}},
		"deep":          deep,
		"cycle":         cycle,
		"signalling32":  math.Float32frombits(0x7f800001),
		"signalling64":  math.Float64frombits(0x7ff0000000000001),
		"nil slice":     []int(nil),
		"empty slice":   []int{},
		"nil map":       nilMap,
		"nil pointer":   nilPointer,
		"pointer":       &three,
		"rune and byte": []interface{}{'c', byte(7)},
		"error":         []interface{}{fmt.Errorf("boom")},
	}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		line := in.Text()
		cut := strings.LastIndexByte(line, ' ')
		name, data := line[:cut], line[cut+1:]
		raw, _ := hex.DecodeString(data)
		t, err := wire.ParseType(name)
		if err != nil {
			fmt.Println("ERR", err)
			continue
		}
		d := wire.Decoder{Data: raw}
		value, err := d.Value(t, 0)
		if err == nil {
			err = d.Done()
		}
		if err != nil {
			fmt.Printf("ERR %T %v\n", err, err)
			continue
		}
		e := wire.Encoder{}
		e.Value(value, 0)
		fmt.Println(hex.EncodeToString(e.Buf))
	}
	for name, value := range fixtures() {
		e := wire.Encoder{}
		e.Value(reflect.ValueOf(&value).Elem().Elem(), 0)
		fmt.Printf("FIXTURE %s=%s\n", name, hex.EncodeToString(e.Buf))
	}
}
'''

L, I, S, D, F = (lambda x: v.integer(x, "l")), (lambda x: v.integer(x, "i")), v.string, v.f64, v.f32


def A(*items: v.Node) -> v.Node:
    return v.seq("A", list(items))


def M(*pairs: tuple[v.Node, v.Node]) -> v.Node:
    return v.pairs("M", list(pairs))


def any_(name: str, value: v.Node) -> v.Node:
    return v.dynamic(name, value)


def bits64(value: int) -> v.Node:
    return v.Node("d", value)


def bits32(value: int) -> v.Node:
    return v.Node("f", value)


NIL_ANY = any_("", v.NULL)
# (Go type, value): must come back byte for byte.
ROUND_TRIPS = [
    ("bool", v.TRUE), ("bool", v.FALSE),
    ("int", L(-(1 << 63))), ("int", L((1 << 63) - 1)), ("int", L(0)), ("int64", L(-1)),
    ("int8", v.integer(-128, "b")), ("int8", v.integer(127, "b")), ("int16", v.integer(-32768, "h")),
    ("int32", I(-(1 << 31))), ("int32", I(0x10FFFF)), ("uint8", v.integer(255, "B")), ("uint16", v.integer(65535, "H")),
    ("uint32", v.integer((1 << 32) - 1, "I")), ("uint64", v.integer((1 << 64) - 1, "L")), ("uint", v.integer(1 << 63, "L")),
    ("uintptr", v.integer(12, "L")),
    ("float64", D(-0.0)), ("float64", D(float("inf"))), ("float64", D(float("-inf"))), ("float64", D(5e-324)),
    ("float64", D(1.7976931348623157e308)), ("float64", bits64(0x7FF8000000000001)), ("float64", bits64(0xFFF8000000000000)),
    ("float64", bits64(0x7FF0000000000001)),  # a signalling NaN: no float conversion on the way may quieten it
    ("float32", F(-0.0)), ("float32", F(3.5)), ("float32", bits32(0x7FC00001)), ("float32", bits32(0x7F800001)),
    ("float32", bits32(0xFF800000)),
    ("string", S("")), ("string", S("héllo ☃ \u0000 end")), ("string", S(b"\xff\xfe invalid \xc3")),
    ("string", S("x" * 3000)),
    ("[]int", v.NULL), ("[]int", A()), ("[]int", A(L(1), L(-2), L(3))), ("[][]int", A(A(), v.NULL, A(L(7)))),
    ("[2]int", A(L(1), L(2))), ("[0]string", A()), ("[][2]int", A(A(L(1), L(2)), A(L(3), L(4)))),
    ("[2]interface {}", A(any_("string", S("x")), any_("bool", v.FALSE))),
    ("[]float64", A(D(1.5), bits64(0x7FF8000000000002), D(-0.0))),
    ("[]string", A(S("a"), S(""), S(b"\x80"))), ("[]uint8", A(v.integer(0, "B"), v.integer(255, "B"))),
    ("map[string]int", v.NULL), ("map[string]int", M()), ("map[string]int", M((S("one"), L(1)))),
    ("map[int32]int", M((I(97), L(2)))),
    ("*int", v.NULL), ("*int", L(5)), ("**string", S("deep")),
    ("interface {}", NIL_ANY), ("interface {}", any_("int", L(5))), ("interface {}", any_("int32", I(99))),
    ("interface {}", any_("uint8", v.integer(7, "B"))), ("interface {}", any_("float32", bits32(0x7F800001))),
    ("interface {}", any_("[]interface {}", A(any_("string", S("s")), NIL_ANY, any_("float64", D(23.2)),
                                               any_("[]interface {}", A()), any_("[]int", v.NULL)))),
    ("interface {}", any_("map[interface {}]interface {}", M((any_("int", L(5)), any_("string", S("banana")))))),
    ("interface {}", any_("map[string]int", v.NULL)), ("interface {}", any_("[3]bool", A(v.TRUE, v.FALSE, v.TRUE))),
    ("interface {}", any_("*int", L(4))), ("interface {}", any_("map[[2]int]string", M((A(L(1), L(2)), S("pair"))))),
    ("[]interface {}", A(NIL_ANY, any_("int", L(3)))),
]
# Several pairs: Go's maps have an order of their own, so the pairs (not their order) must come back.
MAPS = [
    ("map[string]int", M(*((S(key), L(index)) for index, key in enumerate("the quick brown fox jumps".split())))),
    ("map[interface {}]interface {}", M((any_("string", S("p")), any_("string", S("pineapple"))),
                                         (any_("int", L(5)), any_("string", S("banana"))),
                                         (any_("float64", D(-0.0)), NIL_ANY))),
]
# (Go type, bytes): not a value of that type; refused, never rebuilt as something else.
DEEP = v.encode(A())
for _ in range(101):
    DEEP = b"a" + v.encode(v.string("[]interface {}"))[1:] + b"A\x00\x00\x00\x01" + DEEP
REFUSED = [
    ("int", v.encode(I(5))), ("int32", v.encode(L(5))), ("uint8", v.encode(v.integer(5, "b"))), ("bool", v.encode(v.NULL)),
    ("float64", v.encode(F(1.0))), ("float32", v.encode(D(1.0))), ("string", v.encode(v.seq("A", []))),
    ("[]int", v.encode(A(S("x")))), ("[]int", v.encode(v.seq("P", [L(1)]))), ("[2]int", v.encode(A(L(1), L(2), L(3)))),
    ("[2]int", v.encode(v.NULL)), ("map[string]int", v.encode(A())), ("map[string]int", v.encode(M((L(1), L(1))))),
    ("interface {}", v.encode(L(5))), ("interface {}", v.encode(any_("main.MyInt", L(5)))),
    ("interface {}", v.encode(any_("[]func()", A()))), ("interface {}", v.encode(any_("struct {}", A()))),
    ("interface {}", v.encode(any_("int ", L(5)))), ("interface {}", v.encode(any_("[01]int", A(L(1))))),
    ("interface {}", v.encode(any_("map[[]int]int", M()))), ("interface {}", v.encode(any_("complex128", D(1.0)))),
    ("interface {}", v.encode(any_("[99999999999]int", A()))), ("interface {}", v.encode(any_("[1000000000]int", A()))),
    ("interface {}", v.encode(any_("", L(1)))), ("interface {}", v.encode(any_("int", I(1)))),
    ("map[interface {}]int", v.encode(M((any_("[]int", A()), L(1))))),
    ("interface {}", DEEP),
    ("int", v.encode(L(5))[:-1]), ("int", v.encode(L(5)) + b"\x00"), ("string", b"s\x00\x00\x00\x09abc"),
    ("[]int", b"A\xff\xff\xff\xff"), ("[]string", b"A\x00\x00\x00\x02s\x00\x00\x00\x00"), ("int", b"Q"), ("int", b""),
    ("[][1000000]int", b"A\x00\x00\x00\x09" + b"n" * 9),
]
# X where a value was expected: a value the sender could not carry, reported as such (the judge's ERROR).
UNCARRIED = [("[]int", v.encode(A(L(1), v.Node("X", None, "chan int")))), ("interface {}", v.encode(v.Node("X", None, "main.T")))]


def _bytes(node: v.Node) -> str:
    return v.encode(node).hex()


@pytest.fixture(scope="module")
def go_wire(docker_client: docker.DockerClient) -> tuple[list[str], dict[str, str]]:
    """Every line of ROUND_TRIPS, MAPS and REFUSED through the Go codec: (outputs in order, fixtures by name)."""
    image = ensure_language_image(docker_client, get("go"))
    cases = [(name, _bytes(node)) for name, node in ROUND_TRIPS + MAPS] + [(name, data.hex()) for name, data in REFUSED + UNCARRIED]
    stdin = "".join(f"{name} {data}\n" for name, data in cases)
    env = " ".join(f"{key}={value}" for key, value in ENV.items())
    script = (f"cd /tmp && echo {base64.b64encode(PROGRAM.encode()).decode()} | base64 -d > wire_check.go"
              f" && echo {base64.b64encode(stdin.encode()).decode()} | base64 -d > cases"
              f" && export HOME=/tmp {env} && go build -o wire_check wire_check.go && ./wire_check < cases")
    output = docker_client.containers.run(image, ["sh", "-c", script], entrypoint=[], user="10002:10002",
                                          network_mode="none", remove=True, stdout=True, stderr=True)
    lines = output.decode("utf-8", "replace").splitlines()
    fixtures = dict(line.removeprefix("FIXTURE ").split("=", 1) for line in lines if line.startswith("FIXTURE "))
    outputs = [line for line in lines if not line.startswith("FIXTURE ")]
    assert len(outputs) == len(cases), output.decode()[-3000:]
    return outputs, fixtures


def test_values_come_back_byte_for_byte(go_wire: tuple[list[str], dict[str, str]]) -> None:
    outputs, _ = go_wire
    for (name, node), got in zip(ROUND_TRIPS, outputs, strict=False):
        assert got == _bytes(node), (name, node, got)


def test_maps_come_back_with_their_pairs(go_wire: tuple[list[str], dict[str, str]]) -> None:
    outputs, _ = go_wire
    for (name, node), got in zip(MAPS, outputs[len(ROUND_TRIPS):], strict=False):
        back = v.decode(bytes.fromhex(got))
        assert back.tag == "M" and sorted(map(repr, back.payload)) == sorted(map(repr, node.payload)), (name, back)


def test_what_is_not_a_value_of_the_type_is_refused(go_wire: tuple[list[str], dict[str, str]]) -> None:
    outputs, _ = go_wire
    refused = outputs[len(ROUND_TRIPS) + len(MAPS):]
    for (name, data), got in zip(REFUSED + UNCARRIED, refused, strict=True):
        kind = "Uncarried" if (name, data) in UNCARRIED else "Malformed"
        assert got.startswith(f"ERR wire.{kind}"), (name, data[:40], got)


def test_values_only_go_makes(go_wire: tuple[list[str], dict[str, str]]) -> None:
    _, fixtures = go_wire
    X = lambda name: v.Node("X", None, name)  # noqa: E731
    expected = {
        # A type the program defined crosses as X, never as the builtin type it is made of.
        "named": A(X("main.MyInt")), "named slice": A(X("[]main.MyInt")), "struct": A(X("struct { A int }")),
        "complex": X("complex128"), "func": A(X("func()")), "error": A(X("*errors.errorString")),
        "signalling32": bits32(0x7F800001), "signalling64": bits64(0x7FF0000000000001),
        "nil slice": v.NULL, "empty slice": A(), "nil map": v.NULL, "nil pointer": v.NULL, "pointer": L(3),
        "rune and byte": A(any_("int32", I(99)), any_("uint8", v.integer(7, "B"))),
    }
    for name, node in expected.items():
        assert fixtures[name] == _bytes(node), (name, v.decode(bytes.fromhex(fixtures[name])))
    # Nesting beyond values.py's MAX_DEPTH is cut with X "deeply nested value" (a cycle too), where the reference
    # decoder would refuse it.
    for name in ("deep", "cycle"):
        data = bytes.fromhex(fixtures[name])
        assert b"X" + v.encode(v.string("deeply nested value"))[1:] in data, name
        assert v.decode(data).tag == "A", name


# A problem of every kind of signature HumanEval-X's and MultiPL-E's do not have: widths of integers, float32,
# bytes, a map of runes, a pointer, a variadic parameter, several results; the tests compare exactly (types too).
ECHO_PROMPT = """import (
    "math"
)

// Echo returns what it is given.
func Echo(a int8, b uint16, c float32, d []byte, e map[rune]int, f [2]interface{}, g *int, h ...string) (int8, uint16, float32, []byte, map[rune]int, [2]interface{}, *int, []string) {
"""
ECHO_TESTS = """func TestEcho(t *testing.T) {
    assert := assert.New(t)
    seven := 7
    nan := math.Float32frombits(0x7f800001)
    a, b, c, d, e, f, g, h := Echo(-128, 65535, nan, []byte{0, 255}, map[rune]int{'é': 1, 'x': -1}, [2]interface{}{nil, []interface{}{int32(3), uint(4), "s"}}, &seven, "x", "")
    assert.Equal(int8(-128), a)
    assert.Equal(uint16(65535), b)
    assert.Equal(uint32(0x7f800001), math.Float32bits(c))
    assert.Equal([]byte{0, 255}, d)
    assert.Equal(map[rune]int{'é': 1, 'x': -1}, e)
    assert.Equal([2]interface{}{nil, []interface{}{int32(3), uint(4), "s"}}, f)
    assert.Equal(7, *g)
    assert.Equal([]string{"x", ""}, h)
    _, _, _, d, e, _, g, h = Echo(0, 0, 0, nil, nil, [2]interface{}{}, nil)
    assert.Nil(d)
    assert.Nil(e)
    assert.Nil(g)
    assert.Nil(h)
}
"""


def test_every_kind_of_signature_through_the_sandbox(docker_client: docker.DockerClient) -> None:
    from sandbox.languages.split import TestSource as Source
    from tests.languages.go_attacks import run_jobs

    echo = "    return a, b, c, d, e, f, g, h\n}\n"
    # The same values, one of them of another type inside an interface{} (int64 where the tests gave int32).
    retyped = "    if s, ok := f[1].([]interface{}); ok {\n        s[0] = int64(3)\n    }\n" + echo
    outcomes = run_jobs(docker_client, [(name, Source("humaneval-x", ECHO_PROMPT, ECHO_TESTS, completion))
                                        for name, completion in (("echo", echo), ("retyped", retyped))], sandboxes=1)
    assert outcomes["echo"].verdict == "passed", outcomes["echo"]
    assert outcomes["retyped"].verdict == "failed", outcomes["retyped"]
