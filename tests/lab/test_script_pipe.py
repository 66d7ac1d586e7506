"""The limiter's scripts sent in order, many in one round trip, and calls of one script that follow each other on
the same keys as one EVALSHA (lab/engine/script_pipe.py), against the real Redis server."""

import asyncio
import uuid

import redis.asyncio as aioredis
from django.conf import settings

from lab.engine.script_pipe import Script, ScriptPipe
from tests.lab.test_limiter import commands_sent

# Each call's own argument after the shared one, joined to it; and the keys it was given, to tell groups apart.
JOIN = "local r = {} for i = 2, #ARGV do r[#r + 1] = KEYS[1] .. ARGV[1] .. ARGV[i] end return r"


def pipe() -> ScriptPipe:
    return ScriptPipe(
        aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, client_name=f"test-{uuid.uuid4().hex}")
    )


async def test_calls_sharing_a_script_keys_and_leading_arguments_go_as_one_command_each_with_its_own_reply():
    scripts = pipe()
    # A source of its own, so the first batch also loads it.
    join = Script(f"-- {uuid.uuid4().hex}\n{JOIN}", shared=1)
    try:
        await scripts.call(join, (b"k",), "a", "0")  # connected, the script loaded
        async with commands_sent(scripts) as sent:
            replies = await asyncio.gather(
                scripts.call(join, (b"k",), "a", "1"),
                scripts.call(join, (b"k",), "a", "2"),
                scripts.call(join, (b"k",), "b", "3"),  # another shared argument: a command of its own
                scripts.call(join, (b"j",), "b", "4"),  # other keys: another
                scripts.call(join, (b"j",), "b", "5"),
                scripts.call(join, (b"k",), "a", "6"),  # not next to the first two: order is kept, not regrouped
            )
    finally:
        await scripts.client.aclose()
    assert replies == [b"ka1", b"ka2", b"kb3", b"jb4", b"jb5", b"ka6"]
    assert sent == ["EVALSHA"] * 4


async def test_a_script_that_replies_once_gives_every_call_that_reply():
    scripts = pipe()
    counted = Script(f"-- {uuid.uuid4().hex}\nreturn #ARGV", shared=0, one_reply=True)
    try:
        replies = await asyncio.gather(*(scripts.call(counted, (b"k",), n) for n in range(5)))
    finally:
        await scripts.client.aclose()
    assert replies == [5] * 5  # one command carried all five


async def test_a_failing_merged_command_fails_each_of_its_calls_and_no_other():
    scripts = pipe()
    failing = Script(f"-- {uuid.uuid4().hex}\nreturn redis.error_reply('no')", shared=0)
    fine = Script(f"-- {uuid.uuid4().hex}\nreturn 1")
    try:
        replies = await asyncio.gather(
            scripts.call(failing, (b"k",), 1),
            scripts.call(failing, (b"k",), 2),
            scripts.call(fine, (b"k",)),
            return_exceptions=True,
        )
    finally:
        await scripts.client.aclose()
    assert [type(reply).__name__ for reply in replies[:2]] == ["ResponseError", "ResponseError"]
    assert replies[2] == 1
