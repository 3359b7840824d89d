"""Bash's value wire (sandbox/languages/bash/wire.sh) against the Python reference codec
(sandbox/runtime/values.py), in the real Bash image: the judge's calls and the server's answers are exactly the
reference's bytes (every byte of the function's stdout, NUL bytes and trailing newlines included, and its exit
status), calls round-trip through the server's reader, and malformed answers and frames are refused. Then one
problem through the real sandbox whose tests see every kind of output and status cross as one program sees it."""

from __future__ import annotations

import io
import tarfile

import pytest

from sandbox.images import ensure_language_image
from sandbox.languages import get
from sandbox.runtime import values as v
from sandbox.verdicts import Verdict
from tests.languages.codec import U32, echo_outcomes


# (function, arguments) the judge sends: Bash strings, any byte but NUL.
CALLS = [("f", []), ("strlen", [b""]), ("add", [b"1", b"2"]), ("g", [b"h\xc3\xa9llo \xff", b"a\nb\n\n", b"%s %d \\x41", b" "]),
         ("big", [b"x" * 70000])]
# (stdout, exit status) of a call the server answers.
ANSWERS = [(b"", 0), (b"3\n", 0), (b"a\x00b\n\n\n", 1), (b"\xff\xfe", 255), (b"y" * 70000, 7)]


def answer(output: bytes, status: int) -> bytes:
    return v.returned(v.seq("P", [v.string(output), v.integer(status, "B")]))


# Answers the judge must refuse.
REFUSED = {
    "empty": b"",
    "a value alone": v.returned(v.string(b"3")),
    "a raise": v.raised("Error", "x"),
    "a tuple of three": v.returned(v.seq("P", [v.string(b"3"), v.integer(0, "B"), v.NULL])),
    "a status as an int32": v.returned(v.seq("P", [v.string(b"3"), v.integer(0, "i")])),
    "stdout as a number": v.returned(v.seq("P", [v.integer(3, "z"), v.integer(0, "B")])),
    "a length past the end": answer(b"3", 0)[:7] + U32(9) + answer(b"3", 0)[11:],
    "trailing bytes": answer(b"3", 0) + b"n",
    "truncated": answer(b"3", 0)[:-1],
    "a call": v.call("f", []),
}
# Frames a reader must refuse (2) or see as the end of input (1).
FRAMES = {"nothing": (b"", 1), "a cut header": (b"\x00\x00", 2), "a cut body": (U32(5) + b"abc", 2),
          "over 1 GiB": (U32((1 << 30) + 1) + b"x", 2), "a whole frame": (v.frame(b"RT"), 0)}

SCRIPT = r"""
. /opt/passk/bash/wire.sh
hex() { od -An -v -tx1 | tr -d ' \n'; echo; }
cd /tmp/cases
for file in call.*; do
    mapfile -d '' -t parts < "$file"
    passk_write_call 9 "${parts[0]}" "${parts[@]:1}" 9>out
    hex < out
done
echo --
for file in output.*; do
    passk_write_answer 9 "$file" "$(cat "status.${file#output.}")" 9>out
    hex < out
done
echo --
for file in message.*; do
    passk_read_call "$file"
    printf '%s' "$? $PASSK_NAME" | hex
    for arg in "${PASSK_ARGS[@]}"; do printf '%s' "$arg" | hex; done
done
echo --
for file in refused.*; do passk_read_answer "$file"; echo $?; done
echo --
for file in frame.*; do passk_read_frame 9 out 9<"$file"; echo $?; done
"""


def _archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"cases/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def image(docker_client) -> str:  # type: ignore[no-untyped-def]
    return ensure_language_image(docker_client, get("bash"))


@pytest.mark.slow
def test_codec_matches_the_reference_byte_for_byte(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    files: dict[str, bytes] = {"run.sh": SCRIPT.encode()}
    for index, (name, args) in enumerate(CALLS):
        files[f"call.{index}"] = b"\0".join([name.encode(), *args]) + b"\0"
        files[f"message.{index}"] = v.call(name, [v.string(arg) for arg in args])
    for index, (output, status) in enumerate(ANSWERS):
        files[f"output.{index}"], files[f"status.{index}"] = output, str(status).encode()
    for index, data in enumerate(REFUSED.values()):
        files[f"refused.{index}"] = data
    for index, (data, _) in enumerate(FRAMES.values()):
        files[f"frame.{index}"] = data
    container = docker_client.containers.create(image, ["bash", "/tmp/cases/run.sh"], entrypoint=[], user="0:0",
                                                network_mode="none", working_dir="/tmp")
    try:
        container.put_archive("/tmp", _archive(files))
        container.start()
        assert container.wait(timeout=300)["StatusCode"] == 0, container.logs()
        output = container.logs(stdout=True, stderr=False).decode()
    finally:
        container.remove(force=True)
    calls, answers, read, refused, frames = (part.splitlines() for part in output.split("--\n"))
    assert calls == [v.frame(v.call(name, [v.string(arg) for arg in args])).hex() for name, args in CALLS]
    assert answers == [v.frame(answer(out, status)).hex() for out, status in ANSWERS]
    expected_read = []
    for name, args in CALLS:
        expected_read += [f"0 {name}".encode().hex(), *(arg.hex() for arg in args)]
    assert read == expected_read
    assert dict(zip(REFUSED, refused, strict=True)) == dict.fromkeys(REFUSED, "2")
    assert dict(zip(FRAMES, frames, strict=True)) == {name: str(code) for name, (_, code) in FRAMES.items()}


# A problem whose tests see outputs and statuses cross as one program sees them: trailing newlines, NUL bytes (which
# Bash drops with a warning in both), bytes that are not UTF-8, a status the tests look at, output not captured.
ECHO_PROMPT = "#!/bin/bash\n# Prints its arguments.\necho_back() {\n"
ECHO_COMPLETION = """    case $1 in
        newlines) printf 'a\\n\\n\\n' ;;
        nul) printf 'a\\0b' ;;
        bytes) printf '\\xff\\xfe' ;;
        status) echo out; return 42 ;;
        args) printf '[%s]' "${@:2}" ;;
        exit) echo before; exit 3; echo after ;;
    esac
"""
ECHO_TESTS = """}

set -e
[[ $(echo_back newlines) == a ]]
[[ $(echo_back nul 2>/dev/null) == ab ]]
[[ $(echo_back bytes) == $'\\xff\\xfe' ]]
out=$(echo_back status) && false || [[ $? == 42 && $out == out ]]
[[ $(echo_back args "a b" "" $'x\\ny' '*') == "[a b][][x"$'\\n'"y][*]" ]]
[[ $(echo_back exit) == before ]]
[[ "$(echo_back newlines; echo_back bytes)" == a$'\\n\\n\\n\\xff\\xfe' ]]
echo_back status > captured || true
[[ $(cat captured) == out ]]
"""


@pytest.mark.slow
def test_every_kind_of_output_crosses_as_one_program_sees_it(docker_client, image: str) -> None:  # type: ignore[no-untyped-def]
    echo, lossy = echo_outcomes(docker_client, image, "bash", ECHO_PROMPT, ECHO_TESTS,
                                [ECHO_COMPLETION, ECHO_COMPLETION.replace("return 42", "return 0")])
    assert echo.verdict is Verdict.PASSED, echo
    assert lossy.verdict is Verdict.FAILED and "a test failed" in (lossy.detail or ""), lossy
