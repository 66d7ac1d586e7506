"""The report compares like with like: judge scores of rounds judged on a different set of metrics (one the judge
could not score was dropped) are left out of the figures, and the report says how many and without what."""

import pytest

from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import relative

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")
ACCURACY = Metric("Accuracy", 1, "Wrong.", "Right.")

pytestmark = pytest.mark.django_db


def test_rounds_judged_without_a_metric_are_left_out_and_named(workspace, owner, fake_llm, connections, api, client):
    group = judged_group(workspace, owner, count=2)
    judge, scenario = make_judge(
        workspace, owner, fake_llm, scale="1-5", metrics=[QUALITY.as_dict(), ACCURACY.as_dict()]
    )
    rounds = [answered_round(group, owner, [f"alpha {n}", f"beta {n}"]) for n in (1, 2, 3)]
    good = {"alpha": (5, "best"), "beta": (2, "weak")}
    for round_ in rounds[:2]:
        fake_llm.script(scenario, relative(good, metric=QUALITY), relative(good, metric=ACCURACY))
        verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)
    # The third round's Accuracy replies cannot be read, twice: it is judged on Quality alone.
    unreadable = {"text": "no idea", "match": "Metric:\n- Accuracy"}
    fake_llm.script(scenario, relative(good, metric=QUALITY), unreadable, unreadable)
    third = verdict_execute(verdict_id=verdict_request(round=rounds[2], user=owner, judge=judge).pk)
    assert [m["name"] for m in third.missing_metrics] == ["Accuracy"]
    sent = [body["messages"][1]["content"] for body in fake_llm.requests(scenario)]
    assert sum("Accuracy" in text for text in sent) == 4  # two rounds once each, the third twice

    data = api.get(f"/api/v1/groups/{group.pk}/report/").json()

    assert data["judge"]["rounds"] == 2
    assert data["judge"]["left_out"] == [{"rounds": 1, "without": ["Accuracy"], "only_with": []}]
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/report/")
    assert "Left out, to compare like with like: 1 round judged without Accuracy" in page.content.decode()
