"""Who is on the other end of a request: the client's address, seen through the proxies this site trusts.

Behind a TLS proxy every connection comes from the proxy, so a limit keyed on REMOTE_ADDR would put every person in
one bucket. Each proxy appends the address it saw to X-Forwarded-For; only a proxy listed in TRUSTED_PROXIES
(addresses or networks) is believed. Walking from the connection's peer leftwards through the header, each trusted
hop hands over to the address it reports; the first address that is not a trusted proxy is the client. Entries to
its left were written by the client and are ignored, and a client that connects directly (not from a trusted
proxy) is its own address whatever header it sends. daphne's --proxy-headers is not used: it takes the header's
leftmost entry, the one a client writes, and believes it from any peer.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

# A person usually holds a whole IPv6 /64: counting each address apart would let one person rotate through them.
IPV6_PREFIX = 64


def _parse(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value.strip())
    except ValueError:
        return None


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return any(address in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest) -> str:
    """The client's address (an IPv6 one as its /64 network), or "unknown" when the peer's cannot be read."""
    address = _parse(request.META.get("REMOTE_ADDR") or "")
    if address is None:
        return "unknown"
    forwarded = [entry for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if entry.strip()]
    while _trusted(address) and forwarded:
        hop = _parse(forwarded.pop())
        if hop is None:  # a proxy we trust wrote something that is not an address: stop at that proxy
            break
        address = hop
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:  # a dual-stack socket's IPv4 client
        return str(address.ipv4_mapped)
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{address}/{IPV6_PREFIX}", strict=False).network_address) + f"/{IPV6_PREFIX}"
    return str(address)
