"""Blind means blind (docs/fairness.md): until its reader votes, a blind round's answer shows only its text, in the
API, the page and the websocket pushes; cost, timings, token counts, model and label appear on the vote, and the
pushes carry them once the comparison is revealed.

A round on the fake server's OpenRouter protocol, whose catalog carries prices, so every answer has a cost; one
slot, so the columns wait their turn and say so."""

import asyncio

import pytest
from django.test import Client
from django.utils.html import escape

from compare.models import CompareGroup
from compare.rounds.execution import round_execute
from lab.audit.models import Action, AuditEntry
from lab.models import Role
from lab.services import connection_create
from tests.compare.events import GroupEvents, in_thread, watched_run
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.factories import add_member

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES = ("cost", "latency_ms", "ttft_ms", "queued_ms", "input_tokens", "output_tokens", "tokens_estimated")
HIDDEN = (*FIGURES, "model", "label", "variant", "position", "rendered_prompt", "error", "started_at", "finished_at")
VERSIONS = ("Formal-7", "Warm-8", "Terse-9")  # named in each variant's prompt, as versions often are


def blind_group(workspace, owner, fake_llm) -> CompareGroup:
    connection_create(
        workspace=workspace,
        name="fake",
        kind="openrouter",
        base_url=fake_llm.openai_url,
        api_key="test-key",
        max_concurrency=1,
    )
    model = f"fake::{fake_llm.model(tokens=6, ttft_ms=100)}"
    group = make_group(workspace, owner, models=[model] * 3, prompts=[f"{label}: hello" for label in VERSIONS])
    CompareGroup.objects.filter(pk=group.pk).update(blind=True)
    group.refresh_from_db()
    return group


def run_watched(group) -> tuple[int, list[dict]]:
    round_ = make_round(group)
    return round_.pk, watched_run(round_.pk, group.pk, round_execute)


def page_of(user, group) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/compare/{group.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def model_of(group) -> str:
    return group.variants.first().model


def shown(text: str) -> str:
    return escape(text)  # as a page writes it


def test_a_blind_round_shows_only_answers_until_the_reader_votes_then_everything(api, workspace, owner, fake_llm):
    group = blind_group(workspace, owner, fake_llm)
    round_id, events = run_watched(group)

    done = [e for e in events if e["type"] == "output.done"]
    waiting = [e for e in events if e["type"] == "output.waiting"]
    assert len(done) == 3 and waiting, [e["type"] for e in events]  # one slot: two columns waited for it
    for event in done:
        assert event["html"] and event["status"] == "ok"
        assert {name: event[name] for name in FIGURES if name in event} == dict.fromkeys(FIGURES, None)
        assert event["error"] is None and event["cached"] is None
    assert all(e["connection"] is None and e["ahead"] >= 0 for e in waiting)

    before = api.get(f"/api/v1/rounds/{round_id}/").json()
    assert before["labels_visible"] is False
    for output in before["outputs"]:
        assert output["text"] and output["status"] == "ok" and output["shown_as"].startswith("Answer ")
        assert {name: output[name] for name in HIDDEN} == dict.fromkeys(HIDDEN, None)
    html = page_of(owner, group)
    assert "data-metric" not in html and "round-total" not in html and "Round total" not in html
    assert shown(model_of(group)) not in html and "fake::" not in html
    assert not any(label in html for label in VERSIONS)

    response = api.post(f"/api/v1/rounds/{round_id}/vote/", {"output": before["outputs"][0]["id"]}, format="json")
    assert response.status_code in (200, 201), response.json()

    after = api.get(f"/api/v1/rounds/{round_id}/").json()
    assert after["labels_visible"] is True
    assert sorted(o["label"] for o in after["outputs"]) == ["A", "B", "C"]
    for output in after["outputs"]:
        assert output["model"] == model_of(group) and float(output["cost"]) > 0
        assert output["latency_ms"] >= output["ttft_ms"] >= 0 and output["queued_ms"] >= 0
        assert output["input_tokens"] > 0 and output["output_tokens"] > 0
    html = page_of(owner, group)
    assert html.count('data-metric="cost"') == 3 and "Round total" in html and shown(model_of(group)) in html
    assert all(label in html for label in VERSIONS)


def test_once_the_owner_reveals_everyone_sees_everything_and_pushes_carry_the_figures(
    api, api_for, workspace, owner, fake_llm
):
    group = blind_group(workspace, owner, fake_llm)
    round_id, _ = run_watched(group)
    teammate = add_member(workspace, "tess", Role.EDITOR)
    assert "Save rounds as dataset rows" not in page_of(teammate, group)
    refused = api_for(teammate).post(f"/api/v1/groups/{group.pk}/reveal/")
    assert refused.status_code == 403  # only its creator or an owner ends blind voting

    async def reveal_and_listen():
        async with GroupEvents(group.pk) as events:
            response = await in_thread(api.post, f"/api/v1/groups/{group.pk}/reveal/")
            return response, await events.until("resync")  # open pages reload, now with everything

    response, _ = asyncio.run(reveal_and_listen())
    assert response.status_code == 200 and response.json()["revealed_at"]
    assert AuditEntry.objects.get(action=Action.COMPARISON_REVEALED).actor_name == "owner"

    seen = api_for(teammate).get(f"/api/v1/rounds/{round_id}/").json()  # tess never voted
    assert seen["labels_visible"] is True and all(float(o["cost"]) > 0 for o in seen["outputs"])
    assert "Save rounds as dataset rows" in page_of(teammate, group)
    _, events = run_watched(group)
    done = [e for e in events if e["type"] == "output.done"]
    assert len(done) == 3 and all(e["cost"] > 0 and e["latency_ms"] is not None for e in done)
    assert all(e["connection"] == "fake" for e in events if e["type"] == "output.waiting")


def test_when_everyone_has_voted_the_library_and_dataset_rows_open_to_a_blind_comparison(
    api, api_for, workspace, owner, fake_llm
):
    group = blind_group(workspace, owner, fake_llm)
    round_id, _ = run_watched(group)
    teammate = api_for(add_member(workspace, "tess", Role.EDITOR))
    rows = {"workspace": workspace.pk, "group": group.pk, "name": "From a blind comparison"}
    refused = api.post("/api/v1/datasets/from-rounds/", rows, format="json")
    assert refused.status_code == 400 and "rounds" in refused.json()

    for client in (api, teammate):
        answer = client.get(f"/api/v1/rounds/{round_id}/").json()["outputs"][0]["id"]
        assert client.post(f"/api/v1/rounds/{round_id}/vote/", {"output": answer}, format="json").status_code < 300
        if client is api:  # one vote of two: still closed
            assert "Save rounds as dataset rows" not in page_of(owner, group)
    assert "Save rounds as dataset rows" in page_of(owner, group)
    assert api.post("/api/v1/datasets/from-rounds/", rows, format="json").status_code == 201
