"""The inbox's blind mode is the comparison page's: the same per-person column order, names revealed on voting; what
the answers were asked shows where it was the same for all, and per answer only with the names."""

import json

import pytest

from compare.blind import blind_order
from compare.models import Round
from tests.fixtures.compare_factories import INSTANT, make_group
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = pytest.mark.django_db


def inbox(client, workspace, **query):
    params = "&".join(f"{key}={value}" for key, value in query.items())
    return client.get(f"/api/v1/workspaces/{workspace.pk}/inbox/next/?{params}").json()


def columns(body):
    return [(output["id"], output["shown_as"], output["model"]) for output in body["outputs"]]


def test_a_blind_comparison_looks_the_same_in_the_inbox_and_on_its_page(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=4, blind=True), owner)
    page = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    served = inbox(api, workspace)
    assert served["labels_visible"] is False and page["labels_visible"] is False
    assert columns(served) == columns(page)  # same shuffle, same "Answer A…" names, no models
    # Really this person's shuffle, not the variants' order (comparing with sorted ids instead would fail one run
    # in 24, whenever the shuffle happens to leave four answers in place).
    by_position = list(Round.objects.get(pk=round_.pk).outputs.order_by("variant__position"))
    assert [o["id"] for o in served["outputs"]] == [o.pk for o in blind_order(round_.pk, owner.pk, by_position)]
    assert served["tally"] == {"total": 0}  # no per-answer counts before voting

    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": served["outputs"][0]["id"]})
    page = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    undo = api.post(
        f"/api/v1/workspaces/{workspace.pk}/inbox/undo/", {"round": round_.pk}, format="json"
    ).json()  # shows the round again, now unvoted: hidden again
    assert page["labels_visible"] is True
    assert [o["label"] for o in page["outputs"]] == ["A", "B", "C", "D"]
    assert undo["labels_visible"] is False and columns(undo) == columns(served)


def test_the_inbox_is_blind_by_default_even_where_the_comparison_is_not(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=4), owner)
    served = inbox(api, workspace)
    outputs = list(Round.objects.get(pk=round_.pk).outputs.order_by("variant__position"))
    assert served["labels_visible"] is False
    assert [o["id"] for o in served["outputs"]] == [o.pk for o in blind_order(round_.pk, owner.pk, outputs)]
    assert all(o["model"] is None and o["label"] is None for o in served["outputs"])
    assert all(o["shown_as"].startswith("Answer ") for o in served["outputs"])


def test_blind_false_shows_names_but_never_lifts_a_blind_comparison(api, workspace, owner):
    open_round = finished_round(voting_group(workspace, owner, title="open"), owner)
    blind_group = voting_group(workspace, owner, blind=True, title="blind")
    finished_round(blind_group, owner)
    served = inbox(api, workspace, blind="false", group=open_round.group_id)
    assert served["labels_visible"] is True and [o["label"] for o in served["outputs"]] == ["A", "B", "C"]
    assert "outputs" in served["tally"]
    served = inbox(api, workspace, blind="false", group=blind_group.pk)
    assert served["labels_visible"] is False


def sent(round_, prompts: dict[str, str], system_prompt: str = "Be kind.") -> None:
    """What the worker records as sent to each variant (by label), as a run would."""
    for output in round_.outputs.select_related("variant"):
        output.rendered_system_prompt, output.rendered_prompt = system_prompt, prompts[output.variant.label]
        output.save(update_fields=["rendered_system_prompt", "rendered_prompt"])


def test_a_blind_round_shows_what_every_answer_was_asked_alike_and_nothing_that_tells_them_apart(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=3, blind=True), owner)
    sent(round_, {label: f"Prompt of version {label}: write about tea." for label in "ABC"})
    served = inbox(api, workspace)
    assert served["input"] == {
        "variables": {"topic": "tea"},
        "system_prompt": "Be kind.",
        "prompt": None,
        "own_prompts": True,
    }
    assert "Prompt of version" not in json.dumps(served)  # neither in the input nor in any answer

    open_round = finished_round(voting_group(workspace, owner, n=2, title="open"), owner)
    sent(open_round, {"A": "Short about tea.", "B": "Long about tea."})
    served = inbox(api, workspace, blind="false", group=open_round.group_id)
    assert served["input"]["prompt"] is None and served["input"]["own_prompts"] is True
    assert {o["label"]: o["rendered_prompt"] for o in served["outputs"]} == {
        "A": "Short about tea.",
        "B": "Long about tea.",
    }  # with the names, each answer's own prompt


def test_a_blind_comparison_of_models_shows_the_one_prompt_they_were_all_sent(api, workspace, owner):
    group = make_group(workspace, owner, models=[INSTANT, "simulated::coder"], blind=True)
    round_ = finished_round(group, owner)
    sent(round_, dict.fromkeys("AB", "Say something about tea."), system_prompt="")
    served = inbox(api, workspace)
    assert served["labels_visible"] is False
    assert served["input"] == {
        "variables": {"topic": "tea"},
        "system_prompt": "",
        "prompt": "Say something about tea.",
        "own_prompts": False,
    }
