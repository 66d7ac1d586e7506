"""The channel layer with fewer trips to Redis (lab.channel_layer) keeps channels_redis's promises, on real Redis:
every member of a group gets every event once and in order, bursts larger than one receive's batch included."""

import asyncio

import pytest
from channels.layers import get_channel_layer
from django.conf import settings

from lab.channel_layer import RECEIVE_BATCH, RedisChannelLayer

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the Redis channel layer needs REDIS_URL")


def fresh_layer() -> RedisChannelLayer:
    # A layer of its own per test (as each process has one), with the configured backend and settings.
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)
    config = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    return RedisChannelLayer(**config)


async def test_a_burst_reaches_every_member_of_the_group_once_and_in_order():
    layer = fresh_layer()
    first, second = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("burst", first)
    await layer.group_add("burst", second)
    count = RECEIVE_BATCH * 2 + 7  # more than two receives' batches
    for n in range(count):
        await layer.group_send("burst", {"type": "push", "n": n})

    async with asyncio.timeout(30):
        got_first = [(await layer.receive(first))["n"] for _ in range(count)]
        got_second = [(await layer.receive(second))["n"] for _ in range(count)]

    assert got_first == got_second == list(range(count))
    await layer.group_discard("burst", first)
    await layer.group_discard("burst", second)
    await layer.close_pools()


async def test_a_message_to_one_channel_still_arrives_alone():
    layer = fresh_layer()
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "push", "n": 1})

    async with asyncio.timeout(10):
        assert (await layer.receive(channel))["n"] == 1
    await layer.close_pools()
