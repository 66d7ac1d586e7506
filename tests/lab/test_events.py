"""Every realtime event, built by its one builder in lab/events.py, goes through the real channel layer and socket
consumer and comes out of the socket as JSON with exactly the fields its readers use: the browser scripts
(static/js/), and the few fields a test, a benchmark or the server reads instead (named, field by field, below)."""

import asyncio

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from compare.blind import HIDDEN_ON_CHANNEL, for_channel
from lab import events
from lab.events import (
    OUTPUT_DELTA,
    OUTPUT_DELTAS,
    OUTPUT_DONE,
    OUTPUT_TOOL_CALL,
    OUTPUT_WAITING,
    PROGRESS,
    RESYNC,
    ROUND_DONE,
    ROUND_STARTED,
    VERDICT_DONE,
    VOTE_TALLY,
    WORKER_PONG,
)
from lab.realtime import abroadcast, group_channel, workspace_channel
from promptlab.asgi import application
from tests.fixtures.compare_factories import make_group

# What the browser scripts read from each event, beside `type`.
BROWSER_READS: dict[str, set[str]] = {
    # static/js/compare/page.js onRoundStarted
    ROUND_STARTED: {"round", "number", "outputs"},
    # static/js/compare/page.js onDelta, through static/js/compare/stream.js Streams.apply
    OUTPUT_DELTA: {"output", "offset", "text"},
    # never reaches a browser: compare/consumers.py GroupConsumer.push unpacks it into output.delta events
    OUTPUT_DELTAS: set(),
    # static/js/compare/page.js onWaiting
    OUTPUT_WAITING: {"output", "connection", "ahead"},
    # static/js/compare/page.js onToolCall
    OUTPUT_TOOL_CALL: {"output", "index", "name", "arguments"},
    # static/js/compare/page.js onDone (static/js/compare/experiments.js only refreshes on it)
    OUTPUT_DONE: {
        "output",
        "status",
        "error",
        "html",
        "queued_ms",
        "ttft_ms",
        "latency_ms",
        "input_tokens",
        "output_tokens",
        "tokens_estimated",
        "cost",
    },
    # static/js/compare/page.js handle (reloads the round shown); static/js/compare/experiments.js only refreshes
    ROUND_DONE: {"round"},
    # static/js/compare/page.js onProgress; static/js/compare/experiments.js only refreshes
    PROGRESS: {"run", "done", "total"},
    # static/js/compare/vote.js VotePanel.tally and static/js/voting/inbox.js showTally (no `outputs`: blind)
    VOTE_TALLY: {"round", "total", "outputs", "tie", "all_bad"},
    # static/js/judging/verdict_panel.js verdictDone (through page.js), which then fetches the panel
    VERDICT_DONE: {"round"},
    # static/js/settings.js: the type alone
    WORKER_PONG: set(),
    # static/js/compare/page.js resyncAll; static/js/compare/experiments.js: the type alone
    RESYNC: set(),
}

# Fields an event carries that no browser script reads, and who reads them instead.
OTHER_READS: dict[str, dict[str, str]] = {
    OUTPUT_DELTAS: {"deltas": "compare/consumers.py GroupConsumer.push"},
    OUTPUT_DONE: {
        "round": "compare/rounds/batches.py: which comparison's channel a payload goes to",
        "length": "tests/compare/test_realtime.py and test_batch_rounds.py: the stored text is all there",
        "cached": "tests/compare/test_blind_figures.py: null while blind",
        "finish_reason": "no script: the answer's field as the round API gives it",
    },
    ROUND_DONE: {
        "status": "bench/bench_rounds_e2e.py",
        "error": "no script: the round's readable error as the round API gives it",
    },
    VERDICT_DONE: {
        field: "tests/judging/test_verdict.py (the panel reads them over HTTP)"
        for field in ("verdict", "status", "winner", "tie", "error")
    },
    WORKER_PONG: {"workspace": "tests/lab/test_services_mode.py"},
    OUTPUT_TOOL_CALL: {"id": "no script: the call's id as the round API gives it (the page keys calls by index)"},
}

# An experiment's `progress` carries its figures too: the status endpoint's (compare.experiments.selectors
# experiment_progress), which static/js/compare/experiments.js fetches over HTTP instead.
EXPERIMENT_PROGRESS_READS = {
    "experiment": "tests/compare/test_experiment_runs.py",
    "finished": "tests/compare/test_experiment_runs.py",
    **{
        field: "the experiment command's progress (same figures)"
        for field in (
            "answers_done",
            "answers_total",
            "evaluations_done",
            "evaluations_total",
            "spent",
            "unpriced_calls",
            "stopped",
        )
    },
}

OUTPUT_DONE_ARGS = {
    "output": 11,
    "round": 5,
    "status": "ok",
    "html": "<p>Hi</p>",
    "length": 2,
    "error": "",
    "finish_reason": "stop",
    "queued_ms": 3,
    "ttft_ms": 40,
    "latency_ms": 90,
    "input_tokens": 12,
    "output_tokens": 2,
    "tokens_estimated": False,
    "cost": 0.000125,
    "cached": False,
}
EXPERIMENT = events.ExperimentFigures(
    experiment=3,
    answers_done=4,
    answers_total=8,
    evaluations_done=0,
    evaluations_total=8,
    spent=0.5,
    unpriced_calls=1,
    stopped="",
    finished=False,
)

# One payload per event type and shape, from its builder.
PAYLOADS: list[tuple[str, dict]] = [
    (ROUND_STARTED, events.round_started(round=5, number=2, outputs=[12, 11])),
    (OUTPUT_WAITING, events.output_waiting(output=11, connection="fake", ahead=2)),
    (OUTPUT_TOOL_CALL, events.output_tool_call(output=11, index=0, id="call_1", name="get", arguments='{"a"')),
    (OUTPUT_DONE, events.output_done(**OUTPUT_DONE_ARGS)),
    (ROUND_DONE, events.round_done(round=5, status="done", error="")),
    (PROGRESS, events.progress(run="4f1c", done=1, total=2)),
    (PROGRESS, events.progress(run="4f1c", done=12, total=16, experiment=EXPERIMENT)),
    (VOTE_TALLY, events.vote_tally(round=5, total=3, outputs={"11": 2}, tie=1, all_bad=0)),
    (VOTE_TALLY, events.vote_tally(round=5, total=3)),
    (VERDICT_DONE, events.verdict_done(round=5, verdict=9, status="done", winner=11, tie=False, error="")),
    (RESYNC, events.resync()),
]
DELTAS = [events.output_delta(output=11, offset=0, text="Hé"), events.output_delta(output=12, offset=0, text="Yo")]


def expected_fields(event_type: str, payload: dict) -> set[str]:
    fields = BROWSER_READS[event_type] | set(OTHER_READS.get(event_type, {}))
    if event_type == PROGRESS and "experiment" in payload:
        fields |= set(EXPERIMENT_PROGRESS_READS)
    if event_type == VOTE_TALLY and "outputs" not in payload:
        fields -= {"outputs", "tie", "all_bad"}  # blind: the total only (compare.blind tally_for_channel)
    return fields


def test_every_event_type_has_one_builder_and_its_readers_listed():
    names = {value for name, value in vars(events).items() if name.isupper() and isinstance(value, str)}
    assert set(events.BUILDERS) == names == set(BROWSER_READS)
    assert {event_type for event_type, _ in PAYLOADS} | {OUTPUT_DELTA, OUTPUT_DELTAS, WORKER_PONG} == names


def test_a_builder_takes_only_its_own_fields():
    with pytest.raises(TypeError):
        events.round_done(round=1, status="done", error="", number=2)
    with pytest.raises(TypeError):
        events.output_waiting(output=1, ahead=0)  # every field is asked for: `connection` is null only while blind
    with pytest.raises(ValueError):
        events.vote_tally(round=1, total=1, outputs={}, all_bad=0)  # a split goes out whole or not at all


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def socket_at(path: str, cookie: bytes) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(application, path, headers=[(b"origin", b"http://localhost"), (b"cookie", cookie)])
    connected, _ = await socket.connect()
    assert connected
    return socket


def test_every_event_reaches_a_socket_as_json_with_exactly_the_fields_its_readers_use(
    transactional_db, workspace, owner
):
    group = make_group(workspace, owner)
    cookie = session_cookie(owner)

    async def through_sockets() -> list[tuple[str, dict, dict]]:
        received = []
        page = await socket_at(f"/ws/groups/{group.pk}/", cookie)
        settings_page = await socket_at(f"/ws/workspaces/{workspace.pk}/", cookie)
        try:
            for event_type, payload in PAYLOADS:
                assert await abroadcast(group_channel(group.pk), event_type, **payload)
                received.append((event_type, payload, await page.receive_json_from(timeout=5)))
            assert await abroadcast(group_channel(group.pk), OUTPUT_DELTAS, **events.output_deltas(deltas=DELTAS))
            for delta in DELTAS:
                received.append((OUTPUT_DELTA, delta, await page.receive_json_from(timeout=5)))
            pong = events.worker_pong(workspace=workspace.pk)
            assert await abroadcast(workspace_channel(workspace.pk), WORKER_PONG, **pong)
            received.append((WORKER_PONG, pong, await settings_page.receive_json_from(timeout=5)))
        finally:
            await page.disconnect()
            await settings_page.disconnect()
        return received

    received = asyncio.run(through_sockets())

    assert len(received) == len(PAYLOADS) + len(DELTAS) + 1
    for event_type, payload, event in received:
        assert event == {"type": event_type, **payload}  # nothing lost or changed on the way
        assert set(payload) == expected_fields(event_type, payload), event_type
    assert received[0][2]["outputs"] == [11, 12]  # by id: never the variants' order (blind mode)


def test_a_blind_push_has_the_same_fields_with_the_hidden_ones_null():
    # The browser tells a blind push by its nulls (page.js onWaiting: "its connection"), not by missing fields.
    for event_type, payload in (
        (OUTPUT_DONE, events.output_done(**OUTPUT_DONE_ARGS)),
        (OUTPUT_WAITING, events.output_waiting(output=11, connection="fake", ahead=2)),
    ):
        blind = for_channel(payload, blind=True)
        assert set(blind) == set(payload) == expected_fields(event_type, payload)
        assert all(blind[key] is None for key in set(payload) & set(HIDDEN_ON_CHANNEL))
        assert {key: value for key, value in blind.items() if key not in HIDDEN_ON_CHANNEL} == {
            key: value for key, value in payload.items() if key not in HIDDEN_ON_CHANNEL
        }
