"""The realtime events' names: every `type` a page can hear on a websocket (DESIGN.md, "Realtime protocol").

Senders and the consumers that unpack them name events from here, so the worker never imports a consumer module
for a constant and one list says what a page must handle.
"""

# A comparison's channel (compare.consumers.GroupConsumer)
ROUND_STARTED = "round.started"
OUTPUT_DELTA = "output.delta"  # {output, offset, text}: what the browser receives, one per answer
# The worker sends one tick's deltas of a round as one channel message of this type; the comparison's consumer
# unpacks it into separate OUTPUT_DELTA events.
OUTPUT_DELTAS = "output.deltas"
OUTPUT_WAITING = "output.waiting"
OUTPUT_DONE = "output.done"
ROUND_DONE = "round.done"
PROGRESS = "progress"
VOTE_TALLY = "vote.tally"
VERDICT_DONE = "verdict.done"
# A workspace's channel (lab.consumers.WorkspaceConsumer)
WORKER_PONG = "worker.pong"
# Any socket: events may have been missed, so the page reloads its state over HTTP (lab.consumers)
RESYNC = "resync"
