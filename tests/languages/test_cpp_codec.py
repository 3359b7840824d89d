"""The C++ codec (sandbox/languages/cpp/passk_wire.hpp) against the reference codec (sandbox/runtime/values.py), in
the real C++ image: every kind of value HumanEval-X's and MultiPL-E's signatures use is encoded by the C++ codec,
compared byte for byte with the reference's encoding, decoded back as its C++ type and encoded again (the same
bytes); values of another type than the one expected are refused, and so are malformed replies."""

from __future__ import annotations

import shlex

from sandbox.images import ensure_language_image
from sandbox.languages import cpp, get
from sandbox.runtime import values as v

INT = {"b": "signed char", "h": "short", "i": "int", "l": "long", "B": "unsigned char", "H": "unsigned short",
       "I": "unsigned", "L": "unsigned long"}


def _string(text: str | bytes) -> tuple[str, v.Node]:
    data = text if isinstance(text, bytes) else text.encode()
    literal = "".join(f"\\x{byte:02x}" for byte in data)
    return f'std::string("{literal}", {len(data)})', v.string(data)


UNION = ["std::string", "long"]
# (label, C++ type, C++ expression, the reference's node)
CASES: list[tuple[str, str, str, v.Node]] = [
    ("true", "bool", "true", v.TRUE),
    ("false", "bool", "false", v.FALSE),
    ("char 0", "char", "'\\0'", v.Node("c", 0)),
    ("char 255", "char", "(char)255", v.Node("c", 255)),
    *[(f"{tag} min", INT[tag], f"std::numeric_limits<{INT[tag]}>::min()",
       v.integer(-(1 << (8 * size - 1)) if tag.islower() else 0, tag))
      for tag, size in (("b", 1), ("h", 2), ("i", 4), ("l", 8), ("B", 1), ("H", 2), ("I", 4), ("L", 8))],
    *[(f"{tag} max", INT[tag], f"std::numeric_limits<{INT[tag]}>::max()",
       v.integer((1 << (8 * size - 1)) - 1 if tag.islower() else (1 << (8 * size)) - 1, tag))
      for tag, size in (("b", 1), ("h", 2), ("i", 4), ("l", 8), ("B", 1), ("H", 2), ("I", 4), ("L", 8))],
    ("long long", "long long", "-1234567890123LL", v.integer(-1234567890123, "l")),
    ("float 3.9", "float", "3.9f", v.f32(3.9)),
    ("float -0.0", "float", "-0.0f", v.f32(-0.0)),
    ("float inf", "float", "-std::numeric_limits<float>::infinity()", v.f32(float("-inf"))),
    ("float NaN payload", "float", "fbits(0x7fc00123u)", v.Node("f", 0x7FC00123)),
    ("float denormal", "float", "fbits(1u)", v.Node("f", 1)),
    ("double -0.0", "double", "-0.0", v.f64(-0.0)),
    ("double NaN payload", "double", "dbits(0xfff8000000000abcull)", v.Node("d", 0xFFF8000000000ABC)),
    ("double max", "double", "std::numeric_limits<double>::max()", v.f64(1.7976931348623157e308)),
    ("string empty", "std::string", *_string("")),
    ("string UTF-8", "std::string", *_string("héllo, 世界")),
    ("string invalid UTF-8 and NUL", "std::string", *_string(b"a\x00\xff\xfe")),
    ("vector empty", "std::vector<int>", "std::vector<int>{}", v.seq("A", [])),
    ("vector<float>", "std::vector<float>", "std::vector<float>{1.5f, -0.0f}", v.seq("A", [v.f32(1.5), v.f32(-0.0)])),
    ("vector<vector<long>>", "std::vector<std::vector<long>>", "std::vector<std::vector<long>>{{}, {1, -2}}",
     v.seq("A", [v.seq("A", []), v.seq("A", [v.integer(1), v.integer(-2)])])),
    ("vector<string>", "std::vector<std::string>", 'std::vector<std::string>{"a", ""}',
     v.seq("A", [v.string("a"), v.string("")])),
    ("list<int>", "std::list<int>", "std::list<int>{7}", v.seq("A", [v.integer(7, "i")])),
    ("vector<tuple<long, long>>", "std::vector<std::tuple<long, long>>", "std::vector<std::tuple<long, long>>{{0, 5}}",
     v.seq("A", [v.seq("P", [v.integer(0), v.integer(5)])])),
    # A std::map sends its own (sorted) order.
    ("map<string, long>", "std::map<std::string, long>", 'std::map<std::string, long>{{"b", 1}, {"a", 2}}',
     v.pairs("M", [(v.string("a"), v.integer(2)), (v.string("b"), v.integer(1))])),
    ("map<char, int>", "std::map<char, int>", "std::map<char, int>{{'x', 1}}",
     v.pairs("M", [(v.Node("c", ord("x")), v.integer(1, "i"))])),
    ("map empty", "std::map<std::string, std::string>", "std::map<std::string, std::string>{}", v.pairs("M", [])),
    ("pair", "std::pair<int, double>", "std::pair<int, double>{-1, 0.5}", v.seq("P", [v.integer(-1, "i"), v.f64(0.5)])),
    ("tuple", "std::tuple<std::string, bool>", 'std::tuple<std::string, bool>{"cdedc", true}',
     v.seq("P", [v.string("cdedc"), v.TRUE])),
    ("optional empty", "std::optional<long>", "std::optional<long>{}", v.EMPTY),
    ("optional present", "std::optional<std::string>", 'std::optional<std::string>{"x"}', v.present(v.string("x"))),
    ("tuple of optionals", "std::tuple<std::optional<long>, std::optional<long>>",
     "std::make_tuple(std::optional<long>{}, std::optional<long>{1})", v.seq("P", [v.EMPTY, v.present(v.integer(1))])),
    ("boost::any int", "boost::any", "boost::any(3)", v.dynamic("int", v.integer(3, "i"))),
    ("boost::any double", "boost::any", "boost::any(2.5)", v.dynamic("double", v.f64(2.5))),
    ("boost::any string", "boost::any", 'boost::any(std::string("None"))', v.dynamic("std::string", v.string("None"))),
    ("boost::any char", "boost::any", "boost::any('c')", v.dynamic("char", v.Node("c", ord("c")))),
    ("boost::any empty", "boost::any", "boost::any()", v.dynamic("", v.NULL)),
    ("list<boost::any>", "std::list<boost::any>", "std::list<boost::any>{4, boost::any(), 23.2}",
     v.seq("A", [v.dynamic("int", v.integer(4, "i")), v.dynamic("", v.NULL), v.dynamic("double", v.f64(23.2))])),
    ("std::any map", "std::any", "std::any(std::map<long, long>())", v.dynamic("std::map<long, long>", v.pairs("M", []))),
    ("std::any const char*", "std::any", 'std::any("adasd")', v.dynamic("const char*", v.string("adasd"))),
    ("std::any float", "std::any", "std::any(23.2f)", v.dynamic("float", v.f32(23.2))),
    ("union string", "Union_std_string_long", 'Union_std_string_long(std::string("0b11"))',
     v.dynamic("std::string", v.string("0b11"))),
    ("union long", "Union_std_string_long", "Union_std_string_long(-1L)", v.dynamic("long", v.integer(-1))),
]
# (label, C++ type, the bytes offered): each must be refused.
REFUSED: list[tuple[str, str, bytes]] = [
    ("int for long", "long", v.encode(v.integer(1, "i"))),
    ("long for int", "int", v.encode(v.integer(1, "l"))),
    ("float for double", "double", v.encode(v.f32(1.0))),
    ("char over 255", "char", b"c\x00\x00\x01\x00"),
    ("string cut short", "std::string", b"s\x00\x00\x00\x05ab"),
    ("vector count past the end", "std::vector<int>", b"A\xff\xff\xff\xff"),
    ("tuple of another size", "std::tuple<long, long>", v.encode(v.seq("P", [v.integer(1)]))),
    ("optional of another type", "std::optional<long>", v.encode(v.present(v.string("1")))),
    ("any of a type passk does not rebuild", "boost::any", v.encode(v.dynamic("MyClass", v.NULL))),
    ("union of another member type", "Union_std_string_long", v.encode(v.dynamic("float", v.f32(1.0)))),
    ("bool from an integer", "bool", v.encode(v.integer(1, "b"))),
]
# Replies that are not exactly one well-formed value (skip() sees every one).
MALFORMED: list[tuple[str, bytes]] = [
    ("trailing bytes", v.encode(v.integer(1)) + b"\x00"),
    ("unknown tag", b"Q"),
    ("nested too deeply", b"Y" * 102 + b"n"),
    ("truncated", b"l\x00\x00"),
]


def _program() -> str:
    hexes = lambda data: "".join(f"\\x{byte:02x}" for byte in data)  # noqa: E731
    checks = "".join(f'    check<{kind}>("{label}", {expression});\n' for label, kind, expression, _ in CASES)
    refusals = "".join(f'    refuse<{kind}>("{label}", std::string("{hexes(data)}", {len(data)}));\n'
                       for label, kind, data in REFUSED)
    malformed = "".join(f'    malformed("{label}", std::string("{hexes(data)}", {len(data)}));\n' for label, data in MALFORMED)
    union = cpp._tagged_union("Union_std_string_long", UNION, 9) + "\n"
    return (
        "#include <boost/any.hpp>\n#include <cstdio>\n#include <limits>\n#include <string>\n" + union
        + f'#include "{cpp.WIRE}"\n' + cpp._union_codec("Union_std_string_long", UNION) + r'''
using namespace passk;
static float fbits(std::uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
static double dbits(std::uint64_t b) { double d; std::memcpy(&d, &b, 8); return d; }
static std::string hex(const std::string& s) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) { out += digits[c >> 4]; out += digits[c & 15]; }
    return out;
}
template <class T> void check(const char* label, const T& value) {
    Writer w;
    Codec<T>::encode(w, value);
    Reader r{reinterpret_cast<const unsigned char*>(w.buffer.data()), w.buffer.size()};
    T back = Codec<T>::decode(r);
    Writer again;
    Codec<T>::encode(again, back);
    std::printf("%s|%s|%s\n", label, hex(w.buffer).c_str(), again.buffer == w.buffer && r.at == r.size ? "same" : "changed");
}
template <class T> void refuse(const char* label, const std::string& bytes) {
    Reader r{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()};
    try { Codec<T>::decode(r); std::printf("%s|accepted\n", label); }
    catch (const Malformed&) { std::printf("%s|refused\n", label); }
}
static void malformed(const char* label, const std::string& bytes) {
    Reader r{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()};
    try { skip(r); std::printf("%s|%s\n", label, r.at == r.size ? "accepted" : "refused"); }
    catch (const Malformed&) { std::printf("%s|refused\n", label); }
}
int main() {
''' + checks + refusals + malformed + "}\n"
    )


def test_the_cpp_codec_is_the_reference_codec(docker_client) -> None:  # type: ignore[no-untyped-def]
    image = ensure_language_image(docker_client, get("cpp"))
    script = f"cd /tmp && printf %s {shlex.quote(_program())} > codec.cpp && g++ -std=c++17 -o codec codec.cpp && ./codec"
    output = docker_client.containers.run(image, ["-c", script], entrypoint="bash", network_mode="none", remove=True,
                                          user="10001").decode()
    lines = dict(line.split("|", 1) for line in output.splitlines())
    wrong = []
    for label, _, _, node in CASES:
        got = lines.get(label, "missing|")
        if got != f"{v.encode(node).hex()}|same":
            wrong.append((label, got, v.encode(node).hex()))
    wrong += [(label, lines.get(label)) for label, _, _ in REFUSED if lines.get(label) != "refused"]
    wrong += [(label, lines.get(label)) for label, _ in MALFORMED if lines.get(label) != "refused"]
    assert not wrong, wrong
    # The reference decodes what the C++ codec wrote, to the same node.
    for label, _, _, node in CASES:
        assert v.same(v.decode(bytes.fromhex(lines[label].split("|")[0])), node), label
