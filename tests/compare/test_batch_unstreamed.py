"""A batch round nobody watches asks each answer in one request, without streaming, and records it in full: text,
usage, cut-off and timings. An interactive round, or a batch round a page follows, still streams.

These tests commit (`transactional_db`): the engine writes from its own thread.
"""

import pytest

from compare.models import Output, OutputStatus, RoundStatus
from compare.rounds.execution import round_execute
from lab.jobs.kinds import Lane
from lab.services import connection_create
from tests.compare.events import watched_run
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake(workspace, fake_llm):
    connection_create(
        workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url, rpm=100_000
    )
    return fake_llm


def run(group, lane: str) -> list[Output]:
    round_ = make_round(group, lane=lane)
    round_execute(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE
    return list(round_.outputs.order_by("variant__position"))


def test_an_unwatched_batch_round_is_asked_without_streaming_and_recorded_in_full(workspace, owner, fake):
    model = fake.model(tokens=12, ttft_ms=30, token_ms=2)
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2)

    outputs = run(group, Lane.BATCH)

    seen = fake.scenario(model)
    assert seen["requests"] == 2
    assert all(not body.get("stream") for body in seen["recent"])
    for output in outputs:
        assert output.status == OutputStatus.OK, output.error
        assert len(output.text.split()) == 12 and output.html
        assert output.finish_reason == "stop"
        assert output.input_tokens > 0 and output.output_tokens == 12 and not output.tokens_estimated
        # The whole answer arrives at once: its first token arrives with it.
        assert output.ttft_ms == output.latency_ms and output.latency_ms >= 30


def test_an_unwatched_batch_answer_cut_off_at_the_token_limit_says_so(workspace, owner, fake):
    model = fake.model(tokens=30)
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2, params={"max_tokens": 5})

    outputs = run(group, Lane.BATCH)

    assert all(not body.get("stream") for body in fake.scenario(model)["recent"])
    for output in outputs:
        assert output.status == OutputStatus.OK
        assert output.finish_reason == "length" and output.is_cut_off
        assert output.output_tokens == 5 and len(output.text.split()) == 5


def test_an_unwatched_batch_request_that_fails_is_a_readable_error(workspace, owner, fake):
    model = fake.model(fault="mid_stream")
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2)

    outputs = run(group, Lane.BATCH)

    for output in outputs:
        assert output.status == OutputStatus.ERROR and "Fake upstream error" in output.error


def test_an_interactive_round_still_streams(workspace, owner, fake):
    model = fake.model(tokens=8)
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2)

    outputs = run(group, Lane.INTERACTIVE)

    assert all(body.get("stream") for body in fake.scenario(model)["recent"])
    assert all(output.status == OutputStatus.OK and output.ttft_ms <= output.latency_ms for output in outputs)


def test_a_batch_round_a_page_follows_streams_its_tokens(workspace, owner, fake):
    model = fake.model(tokens=20, token_ms=5)
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2)
    round_ = make_round(group, lane=Lane.BATCH)

    seen = watched_run(round_.pk, group.pk, round_execute)

    assert all(body.get("stream") for body in fake.scenario(model)["recent"])
    outputs = {output.pk: output.text for output in round_.outputs.all()}
    streamed = {
        pk: "".join(e["text"] for e in seen if e["type"] == "output.delta" and e["output"] == pk) for pk in outputs
    }
    assert streamed == outputs
