"""Model-graded assertions end to end over the fake LLM server: stored pending when a round is graded, filled in by
the `assertion_grading` job (the grader is a judge model on the fake server; `similar` uses its `/v1/embeddings`),
refused up front naming what is missing, and never failing an answer when the grader fails.

Semantics from promptfoo's documentation: llm-rubric (docs/configuration/expected-outputs/model-graded/llm-rubric:
the grader's {pass, score, reason}; "threshold" on the score), model-graded-closedqa (…/model-graded-closedqa: "Y
(Yes): output meets the criterion → passes; N (No) → fails"), g-eval (…/g-eval: criteria → steps → a score, default
threshold 0.7, src/assertions/gEval.ts) and similar (…/similar: cosine similarity ≥ threshold, default 0.75,
src/assertions/similar.ts; `not-similar` inverted).
"""

import json
import time

import pytest

from compare.assertions.models import AssertionResult
from compare.assertions.services import rounds_grade
from compare.models import Output
from judging.assertion_grading import assertion_grading_execute, assertion_grading_fail
from judging.models import AssertionGrading, AssertionGradingStatus
from lab.services import connection_create
from tests.fixtures.judging_factories import CANDIDATES, JUDGE, KEY, answered_round, judged_group

LABELS = ["Fennel-variant", "Sorrel-variant"]
CANDIDATE_MODEL = "gpt-4.1-mini"  # the answered models' name (judged_group), which no grader may see
TEXTS = ["Tea is good for you.", "Coffee beans roast slowly."]


def grade(group, owner, texts=TEXTS):
    """A finished round with these answers, graded as its finish grades it; the pending jobs (not yet run)."""
    round_ = answered_round(group, owner, texts)
    rounds_grade([round_.pk])
    outputs = list(round_.outputs.order_by("variant__position"))
    jobs = [AssertionGrading.objects.filter(output=output).latest("pk") for output in outputs]
    return outputs, jobs


def results(output) -> list[AssertionResult]:
    return list(AssertionResult.objects.filter(output=output).order_by("position"))


def reply(fake_llm, scenario, *bodies):
    fake_llm.script(scenario, *({"text": json.dumps(body)} for body in bodies))


def run(job):
    assertion_grading_execute(grading_id=job.pk)
    job.refresh_from_db()
    return job


def verdict(output):
    output.refresh_from_db()
    return output.assertions_passed, output.assertions_score


def test_llm_rubric_pass_and_fail_on_the_threshold_and_the_grader_sees_no_model_name(
    workspace, owner, fake_llm, connections
):
    grader = fake_llm.model()
    checks = [
        {"type": "icontains", "value": "tea"},
        {"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{grader}", "threshold": 0.8},
    ]
    group = judged_group(workspace, owner, count=2, labels=LABELS, assertions=checks)
    (tea, coffee), (tea_job, coffee_job) = grade(group, owner)

    # Deterministic results are stored at once; the rubric waits, and so does the answer's verdict.
    assert [(r.state, r.passed) for r in results(tea)] == [("graded", True), ("pending", None)]
    assert verdict(tea) == (None, None)

    reply(fake_llm, grader, {"reason": "It names tea.", "pass": True, "score": 0.9})
    assert run(tea_job).status == AssertionGradingStatus.DONE
    assert [(r.passed, r.score, r.reason) for r in results(tea)][1] == (True, 0.9, "It names tea.")
    assert verdict(tea) == (True, pytest.approx(0.95))

    seen = fake_llm.requests(grader)[-1]
    shown = json.dumps(seen["messages"])
    assert "Mentions a drink" in shown and "Tea is good for you." in shown
    assert CANDIDATE_MODEL not in shown and CANDIDATES not in shown
    assert not any(label in shown for label in LABELS)

    # promptfoo: the grader's pass with a score under the threshold fails.
    reply(fake_llm, grader, {"reason": "Barely.", "pass": True, "score": 0.5})
    run(coffee_job)
    rubric = results(coffee)[1]
    assert (rubric.passed, rubric.score) == (False, 0.5)
    assert verdict(coffee)[0] is False


def test_not_llm_rubric_inverts_the_graders_pass(workspace, owner, fake_llm, connections):
    grader = fake_llm.model()
    checks = [{"type": "not-llm-rubric", "value": "Is rude", "provider": {"id": f"{JUDGE}::{grader}"}}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (polite, _), (job, _) = grade(group, owner)
    reply(fake_llm, grader, {"reason": "Not rude.", "pass": False, "score": 0.0})
    run(job)
    assert verdict(polite) == (True, 1.0)


def test_closedqa_passes_on_y_and_fails_on_n(workspace, owner, fake_llm, connections):
    grader = fake_llm.model()
    checks = [{"type": "model-graded-closedqa", "value": "Talks about tea", "provider": f"{JUDGE}::{grader}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, coffee), (tea_job, coffee_job) = grade(group, owner)
    reply(fake_llm, grader, {"reason": "It does.", "verdict": "Y"}, {"reason": "Coffee.", "verdict": "N"})
    run(tea_job)
    run(coffee_job)
    assert verdict(tea) == (True, 1.0)
    assert verdict(coffee) == (False, 0.0)
    shown = json.dumps(fake_llm.requests(grader)[0]["messages"])
    assert "Talks about tea" in shown and "Tell me about tea." in shown  # the criterion and the request


def test_g_eval_writes_steps_then_scores_out_of_ten_against_the_default_threshold(
    workspace, owner, fake_llm, connections
):
    grader = fake_llm.model()
    checks = [{"type": "g-eval", "value": "Coherent and on topic", "provider": f"{JUDGE}::{grader}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (first, second), (first_job, second_job) = grade(group, owner)
    steps = {"steps": ["Read it.", "Check the topic."]}
    reply(fake_llm, grader, steps, {"reason": "Good.", "score": 8}, steps, {"reason": "Off topic.", "score": 6})
    run(first_job)
    run(second_job)
    assert verdict(first) == (True, 0.8)  # 8/10 ≥ 0.7
    assert verdict(second) == (False, 0.6)  # 6/10 < 0.7
    scoring = json.dumps(fake_llm.requests(grader)[1]["messages"])
    assert "Check the topic." in scoring and "Tea is good for you." in scoring


def test_similar_and_not_similar_through_an_embeddings_connection(workspace, owner, fake_llm, connections):
    connection_create(workspace=workspace, name="emb", kind="openai_compatible", base_url=fake_llm.openai_url)
    embedder = fake_llm.model()
    checks = [
        {"type": "similar", "value": "tea is good for you", "provider": f"emb::{embedder}"},
        # promptfoo (similar.ts): with a list, the first value that passes decides; else the lowest score.
        {"type": "not-similar", "value": ["tea is good", "good tea for you"], "provider": f"emb::{embedder}"},
    ]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, coffee), (tea_job, coffee_job) = grade(group, owner)
    run(tea_job)
    run(coffee_job)
    similar, dissimilar = results(tea)
    assert (similar.passed, similar.score) == (True, pytest.approx(1.0))
    assert (dissimilar.passed, dissimilar.reason) == (False, "None of the provided values met the similarity threshold")
    similar, dissimilar = results(coffee)
    assert (similar.passed, similar.score) == (False, pytest.approx(0.0))
    assert "less than threshold 0.75" in similar.reason
    assert dissimilar.passed is True
    assert fake_llm.requests(embedder)[0]["input"][0] == "Tea is good for you."


def test_a_failing_grader_leaves_the_answer_not_graded_never_failed(workspace, owner, fake_llm, connections):
    broken = fake_llm.model(fault=500)
    checks = [
        {"type": "contains", "value": "nowhere"},
        {"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{broken}"},
    ]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, coffee), (tea_job, coffee_job) = grade(group, owner)
    assert run(tea_job).status == AssertionGradingStatus.DONE
    rubric = results(tea)[1]
    assert (rubric.state, rubric.passed, rubric.score) == ("not_graded", None, None)
    assert rubric.reason.startswith("Not graded:") and "500" in rubric.reason
    assert verdict(tea) == (None, None)  # out of the pass rates, like a provider outage

    # A job the sweeper gives up on (its worker gone) does the same.
    assert assertion_grading_fail(grading_id=coffee_job.pk, error="The worker stopped.")
    assert results(coffee)[1].reason == "Not graded: The worker stopped."
    assert verdict(coffee) == (None, None)


def test_missing_grader_or_embeddings_connection_is_a_400_naming_it(api, workspace, fake_llm, connections):
    def refused(checks):
        body = {
            "workspace": workspace.pk,
            "mode": "models",
            "variants": [{"label": "A", "model": f"{CANDIDATES}::gpt-4.1-mini", "prompt": "Hi"}],
            "assert": checks,
        }
        response = api.post("/api/v1/groups/", body, format="json")
        assert response.status_code == 400, response.json()
        return response.json()["assertions"][0]

    assert refused([{"type": "llm-rubric", "value": "Polite"}]).startswith(
        "assert[0].provider: required for 'llm-rubric': the grader model"
    )
    assert refused([{"type": "g-eval", "value": "Polite", "provider": "gpt-4o"}]).startswith(
        "assert[0].provider: must be a lab model id '<connection>::<model>'"
    )
    assert refused([{"type": "model-graded-closedqa", "value": "Y", "provider": "nope::m"}]) == (
        "assert[0].provider: the grader's connection 'nope' does not exist in this workspace."
    )
    assert refused([{"type": "similar", "value": "Hi"}]).startswith(
        "assert[0].provider: required for 'similar': an embeddings model on an OpenAI-compatible connection"
    )
    assert refused([{"type": "similar", "value": "Hi", "provider": f"{JUDGE}::text-embedding-3-small"}]) == (
        "assert[0].provider: 'similar' needs an embeddings connection (OpenAI or OpenAI-compatible, with "
        f"/embeddings); the connection '{JUDGE}' is not OpenAI-compatible."
    )


def test_rerun_asks_the_grader_again_and_not_the_answered_model(api, workspace, owner, fake_llm, connections):
    grader = fake_llm.model()
    checks = [{"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{grader}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, _), (job, _) = grade(group, owner)
    reply(fake_llm, grader, {"reason": "Tea.", "pass": True, "score": 1})
    run(job)
    assert verdict(tea) == (True, 1.0)

    response = api.post(f"/api/v1/groups/{group.pk}/assertions/rerun/", {}, format="json")
    assert response.status_code == 200, response.json()
    assert verdict(tea) == (None, None) and results(tea)[0].state == "pending"
    again = AssertionGrading.objects.filter(output=tea).latest("pk")
    assert AssertionGrading.objects.filter(status=AssertionGradingStatus.QUEUED).count() == 3  # 1 left + 2 new
    assert again.pk != job.pk
    assert run(job) is not None and results(tea)[0].state == "pending"  # the old job finds nothing of its own

    reply(fake_llm, grader, {"reason": "No drink.", "pass": False, "score": 0})
    run(again)
    assert verdict(tea) == (False, 0.0)
    assert len(fake_llm.requests(grader)) == 2
    assert fake_llm.scenario(CANDIDATE_MODEL)["requests"] == 0  # the answers were never asked for again


@pytest.mark.services
def test_end_to_end_a_worker_answers_the_round_then_grades_its_rubric(
    transactional_db, owner, workspace, fake_llm, celery_worker_process
):
    from compare import services as compare_services
    from compare.rounds.start import round_start

    connection_create(workspace=workspace, name=CANDIDATES, kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    connection_create(workspace=workspace, name=JUDGE, kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    grader = fake_llm.model()
    reply(fake_llm, grader, *[{"reason": "About tea.", "pass": True, "score": 1}] * 2)
    answering = fake_llm.model(text="tea is good")
    group = compare_services.group_create(
        workspace=workspace,
        user=owner,
        mode="prompts",
        variants=[{"label": f"V{i}", "model": f"{CANDIDATES}::{answering}", "prompt": f"Tea {i}?"} for i in (1, 2)],
        assertions=[{"type": "llm-rubric", "value": "About tea", "provider": f"{JUDGE}::{grader}"}],
    )
    round_ = round_start(group=group, user=owner)[0]
    outputs = list(Output.objects.filter(round=round_))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(verdict(output)[0] is None for output in outputs):
        time.sleep(0.2)
    assert [verdict(output) for output in outputs] == [(True, 1.0)] * 2, celery_worker_process.output()[-3000:]
    gradings = AssertionGrading.objects.filter(output__in=outputs)
    assert [grading.status for grading in gradings] == [AssertionGradingStatus.DONE] * 2


def test_the_sweeper_fails_a_grading_whose_worker_is_gone_and_the_results_read_not_graded(
    workspace, owner, fake_llm, connections
):
    from datetime import timedelta

    from django.utils import timezone

    from judging.jobs import GRADING_STOPPED
    from judging.models import ASSERTION_GRADING_JOB
    from lab.jobs.kinds import kind
    from lab.jobs.lifecycle import job_sweep

    checks = [{"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{fake_llm.model()}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, _), (job, _) = grade(group, owner)
    past = timezone.now() - timedelta(minutes=5)
    assert AssertionGrading.objects.transition(job.pk, AssertionGradingStatus.RUNNING, deadline=past)

    assert job.pk in job_sweep(kind(ASSERTION_GRADING_JOB)).failed
    job.refresh_from_db()
    assert (job.status, job.error) == (AssertionGradingStatus.FAILED, GRADING_STOPPED)
    assert results(tea)[0].reason == f"Not graded: {GRADING_STOPPED}"
    assert verdict(tea) == (None, None)


def test_the_page_and_the_api_show_pending_then_not_graded(client, api, workspace, owner, fake_llm, connections):
    broken = fake_llm.model(fault=500)
    checks = [{"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{broken}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, _), (job, _) = grade(group, owner)
    client.force_login(owner)

    page = client.get(f"/compare/{group.pk}/").content.decode()
    assert "not graded yet" in page and "<strong>pending</strong>" in page
    shown = api.get(f"/api/v1/rounds/{tea.round_id}/").json()["outputs"][0]
    assert shown["assertions"][0] | {"reason": ""} == {
        "type": "llm-rubric",
        "metric": None,
        "pass": None,
        "score": None,
        "reason": "",
        "state": "pending",
    }
    assert shown["assertions_passed"] is None

    run(job)
    page = client.get(f"/compare/{group.pk}/").content.decode()
    assert "<strong>not graded</strong>" in page
    assert api.get(f"/api/v1/rounds/{tea.round_id}/").json()["outputs"][0]["assertions"][0]["state"] == "not_graded"


def test_open_pages_are_told_to_reload_once_the_grader_has_answered(
    workspace, owner, fake_llm, connections, django_capture_on_commit_callbacks
):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from lab.realtime import group_channel

    grader = fake_llm.model()
    checks = [{"type": "llm-rubric", "value": "Mentions a drink", "provider": f"{JUDGE}::{grader}"}]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (_, _), (job, _) = grade(group, owner)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_channel(group.pk), channel)
    reply(fake_llm, grader, {"reason": "Tea.", "pass": True, "score": 1})
    with django_capture_on_commit_callbacks(execute=True):
        run(job)
    assert async_to_sync(layer.receive)(channel)["event"] == {"type": "resync"}


def test_the_simulated_judge_grades_every_judge_based_type_offline(workspace, owner, fake_llm, connections):
    """The simulated provider replies with an instance of each grader schema (offline demos)."""
    checks = [
        {"type": kind, "value": "Talks about tea", "provider": "simulated::instant"}
        for kind in ("llm-rubric", "model-graded-closedqa", "g-eval")
    ]
    group = judged_group(workspace, owner, count=2, assertions=checks)
    (tea, _), (job, _) = grade(group, owner)
    run(job)
    graded = results(tea)
    assert [r.state for r in graded] == ["graded"] * 3, [r.reason for r in graded]
    assert all(0 <= r.score <= 1 for r in graded)
    assert verdict(tea)[0] is not None
