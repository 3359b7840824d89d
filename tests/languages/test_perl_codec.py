"""Perl's value wire (sandbox/languages/perl/PasskWire.pm) against the Python reference codec
(sandbox/runtime/values.py), in the real Perl image: values round-trip byte for byte, Perl's own values encode to
exactly the reference's bytes, and malformed bytes are refused. Then one problem through the real sandbox whose
tests see every kind of value cross both ways, in list, scalar and void context, exactly as one process would."""

from __future__ import annotations


import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import (
    D, S, U32, assert_matches_the_reference, bits, container_stdout, echo_outcomes, nested, raw,
)

Z = lambda n: v.integer(n, "z")  # noqa: E731





# Values a Perl receiver rebuilds and sends back unchanged (a hash's keys in sorted order: Perl sends them so).
ROUND_TRIP = [
    v.NULL, v.TRUE, v.FALSE,
    Z(0), Z(1), Z(-1), Z(127), Z(128), Z(-128), Z(-129), Z(255), Z(2**63 - 1), Z(-(2**63)), Z(2**63), Z(2**64 - 1),
    D(0.0), D(-0.0), D(1.5), D(3.0), D(float("inf")), D(float("-inf")), D(5e-324), D(1.7976931348623157e308),
    bits(0x7FF8000000000000), bits(0x7FF8000000000ABC), bits(0xFFF8000000000001), bits(0x7FF0000000000001),
    S(""), S("abc"), S("5"), S("h\u00e9llo"), S("\U0001f600"), S("a\x00b"), S(b"\xed\xa0\x80"),
    v.seq("A", []), nested(3), v.seq("A", [Z(1), S("x"), v.NULL, D(2.5), v.seq("A", [v.TRUE])]),
    v.pairs("M", []), v.pairs("M", [(S("1"), v.NULL), (S("a"), v.seq("A", [])), (S("b"), Z(1)),
                                    (S("\u00e9"), v.pairs("M", [(S(""), v.FALSE)]))]),
    v.seq("A", [nested(v.MAX_DEPTH - 2)]),
]

# Perl expressions and the reference value each must encode to.
LITERALS = {
    "undef": v.NULL, "1 == 1": v.TRUE, "!1": v.FALSE, "0": Z(0), "-7": Z(-7), "3 + 4": Z(7), "length('abc')": Z(3),
    "18446744073709551615": Z(2**64 - 1), "-9223372036854775808": Z(-(2**63)),
    "1.5": D(1.5), "-0.0": D(-0.0), "10 / 4": D(2.5), "10 / 2": D(5.0), "2 ** 10": D(1024.0), "9**9**9": D(float("inf")),
    "'7'": S("7"), "'7' + 0": Z(7), "my $n = 5; my $s = \"$n\"; $n": Z(5), "my $t = '7'; my $u = $t + 0; $t": S("7"),
    "'abc' x 2": S("abcabc"), "\"\\xe9\"": S("\u00e9"), "\"\\x{e9}\"": S("\u00e9"), "\"\\x{263A}\"": S("\u263a"),
    "\"\\xc3\\xa9\"": S("\u00c3\u00a9"), "\"\\x{D800}\"": S(b"\xed\xa0\x80"),
    "[1, [2.5, undef]]": v.seq("A", [Z(1), v.seq("A", [D(2.5), v.NULL])]),
    "{b => 1, a => [undef], 10 => 'x'}": v.pairs("M", [(S("10"), S("x")), (S("a"), v.seq("A", [v.NULL])), (S("b"), Z(1))]),
    "my @a; $a[2] = 1; \\@a": v.seq("A", [v.NULL, v.NULL, Z(1)]),
    # What cannot be rebuilt crosses as X with its class or reference type (the whole value).
    "sub { 1 }": v.Node("X", None, "CODE"), "\\1": v.Node("X", None, "SCALAR"), "\\\\1": v.Node("X", None, "REF"),
    "\\*STDOUT": v.Node("X", None, "GLOB"), "qr/x/": v.Node("X", None, "Regexp"),
    "bless {}, 'Foo'": v.Node("X", None, "Foo"), "[1, bless([], 'Foo')]": v.Node("X", None, "Foo"),
    "my $a = []; push @$a, $a; $a": v.Node("X", None, "deeply nested value"),
    "my $a = []; $a = [$a] for 1 .. 200; $a": v.Node("X", None, "deeply nested value"),
}

# Bytes a Perl receiver must refuse (Malformed), never coerce.
REFUSED = {
    "an int32 (Perl's integers cross as z)": raw("i", U32(1)),
    "a character": raw("c", U32(65)),
    "a tuple": raw("P", U32(0)),
    "a set": raw("S", U32(0)),
    "JavaScript's undefined": raw("u"),
    "a JavaScript object": raw("O", U32(0)),
    "an optional": raw("Y", "n"),
    "a dynamic value": v.encode(v.dynamic("Symbol", S("x"))),
    "a binary32 float": raw("f", U32(0)),
    "trailing bytes": raw("T", "T"),
    "truncated double": raw("d", b"\0\0\0"),
    "a count past the end": raw("A", U32(5), "n"),
    "a huge count past the end": raw("A", U32(0xFFFFFFFF), "n"),
    "an unknown tag": raw("?"),
    "empty": b"",
    "an integer not in its shortest form": raw("z", U32(2), b"\x00\x01"),
    "a negative integer not in its shortest form": raw("z", U32(2), b"\xff\xff"),
    "an integer of more than 64 bits": v.encode(Z(2**64)),
    "a negative integer of more than 64 bits": v.encode(Z(-(2**63) - 1)),
    "a string that is not UTF-8": raw("s", U32(2), b"\xff\xfe"),
    "an overlong UTF-8 form": raw("s", U32(2), b"\xc0\x80"),
    "a map with a key twice": raw("M", U32(2), "s", U32(0), "n", "s", U32(0), "n"),
    "a map with a key that is not a string": v.encode(v.pairs("M", [(Z(1), v.NULL)])),
    "nested too deeply": v.encode(nested(v.MAX_DEPTH + 1)),
}

SCRIPT = r"""
use lib '/opt/passk/perl';
use PasskWire;
my @input = split /\n/, do { local $/; <STDIN> }, -1;
# Each item is written after an "x" (an empty item is "x").
my ($round, $literals, $refused) = map { [map { substr $_, 1 } split /,/, $_] } @input[0 .. 2];
my @literals = map { pack 'H*', $_ } @$literals;
for my $hex (@$round) {
    my $back = eval { unpack 'H*', PasskWire::encode(PasskWire::decode(pack 'H*', $hex)) };
    print defined $back ? "$back\n" : 'error: ' . (ref $@ ? $@->message : $@) . "\n";
}
print "--\n";
for my $code (@literals) {
    my $value = eval $code;
    die "$code: $@" if $@;
    print unpack('H*', PasskWire::encode($value)), "\n";
}
print "--\n";
for my $hex (@$refused) {
    my $accepted = eval { PasskWire::decode(pack 'H*', $hex); 1 };
    print $accepted ? "accepted\n" : ref($@) . "\n";
}
"""


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("perl"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    payload = "\n".join([
        ",".join("x" + v.encode(node).hex() for node in ROUND_TRIP),
        ",".join("x" + code.encode().hex() for code in LITERALS),
        ",".join("x" + data.hex() for data in REFUSED.values()),
    ]) + "\n"
    output = container_stdout(docker_client, image, ["sh", "-c", "printf %s \"$PAYLOAD\" | perl -e \"$SCRIPT\""],
                              {"PAYLOAD": payload, "SCRIPT": SCRIPT})
    round_trip, literals, refused = output.split("--\n")
    assert len(round_trip.splitlines()) == len(ROUND_TRIP) and len(literals.splitlines()) == len(LITERALS), output
    assert_matches_the_reference(ROUND_TRIP, round_trip.splitlines(), LITERALS, literals.splitlines(), REFUSED,
                                 refused.splitlines(), "PasskWire::Malformed")


# A problem whose tests hand every kind of value to the candidate and check, as one process would, what comes back
# (in list, scalar and void context); the candidate checks what it received the same way (and dies if anything
# differs).
ECHO_PROMPT = "# Returns its arguments.\nsub echo {\n    my($kind, @values) = @_;\n"
ECHO_CHECK = r"""
no warnings 'experimental::builtin';
use B ();
sub passk_same {
    my ($a, $b) = @_;
    return !defined $b if !defined $a;
    return 0 if !defined $b || ref $a ne ref $b;
    if (ref $a eq 'ARRAY') {
        return 0 unless @$a == @$b;
        passk_same($a->[$_], $b->[$_]) || return 0 for 0 .. $#$a;
        return 1;
    }
    if (ref $a eq 'HASH') {
        return 0 unless join("\0", sort keys %$a) eq join("\0", sort keys %$b);
        passk_same($a->{$_}, $b->{$_}) || return 0 for keys %$a;
        return 1;
    }
    return 0 unless builtin::is_bool($a) == builtin::is_bool($b);
    return 0 unless builtin::created_as_number($a) == builtin::created_as_number($b);
    if (builtin::created_as_number($a)) {
        my $int = sub { B::svref_2object(\$_[0])->FLAGS & B::SVf_IOK() ? 1 : 0 };
        return 0 unless $int->($a) == $int->($b);
        return pack('d>', $a) eq pack('d>', $b) if !$int->($a);
    }
    return $a eq $b;
}
sub passk_values {
    (undef, !!1, !!0, 0, -1, 2**62 + 0, 18446744073709551615, 1.5, -0.0, 9**9**9 / 9**9**9, -9**9**9, '', '7',
     "h\x{e9}llo", "\xff", "\x{263A}", [1, [undef, [2.5]]], {b => 1, a => {}, 3 => 'c'}, 'x' x 100_000)
}
"""
ECHO_COMPLETION = ECHO_CHECK + """
    my @expected = passk_values();
    if ($kind eq 'all') {
        passk_same($values[$_], $expected[$_]) || die "the candidate received $_" for 0 .. $#expected;
        return @values;
    }
    if ($kind eq 'context') {
        $main::void = 1 unless defined wantarray;
        return wantarray ? 'list' : 'scalar';
    }
    return $main::void if $kind eq 'void';
    return (1, 2, 3) if $kind eq 'three';
    return;
}
"""
ECHO_TESTS = ECHO_CHECK + """
my @values = passk_values();
my @back = echo('all', @values);
@back == @values || die 'a list of ' . scalar(@back);
passk_same($back[$_], $values[$_]) || die "the tests received $_" for 0 .. $#values;
my $scalar = echo('context');
$scalar eq 'scalar' || die "scalar context: $scalar";
my @list = echo('context');
"@list" eq 'list' || die "list context: @list";
my $last = echo('three');
$last == 3 || die "the comma operator's last value: $last";
my @none = echo('none');
@none == 0 || die 'an empty list';
echo('context');
echo('void') == 1 || die 'void context';
"""


@pytest.mark.slow
def test_every_kind_of_value_crosses_as_one_process_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    # The same tests against a candidate that returns its numbers as strings: the tests see the difference.
    lossy = ECHO_COMPLETION.replace("return @values;", "return map { ref($_) ? $_ : defined($_) ? \"$_\" : $_ } @values;")
    echo, lossy_outcome = echo_outcomes(docker_client, image, "perl", ECHO_PROMPT, ECHO_TESTS,
                                        [ECHO_COMPLETION, lossy])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy_outcome.verdict is Verdict.ERROR and "the tests received" in (lossy_outcome.detail or ""), lossy_outcome
