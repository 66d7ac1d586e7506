"""The response cache, end to end over HTTP to the fake LLM server: a round that opts in takes the stored answer
to an identical call (no request, cost 0, marked cached), and nothing else — not another key, not an error or a
cut-off answer, not another workspace's answer, not a round that did not opt in."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compare.models import CachedAnswer, Output, OutputStatus, RoundStatus
from compare.response_cache import cache_prune
from compare.rounds.execution import round_execute
from compare.rounds.worker import rounds_claim
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db(transaction=True)

PROMPTS = ["First: say something about {{topic}}.", "Second: say something about {{topic}}."]


def run(group, *, use_cache=True, **fields) -> list[Output]:
    round_ = make_round(group, use_cache=use_cache, **fields)
    round_execute(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE
    return list(round_.outputs.order_by("variant__position"))


@pytest.fixture
def fake(workspace, fake_llm):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    return fake_llm


def fake_group(workspace, owner, model, **fields):
    return make_group(workspace, owner, models=[f"fake::{model}"] * 2, prompts=PROMPTS, **fields)


def test_an_identical_call_takes_the_stored_answer_without_a_request_and_costs_nothing(workspace, owner, fake):
    model = fake.model(tokens=6)
    group = fake_group(workspace, owner, model, params={"temperature": 0.3})
    first = run(group)
    assert [o.cached for o in first] == [False, False]
    assert fake.scenario(model)["requests"] == 2

    again = run(group)
    assert fake.scenario(model)["requests"] == 2  # no request was made
    for fresh, cached in zip(first, again, strict=True):
        assert cached.status == OutputStatus.OK and cached.cached
        assert (cached.text, cached.html, cached.finish_reason) == (fresh.text, fresh.html, fresh.finish_reason)
        assert cached.cost == 0
        assert (cached.input_tokens, cached.output_tokens) == (fresh.input_tokens, fresh.output_tokens)
        assert cached.latency_ms is None and cached.ttft_ms is None  # nothing was timed
        assert cached.finished_at is not None


@pytest.mark.parametrize("part", ["nothing", "kind", "base_url", "model", "params", "messages", "system", "seed"])
def test_a_change_to_any_part_of_the_key_is_a_miss(workspace, owner, fake, part):
    model = fake.model(tokens=4)
    run(fake_group(workspace, owner, model, params={"temperature": 0.3}), seed=7)
    connection, params, prompts, system, seed = "fake", {"temperature": 0.3}, PROMPTS, "", 7
    if part == "kind":
        connection_create(workspace=workspace, name="other", kind="openai", base_url=fake.openai_url, api_key="sk-1")
        connection = "other"
    elif part == "base_url":
        connection_create(workspace=workspace, name="other", kind="openai_compatible", base_url=fake.url())
        connection = "other"
    elif part == "model":
        model = fake.model(tokens=4)
    elif part == "params":
        params = {"temperature": 0.4}
    elif part == "messages":
        prompts = [p.replace("something", "anything") for p in PROMPTS]
    elif part == "system":
        system = "Be brief."
    elif part == "seed":
        seed = 8
    group = make_group(
        workspace, owner, models=[f"{connection}::{model}"] * 2, prompts=prompts, params=params, system_prompt=system
    )
    outputs = run(group, seed=seed)
    assert all(o.status == OutputStatus.OK for o in outputs)
    expected = part == "nothing"
    assert [o.cached for o in outputs] == [expected, expected]
    assert all((o.latency_ms is None) == expected for o in outputs)


@pytest.mark.parametrize(
    ("scenario", "params", "status"),
    [
        ({"fault": "500", "retry_after": 0}, {}, OutputStatus.ERROR),
        ({"fault": "mid_stream"}, {}, OutputStatus.ERROR),
        ({}, {"max_tokens": 3}, OutputStatus.OK),  # cut off at the token limit
    ],
    ids=["error", "mid-stream error", "cut off"],
)
def test_an_error_or_a_cut_off_answer_is_never_stored_or_reused(workspace, owner, fake, scenario, params, status):
    model = fake.model(tokens=10, **scenario)
    group = fake_group(workspace, owner, model, params=params)
    for attempt in (1, 2):
        outputs = run(group)
        assert [o.status for o in outputs] == [status, status]
        assert not any(o.cached for o in outputs)
        assert fake.scenario(model)["requests"] >= 2 * attempt  # asked again every time
    assert not CachedAnswer.objects.exists()


def test_a_timed_out_answer_is_never_stored(workspace, owner, fake):
    model = fake.model(tokens=10, fault="stall", fault_at=3)
    group = fake_group(workspace, owner, model, timeout_ms=300)
    assert [o.status for o in run(group)] == [OutputStatus.TIMEOUT] * 2
    assert not CachedAnswer.objects.exists()


def test_another_workspace_never_gets_the_answer_even_for_the_very_same_call(workspace, owner, fake):
    model = fake.model(tokens=5)
    run(fake_group(workspace, owner, model))
    other_owner = make_user("other-owner")
    other = make_workspace(other_owner, "Other team")
    connection_create(workspace=other, name="fake", kind="openai_compatible", base_url=fake.openai_url)

    outputs = run(fake_group(other, other_owner, model))
    assert not any(o.cached for o in outputs)
    assert fake.scenario(model)["requests"] == 4
    assert run(fake_group(other, other_owner, model))[0].cached  # its own answers are its own to reuse


def test_a_round_without_the_cache_neither_reads_nor_writes_it(workspace, owner, fake):
    model = fake.model(tokens=5)
    group = fake_group(workspace, owner, model)
    run(group, use_cache=False)
    assert not CachedAnswer.objects.exists()  # not written

    run(group)  # stores
    assert CachedAnswer.objects.count() == 2
    outputs = run(group, use_cache=False)
    assert not any(o.cached for o in outputs)  # not read
    assert fake.scenario(model)["requests"] == 6


def test_a_claim_of_many_rounds_gives_each_its_own_hits_with_one_lookup_per_workspace(workspace, owner, fake):
    """The experiment command claims rounds together: every round still gets exactly the answers of its own calls
    (none for a round that did not opt in, another workspace's or another key), in one statement per workspace."""
    model = fake.model(tokens=5)
    group = fake_group(workspace, owner, model)
    run(group)  # stores both answers
    other_owner = make_user("other-owner")
    other = make_workspace(other_owner, "Other team")
    connection_create(workspace=other, name="fake", kind="openai_compatible", base_url=fake.openai_url)
    rounds = {
        "hit": make_round(group, use_cache=True),
        "no cache": make_round(group, use_cache=False),
        "other key": make_round(group, use_cache=True, seed=99),
        "other workspace": make_round(fake_group(other, other_owner, model), use_cache=True),
        "hit again": make_round(group, use_cache=True),
    }
    with CaptureQueriesContext(connection) as queries:
        claimed = {c.round_id: c for c in rounds_claim(round_ids=[r.pk for r in rounds.values()])}
    lookups = [q["sql"] for q in queries if "cached = TRUE" in q["sql"]]
    assert len(lookups) == 2  # this workspace's rounds together, and the other's

    calls = {name: len(claimed[r.pk].calls) for name, r in rounds.items()}
    assert calls == {"hit": 0, "no cache": 2, "other key": 2, "other workspace": 2, "hit again": 0}
    keys = {name: len(claimed[r.pk].cache_keys) for name, r in rounds.items()}
    assert keys == {"hit": 0, "no cache": 0, "other key": 2, "other workspace": 2, "hit again": 0}
    cached = {name: sorted(o.cached for o in r.outputs.all()) for name, r in rounds.items()}
    assert cached["hit"] == cached["hit again"] == [True, True]
    assert cached["no cache"] == cached["other key"] == cached["other workspace"] == [False, False]
    assert fake.scenario(model)["requests"] == 2


def test_an_expired_entry_is_not_reused_and_the_fresh_answer_replaces_it(workspace, owner, fake, settings):
    model = fake.model(tokens=5)
    group = fake_group(workspace, owner, model)
    run(group)
    settings.RESPONSE_CACHE_MAX_AGE_DAYS = 1
    CachedAnswer.objects.update(created_at="2020-01-01T00:00:00Z")
    assert not any(o.cached for o in run(group))
    assert CachedAnswer.objects.count() == 2 and all(o.cached for o in run(group))


def test_prune_deletes_only_expired_entries(workspace, owner, fake, settings):
    run(fake_group(workspace, owner, fake.model(tokens=5)))
    settings.RESPONSE_CACHE_MAX_AGE_DAYS = 1
    CachedAnswer.objects.filter(pk=CachedAnswer.objects.first().pk).update(created_at="2020-01-01T00:00:00Z")
    assert cache_prune() == 1 and CachedAnswer.objects.count() == 1
