"""The realtime events: every `type` a page can hear on a websocket, and the one builder of each one's payload.

Senders name an event by its constant and build its payload with its builder (DESIGN.md, "Realtime protocol"):
the builder's typed arguments are the only place that knows what the event carries, and what the browser scripts
(static/js/) read from it is checked against them (tests/lab/test_events.py). The worker never imports a consumer
module for a constant, and one list says what a page must handle. Blind mode nulls hidden figures after building
(compare.blind `for_channel`) and picks the total-only tally; it never adds a field the builder did not decide.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NotRequired, TypedDict

# A comparison's channel (compare.consumers.GroupConsumer)
ROUND_STARTED = "round.started"
OUTPUT_DELTA = "output.delta"  # what the browser receives, one per answer
# The worker sends one tick's deltas of a round as one channel message of this type; the comparison's consumer
# unpacks it into separate OUTPUT_DELTA events.
OUTPUT_DELTAS = "output.deltas"
OUTPUT_WAITING = "output.waiting"
OUTPUT_TOOL_CALL = "output.tool_call"
OUTPUT_DONE = "output.done"
ROUND_DONE = "round.done"
PROGRESS = "progress"
VOTE_TALLY = "vote.tally"
VERDICT_DONE = "verdict.done"
# A workspace's channel (lab.consumers.WorkspaceConsumer)
WORKER_PONG = "worker.pong"
# Any socket: events may have been missed, so the page reloads its state over HTTP (lab.consumers)
RESYNC = "resync"


class RoundStarted(TypedDict):
    round: int
    number: int
    outputs: list[int]


def round_started(*, round: int, number: int, outputs: list[int]) -> RoundStarted:
    """A worker claimed a round: `outputs` are its answers' ids, sorted by id (never the variants' order, which
    blind mode hides)."""
    return {"round": round, "number": number, "outputs": sorted(outputs)}


class OutputDelta(TypedDict):
    output: int
    offset: int
    text: str


def output_delta(*, output: int, offset: int, text: str) -> OutputDelta:
    """New text of one answer; `offset` (in code points) is where it starts, so a page can tell it missed some."""
    return {"output": output, "offset": offset, "text": text}


class OutputDeltas(TypedDict):
    deltas: list[OutputDelta]


def output_deltas(*, deltas: list[OutputDelta]) -> OutputDeltas:
    """One coalescing tick's deltas of a round, each built by `output_delta`: one channel message, unpacked by the
    comparison's consumer into `output.delta` events."""
    return {"deltas": deltas}


class OutputWaiting(TypedDict):
    output: int
    connection: str | None
    ahead: int


def output_waiting(*, output: int, connection: str | None, ahead: int) -> OutputWaiting:
    """An answer's call waits for its connection with `ahead` calls before it (`connection` null while blind)."""
    return {"output": output, "connection": connection, "ahead": ahead}


class OutputToolCall(TypedDict):
    output: int
    index: int
    id: str
    name: str
    arguments: str


def output_tool_call(*, output: int, index: int, id: str, name: str, arguments: str) -> OutputToolCall:  # noqa: A002
    """A tool call of an answer as it has arrived so far: the call at `index`, its id and name, and its arguments'
    text up to now (each event replaces the one before; whether they are valid comes with the stored answer)."""
    return {"output": output, "index": index, "id": id, "name": name, "arguments": arguments}


class OutputDone(TypedDict):
    output: int
    round: int
    status: str
    html: str
    length: int
    error: str | None
    finish_reason: str
    queued_ms: int | None
    ttft_ms: int | None
    latency_ms: int | None
    input_tokens: int | None
    output_tokens: int | None
    tokens_estimated: bool | None
    cost: float | None
    cached: bool | None


def output_done(
    *,
    output: int,
    round: int,
    status: str,
    html: str,
    length: int,
    error: str | None,
    finish_reason: str,
    queued_ms: int | None,
    ttft_ms: int | None,
    latency_ms: int | None,
    input_tokens: int | None,
    output_tokens: int | None,
    tokens_estimated: bool | None,
    cost: float | None,
    cached: bool | None,
) -> OutputDone:
    """An answer finished: its status, its sanitized HTML, `length` (code points of its text, so a client can check
    it has all of it) and its figures (null while blind)."""
    return {
        "output": output,
        "round": round,
        "status": status,
        "html": html,
        "length": length,
        "error": error,
        "finish_reason": finish_reason,
        "queued_ms": queued_ms,
        "ttft_ms": ttft_ms,
        "latency_ms": latency_ms,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "tokens_estimated": tokens_estimated,
        "cost": cost,
        "cached": cached,
    }


class RoundDone(TypedDict):
    round: int
    status: str
    error: str


def round_done(*, round: int, status: str, error: str) -> RoundDone:
    """A round finished, failed or was cancelled."""
    return {"round": round, "status": status, "error": error}


class ExperimentFigures(TypedDict):
    """What an experiment's `progress` carries beside its run's counts: the status endpoint's figures
    (compare.experiments.selectors.experiment_progress)."""

    experiment: int
    answers_done: int
    answers_total: int
    evaluations_done: int
    evaluations_total: int
    spent: float
    unpriced_calls: int
    stopped: str
    finished: bool


class Progress(TypedDict):
    run: str | None
    done: int
    total: int
    # An experiment's progress only: the ExperimentFigures
    experiment: NotRequired[int]
    answers_done: NotRequired[int]
    answers_total: NotRequired[int]
    evaluations_done: NotRequired[int]
    evaluations_total: NotRequired[int]
    spent: NotRequired[float]
    unpriced_calls: NotRequired[int]
    stopped: NotRequired[str]
    finished: NotRequired[bool]


def progress(*, run: str | None, done: int, total: int, experiment: ExperimentFigures | None = None) -> Progress:
    """How far a run of several rounds is (`done` of `total` rounds); an experiment's progress counts its calls
    instead and carries its `experiment` figures too."""
    payload: Progress = {"run": run, "done": done, "total": total}
    if experiment is not None:
        payload.update(experiment)
    return payload


class VoteTally(TypedDict):
    round: int
    total: int
    # Not while the comparison is blind: where the votes went would tell the answers apart (compare.blind).
    outputs: NotRequired[dict[str, int]]
    tie: NotRequired[int]
    all_bad: NotRequired[int]


def vote_tally(
    *, round: int, total: int, outputs: dict[str, int] | None = None, tie: int | None = None, all_bad: int | None = None
) -> VoteTally:
    """A round's votes: the total, and the split (winner votes per output id, ties, all bad) unless it is left out,
    as blind mode's `tally_for_channel` leaves it."""
    split = (outputs, tie, all_bad)
    if split == (None, None, None):
        return {"round": round, "total": total}
    if None in split:
        raise ValueError("A tally's split is outputs, tie and all_bad together, or none of them.")
    return {"round": round, "outputs": outputs, "tie": tie, "all_bad": all_bad, "total": total}


class VerdictDone(TypedDict):
    round: int
    verdict: int
    status: str
    winner: int | None
    tie: bool
    error: str


def verdict_done(*, round: int, verdict: int, status: str, winner: int | None, tie: bool, error: str) -> VerdictDone:
    """A judge's verdict finished or failed: ids and figures only; pages fetch the panel to show it."""
    return {"round": round, "verdict": verdict, "status": status, "winner": winner, "tie": tie, "error": error}


class WorkerPong(TypedDict):
    workspace: int


def worker_pong(*, workspace: int) -> WorkerPong:
    """A worker answered the settings page's health check."""
    return {"workspace": workspace}


class Resync(TypedDict):
    pass


def resync() -> Resync:
    """No fields: the page reloads what it shows over HTTP."""
    return {}


# Every event type and its builder: what tests/lab/test_events.py walks.
BUILDERS: dict[str, Callable[..., dict]] = {
    ROUND_STARTED: round_started,
    OUTPUT_DELTA: output_delta,
    OUTPUT_DELTAS: output_deltas,
    OUTPUT_WAITING: output_waiting,
    OUTPUT_TOOL_CALL: output_tool_call,
    OUTPUT_DONE: output_done,
    ROUND_DONE: round_done,
    PROGRESS: progress,
    VOTE_TALLY: vote_tally,
    VERDICT_DONE: verdict_done,
    WORKER_PONG: worker_pong,
    RESYNC: resync,
}
