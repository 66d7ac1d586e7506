"""channels_redis's layer with fewer trips to Redis per event: the same keys, the same semantics.

A streaming round sends an event every few tens of milliseconds, and every web process receives all
of its sockets' events from one Redis key, one after the other. channels_redis (pinned, see requirements.txt) pays
four round trips to Redis for each send (expire the group, read it, expire each channel, push) and four for each
receive (restore the backup, pop, back it up, clean the backup), and the receives of a process are serial: under
load its sockets fell behind the stream. Here a send is two trips (the group's expiry and read in one pipeline,
then one script that expires and pushes) and a process takes the events waiting for it (up to RECEIVE_BATCH) in
one script, then hands them over one by one with no trip at all; it waits on Redis (BZPOPMIN) only when nothing
is waiting.

A receive rides out a Redis outage: when Redis cannot be reached (after redis-py's own retries, see settings), it
tries again every RETRY_S until the failures have lasted OUTAGE_S; only then does the error reach the consumer,
which closes its socket so the page reconnects. Without this, a socket closed anywhere between half a second and
five into an outage, depending on what its receive was doing when Redis went away.

What a backup is for stays true: an event popped but not yet handed over (the receive was cancelled while its
answer was on the way) is put back in front of the queue by the next receive. Events handed over are dropped
from the backup by the next script instead of one trip each.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from channels_redis.core import RedisChannelLayer as BaseRedisChannelLayer

from .outages import REDIS_DOWN

logger = logging.getLogger(__name__)

# The events one receive takes at once from Redis; the rest of a burst waits there for the next one.
RECEIVE_BATCH = 100
# How long a receive keeps trying while Redis is unreachable (docs/operations.md), and how often.
OUTAGE_S = 5.0
RETRY_S = 0.5

# KEYS: the channels' keys; ARGV: their messages, then their capacities, then the time, the expiry and the cutoff
# before which a channel's messages have expired.
SEND_LUA = """
local over_capacity = 0
local current_time = ARGV[#ARGV - 2]
local expiry = ARGV[#ARGV - 1]
local cutoff = ARGV[#ARGV]
for i = 1, #KEYS do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, cutoff)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[i + #KEYS]) then
        redis.call('ZADD', KEYS[i], current_time, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""

# KEYS: the channel's key and its backup's; ARGV: how many to take, and 1 when the last batch may not have been
# handed over (its reply never arrived), which then goes back in front of the queue instead of being dropped.
RECEIVE_LUA = """
if ARGV[2] == '1' then
    local backed_up = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
    for i = #backed_up, 1, -2 do
        redis.call('ZADD', KEYS[1], backed_up[i], backed_up[i - 1])
    end
end
redis.call('DEL', KEYS[2])
local popped = redis.call('ZPOPMIN', KEYS[1], ARGV[1])
for i = 1, #popped, 2 do
    redis.call('ZADD', KEYS[2], popped[i + 1], popped[i])
end
return popped
"""


class RedisChannelLayer(BaseRedisChannelLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._taken: dict[str, collections.deque] = {}  # per channel key: popped, backed up, not yet handed over
        self._unsure: set[str] = set()  # channel keys whose last pop may have been lost on the way

    async def group_send(self, group, message):
        assert self.require_valid_group_name(group), "Group name not valid"
        key = self._group_key(group)
        connection = self.connection(self.consistent_hash(group))
        pipe = connection.pipeline(transaction=False)
        pipe.zremrangebyscore(key, min=0, max=int(time.time()) - self.group_expiry)
        pipe.zrange(key, 0, -1)
        _, members = await pipe.execute()
        channel_names = [member.decode("utf8") for member in members]
        by_connection, messages, capacities = self._map_channel_keys_to_connection(channel_names, message)
        for index, channel_keys in by_connection.items():
            args = [messages[k] for k in channel_keys] + [capacities[k] for k in channel_keys]
            args += [time.time(), self.expiry, int(time.time()) - int(self.expiry)]
            script = self.connection(index).register_script(SEND_LUA)
            over_capacity = await script(keys=channel_keys, args=args)
            if over_capacity > 0:
                logger.info("%s of %s channels over capacity in group %s", over_capacity, len(channel_names), group)

    async def receive(self, channel):
        # channels_redis leaves its receive state whole when Redis fails (buffers dropped, locks released), and an
        # event popped but not handed over is still in the backup: trying again loses nothing.
        loop = asyncio.get_running_loop()
        failing_since = None
        while True:
            try:
                return await super().receive(channel)
            except REDIS_DOWN:
                failing_since = failing_since or loop.time()
                if loop.time() - failing_since >= OUTAGE_S:
                    raise
                await asyncio.sleep(RETRY_S)

    async def _brpop_with_clean(self, index, channel, timeout):
        taken = self._taken.get(channel)
        if taken:
            return taken.popleft()
        backup = self._backup_channel_name(channel)
        connection = self.connection(index)
        unsure = channel in self._unsure
        self._unsure.add(channel)  # until the reply is in: a cancellation here leaves the batch in the backup
        script = connection.register_script(RECEIVE_LUA)
        popped = await script(keys=[channel, backup], args=[RECEIVE_BATCH, 1 if unsure else 0])
        if not popped:
            # Nothing waiting: block on Redis as channels_redis does, the event backed up once it is popped.
            result = await connection.bzpopmin(channel, timeout=timeout)
            if result is None:
                self._unsure.discard(channel)
                return None
            _, member, score = result
            await connection.zadd(backup, {member: float(score)})
            popped = [member, score]
        self._unsure.discard(channel)
        members = popped[0::2]
        self._taken[channel] = collections.deque(members[1:])
        return members[0]

    async def _clean_receive_backup(self, index, channel):
        # The next receive's script drops what was handed over (see RECEIVE_LUA).
        return

    async def flush(self):
        self._taken.clear()
        self._unsure.clear()
        await super().flush()
