"""Shared httpx plumbing for the HTTP adapters: SSE parsing, retries with backoff, readable errors without keys.

Retries happen only before the first event reaches the caller: once an answer has started, a failure is
reported as a `StreamError` that keeps the partial text, never silently restarted.
"""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import json
import logging
import random
import re
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import aclosing, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol
from urllib.parse import quote, quote_plus

import httpx

from ..connection_rules import api_key_problem
from .base import ConnectionConfig, Finish, ProviderError, StreamError, StreamEvent

logger = logging.getLogger("lab.providers")

# Long reads on purpose: reasoning models may think for minutes before the first token. The engine's
# per-variant timeout is the real limit; this one only catches a connection that went silent.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=30.0)

RETRY_STATUSES = frozenset({408, 409, 429, 529})  # and every 5xx


class AttemptGate(Protocol):
    """The connection scheduler's turn of the call in progress (lab.engine.limiter.Slot)."""

    async def attempt(self) -> None: ...

    async def rate_limited(self, delay_s: float) -> None: ...

    async def succeeded(self) -> None: ...


# Set by the engine around one call: each retry asks it for an rpm token (the first attempt got one with the
# call's turn), and a 429 slows the whole connection down through it. None outside the engine (no limits).
attempt_gate: ContextVar[AttemptGate | None] = ContextVar("attempt_gate", default=None)

# A 429 saying one of these is a spend/quota/credit limit: waiting will not help, so it is not retried.
# Bare "quota" is not enough: Gemini says "quota" for its per-minute rate limits too.
SPEND_LIMIT_MARKERS = (
    "insufficient_quota",
    "exceeded your current quota",
    "spend limit",
    "spending limit",
    "credit",
    "billing",
    "budget",
    "perday",
)

REDACTED = "[redacted]"
_KEY_IN_QUERY = re.compile(r"([?&](?:key|api_key|apikey|access_token|token)=)[^&\s\"']+", re.IGNORECASE)
# A bearer token runs to the end of its line or quote: a key with a space in it (saved before keys were checked)
# must not leave its tail behind.
_BEARER = re.compile(r"(Bearer\s+)[^\r\n\"']+", re.IGNORECASE)
_SHORTEST_PIECE = 4  # shorter pieces of a key split at whitespace are too common to redact on their own


def secret_forms(secret: str) -> list[str]:
    """Every spelling a key can take in an error: as is, URL-encoded (both ways), JSON- and repr-escaped, as UTF-8
    bytes' repr, and each of its whitespace-separated pieces; longest first, so no form is half-replaced."""
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogatepass"))[2:-1],
        *(piece for piece in secret.split() if len(piece) >= _SHORTEST_PIECE),
    }
    return sorted((form for form in forms if form), key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret (in every form it can take) and anything that looks like a key in a URL removed."""
    for secret in secrets:
        if secret:
            for form in secret_forms(secret):
                text = text.replace(form, REDACTED)
    text = _KEY_IN_QUERY.sub(lambda m: m.group(1) + REDACTED, text)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3
    base_delay: float = 0.5  # seconds; doubles each retry, with jitter
    max_delay: float = 8.0
    max_retry_after: float = 20.0  # a provider asking for a longer wait gets an error instead of a retry

    def backoff(self, retry: int) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2**retry)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """The wait a provider advises: `retry-after-ms` (OpenAI) first, then `retry-after` (seconds or a date)."""
    if value := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    if value := headers.get("retry-after"):
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if email.utils.parsedate_tz(value) else None
            if parsed is not None:
                return max(0.0, parsed.timestamp() - time.time())
    return None


_RETRY_DELAY_IN_BODY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


def body_retry_delay(body: str) -> float | None:
    """Gemini advises its wait in the error body (`RetryInfo.retryDelay`, e.g. "37s") rather than a header."""
    match = _RETRY_DELAY_IN_BODY.search(body)
    return float(match.group(1)) if match else None


def is_spend_limit(body: str) -> bool:
    lowered = body.lower()
    return any(marker in lowered for marker in SPEND_LIMIT_MARKERS)


def provider_message(body: str) -> str:
    """The human part of an error body in any of the providers' shapes, else the start of the raw text."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and data:  # Gemini's streaming endpoint wraps errors in a list
        data = data[0]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or error.get("type")
            if message:
                return str(message)
        elif isinstance(error, str):
            return error
        if isinstance(data.get("detail"), str):
            return data["detail"]
    return " ".join(body.split())[:300] or "(no details)"


class StreamParser(Protocol):
    """Turns one protocol's SSE events into stream events; `end` runs when the server closes the stream."""

    def feed(self, event: SSEEvent) -> list[StreamEvent]: ...

    def end(self) -> list[StreamEvent]: ...


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    """Server-sent events from text lines: comment lines (`: keep-alive`) are skipped, data lines joined."""
    event, data = "", []
    async for line in lines:
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:  # a last event without its blank line still counts
        yield SSEEvent(event or "message", "\n".join(data))


_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """One verified TLS context for every client of the process: building one costs about 25 ms (reading the CA
    bundle), a client none."""
    global _tls
    with _tls_lock:  # a caller while another builds it waits for that one rather than building a second
        if _tls is None:
            _tls = httpx.create_ssl_context()
        return _tls


def tls_context_soon() -> None:
    """Build the TLS context on a thread of its own now, for a process that will need it soon (the experiment
    command): reading the CA bundle releases the GIL, so the context costs the process's main thread nothing
    where it would otherwise cost its first requests (or a model catalog's fetch) 25 ms."""
    threading.Thread(target=tls_context, name="tls-context", daemon=True).start()


class _Retry(Exception):
    def __init__(self, delay: float, status: int | None = None):
        self.delay, self.status = delay, status


async def _before_attempt(attempt: int) -> None:
    if attempt and (gate := attempt_gate.get()) is not None:
        await gate.attempt()


async def _after_retry(retry: _Retry) -> None:
    if retry.status == 429 and (gate := attempt_gate.get()) is not None:
        await gate.rate_limited(retry.delay)
    await asyncio.sleep(retry.delay)


async def _answered() -> None:
    if (gate := attempt_gate.get()) is not None:
        await gate.succeeded()


class HttpAdapter:
    """The shared half of every HTTP adapter: connection, optional shared client, retries and error text."""

    default_base_url = ""

    def __init__(
        self, config: ConnectionConfig, client: httpx.AsyncClient | None = None, retry: RetryPolicy | None = None
    ):
        self.config = config
        self.retry = retry or RetryPolicy()
        self._client = client

    @property
    def base_url(self) -> str:
        return (self.config.base_url or self.default_base_url).rstrip("/")

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def scrub(self, text: str) -> str:
        return scrub(text, [self.config.api_key])

    def checked_headers(self) -> dict[str, str]:
        """The request's headers; a key that no header can carry (saved before keys were checked) is refused here
        with a readable error, rather than failing inside the HTTP client for every page that asks this provider."""
        if self.config.api_key and (problem := api_key_problem(self.config.api_key)):
            raise ProviderError(f"The API key of {self.config.name} cannot be sent: {problem} Give it a new key.")
        return self.headers()

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """The engine's shared client when it gave one, else a private one closed afterwards."""
        if self._client is not None:
            yield self._client
            return
        async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, verify=tls_context()) as client:
            yield client

    async def request_json(self, method: str, url: str, *, json_body: dict | None = None, params=None) -> Any:
        """One JSON request with retries; raises ProviderError with a readable, key-free message."""
        for attempt in itertools.count():  # ends: the last allowed attempt raises ProviderError
            await _before_attempt(attempt)
            try:
                async with self.client() as client:
                    try:
                        response = await client.request(
                            method, url, json=json_body, params=params, headers=self.checked_headers()
                        )
                    except httpx.TransportError as exc:
                        raise self._after_transport_error(exc, attempt) from None
                    if response.status_code >= 400:
                        raise self._after_status(response.status_code, response.headers, response.text, attempt)
                    await _answered()
                    try:
                        return response.json()
                    except ValueError:
                        raise ProviderError(
                            f"{self.config.name} sent a response that is not JSON.", response.status_code
                        ) from None
            except _Retry as retry:
                await _after_retry(retry)

    async def stream_events(
        self, url: str, body: dict, parser_factory: Callable[[], StreamParser], params=None
    ) -> AsyncIterator[StreamEvent]:
        """POST `body` and yield the parsed events; closing the iterator closes the HTTP connection at once."""
        for attempt in itertools.count():  # ends: the last allowed attempt raises ProviderError
            await _before_attempt(attempt)
            started = False
            try:
                async with self.client() as client:
                    try:
                        async with client.stream(
                            "POST", url, json=body, params=params, headers=self.checked_headers()
                        ) as response:
                            if response.status_code >= 400:
                                text = (await response.aread()).decode("utf-8", errors="replace")
                                raise self._after_status(response.status_code, response.headers, text, attempt)
                            await _answered()
                            parser = parser_factory()
                            async with aclosing(iter_sse(response.aiter_lines())) as events:
                                async for sse in events:
                                    for event in self._parse(partial(parser.feed, sse)):
                                        started = True
                                        yield event
                                        if isinstance(event, Finish | StreamError):
                                            return
                            for event in self._parse(parser.end):
                                started = True
                                yield event
                            return
                    except httpx.TransportError as exc:
                        if started:
                            yield StreamError(self._transport_message(exc))
                            return
                        raise self._after_transport_error(exc, attempt) from None
            except _Retry as retry:
                await _after_retry(retry)

    def _parse(self, produce: Callable[[], list[StreamEvent]]) -> list[StreamEvent]:
        """Run a parser step; a malformed chunk becomes a StreamError and every error message is scrubbed."""
        try:
            events = produce()
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            return [StreamError(f"{self.config.name} sent a chunk that could not be read.")]
        return [StreamError(self.scrub(e.message), e.status) if isinstance(e, StreamError) else e for e in events]

    def _after_status(self, status: int, headers: httpx.Headers, body: str, attempt: int) -> Exception:
        """What to raise after an error status: _Retry with the wait, or ProviderError when retrying is pointless."""
        message = self.scrub(f"{self.config.name} answered HTTP {status}: {provider_message(body)}")
        if status == 429 and is_spend_limit(body):
            return ProviderError(f"{message} (a spend or quota limit: not retried)", status)
        if status not in RETRY_STATUSES and status < 500:
            return ProviderError(message, status)
        if attempt >= self.retry.retries:
            return ProviderError(f"{message} (gave up after {attempt} retries)", status)
        advised = retry_after_seconds(headers)
        if advised is None:
            advised = body_retry_delay(body)
        if advised is not None and advised > self.retry.max_retry_after:
            return ProviderError(
                f"{message} (it asks to wait {advised:.0f} s, longer than the {self.retry.max_retry_after:.0f} s "
                "the lab waits)",
                status,
            )
        delay = advised if advised is not None else self.retry.backoff(attempt)
        return self._retry(message, delay, attempt, status)

    def _after_transport_error(self, exc: httpx.TransportError, attempt: int) -> Exception:
        message = self._transport_message(exc)
        if attempt >= self.retry.retries:
            return ProviderError(f"{message} (gave up after {attempt} retries)")
        return self._retry(message, self.retry.backoff(attempt), attempt)

    def _retry(self, message: str, delay: float, attempt: int, status: int | None = None) -> _Retry:
        logger.warning("%s (retrying in %.2f s, retry %d of %d)", message, delay, attempt + 1, self.retry.retries)
        return _Retry(delay, status)

    def _transport_message(self, exc: httpx.TransportError) -> str:
        host = httpx.URL(self.base_url).netloc.decode() if self.base_url else "?"
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            what = f"could not connect to {self.config.name} ({host})"
        elif isinstance(exc, httpx.ReadTimeout):
            what = f"{self.config.name} ({host}) went silent (read timeout)"
        else:
            what = f"the connection to {self.config.name} ({host}) broke"
        detail = str(exc) or type(exc).__name__
        return self.scrub(f"{what[0].upper()}{what[1:]}: {detail}")
