"""Fairness between a comparison's columns (docs/fairness.md): no column gets more time or an earlier start for its
position, and a wait for a connection's turn is its own figure.

Rounds run in this process against the fake LLM server, whose answers take a set time (`tokens` × `token_ms`)."""

import pytest

from compare.models import MAX_VARIANTS, CompareGroup, OutputStatus
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT_MS = 2_000


def three_columns(api, workspace, model: str, **fields) -> CompareGroup:
    """A prompts comparison of three versions on one fake model, created as a client would."""
    body = {
        "workspace": workspace.pk,
        "mode": "prompts",
        "variants": [{"label": label, "model": f"fake::{model}", "prompt": "Hello."} for label in "ABC"],
        **fields,
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    return CompareGroup.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize(
    ("token_ms", "status"),
    [(100, OutputStatus.OK), (300, OutputStatus.TIMEOUT)],  # 10 tokens: 1 s and 3 s against a 2 s timeout
)
def test_three_answers_of_the_same_speed_end_the_same_way_whatever_their_column(
    api, workspace, fake_llm, token_ms, status
):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    # An old client's step is still accepted, and gives the later columns nothing.
    group = three_columns(
        api, workspace, fake_llm.model(tokens=10, token_ms=token_ms), timeout_ms=TIMEOUT_MS, timeout_step_ms=2_000
    )
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    outputs = list(round_.outputs.order_by("variant__position"))
    assert [o.status for o in outputs] == [status] * 3, [o.error for o in outputs]
    if status == OutputStatus.TIMEOUT:
        assert {o.error for o in outputs} == {
            "No complete answer within 2 s of sending the request; the partial answer is kept."
        }


def test_an_old_clients_timeout_step_is_accepted_and_read_back_as_zero(api, workspace):
    body = {
        "workspace": workspace.pk,
        "mode": "prompts",
        "variants": [{"model": "simulated::instant", "prompt": p} for p in ("Hi.", "Hello.")],
        "timeout_step_ms": 5_000,
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    assert (response.json()["timeout_ms"], response.json()["timeout_step_ms"]) == (120_000, 0)
    bad = api.post("/api/v1/groups/", {**body, "timeout_step_ms": -1}, format="json")
    assert bad.status_code == 400 and "timeout_step_ms" in bad.json()


def test_five_variants_on_a_connection_with_the_default_limit_are_in_flight_together(workspace, owner, fake_llm):
    connection = connection_create(
        workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url
    )
    model = fake_llm.model(ttft_ms=800, tokens=3)  # long enough for every start to land while the first is out
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 5)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    outputs = list(round_.outputs.order_by("variant__position"))
    assert [o.status for o in outputs] == [OutputStatus.OK] * 5, [o.error for o in outputs]
    assert fake_llm.scenario(model)["max_in_flight"] == 5
    assert connection.max_concurrency >= MAX_VARIANTS


def test_a_wait_for_a_slot_is_its_own_figure_and_not_part_of_ttft_or_latency(api, workspace, owner, fake_llm):
    connection_create(
        workspace=workspace, name="one", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=1
    )
    slow, quick = fake_llm.model(ttft_ms=1_500, tokens=2), fake_llm.model(tokens=2)
    group = make_group(workspace, owner, models=[f"one::{slow}", f"one::{quick}"])
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    first, second = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"]  # an open round: in variant order
    assert first["queued_ms"] < 1_000 <= 1_500 <= first["ttft_ms"]
    # The second waited for the first's whole answer (at least 1.5 s less its 50 ms stagger), then answered at once.
    assert second["queued_ms"] >= 1_400
    assert second["ttft_ms"] < 1_000 and second["latency_ms"] < 1_000  # a generous bound: it is a few ms
