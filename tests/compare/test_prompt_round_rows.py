"""Rounds saved as dataset rows: the variables come back exactly as each round ran (nested values, Unicode,
placeholders kept literal), a whole comparison or chosen rounds, into a new or an existing dataset, with the
team's winning answer as `reference` when asked, which an experiment's judge is shown; bad input is a 400 naming
the field, another workspace's a 400."""

import uuid

import pytest

from compare import services
from compare.datasets.round_rows import rounds_save_as_rows
from compare.datasets.services import dataset_create
from compare.models import Dataset, Mode, Round
from compare.rounds.start import round_start
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.experiments import run_command
from tests.fixtures.voting_factories import finished_round
from voting.services import vote_cast

pytestmark = pytest.mark.django_db

TRICKY = {"topic": "tea {{not a placeholder}}", "nested": {"list": [1, 2.5, None, True], "é": "中文"}, "n": 0}


@pytest.fixture
def rounds(workspace, owner):
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Tea talk",
        shared_variables=TRICKY,
        variants=[
            {"label": "A", "model": INSTANT, "prompt": "About {{topic}}."},
            {"label": "B", "model": INSTANT, "prompt": "Tell me of {{topic}}."},
        ],
    )
    made = [finished_round(group, owner) for _ in range(3)]
    for i, round_ in enumerate(made):  # each round a different input, as rounds over a dataset are
        Round.objects.filter(pk=round_.pk).update(variables=varied(i))
        round_.refresh_from_db()
    return made


def varied(i: int) -> dict:
    return {**TRICKY, "n": i}


def test_saved_rows_reproduce_each_rounds_variables_exactly(workspace, owner, rounds):
    dataset = rounds_save_as_rows(workspace=workspace, user=owner, rounds=rounds, name="From rounds")
    rows = list(dataset.rows.order_by("position"))
    assert [row.vars for row in rows] == [r.variables for r in rounds] == [varied(i) for i in range(3)]
    assert [row.name for row in rows] == ["Tea talk #1", "Tea talk #2", "Tea talk #3"]
    # Run again over the rows: each round gets the same variables as the one it came from.
    again = round_start(group=rounds[0].group, user=owner, dataset=dataset)
    assert [r.variables for r in again] == [r.variables for r in rounds]


def test_the_api_saves_a_whole_comparison_with_the_winning_answer_as_reference(
    api, workspace, owner, editor, viewer, rounds
):
    first, second, third = rounds
    a1 = first.outputs.get(variant__label="A")
    vote_cast(round=first, user=owner, output_id=a1.pk)
    vote_cast(round=first, user=editor, output_id=a1.pk)
    vote_cast(round=first, user=viewer, output_id=first.outputs.get(variant__label="B").pk)
    vote_cast(round=second, user=owner, output_id=second.outputs.get(variant__label="B").pk)
    vote_cast(round=second, user=editor, verdict="tie")  # a draw at the top: no winner
    # The third round has no votes.

    response = api.post(
        "/api/v1/datasets/from-rounds/",
        {"workspace": workspace.pk, "group": first.group_id, "name": "Gold", "reference": True},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["rows_added"], body["with_reference"], body["without_winner"]) == (3, 1, 2)
    rows = [row["vars"] for row in body["dataset"]["rows"]]
    assert rows == [{**varied(0), "reference": "answer of A"}, varied(1), varied(2)]


def test_chosen_rounds_are_appended_to_an_existing_dataset(api, workspace, owner, rounds):
    existing = dataset_create(workspace=workspace, user=owner, name="Old", rows=[{"vars": {"x": 1}}])
    response = api.post(
        "/api/v1/datasets/from-rounds/",
        {"workspace": workspace.pk, "rounds": [rounds[2].pk, rounds[0].pk], "dataset": existing.pk},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert [(r.position, r.name) for r in existing.rows.order_by("position")] == [
        (1, ""),
        (2, "Tea talk #3"),
        (3, "Tea talk #1"),
    ]


def test_bad_requests_are_400s_naming_the_field(api, api_for, stranger, workspace, owner, rounds):
    def error(body, client=api):
        response = client.post("/api/v1/datasets/from-rounds/", {"workspace": workspace.pk, **body}, format="json")
        assert response.status_code == 400, response.content
        return response.json()

    assert "rounds" in error({"name": "x"})
    assert "rounds" in error({"name": "x", "rounds": [rounds[0].pk], "group": rounds[0].group_id})
    assert "name" in error({"rounds": [rounds[0].pk]})
    assert "rounds" in error({"rounds": [999999], "name": "x"})
    assert "dataset" in error({"rounds": [rounds[0].pk], "dataset": 999999})
    assert "workspace" in error({"rounds": [rounds[0].pk], "name": "x"}, client=api_for(stranger))
    with_reference = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        shared_variables={"reference": "mine"},
        variants=[{"model": INSTANT, "prompt": "a {{reference}}"}, {"model": INSTANT, "prompt": "b {{reference}}"}],
    )
    clash = finished_round(with_reference, owner)
    assert "reference" in error({"rounds": [clash.pk], "name": "x", "reference": True})
    assert not Dataset.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_experiment_over_saved_rows_shows_the_judge_each_rows_reference(
    workspace, owner, editor, connections, fake_llm, tmp_path
):
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Greetings",
        shared_variables={"person": "Ada"},
        variants=[
            {"label": "A", "model": INSTANT, "prompt": "Greet {{person}}."},
            {"label": "B", "model": INSTANT, "prompt": "Say hi to {{person}}."},
        ],
    )
    voted = finished_round(group, owner, enqueue=False)
    vote_cast(round=voted, user=owner, output_id=voted.outputs.get(variant__label="B").pk)
    dataset = rounds_save_as_rows(
        workspace=workspace, user=owner, rounds=[voted], name="Gold greetings", references={voted.pk: "answer of B"}
    )
    judge = f"fake?id=ref-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "with_reference.yaml"
    path.write_text(
        f"evaluation: {{type: 1-5, model: 'judge:{judge}'}}\n"
        "models: [{model: 'cands:fake?tokens=3'}]\n"
        "prompts: {greet: 'Greet <<person>> as well as: <<reference>>'}\n"
        f"dataset:\n  - dataset: {dataset.pk}\n"
    )

    ran = run_command("run", str(path))

    assert ran.code == 0, ran.err
    [request] = fake_llm.requests(judge)
    shown = request["messages"][-1]["content"]
    assert "<reference>\nanswer of B\n</reference>" in shown
    assert "A reference answer the team judged good is given for comparison" in shown


def test_the_comparison_page_saves_its_rounds_as_rows(client, owner, editor, viewer, workspace, rounds):
    first = rounds[0]
    vote_cast(round=first, user=owner, output_id=first.outputs.get(variant__label="B").pk)
    client.force_login(viewer)
    assert client.post(f"/votes/groups/{first.group_id}/rows/", {"name": "No"}).status_code == 403
    client.force_login(owner)
    page = client.get(f"/compare/{first.group_id}/").content.decode()
    assert "Save rounds as dataset rows" in page

    response = client.post(f"/votes/groups/{first.group_id}/rows/", {"name": "Page rows", "reference": "on"})

    assert response.status_code == 302
    dataset = Dataset.objects.get(name="Page rows")
    assert [row.vars for row in dataset.rows.order_by("position")] == [
        {**varied(0), "reference": "answer of B"},
        varied(1),
        varied(2),
    ]
    # Round 2 is a row already: saving it again adds none.
    client.post(f"/votes/groups/{first.group_id}/rows/", {"round": "2", "dataset": str(dataset.pk)})
    assert dataset.rows.count() == 3


def test_the_page_refuses_a_dataset_that_is_gone_or_another_workspaces_instead_of_making_a_new_one(
    client, owner, stranger, workspace, rounds
):
    group_id = rounds[0].group_id
    theirs = dataset_create(
        workspace=stranger.memberships.get().workspace, user=stranger, name="Theirs", rows=[{"vars": {"a": 1}}]
    )
    client.force_login(owner)
    for dataset_id in ["999999", str(theirs.pk)]:
        response = client.post(f"/votes/groups/{group_id}/rows/", {"dataset": dataset_id, "name": "Fallback"})

        assert response.status_code == 302
        page = client.get(response.url).content.decode()
        assert "No such dataset in this workspace." in page
    assert not Dataset.objects.filter(name="Fallback").exists()
    assert theirs.rows.count() == 1


def test_the_page_refuses_a_dataset_name_the_database_cannot_store_with_a_message(client, owner, rounds):
    client.force_login(owner)
    url = f"/votes/groups/{rounds[0].group_id}/rows/"
    for name, message in [("x" * 201, "at most 200 characters"), ("a\x00b", "NUL character")]:
        response = client.post(url, {"name": name}, follow=True)

        assert response.status_code == 200
        assert message in response.content.decode()
    assert not Dataset.objects.exists()


def test_rounds_with_the_same_input_are_saved_as_one_row(workspace, owner):
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Again",
        shared_variables=TRICKY,
        variants=[
            {"label": "A", "model": INSTANT, "prompt": "About {{topic}}."},
            {"label": "B", "model": INSTANT, "prompt": "Tell me of {{topic}}."},
        ],
    )
    repeated = [finished_round(group, owner) for _ in range(3)]  # the same variables each time

    dataset = rounds_save_as_rows(
        workspace=workspace, user=owner, rounds=repeated, name="Once", references={repeated[1].pk: "answer of B"}
    )

    rows = list(dataset.rows.order_by("position"))
    assert [(row.name, row.vars) for row in rows] == [("Again #1", {**TRICKY, "reference": "answer of B"})]
    # Saved again into the same dataset: nothing new to add.
    again = rounds_save_as_rows(workspace=workspace, user=owner, rounds=repeated, dataset=dataset)
    assert again.rows.count() == 1


def test_the_api_counts_the_rows_added_once_per_input(api, workspace, owner, editor):
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Same",
        shared_variables={"topic": "tea"},
        variants=[
            {"label": "A", "model": INSTANT, "prompt": "{{topic}}"},
            {"label": "B", "model": INSTANT, "prompt": "x {{topic}}"},
        ],
    )
    finished_round(group, owner)  # no votes
    second = finished_round(group, owner)
    vote_cast(round=second, user=owner, output_id=second.outputs.get(variant__label="B").pk)

    response = api.post(
        "/api/v1/datasets/from-rounds/",
        {"workspace": workspace.pk, "group": group.pk, "name": "Once", "reference": True},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["rows_added"], body["with_reference"], body["without_winner"]) == (1, 1, 1)
    assert [row["vars"] for row in body["dataset"]["rows"]] == [{"topic": "tea", "reference": "answer of B"}]
