"""The web process's HTTP layer (daphne on Twisted): two requests Twisted answers before Django sees them, made JSON.

- A POST whose multipart body has no parts (`--boundary--`, or no boundary at all): Twisted parses multipart bodies
  itself, for twisted.web's `request.args`, which daphne never reads, and answers one it cannot parse with a bare
  "400" with no body. Here Twisted leaves the body alone; Django parses it and the API answers a 400 naming the
  fields.
- A request line (the path and query string) longer than Twisted's limit (16,384 bytes, alone or with the headers):
  Twisted closed the connection without an answer, or answered a bare 400. Here it is a JSON 414 saying the limit
  (a line within it that the headers then push past it, a 431); any other request Twisted cannot read is a 400
  with a JSON sentence.

Both lean on Twisted's and daphne's internals (`Request._parsePOSTFormSubmission`, `HTTPChannel.lineLengthExceeded`,
`_respondToBadRequestAndDisconnect` and `_receivedHeaderSize`, the `HTTPFactory` daphne's server builds), pinned in
requirements.txt; tests/lab/test_request_edges.py checks both answers through a real daphne and fails when a pinned
version changes. `install` does nothing outside daphne.
"""

from __future__ import annotations

import json
import sys

MAX_HEAD_BYTES = 16_384  # Twisted's HTTPChannel: the longest line (MAX_LENGTH), and all of them (totalHeadersSize)


def install() -> None:
    """Use the two answers above in this process's daphne server; a no-op unless daphne's server is running here
    (importing it elsewhere would install its reactor)."""
    server = sys.modules.get("daphne.server")
    if server is None or getattr(server.HTTPFactory, "promptlab", False):
        return
    from daphne import http_protocol  # daphne's server imported it already: no reactor side effect

    class Request(http_protocol.WebRequest):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._parsePOSTFormSubmission = False

    class HTTPFactory(http_protocol.HTTPFactory):
        promptlab = True

        def buildProtocol(self, addr):
            protocol = super().buildProtocol(addr)
            protocol.requestFactory = Request
            channel = protocol._channel
            channel.lineLengthExceeded = lambda line: _refuse(channel, too_long=True)
            channel._respondToBadRequestAndDisconnect = lambda: _refuse(
                channel, too_long=channel._receivedHeaderSize > channel.totalHeadersSize
            )
            return protocol

    server.HTTPFactory = HTTPFactory


def _refuse(channel, *, too_long: bool) -> None:
    if not too_long:
        status, reason, detail = 400, "Bad Request", "The request is not valid HTTP/1.1."
    elif not channel.requests:  # no request yet: the request line itself (the URI) is too long
        status, reason, detail = 414, "URI Too Long", f"The request line is longer than {MAX_HEAD_BYTES:,} bytes"
    else:
        status, reason, detail = (
            431,
            "Request Header Fields Too Large",
            f"The request line and headers are over {MAX_HEAD_BYTES:,} bytes",
        )
    if too_long:
        detail += "; send long filters or values in a POST body."
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    channel.transport.write(head.encode() + body)
    channel.loseConnection()
