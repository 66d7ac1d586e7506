"""The limiter's Lua scripts sent to Redis in order, many in one round trip (a pipeline on one connection).

Why: at 200 calls a second every call of a batch run made two round trips of its own: joining its connection's
queue and freeing its slot. On the busy loop these took 18 ms and 16 ms at the median (60 and 50 ms at p90),
and the call's place under the command's --concurrency stayed taken meanwhile. Here the scripts issued while a
batch is on its way go together as the next batch, in the order they were issued, so Redis runs them in that
order, and the first batch waits for the loop's steps already queued, so that a freed slot and the ask it makes
room for go together. A slot's release therefore need not be awaited (`send`): whatever this process asks after
it, such as the next call's take, is answered after it.

A script the server does not know (after a restart or SCRIPT FLUSH) is loaded and run again, after the rest of
its batch. A failed batch fails each of its callers; a script sent without waiting logs its failure, and what it
would have freed comes back when its lease runs out.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError

logger = logging.getLogger(__name__)


class Script:
    """A Lua script, sent by its SHA and loaded again when the server does not know it (a restart, SCRIPT FLUSH):
    what redis-py's Script does, without its copies, import and pipeline check on every call."""

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class _Command:
    script: Script
    keys: tuple[bytes, ...]
    args: tuple[str | int, ...]
    reply: asyncio.Future


class ScriptPipe:
    """One event loop's scripts for one Redis client, sent in order by one task, a batch at a time."""

    def __init__(self, client: aioredis.Redis):
        self.client = client
        self._waiting: list[_Command] = []
        self._sender: asyncio.Task | None = None

    async def call(self, script: Script, keys: tuple[bytes, ...], *args: str | int):
        """Run the script after every script issued before it, and return its reply."""
        return await self._issue(script, keys, args)

    def send(self, script: Script, keys: tuple[bytes, ...], *args: str | int) -> None:
        """Run the script after every script issued before it, without waiting for its reply."""
        self._issue(script, keys, args).add_done_callback(_log_failure)

    async def flushed(self) -> None:
        """Until every script issued so far has been answered."""
        while self._sender is not None and not self._sender.done():
            await asyncio.shield(self._sender)

    def _issue(self, script: Script, keys: tuple[bytes, ...], args: tuple) -> asyncio.Future:
        reply = asyncio.get_running_loop().create_future()
        self._waiting.append(_Command(script, keys, args, reply))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_waiting())
        return reply

    async def _send_waiting(self) -> None:
        # The steps already queued on the loop run first, and what they issue goes in this batch. A call that frees
        # its slot wakes the call waiting for its place, which then asks for a slot: were the release sent at once,
        # that ask would wait for the release's round trip before going (at C = 20, from a call's end to the next
        # request 9.3 → 5.8 ms on average, docs/benchmarks.md).
        await asyncio.sleep(0)
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                replies = await self._run(batch)
            except Exception as exc:  # Redis down, a broken connection: each caller hears it
                replies = [exc] * len(batch)
            except BaseException:  # the loop is closing: nothing more will be sent
                for command in [*batch, *self._waiting]:
                    command.reply.cancel()
                raise
            for command, reply in zip(batch, replies, strict=True):
                if command.reply.done():  # its caller stopped waiting (cancelled)
                    continue
                if isinstance(reply, Exception):
                    command.reply.set_exception(reply)
                else:
                    command.reply.set_result(reply)

    async def _run(self, batch: list[_Command]) -> list:
        replies = await self._pipeline(batch)
        unknown = [index for index, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if unknown:
            for source in {batch[index].script.source for index in unknown}:
                await self.client.script_load(source)
            for index, reply in zip(unknown, await self._pipeline([batch[i] for i in unknown]), strict=True):
                replies[index] = reply
        return replies

    async def _pipeline(self, batch: list[_Command]) -> list:
        async with self.client.pipeline(transaction=False) as pipe:
            for command in batch:
                pipe.execute_command("EVALSHA", command.script.sha, len(command.keys), *command.keys, *command.args)
            return await pipe.execute(raise_on_error=False)


def _log_failure(reply: asyncio.Future) -> None:
    if not reply.cancelled() and (exc := reply.exception()) is not None:
        logger.warning("A limiter script sent without waiting failed; its lease frees what it held", exc_info=exc)
