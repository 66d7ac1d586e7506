"""The limiter's Lua scripts sent to Redis in order, many in one round trip (a pipeline on one connection).

Why: at 200 calls a second every call of a batch run made two round trips of its own: joining its connection's
queue and freeing its slot. On the busy loop these took 18 ms and 16 ms at the median (60 and 50 ms at p90),
and the call's place under the command's --concurrency stayed taken meanwhile. Here the scripts issued while a
batch is on its way go together as the next batch, in the order they were issued, so Redis runs them in that
order, and the first batch waits for the loop's steps already queued, so that a freed slot and the ask it makes
room for go together. A slot's release therefore need not be awaited (`send`): whatever this process asks after
it, such as the next call's take, is answered after it.

Calls of one script that follow each other in a batch, on the same keys and with the same leading arguments, go
as one EVALSHA when the script takes many (`Script(…, shared=n)`: its arguments are the n shared ones, then each
call's own; it runs them in order as separate scripts would, and replies with a list, one reply a call, or with
the one reply of all). At 500
calls at once, a wave of answers frees hundreds of slots and asks for as many: one command each cost the loop
about 80 µs a call in redis-py, packing arguments and reading replies, besides the server's own work.

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

    def __init__(self, source: str, *, shared: int | None = None, one_reply: bool = False):
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()
        # Set for a script that runs many calls in one: how many leading arguments the calls must share (the rest
        # are each call's own, in order); it replies with a list of the calls' replies, or with `one_reply` for all.
        self.shared = shared
        self.one_reply = one_reply


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
        groups = _merged(batch)
        replies = await self._pipeline(groups)
        unknown = [index for index, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if unknown:
            for source in {groups[index][0].script.source for index in unknown}:
                await self.client.script_load(source)
            for index, reply in zip(unknown, await self._pipeline([groups[i] for i in unknown]), strict=True):
                replies[index] = reply
        # Each call's own reply: a merged call's list is split among its calls; a failure goes to each of them.
        answers = []
        for group, reply in zip(groups, replies, strict=True):
            if isinstance(reply, Exception) or group[0].script.one_reply:
                answers.extend([reply] * len(group))
            elif group[0].script.shared is None:
                answers.append(reply)
            else:
                if len(reply) != len(group):  # a script's bug: fail the batch's callers rather than leave them waiting
                    raise RuntimeError(f"{len(group)} calls of one script, {len(reply)} replies")
                answers.extend(reply)
        return answers

    async def _pipeline(self, groups: list[list[_Command]]) -> list:
        async with self.client.pipeline(transaction=False) as pipe:
            for group in groups:
                first = group[0]
                args = first.args if len(group) == 1 else _joined_args(group)
                pipe.execute_command("EVALSHA", first.script.sha, len(first.keys), *first.keys, *args)
            return await pipe.execute(raise_on_error=False)


def _merged(batch: list[_Command]) -> list[list[_Command]]:
    """The batch in order, each run of calls one EVALSHA can carry (the same script taking many, the same keys and
    shared arguments) as one group; every other call a group of its own."""
    groups: list[list[_Command]] = []
    for command in batch:
        shared = command.script.shared
        if shared is not None and groups:
            last = groups[-1][0]
            if (
                last.script is command.script
                and last.keys == command.keys
                and last.args[:shared] == command.args[:shared]
            ):
                groups[-1].append(command)
                continue
        groups.append([command])
    return groups


def _joined_args(group: list[_Command]) -> list:
    shared = group[0].script.shared
    args = list(group[0].args)
    for command in group[1:]:
        args.extend(command.args[shared:])
    return args


def _log_failure(reply: asyncio.Future) -> None:
    if not reply.cancelled() and (exc := reply.exception()) is not None:
        logger.warning("A limiter script sent without waiting failed; its lease frees what it held", exc_info=exc)
