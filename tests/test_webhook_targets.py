"""Webhook targets: every special-purpose address is refused, and a request goes to the address that was
checked, whatever the name resolves to afterwards (DNS rebinding), over real HTTP."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from service.api.delivery.targets import RefusedTarget, resolve, special


@pytest.mark.parametrize(("text", "kind"), [
    ("100.64.0.1", "special-purpose"),        # shared address space (carrier-grade NAT)
    ("fec0::1", "site-local"),
    ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
    ("::ffff:10.1.2.3", "IPv4-mapped private"),
    ("2002:a9fe:a9fe::1", "6to4 link-local"),  # 169.254.169.254 through 6to4
    ("192.0.2.7", "private"),                 # documentation
    ("198.18.0.1", "private"),                # benchmarking
    ("2001:db8::1", "private"),               # documentation
    ("3fff:fff::1", "documentation"),         # the second IPv6 documentation prefix (RFC 9637)
    ("0.0.0.0", "private"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "private"),
    ("127.0.0.1", "loopback"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("fc00::1", "private"),
])
def test_special_purpose_addresses_are_named(text: str, kind: str) -> None:
    assert special(ipaddress.ip_address(text)) == kind


@pytest.mark.parametrize("text", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_global_addresses_are_not_special(text: str) -> None:
    assert special(ipaddress.ip_address(text)) is None


def _lookup(*answers: list[str]):
    """A resolver that gives its answers in turn (the last one from then on), as a rebinding name does."""
    calls: list[str] = []

    async def lookup(host: str, port: int) -> list[str]:
        calls.append(host)
        return answers[min(len(calls), len(answers)) - 1]

    lookup.calls = calls  # type: ignore[attr-defined]
    return lookup


async def test_one_special_address_among_several_refuses_the_name() -> None:
    with pytest.raises(RefusedTarget, match="100.64.0.9, a special-purpose address"):
        await resolve("https://hook.example/x", [], _lookup(["8.8.8.8", "100.64.0.9"]))
    allowed = await resolve("https://hook.example/x", ["100.64.0.0/10"], _lookup(["8.8.8.8", "100.64.0.9"]))
    assert allowed.addresses == ("8.8.8.8", "100.64.0.9")


async def test_urls_that_are_not_http_or_do_not_resolve_are_refused() -> None:
    for url, words in (("file:///etc/passwd", "http or https"), ("http://h.example:99999/", "invalid port"),
                       ("gopher://h.example/", "http or https")):
        with pytest.raises(RefusedTarget, match=words):
            await resolve(url, [], _lookup(["8.8.8.8"]))
    with pytest.raises(RefusedTarget, match="does not resolve"):
        await resolve("http://h.example/", [], _lookup([]))


def test_the_pinned_request_keeps_the_name_for_host_and_tls() -> None:
    target = asyncio.run(resolve("https://user:pw@hook.example:8443/p?q=1", [], _lookup(["2606:4700::1"])))
    url, headers, extensions = target.pinned()
    assert url == "https://user:pw@[2606:4700::1]:8443/p?q=1"
    assert headers == {"Host": "hook.example:8443"} and extensions == {"sni_hostname": "hook.example"}
    plain = asyncio.run(resolve("http://hook.example/p", [], _lookup(["8.8.8.8"])))
    assert plain.pinned() == ("http://8.8.8.8:80/p", {"Host": "hook.example"}, {})


class _Receiver(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        _Receiver.seen.append((self.path, self.headers["Host"]))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Receiver.seen = []
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


async def test_a_rebinding_name_is_called_at_the_checked_address_only(receiver: int) -> None:
    """The name answers an allowed address to the check and a private one after it: the request still goes to
    the checked address (no second lookup), and the next check refuses the name."""
    lookup = _lookup(["127.0.0.1"], ["10.20.30.40"])
    url = f"http://rebind.example:{receiver}/hook?run=1"
    target = await resolve(url, ["127.0.0.1/32"], lookup)
    pinned_url, headers, extensions = target.pinned()
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as client:
        response = await client.post(pinned_url, content=b"{}", headers=headers, extensions=extensions)
    assert response.status_code == 204
    assert _Receiver.seen == [("/hook?run=1", f"rebind.example:{receiver}")]
    assert lookup.calls == ["rebind.example"]  # type: ignore[attr-defined]
    with pytest.raises(RefusedTarget, match="10.20.30.40, a private address"):
        await resolve(url, ["127.0.0.1/32"], lookup)


async def test_the_system_lookup_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the system resolver works, the event loop goes on: here the resolver waits for a task of the loop
    to let it answer, which only a lookup off the loop lives to see."""
    gate = threading.Event()
    released: list[bool] = []
    real = socket.getaddrinfo

    def waiting_getaddrinfo(*args, **kwargs):
        released.append(gate.wait(10))
        return real(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", waiting_getaddrinfo)

    async def let_it_answer() -> None:
        gate.set()

    opener = asyncio.get_running_loop().create_task(let_it_answer())
    target = await resolve("http://127.0.0.1:9/", ["127.0.0.0/8"])
    await opener
    assert released == [True] and target.addresses == ("127.0.0.1",)
