"""httpcore's network backend on asyncio's own transports, for the engine's HTTP pools (http_shards.py).

Why: httpcore reaches the socket through anyio, which wraps every read and write in a cancel scope and a timeout
of its own and asks for the current task several times on the way; each idle connection of a pool is also asked
whether the server closed it with a poll of its socket, on every request and every response. Measured here
(docs/benchmarks.md, 2026-12-04): a streamed event cost about 100 µs of CPU through anyio and 60 µs on asyncio's
transports, an unstreamed request about 860 µs and 750 µs. A protocol that is told when data or the end of the
stream arrives also knows, without a system call, whether an idle connection was closed.

The rules are those of httpcore's own backends: a timeout is the read's, write's or connect's own (httpcore's
ReadTimeout, WriteTimeout, ConnectTimeout); the peer closing cleanly reads as b"" (httpcore then says whether the
response was complete); a reset or any other broken connection is a ReadError, WriteError or ConnectError.
"""

from __future__ import annotations

import asyncio
import ssl
import typing
from collections.abc import Iterable

import httpcore

# Past this many bytes received and not yet read, the socket is not read until the reader catches up, so a
# provider sending faster than the answers are parsed cannot fill the process's memory.
READ_HIGH_WATER = 1 << 20
HAPPY_EYEBALLS_DELAY_S = 0.25  # before the next address is tried alongside (RFC 8305's recommended delay)
SocketOption = tuple[int, int, int | bytes] | tuple[int, int, None, int]


class _Protocol(asyncio.Protocol):
    """What one connection has received and whether it has ended, and a waiter to wake when that changes."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = bytearray()
        self.ended = False  # the peer closed its side, or the connection is lost
        self.error: Exception | None = None  # why the connection was lost, if not cleanly
        self.reading_paused = False
        self._readable: asyncio.Future | None = None
        self._writable: asyncio.Future | None = None
        self.writing_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if len(self.received) > READ_HIGH_WATER and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        _wake(self._readable)

    def eof_received(self) -> bool:
        self.ended = True
        _wake(self._readable)
        return False  # the transport closes itself: httpcore never writes after the server has finished

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        _wake(self._readable)
        _wake(self._writable)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        _wake(self._writable)

    async def until_readable(self) -> None:
        self._readable = asyncio.get_running_loop().create_future()
        try:
            await self._readable
        finally:
            self._readable = None

    async def until_writable(self) -> None:
        while self.writing_paused and self.error is None and not self.transport.is_closing():
            self._writable = asyncio.get_running_loop().create_future()
            try:
                await self._writable
            finally:
                self._writable = None


def _wake(waiter: asyncio.Future | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _Protocol):
        self._transport, self._protocol = transport, protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if not protocol.received and not protocol.ended:
            try:
                async with asyncio.timeout(timeout):
                    await protocol.until_readable()
            except TimeoutError:
                raise httpcore.ReadTimeout(f"No data within {timeout} s.") from None
        if protocol.received:
            data = bytes(protocol.received[:max_bytes])
            del protocol.received[:max_bytes]
            if protocol.reading_paused and len(protocol.received) <= READ_HIGH_WATER // 2:
                protocol.reading_paused = False
                self._transport.resume_reading()
            return data
        if protocol.error is not None:
            raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if protocol.error is not None or self._transport.is_closing():
            raise httpcore.WriteError(str(protocol.error or "The connection is closed."))
        self._transport.write(buffer)
        if protocol.writing_paused:  # the transport's buffer is full: wait for it to drain, as a write would
            try:
                async with asyncio.timeout(timeout):
                    await protocol.until_writable()
            except TimeoutError:
                raise httpcore.WriteTimeout(f"Could not send within {timeout} s.") from None
        if protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error))

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout(f"No TLS handshake within {timeout} s.") from None
        except (OSError, ssl.SSLError) as exc:  # a certificate refused is an ssl.SSLError
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from None
        self._protocol.transport = typing.cast(asyncio.Transport, transport)
        return AsyncioStream(self._protocol.transport, self._protocol)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # httpcore asks this of idle connections: anything received, or the end, means the server closed it.
            return bool(self._protocol.received) or self._protocol.ended
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        # Happy eyeballs (RFC 8305), as anyio connects: on a host whose IPv6 route is broken, trying each address
        # in turn would spend the whole connect timeout on the first.
        connecting = loop.create_connection(
            _Protocol, host, port, local_addr=local, happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY_S
        )
        return await _connected(connecting, timeout, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        return await _connected(loop.create_unix_connection(_Protocol, path), timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connected(connecting, timeout: float | None, socket_options) -> AsyncioStream:
    try:
        async with asyncio.timeout(timeout):
            transport, protocol = await connecting
    except TimeoutError:
        raise httpcore.ConnectTimeout(f"Not connected within {timeout} s.") from None
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from None
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return AsyncioStream(transport, protocol)
