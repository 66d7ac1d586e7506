"""The engine's HTTP pools reach the network through asyncio's transports (lab/engine/aio_network.py): every way
a request can end reads as it does through httpx's own anyio backend, TLS is verified, a large body arrives whole,
and an idle connection the server closed is never used again."""

import asyncio
import datetime
import re
import ssl

import httpcore
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from lab.engine.aio_network import READ_HIGH_WATER, AsyncioBackend, AsyncioStream
from lab.engine.http_shards import ShardedTransport
from tests.lab.adapters import closed_port_url

BODY = {"messages": [{"role": "user", "content": "Hi."}]}
CREATED = re.compile(r'"created": \d+')  # the fake server's clock, in seconds: two requests may straddle one


def engine_client(**kwargs) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=ShardedTransport(**kwargs), timeout=httpx.Timeout(5.0, read=0.3))


def anyio_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.3))


async def outcome(client: httpx.AsyncClient, url: str, body: dict) -> tuple:
    """What a caller sees: the status and the lines read, then the exception that ended it (if any)."""
    lines = []
    try:
        async with client.stream("POST", url, json=body) as response:
            async for line in response.aiter_lines():
                lines.append(CREATED.sub('"created": 0', line))
        return response.status_code, lines, None
    except httpx.HTTPError as exc:
        return None, lines, type(exc)


@pytest.mark.parametrize(
    ("options", "stream", "error"),
    [
        ({"tokens": 3}, True, None),
        ({"tokens": 3}, False, None),
        ({"tokens": 6, "fault": "drop", "fault_at": 2}, True, httpx.RemoteProtocolError),
        ({"tokens": 3, "fault": "drop"}, False, httpx.RemoteProtocolError),
        ({"tokens": 6, "fault": "mid_stream", "fault_at": 3}, True, None),
        ({"tokens": 6, "fault": "stall", "fault_at": 2}, True, httpx.ReadTimeout),
        ({"tokens": 2, "fault": "stall"}, False, httpx.ReadTimeout),
    ],
    ids=["streamed", "plain", "drop-mid-stream", "drop-before-the-body", "error-event", "stall-mid-stream", "stall"],
)
async def test_every_ending_of_a_request_reads_as_through_httpx_own_backend(fake_llm, options, stream, error):
    url = f"{fake_llm.openai_url}/chat/completions"
    seen = []
    for client in (anyio_client(), engine_client()):
        body = {**BODY, "model": fake_llm.model(**options), "stream": stream}
        async with client:
            seen.append(await outcome(client, url, body))
    through_anyio, through_asyncio = seen
    assert through_asyncio[2] is error
    assert through_asyncio == through_anyio


async def test_a_refused_connection_is_a_connect_error():
    async with engine_client() as client:
        with pytest.raises(httpx.ConnectError):
            await client.post(f"{closed_port_url()}/chat/completions", json=BODY)


async def test_the_pools_streams_are_asyncio_streams(fake_llm):
    transport = ShardedTransport()
    async with httpx.AsyncClient(transport=transport) as client:
        await client.post(f"{fake_llm.openai_url}/chat/completions", json={**BODY, "model": fake_llm.model()})
        [connection] = transport.shards[0].transport._pool.connections
        # The connection's own stream: were httpx to build its pools again, this would say anyio's.
        stream = connection._connection._network_stream
    assert isinstance(stream, AsyncioStream)


async def serve(handle) -> tuple[asyncio.base_events.Server, int]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0
    )
    await reader.readexactly(length)


async def test_a_body_larger_than_the_read_buffer_waits_in_the_socket_until_read_and_arrives_whole():
    payload = bytes(range(256)) * (3 * READ_HIGH_WATER // 256 + 7)

    async def handle(reader, writer):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload)
        await writer.drain()
        writer.close()

    server, port = await serve(handle)
    async with server, engine_client() as client, client.stream("GET", f"http://127.0.0.1:{port}/") as response:
        await asyncio.sleep(0.3)  # nobody reads: the server has sent it all by now
        held = len(response.extensions["network_stream"]._protocol.received)
        received = bytearray()
        async for chunk in response.aiter_raw():
            received += chunk
    assert held <= READ_HIGH_WATER + 256 * 1024  # the process holds about the high-water mark, not the body
    assert received == payload


async def test_an_idle_connection_the_server_closed_is_not_used_again():
    connections = []

    async def handle(reader, writer):
        connections.append(writer)
        await read_request(reader)
        # Keep-alive by HTTP/1.1's rules, then the server closes the idle connection anyway, as providers do.
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server, port = await serve(handle)
    async with server, engine_client() as client:
        first = await client.get(f"http://127.0.0.1:{port}/")
        await asyncio.sleep(0.1)  # the close has reached the client's side
        second = await client.get(f"http://127.0.0.1:{port}/")
    assert (first.text, second.text) == ("ok", "ok")
    assert len(connections) == 2


def self_signed() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


async def test_tls_is_verified_against_the_clients_context(tmp_path):
    certificate, key = self_signed()
    (tmp_path / "cert.pem").write_bytes(certificate)
    (tmp_path / "key.pem").write_bytes(key)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")

    async def handle(reader, writer):
        try:
            await read_request(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            return  # the client refused the certificate
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
        await writer.drain()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_context)
    url = f"https://localhost:{server.sockets[0].getsockname()[1]}/"
    trusting = ssl.create_default_context(cadata=certificate.decode())
    async with server:
        async with httpx.AsyncClient(transport=ShardedTransport(verify=trusting)) as client:
            answer = await client.get(url)
        async with httpx.AsyncClient(transport=ShardedTransport()) as client:  # the system's authorities only
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(url)
    assert answer.text == "secret"
    assert answer.extensions["network_stream"].get_extra_info("ssl_object").version().startswith("TLS")


async def test_a_read_that_waits_past_its_timeout_is_a_read_timeout():
    async def handle(reader, writer):
        await read_request(reader)
        await asyncio.sleep(5)

    server, port = await serve(handle)
    async with server:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=1)
        await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout=1)
        with pytest.raises(httpcore.ReadTimeout):
            await stream.read(100, timeout=0.05)
        await stream.aclose()
