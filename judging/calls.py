"""One judge call through the provider adapters: temperature 0 (dropped once the model refuses it), the JSON
schema, the connection's shared limits, a timeout, and a ledger of every call with its tokens and cost.

`ask` retries a reply that cannot be read once, with a fresh order of the answers; what still fails is
returned as problems per key for the caller to drop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
from django.core.exceptions import ValidationError

from lab.catalog import model_info_for
from lab.engine.fanout import limit_for
from lab.engine.limiter import INTERACTIVE, Limiter, QueueDeadlineExceeded
from lab.engine.queue_deadlines import queue_deadline_s, waited_message
from lab.models import Workspace
from lab.providers.answer import cost_of, estimate_tokens, stored_cost
from lab.providers.base import ChatRequest, ConnectionConfig, ModelInfo, ProviderError
from lab.providers.http import attempt_gate
from lab.providers.params import unsupported_params
from lab.providers.registry import get_adapter

from .images import with_request_images
from .prompts import JudgePrompt
from .replies import BadReply, Read

logger = logging.getLogger(__name__)

CALL_TIMEOUT_S = 120.0  # one judge reply; reasoning models may think for a while
ATTEMPTS = 2  # a reply that cannot be read gets exactly one retry


@dataclass(frozen=True)
class JudgeModel:
    """The judge's model, resolved once (ORM) so the async calls never touch the database."""

    model_id: str  # `<connection>::<model>`
    kind: str
    config: ConnectionConfig
    model: str  # the provider's name for it
    info: ModelInfo | None
    private: bool = False  # on a connection private to one person (lab.connection_env)


def judge_model_resolve(*, workspace: Workspace, model_id: str) -> JudgeModel:
    """The judge model of a workspace; ValidationError({"model": …}) when it cannot judge."""
    try:
        connection, info = model_info_for(workspace, model_id.strip())
    except ValidationError as exc:
        raise ValidationError({"model": exc.messages}) from None
    # A simulated judge (offline demos) replies with an instance of the call's JSON schema: scores drawn at
    # random, deterministically, and labelled simulated like its answers.
    return JudgeModel(
        model_id=model_id.strip(),
        kind=connection.kind,
        config=ConnectionConfig.from_connection(connection),
        model=model_id.strip().split("::", 1)[1],
        info=info,
        private=connection.owner_id is not None,
    )


def refuses_temperature(error: ProviderError) -> bool:
    """A provider's 400 about the temperature (reasoning models accept only their default)."""
    return error.status in (400, 422) and "temperature" in str(error).lower()


@dataclass
class Ledger:
    """Every call of one verdict (or one pointwise score): counts, tokens, cost and a log to show and check."""

    info: ModelInfo | None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cost(self) -> Decimal | None:
        return stored_cost(cost_of(self.info, self.input_tokens, self.output_tokens))


@dataclass(frozen=True)
class Ask:
    """One question to the judge: `build(order)` makes the prompt, `read(text, order)` reads the reply.

    `orders` holds the order of the answers for the first attempt and for the retry (drawn up front, so the
    randomness is reproducible however the calls interleave).
    """

    kind: str  # "relative", "pointwise", "pairwise", "head_to_head"
    subject: str  # the metric, the letter or the pair asked about (for the log)
    orders: tuple[tuple[str, ...], tuple[str, ...]]
    build: Callable[[tuple[str, ...]], JudgePrompt]
    read: Callable[[str, tuple[str, ...]], Read]


class JudgeClient:
    """Asks one judge model; shared by all calls of a verdict so the temperature lesson is learnt once."""

    def __init__(
        self,
        judge: JudgeModel,
        *,
        client: httpx.AsyncClient,
        limiter: Limiter,
        concurrency: int = 4,
        lane: str = INTERACTIVE,
        images: list[dict] | None = None,
    ):
        self.judge, self.lane = judge, lane
        # The request's images (with their bytes), shown after each call's text; only for a judge that reads them.
        self.images = images or []
        self.adapter = get_adapter(judge.config, client)
        self.limiter = limiter
        self.ledger = Ledger(info=judge.info)
        self.send_temperature = not unsupported_params(judge.model_id, judge.info, {"temperature": 0})
        self._gate = asyncio.Semaphore(concurrency)

    async def ask(self, ask: Ask) -> Read:
        """Values per key from the first good reply for that key; problems for keys that failed twice (the key
        "*" when the whole reply failed)."""
        values: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for attempt, order in enumerate(ask.orders[:ATTEMPTS], start=1):
            entry = {"kind": ask.kind, "subject": ask.subject, "attempt": attempt, "order": list(order)}
            self.ledger.log.append(entry)
            try:
                text = await self._complete(ask.build(order), entry)
                read = ask.read(text, order)
            except ProviderError as exc:
                # The adapter already retried what is worth retrying (429, 5xx); another attempt would not help.
                entry["outcome"] = f"error: {exc}"
                problems = {"*": str(exc)}
                break
            except BadReply as exc:
                entry["outcome"] = f"bad reply: {exc}"
                problems = {"*": str(exc)}
                continue
            for key, value in read.values.items():
                values.setdefault(key, value)
            problems = {key: message for key, message in read.problems.items() if key not in values}
            entry["outcome"] = "ok" if not problems else "partly bad: " + "; ".join(problems.values())
            if not problems:
                break
        return Read(values=values, problems=problems)

    async def _complete(self, prompt: JudgePrompt, entry: dict[str, Any]) -> str:
        params: dict[str, Any] = {"temperature": 0} if self.send_temperature else {}
        try:
            return await self._send(prompt, params, entry)
        except ProviderError as exc:
            if not params or not refuses_temperature(exc):
                raise
            logger.info("Judge %s refused temperature 0; asking again without it.", self.judge.model_id)
            self.send_temperature = False
            entry["temperature_refused"] = str(exc)
            return await self._send(prompt, {}, entry)

    async def _send(self, prompt: JudgePrompt, params: dict[str, Any], entry: dict[str, Any]) -> str:
        messages = with_request_images(prompt.messages, self.images)
        request = ChatRequest(model=self.judge.model, messages=messages, params=params)
        self.ledger.calls += 1
        entry["calls"] = entry.get("calls", 0) + 1
        started = time.monotonic()
        slot = self.limiter.slot(
            limit_for(self.judge.config), lane=self.lane, queue_deadline_s=queue_deadline_s(self.lane)
        )
        try:
            async with self._gate, slot as turn:
                gate = attempt_gate.set(turn)  # each retry takes an rpm token; a 429 slows the connection
                try:
                    async with asyncio.timeout(CALL_TIMEOUT_S):  # from the request on, not the wait for a turn
                        completion = await self.adapter.complete(
                            request, json_schema=prompt.schema, model_info=self.judge.info
                        )
                except TimeoutError:
                    raise ProviderError(f"The judge gave no reply within {CALL_TIMEOUT_S:g} s.") from None
                finally:
                    attempt_gate.reset(gate)
        except QueueDeadlineExceeded as exc:
            message = waited_message(waited_s=exc.waited_s, connection=self.judge.config.name, ahead=exc.ahead)
            raise ProviderError(message) from None
        entry["ms"] = int((time.monotonic() - started) * 1000)
        usage = completion.usage
        prompt_text = "".join(message["content"] for message in prompt.messages)
        self.ledger.input_tokens += (
            usage.input_tokens if usage.input_tokens is not None else estimate_tokens(prompt_text)
        )
        self.ledger.output_tokens += (
            usage.output_tokens if usage.output_tokens is not None else estimate_tokens(completion.text)
        )
        return completion.text
