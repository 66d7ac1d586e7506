"""DeltaBatcher: a reader's `add` never waits for a send in progress, and the batches keep their order and offsets."""

import asyncio

from lab.engine.deltas import Delta, DeltaBatcher


class GatedChannel:
    """A send that lasts until the test opens the gate, as a slow channel layer does."""

    def __init__(self):
        self.gate = asyncio.Event()
        self.batches: list[list[Delta]] = []
        self.sending = 0
        self.most_at_once = 0

    async def __call__(self, batch: list[Delta]) -> None:
        self.sending += 1
        self.most_at_once = max(self.most_at_once, self.sending)
        await self.gate.wait()
        self.batches.append(batch)
        self.sending -= 1


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_reader_goes_on_reading_while_a_batch_is_being_sent_and_what_it_read_follows_in_order():
    async def scenario():
        channel = GatedChannel()
        batcher = DeltaBatcher(channel, interval_s=0)
        await batcher.add(1, "Hel")
        await settle()
        assert channel.sending == 1  # the first delta after a quiet spell is on its way at once
        for key, text in [(1, "lo"), (2, "Bon"), (1, " you"), (2, "jour")]:
            reading = asyncio.ensure_future(batcher.add(key, text))
            await settle()
            assert reading.done()  # added while the send is stuck: the reader was not held up
        assert channel.sending == 1 and not channel.batches  # one batch at a time
        channel.gate.set()
        await batcher.close()
        return channel

    # A reader that waited for the stuck send would wait forever: the timeout only turns that into a failure.
    channel = asyncio.run(asyncio.wait_for(scenario(), timeout=10))
    assert channel.most_at_once == 1
    assert [[(d.key, d.offset, d.text) for d in batch] for batch in channel.batches] == [
        [(1, 0, "Hel")],
        [(1, 3, "lo you"), (2, 0, "Bonjour")],  # what arrived during the first send, in the next batch
    ]


def test_what_is_pending_when_a_round_closes_is_sent_before_close_returns():
    async def scenario():
        channel = GatedChannel()
        channel.gate.set()
        batcher = DeltaBatcher(channel, interval_s=60)
        await batcher.add(1, "a")
        await settle()
        await batcher.add(1, "b")  # within the interval: waits for the timer
        await batcher.close()
        return channel

    channel = asyncio.run(scenario())
    assert [[(d.key, d.offset, d.text) for d in batch] for batch in channel.batches] == [[(1, 0, "a")], [(1, 1, "b")]]
