"""The report API: a comparison's statistics as the statistics module computes them on its votes (and judge scores),
served from a cache that a new vote or verdict invalidates; JSON or CSV; another workspace's report is a 404."""

import csv
import io
import random
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from judging.models import JudgeConfig, Verdict, VerdictOutput, VerdictStatus
from lab.models import Role
from lab.stats.report import build_report
from lab.stats.votes import RoundVote
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

SIMULATED = "simulated::instant"


def report_of(client, group_id, **params):
    response = client.get(f"/api/v1/groups/{group_id}/report/", params)
    assert response.status_code == 200, response.content
    return response.json()


def wait_until_done(client, round_id: int, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/rounds/{round_id}/").json()
        if body["status"] == "done":
            return body
        assert body["status"] in ("queued", "running"), body
        time.sleep(0.1)
    pytest.fail(f"round {round_id} did not finish within {timeout} s")


def test_the_report_of_a_comparison_run_and_voted_through_the_api_equals_the_statistics_module(
    transactional_db, api, api_for, owner, workspace, celery_worker_process
):
    created = api.post(
        "/api/v1/groups/",
        {
            "workspace": workspace.pk,
            "title": "Tea haiku",
            "mode": "prompts",
            "system_prompt": "You are a poet.",
            "shared_variables": {"topic": "tea"},
            "params": {"temperature": 0.2},
            "blind": False,
            "variants": [
                {"label": "plain", "model": SIMULATED, "prompt": "A haiku about {{topic}}."},
                {"label": "vivid", "model": SIMULATED, "prompt": "A vivid haiku about {{topic}}, with colour."},
                {"label": "terse", "model": SIMULATED, "prompt": "Three short lines on {{topic}}."},
            ],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    group = created.json()
    runs = api.post(f"/api/v1/groups/{group['id']}/runs/", {"repeat": 8}, format="json")
    assert runs.status_code == 202, runs.content
    rounds = [wait_until_done(api, summary["id"]) for summary in runs.json()["rounds"]]
    assert all(output["status"] == "ok" for body in rounds for output in body["outputs"])

    voters = [owner, add_member(workspace, "eda", Role.EDITOR), add_member(workspace, "vic", Role.VIEWER)]
    voters.append(add_member(workspace, "val", Role.VIEWER))
    clients = [api_for(user) for user in voters]
    variant_of = {output["id"]: str(output["variant"]) for body in rounds for output in body["outputs"]}
    rng = random.Random(6)
    cast: dict[tuple[int, int], RoundVote] = {}  # (round, voter) → the vote, in the order first cast
    # Voters take turns across rounds, as a team would; "vivid" is preferred more often than not.
    for body in rounds:
        by_label = {output["label"]: output["id"] for output in body["outputs"]}
        shown = tuple(variant_of[output["id"]] for output in body["outputs"])
        for index, client in enumerate(clients):
            choice = rng.choices(["vivid", "plain", "terse", "tie", "all_bad"], weights=[50, 20, 15, 10, 5])[0]
            payload = {"verdict": choice} if choice in ("tie", "all_bad") else {"output": by_label[choice]}
            response = client.post(f"/api/v1/rounds/{body['id']}/vote/", payload, format="json")
            assert response.status_code == 200, response.content
            outcome = choice if "verdict" in payload else variant_of[payload["output"]]
            cast[(body["id"], index)] = RoundVote(shown, outcome)
    # Changing one's mind replaces the vote where it stood in the order.
    first_round = rounds[0]
    plain = next(o["id"] for o in first_round["outputs"] if o["label"] == "plain")
    clients[1].post(f"/api/v1/rounds/{first_round['id']}/vote/", {"output": plain}, format="json")
    cast[(first_round["id"], 1)] = RoundVote(cast[(first_round["id"], 1)].shown, variant_of[plain])

    body = report_of(api, group["id"])

    keys = [str(variant["id"]) for variant in group["variants"]]
    labels = {str(variant["id"]): variant["label"] for variant in group["variants"]}
    assert body["report"] == build_report(variants=keys, votes=list(cast.values()), labels=labels)
    assert body["report"]["votes"] == 32
    assert [(v["label"], v["model"]) for v in body["group"]["variants"]] == [
        ("plain", SIMULATED),
        ("vivid", SIMULATED),
        ("terse", SIMULATED),
    ]
    assert body["judge"] is None


def make_judge(workspace, name="strict") -> JudgeConfig:
    return JudgeConfig.objects.create(workspace=workspace, name=name, model="simulated::thinker")


def score_round(round_, judge: JudgeConfig, scores: list[float]) -> Verdict:
    """A finished verdict giving the round's answers these weighted scores, in variant order."""
    now = timezone.now()
    verdict = Verdict.objects.create(
        round=round_,
        judge=judge,
        judge_name=judge.name,
        judge_model=judge.model,
        scale=judge.scale,
        mode=judge.mode,
        status=VerdictStatus.DONE,
        finished_at=now,
    )
    outputs = round_.outputs.order_by("variant__position")
    VerdictOutput.objects.bulk_create(
        VerdictOutput(verdict=verdict, output=output, letter=chr(65 + i), score=score)
        for i, (output, score) in enumerate(zip(outputs, scores, strict=True))
    )
    return verdict


@pytest.mark.django_db
def test_judge_scores_and_pass_rates_enter_the_report_once_a_judge_has_scored(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    variants = list(group.variants.order_by("position"))
    keys = [str(v.pk) for v in variants]
    judge = make_judge(workspace)
    scores = {key: {} for key in keys}
    votes = []
    for i in range(14):
        round_ = finished_round(group, owner)
        pair = [0.25 + 0.05 * (i % 4), 0.5 + 0.05 * (i % 6)]
        score_round(round_, judge, pair)
        for key, score in zip(keys, pair, strict=True):
            scores[key][round_.pk] = score
        winner = round_.outputs.get(variant=variants[1 if i % 3 else 0])
        vote_cast(round=round_, user=owner, output_id=winner.pk)
        votes.append(RoundVote(tuple(keys), str(winner.variant_id)))

    body = report_of(api, group.pk, pass_threshold=0.6)

    labels = {str(v.pk): v.label for v in variants}
    expected = build_report(variants=keys, votes=votes, labels=labels, scores=scores, pass_threshold=0.6)
    assert body["report"] == expected
    assert body["report"]["scores"]["pairs"][0]["n_pairs"] == 14
    assert body["judge"] == {
        "id": judge.pk,
        "name": "strict",
        "model": "simulated::thinker",
        "rounds": 14,
        "left_out": [],
    }
    assert body["pass_threshold"] == 0.6


@pytest.mark.django_db
def test_a_comparison_without_votes_shows_counts_only_and_says_what_is_missing(api, workspace, owner):
    group = voting_group(workspace, owner)
    finished_round(group, owner)
    report = report_of(api, group.pk)["report"]
    assert report["votes"] == 0
    assert report["summary"].startswith("No decisive votes yet.")
    assert all(pair["verdict"] == "not enough data" and pair["p_value"] is None for pair in report["pairs"])
    assert all(rate["win_rate"] is None and rate["ci_low"] is None for rate in report["variants"])
    assert report["scores"] is None and report["success"] is None


@pytest.mark.django_db
def test_another_workspaces_report_is_not_found(api_for, stranger, workspace, owner):
    group = voting_group(workspace, owner)
    assert api_for(stranger).get(f"/api/v1/groups/{group.pk}/report/").status_code == 404


@pytest.mark.django_db
def test_a_pass_threshold_outside_zero_to_one_is_refused_naming_the_field(api, workspace, owner):
    group = voting_group(workspace, owner)
    response = api.get(f"/api/v1/groups/{group.pk}/report/", {"pass_threshold": 3})
    assert response.status_code == 400
    assert "pass_threshold" in response.json()


@pytest.mark.django_db
def test_the_win_rate_table_exports_as_csv_with_formulas_defused(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    group.variants.filter(position=1).update(label="=HYPERLINK(1)")
    round_ = finished_round(group, owner)
    vote_cast(round=round_, user=owner, output_id=round_.outputs.get(variant__position=2).pk)

    response = api.get(f"/api/v1/groups/{group.pk}/report/", {"format": "csv"})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert f'filename="report-{group.pk}.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(row["label"], row["wins"], row["decisive"], row["win_rate"]) for row in rows] == [
        ("'=HYPERLINK(1)", "0", "1", "0.0"),
        ("B", "1", "1", "1.0"),
    ]
    assert rows[0]["model"] == "simulated::instant"


def queries_for(client, url: str) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response.json()


@pytest.mark.django_db
def test_a_second_request_is_served_from_the_cache_until_a_new_vote(
    api, api_for, workspace, owner, django_capture_on_commit_callbacks
):
    group = voting_group(workspace, owner)
    rounds = [finished_round(group, owner) for _ in range(3)]
    for round_ in rounds:
        vote_cast(round=round_, user=owner, output_id=round_.outputs.get(variant__position=1).pk)
    url = f"/api/v1/groups/{group.pk}/report/"

    computed, first = queries_for(api, url)
    cached, second = queries_for(api, url)
    assert second == first
    # Only reaching the group (1 query) and stamping its verdicts (2), instead of reading votes, outputs and scores;
    # and the per-variant figures, read fresh (1: a finished round changes them without a vote).
    assert cached == 4 < computed

    teammate = add_member(workspace, "tam", Role.VIEWER)
    second_answer = rounds[0].outputs.get(variant__position=2).pk
    with django_capture_on_commit_callbacks(execute=True):  # the vote's commit hooks, as after a real commit
        response = api_for(teammate).post(
            f"/api/v1/rounds/{rounds[0].pk}/vote/", {"output": second_answer}, format="json"
        )
    assert response.status_code == 200
    recomputed, third = queries_for(api, url)
    assert recomputed == computed
    assert third["report"]["votes"] == 4
    assert [rate["wins"] for rate in third["report"]["variants"]] == [3, 1, 0]


@pytest.mark.django_db
def test_a_new_verdict_invalidates_the_cached_report(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    assert report_of(api, group.pk)["report"]["scores"] is None

    score_round(round_, make_judge(workspace), [0.2, 0.9])

    report = report_of(api, group.pk)["report"]
    assert [row["mean"] for row in report["scores"]["variants"]] == [0.2, 0.9]


def evaluate_round(round_, experiment: Experiment, scores: list[float]) -> None:
    """An experiment's finished evaluation of the round's answers with these scores, in variant order."""
    outputs = round_.outputs.order_by("variant__position")
    Evaluation.objects.bulk_create(
        Evaluation(
            experiment=experiment, output=output, status=EvaluationStatus.DONE, score=score, finished_at=timezone.now()
        )
        for output, score in zip(outputs, scores, strict=True)
    )


@pytest.mark.django_db
def test_an_experiments_own_evaluation_scores_enter_its_report_and_refresh_the_cached_one(
    api, client, workspace, owner
):
    group = voting_group(workspace, owner, n=2, mode="custom")
    experiment = Experiment.objects.create(
        group=group, config={"evaluation": {"type": "1-5", "model": "simulated::thinker"}}
    )
    keys = [str(pk) for pk in group.variants.order_by("position").values_list("pk", flat=True)]
    rounds = [finished_round(group, owner) for _ in range(2)]
    evaluate_round(rounds[0], experiment, [0.25, 0.75])
    assert [row["mean"] for row in report_of(api, group.pk)["report"]["scores"]["variants"]] == [0.25, 0.75]

    evaluate_round(rounds[1], experiment, [0.75, 1.0])  # a cached report must not hide it

    body = report_of(api, group.pk)
    scores = {keys[0]: {rounds[0].pk: 0.25, rounds[1].pk: 0.75}, keys[1]: {rounds[0].pk: 0.75, rounds[1].pk: 1.0}}
    expected = build_report(
        variants=keys, votes=[], labels=dict(zip(keys, ["A", "B"], strict=True)), scores=scores, pass_threshold=0.75
    )
    assert body["report"] == expected
    assert body["judge"] == {
        "id": None,
        "name": "the experiment's evaluation (1-5)",
        "model": "simulated::thinker",
        "rounds": 2,
        "left_out": [],
    }
    client.force_login(owner)
    page = client.get(reverse("voting:report_page", args=[group.pk])).content.decode()
    assert "the experiment&#x27;s evaluation (1-5)" in page and "No judge scores yet" not in page
