"""Which callback URLs passk may call (SSRF): never private, loopback, link-local or otherwise special
addresses, unless the operator allowlists a network (PASSK_WEBHOOK_ALLOW_NETWORKS)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit


class RefusedTarget(ValueError):
    pass


def _special(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    for attribute, name in (
        ("is_loopback", "loopback"), ("is_link_local", "link-local"), ("is_private", "private"),
        ("is_multicast", "multicast"), ("is_reserved", "reserved"), ("is_unspecified", "unspecified"),
    ):
        if getattr(address, attribute):
            return name
    return None


def check_target(url: str, allow_networks: list[str]) -> list[str]:
    """The addresses `url` may be called at; RefusedTarget says why not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedTarget(f"callback_url must be an http or https URL with a host, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RefusedTarget(f"callback_url has an invalid port: {url!r}") from None
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedTarget(f"callback_url host {parts.hostname!r} does not resolve: {exc}") from None
    allowed = [ipaddress.ip_network(network, strict=False) for network in allow_networks]
    addresses = sorted({info[4][0] for info in infos})
    for text in addresses:
        address = ipaddress.ip_address(text.split("%")[0])
        kind = _special(address)
        if kind and not any(address in network for network in allowed):
            raise RefusedTarget(
                f"callback_url {url!r} resolves to {address}, a {kind} address; passk does not call those "
                "unless the operator allowlists the network (PASSK_WEBHOOK_ALLOW_NETWORKS)"
            )
    return addresses
