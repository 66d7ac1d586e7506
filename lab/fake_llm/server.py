"""The fake LLM server: a small asyncio HTTP/1.1 server with per-scenario behaviour, faults and counters.

A connection is kept open for the client's next request once a response is complete, as providers do (unless the
request says `Connection: close`): a client pays for its connections as it would against them, no more. While a
response is under way the client sends nothing, so a client that goes away is seen at once: the server watches the
socket for end-of-file while it waits between tokens. Streams use chunked encoding, so a dropped connection is a
protocol error for the client, exactly as with a real provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .embeddings import embeddings_response
from .scenario import Scenario, parse_scenario, with_prompt_options
from .script import Scripts
from .tool_calls import json_tool_delta, json_tool_head, schema_reply, tool_call_completion, tool_call_frames
from .wire import AnthropicWire, GeminiWire, OpenAIWire, sample_for

Wire = OpenAIWire | AnthropicWire | GeminiWire

MAX_HEAD = 64 * 1024
MODELS_KEY = "_models"  # the scenario key of model-list requests (they carry no model name)
RECENT = 50  # request bodies kept per scenario, newest last


# Statuses real providers send that Python's HTTPStatus does not know: Anthropic answers 529 when overloaded.
NONSTANDARD_PHRASES = {529: "Overloaded"}


def reason_phrase(status: int) -> str:
    """The status line's phrase; any other unknown status still gets a real status line, never an exception."""
    if status in NONSTANDARD_PHRASES:
        return NONSTANDARD_PHRASES[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


class ClientGone(Exception):
    """The client closed the connection (cancelled, timed out or crashed)."""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        try:
            data = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def api_key(self) -> str:
        bearer = self.headers.get("authorization", "")
        return (
            bearer.removeprefix("Bearer ").strip()
            or self.headers.get("x-api-key")
            or self.headers.get("x-goog-api-key")
            or self.query.get("key", "")
        )


async def read_request(reader: asyncio.StreamReader, start: bytes = b"") -> Request:
    """The next request on the connection; `start` is what was already read of it."""
    head = (start + await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *header_lines = head.split("\r\n")
    method, target, _ = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    url = urlsplit(target)
    return Request(method.upper(), unquote(url.path), dict(parse_qsl(url.query)), headers, body)


class Exchange:
    """Writes one response and notices when the client leaves."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, keep_alive: bool = True):
        self.writer = writer
        self.keep_alive = keep_alive  # said in the response's head; false once the response was cut off
        # The client sends nothing more until the response is complete, so this read only ends when it closes.
        self._closed_by_client = asyncio.ensure_future(reader.read(1))

    async def pause(self, seconds: float) -> None:
        if self._closed_by_client.done():
            raise ClientGone
        if seconds > 0:
            done, _ = await asyncio.wait({self._closed_by_client}, timeout=seconds)
            if done:
                raise ClientGone

    async def pause_until(self, at: float) -> None:
        """`pause` until the event loop's clock reads `at` (at once when it is past, still noticing a client gone)."""
        await self.pause(at - asyncio.get_running_loop().time())

    async def until_client_leaves(self) -> None:
        await self._closed_by_client
        raise ClientGone

    async def _write(self, data: bytes) -> None:
        if self._closed_by_client.done():
            raise ClientGone
        try:
            self.writer.write(data)
            await self.writer.drain()
        except ConnectionError:
            raise ClientGone from None

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        connection = "keep-alive" if self.keep_alive else "close"
        lines = [f"HTTP/1.1 {status} {reason_phrase(status)}", f"Connection: {connection}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        head = {"Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})}
        await self._write(self._head(status, head) + body)

    async def start_stream(self) -> None:
        head = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Transfer-Encoding": "chunked"}
        await self._write(self._head(200, head))

    async def send_chunk(self, data: bytes) -> None:
        await self.send_chunks([data])

    async def send_chunks(self, frames: list[bytes]) -> None:
        """Frames that are due together, in one write (each its own HTTP chunk), as a server's socket sends what
        it has: at 500 answers streaming at once a write a token cost this server most of a core."""
        if frames:
            await self._write(b"".join(f"{len(data):X}\r\n".encode() + data + b"\r\n" for data in frames))

    async def end_stream(self) -> None:
        await self._write(b"0\r\n\r\n")

    def drop(self) -> None:
        self.keep_alive = False
        self.writer.transport.abort()

    async def next_request_start(self) -> bytes | None:
        """Once the response is complete: None when the connection is done with (the client left, or either side
        said close), else what the watch for end-of-file read of the client's next request (often nothing)."""
        watch = self._closed_by_client
        if not watch.done():
            watch.cancel()  # a read cancelled while it waits takes nothing from the stream
        with contextlib.suppress(asyncio.CancelledError):
            await watch
        if not self.keep_alive or self.writer.is_closing():
            return None
        if watch.cancelled():
            return b""
        if watch.exception() is not None:  # the connection broke
            return None
        return watch.result() or None  # b"": the client closed

    async def close(self) -> None:
        self._closed_by_client.cancel()
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


@dataclass
class Counter:
    requests: int = 0
    completed: int = 0
    disconnected: int = 0
    faults: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    last_request: dict = field(default_factory=dict)
    recent: list = field(default_factory=list)  # the bodies of the last RECENT requests
    arrivals: list = field(default_factory=list)  # when each request arrived (epoch seconds), for rate checks

    def enter(self) -> None:
        self.requests += 1
        self.arrivals.append(time.time())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)


class FakeLLMServer:
    def __init__(self) -> None:
        self.total = Counter()
        self.scenarios: dict[str, Counter] = {}
        self.scripts = Scripts()
        self.connections = 0  # accepted since the start (or the last reset): a client that reuses them opens few
        # Per scenario key, the answers `hold` keeps waiting: each `POST /_release` lets `count` of them go.
        self.held: dict[str, asyncio.Semaphore] = {}

    def stats(self) -> dict:
        totals = asdict(self.total)
        totals.pop("last_request")
        totals.pop("recent")
        totals.pop("arrivals")
        scenarios = {key: asdict(counter) for key, counter in self.scenarios.items()}
        return {**totals, "connections": self.connections, "scenarios": scenarios}

    def reset(self) -> None:
        self.total = Counter(in_flight=self.total.in_flight)
        self.scenarios = {}
        self.scripts.clear()
        self.connections = 0
        self.held = {}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        start: bytes | None = b""
        while start is not None:
            try:
                request = await read_request(reader, start)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, ConnectionError):
                writer.close()
                return
            keep_alive = request.headers.get("connection", "").lower() != "close"
            exchange = Exchange(reader, writer, keep_alive=keep_alive)
            start = None
            try:
                await self.route(request, exchange)
                start = await exchange.next_request_start()
            except ClientGone:
                pass
            finally:
                if start is None:
                    await exchange.close()

    async def route(self, request: Request, exchange: Exchange) -> None:
        path, prefix = request.path, ""
        if path.startswith("/_s/"):
            prefix, _, rest = path.removeprefix("/_s/").partition("/")
            path = "/" + rest
        if path == "/_stats" and request.method == "GET":
            return await exchange.send_json(200, self.stats())
        if path == "/_reset" and request.method == "POST":
            self.reset()
            return await exchange.send_json(200, {"reset": True})
        if path == "/_script" and request.method == "POST":
            return await self.script(request, exchange, prefix)
        if path == "/_release" and request.method == "POST":
            return await self.release(request, exchange, prefix)
        if request.method == "GET" and path.endswith("/models"):
            return await self.models(request, exchange, _list_wire(path, request.headers), prefix)
        if request.method == "POST":
            if path.endswith("/chat/completions"):
                return await self.chat(request, exchange, OpenAIWire(), path, prefix)
            if path.endswith("/embeddings"):
                return await self.embeddings(request, exchange, prefix)
            if path.endswith("/messages"):
                return await self.chat(request, exchange, AnthropicWire(), path, prefix)
            if path.endswith((":streamGenerateContent", ":generateContent")):
                return await self.chat(request, exchange, GeminiWire(), path, prefix)
        await exchange.send_json(404, {"error": {"message": f"The fake server has no {request.method} {path}."}})

    def _enter(self, scenario: Scenario, request: Request) -> Counter:
        counter = self.scenarios.setdefault(scenario.key, Counter())
        counter.enter()
        self.total.enter()
        counter.last_request = {
            "method": request.method,
            "path": request.path,
            "query": request.query,
            "headers": request.headers,
            "body": request.json(),
            # The body exactly as sent (decoded), so a test can hold a wire body to its bytes.
            "raw": request.body.decode("utf-8", "replace"),
        }
        counter.recent = [*counter.recent[-(RECENT - 1) :], counter.last_request["body"]]
        return counter

    def _exit(self, counter: Counter) -> None:
        counter.in_flight -= 1
        self.total.in_flight -= 1

    async def script(self, request: Request, exchange: Exchange, prefix: str) -> None:
        body = request.json()
        model, replies = body.get("model"), body.get("replies")
        if not isinstance(model, str) or not model or not isinstance(replies, list):
            return await exchange.send_json(400, {"error": {"message": 'Send {"model": "…", "replies": [...]}.'}})
        key = f"{prefix}|{model}" if prefix else model
        try:
            queued = self.scripts.add(key, replies)
        except ValueError as exc:
            return await exchange.send_json(400, {"error": {"message": str(exc)}})
        await exchange.send_json(200, {"model": model, "queued": queued})

    async def release(self, request: Request, exchange: Exchange, prefix: str) -> None:
        """Let `count` (1) of the held answers of a `hold` scenario go, the oldest first: a test decides when each
        answer ends, so it can see what the client does between one end and the next, whatever the machine's load."""
        body = request.json()
        model, count = body.get("model"), body.get("count", 1)
        if not isinstance(model, str) or not model or not isinstance(count, int) or count < 1:
            return await exchange.send_json(400, {"error": {"message": 'Send {"model": "…", "count": n}.'}})
        held = self.held.setdefault(f"{prefix}|{model}" if prefix else model, asyncio.Semaphore(0))
        for _ in range(count):
            held.release()
        await exchange.send_json(200, {"model": model, "released": count})

    async def models(self, request: Request, exchange: Exchange, wire: Wire, prefix: str) -> None:
        async def respond(scenario: Scenario) -> None:
            await exchange.send_json(200, wire.models())

        await self._serve(request, exchange, wire, MODELS_KEY, prefix, respond)

    async def chat(self, request: Request, exchange: Exchange, wire: Wire, path: str, prefix: str) -> None:
        body = request.json()
        respond = partial(self._answer, request, exchange, wire, body)
        try:
            model = with_prompt_options(wire.model(body, path), wire.prompt(body))
        except ValueError as exc:
            return await exchange.send_json(400, wire.error(400, str(exc), "invalid_request_error"))
        await self._serve(request, exchange, wire, model, prefix, respond)

    async def embeddings(self, request: Request, exchange: Exchange, prefix: str) -> None:
        """OpenAI's `/v1/embeddings` (lab/fake_llm/embeddings.py); the model's options (a fault) apply as for chat."""
        body = request.json()

        async def respond(scenario: Scenario) -> None:
            status, payload = embeddings_response(body)
            await exchange.send_json(status, payload)

        await self._serve(request, exchange, OpenAIWire(), str(body.get("model", "")), prefix, respond)

    async def _serve(
        self,
        request: Request,
        exchange: Exchange,
        wire: Wire,
        model: str,
        prefix: str,
        respond: Callable[[Scenario], Awaitable[None]],
    ) -> None:
        """Count the request, apply a status fault if this one should fail, else let `respond` answer."""
        try:
            scenario = parse_scenario(model, prefix)
        except ValueError as exc:
            return await exchange.send_json(400, wire.error(400, str(exc), "invalid_request_error"))
        counter = self._enter(scenario, request)
        try:
            faulty = bool(scenario.fault) and (scenario.fail_times == 0 or counter.requests <= scenario.fail_times)
            if scenario.fault_every:
                faulty = bool(scenario.fault) and counter.requests % scenario.fault_every == 0
            if faulty:
                counter.faults += 1
            if faulty and scenario.status_fault:
                await self._status_fault(request, exchange, wire, scenario)
            else:
                await respond(scenario if faulty else replace(scenario, fault=""))
            counter.completed += 1
        except ClientGone:
            counter.disconnected += 1
            raise
        finally:
            self._exit(counter)

    async def _status_fault(self, request: Request, exchange: Exchange, wire: Wire, scenario: Scenario) -> None:
        status = scenario.status_fault
        if scenario.fault == "spend_limit":
            message, kind = (
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
            )
        else:
            message, kind = (
                f"Fake {reason_phrase(status).lower()}.",
                "rate_limit_exceeded" if status == 429 else "server_error",
            )
        headers = {}
        if scenario.retry_after >= 0:
            headers["retry-after"] = f"{scenario.retry_after:g}"
        if scenario.retry_after_ms >= 0:
            headers["retry-after-ms"] = str(scenario.retry_after_ms)
        await exchange.send_json(status, wire.error(status, _echo_key(message, request), kind), headers)

    async def _answer(self, request: Request, exchange: Exchange, wire: Wire, body: dict, scenario: Scenario) -> None:
        if scenario.hold:
            await self.held.setdefault(scenario.key, asyncio.Semaphore(0)).acquire()
        refused = [name for name in scenario.refuse.split(",") if name and wire.sets(body, name)]
        if refused:
            message = f"Unsupported parameter: '{refused[0]}' is not supported with this model."
            return await exchange.send_json(400, wire.error(400, message, "invalid_request_error"))
        scripted = self.scripts.take(scenario.key, wire.prompt(body))
        if scripted is not None and "status" in scripted:
            message = str(scripted.get("message") or "Scripted error.")
            return await exchange.send_json(scripted["status"], wire.error(scripted["status"], message, "scripted"))
        if scripted is not None:
            scenario = replace(scenario, text=scripted["text"])
        schema = wire.schema(body)
        if schema is not None and not scenario.text:
            # A schema-constrained reply: JSON that validates (or, asked for, one that does not), in pieces.
            reply = schema_reply(schema, scenario.json == "invalid")
            scenario = replace(scenario, text=reply)
        tokens, finish = scenario.answer_tokens(), "stop"
        limit = wire.max_tokens(body)
        if isinstance(limit, int) and 0 < limit < len(tokens):
            tokens, finish = tokens[:limit], "length"
        usage = (wire.input_tokens(body), len(tokens)) if scenario.usage else None
        if wire.streaming(body, request.query):
            await self._stream(request, exchange, wire, scenario, body, tokens, finish, usage)
        else:
            await self._complete(request, exchange, wire, scenario, body, tokens, finish, usage)

    async def _stream(self, request, exchange, wire, scenario, body, tokens, finish, usage) -> None:
        # Each token is due at a time fixed from the start (first token + index × token_ms), not a pause after the
        # one before: pauses add up their lateness, so an answer streamed beside 60 others took tens of
        # milliseconds longer than one alone, a slowness of this server's, not of its client's.
        first_token_at = asyncio.get_running_loop().time() + scenario.ttft_ms / 1000
        await exchange.start_stream()
        for frame in wire.stream_head(scenario.model, usage[0] if usage else None):
            await exchange.send_chunk(frame)
        await exchange.pause_until(first_token_at)
        if scenario.tool:
            for frame in tool_call_frames(wire, scenario.model, scenario.tool, scenario.args, usage):
                await exchange.send_chunk(frame)
            return await exchange.end_stream()
        json_tool = wire.schema_tool(body) if isinstance(wire, AnthropicWire) else None
        if json_tool:
            for frame in json_tool_head(json_tool):
                await exchange.send_chunk(frame)
        strike = scenario.strike_at(len(tokens)) if scenario.fault else None
        due: list[bytes] = []  # frames whose time has come, written together before the next wait
        loop = asyncio.get_running_loop()
        for index, token in enumerate([*tokens, None]):
            if index == strike:
                await exchange.send_chunks(due)
                return await self._stream_fault(request, exchange, wire, scenario)
            if token is None:
                break
            if index and (at := first_token_at + index * scenario.token_ms / 1000) > loop.time():
                await exchange.send_chunks(due)
                due = []
                await exchange.pause_until(at)
            token = scenario.sent_token(index, token)
            due.append(json_tool_delta(token) if json_tool else wire.stream_delta(scenario.model, token))
        await exchange.send_chunks([*due, *wire.stream_tail(scenario.model, body, finish, usage)])
        await exchange.end_stream()

    async def _stream_fault(self, request, exchange, wire, scenario) -> None:
        if scenario.fault == "mid_stream":
            message = _echo_key("Fake upstream error in the middle of the answer.", request)
            await exchange.send_chunk(wire.stream_error(scenario.model, message))
            await exchange.end_stream()
        elif scenario.fault == "drop":
            exchange.drop()
        else:  # stall: say nothing more until the client gives up
            await exchange.until_client_leaves()

    async def _complete(self, request, exchange, wire, scenario, body, tokens, finish, usage) -> None:
        await exchange.pause((scenario.ttft_ms + scenario.token_ms * max(len(tokens) - 1, 0)) / 1000)
        if scenario.fault == "stall":
            await exchange.until_client_leaves()
        if scenario.fault == "drop":
            return exchange.drop()
        if scenario.fault == "mid_stream":
            message = _echo_key("Fake upstream error.", request)
            return await exchange.send_json(500, wire.error(500, message, "server_error"))
        if scenario.tool:
            reply = tool_call_completion(wire, scenario.model, scenario.tool, scenario.args, usage)
            return await exchange.send_json(200, reply)
        schema = wire.schema(body)
        text = "".join(tokens)
        if schema is not None and not scenario.text:
            text = json.dumps(sample_for(schema))
        await exchange.send_json(200, wire.completion(scenario.model, body, text, finish, usage))


def _list_wire(path: str, headers: dict[str, str]) -> Wire:
    """GET …/models is the same path for OpenAI and Anthropic: Anthropic clients send `anthropic-version`."""
    if "v1beta" in path:
        return GeminiWire()
    return AnthropicWire() if "anthropic-version" in headers else OpenAIWire()


def _echo_key(message: str, request: Request) -> str:
    """Like a careless provider, put the caller's key in the error, so tests prove clients scrub it."""
    key = request.api_key()
    return f"{message} Request made with key {key}." if key else message


class ServerThread:
    """The fake server on its own event loop in a background thread (for tests); `stop()` shuts it down."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host, self.port = host, port
        self.server = FakeLLMServer()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name="fake-llm", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("The fake LLM server did not start within 10 s.")
        return self

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        listener = await serve(self.server, self.host, self.port)
        self.port = listener.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopping.wait()
        listener.close()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(5)


async def serve(server: FakeLLMServer, host: str, port: int) -> asyncio.Server:
    # A deep backlog: benchmarks open hundreds of connections at once.
    return await asyncio.start_server(server.handle, host, port, backlog=2048, limit=MAX_HEAD)
