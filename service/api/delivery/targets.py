"""Which callback URLs passk may call (SSRF), and the address it then connects to.

A URL's host is resolved once, off the event loop; every address it resolves to must be a globally reachable
one (IANA's special-purpose registries, as `ipaddress` knows them: private, loopback, link-local, shared
100.64.0.0/10, site-local fec0::/10, documentation, benchmarking, multicast, reserved...), unless the operator
allowlists its network (PASSK_WEBHOOK_ALLOW_NETWORKS). The request then goes to the address that was checked
(`Target.pinned`), with the URL's host in `Host` and as the TLS server name, so a name that resolves to
another address a moment later (DNS rebinding) is never called there.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses it resolves to, as text.
Lookup = Callable[[str, int], Awaitable[list[str]]]

_NAMED = (
    ("is_loopback", "loopback"), ("is_link_local", "link-local"), ("is_private", "private"),
    ("is_multicast", "multicast"), ("is_reserved", "reserved"), ("is_unspecified", "unspecified"),
    ("is_site_local", "site-local"),
)
# Entries of IANA's registries newer than the standard library's table (Python 3.11's ipaddress).
_REGISTERED_SINCE = ((ipaddress.ip_network("3fff::/20"), "documentation"),)  # RFC 9637


class RefusedTarget(ValueError):
    pass


def special(address: Address) -> str | None:
    """What kind of special-purpose address this is, or None for a globally reachable one."""
    for form, carried in (("IPv4-mapped", getattr(address, "ipv4_mapped", None)),
                          ("6to4", getattr(address, "sixtofour", None))):
        if carried is not None:  # ::ffff:10.0.0.1 reaches 10.0.0.1
            kind = special(carried)
            return f"{form} {kind}" if kind else None
    for attribute, name in _NAMED:
        if getattr(address, attribute, False):
            return name
    for network, name in _REGISTERED_SINCE:
        if address in network:
            return name
    return None if address.is_global else "special-purpose"


@dataclass(frozen=True)
class Target:
    url: str
    host: str
    port: int
    addresses: tuple[str, ...]

    def pinned(self) -> tuple[str, dict[str, str], dict[str, str]]:
        """(URL with the first checked address in place of the host, headers, httpx request extensions)."""
        parts = urlsplit(self.url)
        address = self.addresses[0]
        shown = f"[{address}]" if ":" in address else address
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = f"{userinfo + '@' if userinfo else ''}{shown}:{self.port}"
        host_header = parts.netloc.rpartition("@")[2]
        extensions = {"sni_hostname": self.host} if parts.scheme == "https" else {}
        return urlunsplit(parts._replace(netloc=netloc)), {"Host": host_header}, extensions


async def _system_lookup(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


async def resolve(url: str, allow_networks: list[str], lookup: Lookup = _system_lookup) -> Target:
    """The checked target of `url`; RefusedTarget says why there is none."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedTarget(f"callback_url must be an http or https URL with a host, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RefusedTarget(f"callback_url has an invalid port: {url!r}") from None
    try:
        found = await lookup(parts.hostname, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedTarget(f"callback_url host {parts.hostname!r} does not resolve: {exc}") from None
    allowed = [ipaddress.ip_network(network, strict=False) for network in allow_networks]
    addresses = tuple(dict.fromkeys(text.split("%")[0] for text in found))
    if not addresses:
        raise RefusedTarget(f"callback_url host {parts.hostname!r} does not resolve")
    for text in addresses:
        address = ipaddress.ip_address(text)
        kind = special(address)
        if kind and not any(address in network for network in allowed):
            raise RefusedTarget(
                f"callback_url {url!r} resolves to {address}, a {kind} address; passk does not call those "
                "unless the operator allowlists the network (PASSK_WEBHOOK_ALLOW_NETWORKS)"
            )
    return Target(url, parts.hostname, port, addresses)
