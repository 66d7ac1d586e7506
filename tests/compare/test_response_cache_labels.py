"""Opting in to the response cache (a run's `cache` field, an experiment's `cache: true` or its form) and seeing
its answers marked as cached wherever they show: the API, the comparison page, the experiment's results, page and
file."""

import time
from decimal import Decimal

import pytest
import yaml

from compare.experiments.config import config_from_data, config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.report import results_text
from compare.experiments.results import experiment_results
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_start
from compare.experiments.spec import ConfigError
from compare.models import Output, Round
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake(workspace, fake_llm):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    return fake_llm


def finished(round_id: int, limit_s: float = 30) -> None:
    """Wait for a round a worker may have taken (round_execute returns at once then); not a timing assertion."""
    deadline = time.monotonic() + limit_s
    while Round.objects.get(pk=round_id).status in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def cached_group(workspace, owner, fake):
    """A comparison whose answers are in the cache: one round with the cache on has run."""
    model = fake.model(tokens=5)
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2, prompts=["One {{topic}}", "Two {{topic}}"])
    round_execute(round_id=make_round(group, use_cache=True).pk)
    return group


def test_a_run_started_with_cache_through_the_api_takes_cached_answers_labelled_as_such(api, cached_group):
    response = api.post(f"/api/v1/groups/{cached_group.pk}/runs/", {"cache": True}, format="json")
    assert response.status_code == 202, response.json()
    [started] = response.json()["rounds"]
    assert started["use_cache"] is True
    round_execute(round_id=started["id"])  # returns at once if a worker (another test's) took it first
    finished(started["id"])

    body = api.get(f"/api/v1/rounds/{started['id']}/").json()
    assert body["status"] == "done"
    assert [(o["cached"], Decimal(o["cost"]), o["latency_ms"]) for o in body["outputs"]] == [(True, 0, None)] * 2


def test_a_run_without_the_field_leaves_the_cache_off_and_a_bad_value_is_a_400(api, cached_group):
    response = api.post(f"/api/v1/groups/{cached_group.pk}/runs/", {}, format="json")
    [started] = response.json()["rounds"]
    assert started["use_cache"] is False
    round_execute(round_id=started["id"])
    finished(started["id"])
    assert not Output.objects.filter(round=started["id"], cached=True).exists()
    refused = api.post(f"/api/v1/groups/{cached_group.pk}/runs/", {"cache": "sometimes"}, format="json")
    assert refused.status_code == 400 and "cache" in refused.json()


def test_the_comparison_page_offers_the_toggle_and_marks_a_cached_column(client, owner, cached_group):
    client.force_login(owner)
    round_execute(round_id=make_round(cached_group, use_cache=True).pk)
    page = client.get(f"/compare/{cached_group.pk}/").content.decode()
    assert 'data-role="use-cache"' in page
    cached = client.get(f"/compare/{cached_group.pk}/rounds/2/partial/").content.decode()
    assert cached.count('data-role="cached"') == 2
    fresh = client.get(f"/compare/{cached_group.pk}/rounds/1/partial/").content.decode()
    assert 'data-role="cached"' not in fresh


def experiment_file(tmp_path, model: str, cache: bool | None) -> str:
    data = {
        "name": "Cached greetings",
        "models": [{"model": f"fake:{model}"}],
        "prompts": [{"name": "p1", "prompt": "Greet <<who>>."}, {"name": "p2", "prompt": "Welcome <<who>>."}],
        "dataset": [{"name": "ada", "vars": {"who": "Ada"}}, {"name": "bo", "vars": {"who": "Bo"}}],
    }
    if cache is not None:
        data["cache"] = cache
    path = tmp_path / "cached.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_file(path, workspace, owner):
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(path.parent))
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    experiment_start(experiment=experiment, user=owner)
    experiment_run_here(experiment=experiment, concurrency=2, on_progress=lambda progress: None)
    return experiment


def test_an_experiment_file_with_cache_true_runs_again_from_the_cache_labelled_everywhere(
    client, workspace, owner, fake, tmp_path
):
    model = fake.model(tokens=5)
    path = experiment_file(tmp_path, model, cache=True)
    first = run_file(path, workspace, owner)
    assert fake.scenario(model)["requests"] == 4
    second = run_file(path, workspace, owner)
    assert fake.scenario(model)["requests"] == 4  # the re-run made no call

    assert Round.objects.filter(group=second.group).values_list("use_cache", flat=True).distinct().get()
    assert all(Output.objects.filter(round__group=second.group).values_list("cached", flat=True))
    results = experiment_results(second)
    assert results.overall.cached == 4 and results.overall.cost == 0
    assert experiment_results(first).overall.cached == 0
    assert results_text(results).count("from the cache (no call made, cost 0)") == 4

    client.force_login(owner)
    page = client.get(f"/compare/{second.group_id}/experiment/").content.decode()
    assert page.count('data-role="cached"') == 4 and 'data-role="cache-on"' in page
    assert 'data-role="cached"' not in client.get(f"/compare/{first.group_id}/experiment/").content.decode()
    exported = yaml.safe_load(client.get(f"/compare/{second.group_id}/export/").content)
    assert exported["cache"] is True


def test_an_experiment_without_cache_makes_every_call_again(workspace, owner, fake, tmp_path):
    model = fake.model(tokens=5)
    path = experiment_file(tmp_path, model, cache=None)
    run_file(path, workspace, owner)
    second = run_file(path, workspace, owner)
    assert fake.scenario(model)["requests"] == 8
    assert not any(Output.objects.filter(round__group=second.group).values_list("cached", flat=True))


def test_the_cache_key_of_a_file_must_be_true_or_false(tmp_path):
    with pytest.raises(ConfigError) as raised:
        config_from_data(
            {"models": [{"model": "a:b"}], "prompts": [{"prompt": "Hi"}], "cache": "yes"},
            source="x.yaml",
            files=DirectoryFiles(tmp_path),
        )
    assert any(message.startswith("x.yaml: cache: true to reuse") for message in raised.value.messages)


def test_the_experiment_form_turns_the_cache_on(client, workspace, owner, fake):
    client.force_login(owner)
    form = {
        "kind": "build",
        "name": "From the form",
        "other_models": f"fake::{fake.model(tokens=3)}",
        "rows": "[{name: one, vars: {who: Ada}}]",
        "cache": "on",
        "output_format": "json",
        "params-TOTAL_FORMS": "0",
        "params-INITIAL_FORMS": "0",
        "prompts-TOTAL_FORMS": "1",
        "prompts-INITIAL_FORMS": "0",
        "prompts-0-name": "p",
        "prompts-0-prompt": "Hello.",
    }
    response = client.post(f"/w/{workspace.pk}/experiments/estimate/", form)
    assert response.status_code == 200, response.context.get("errors")
    page = response.content.decode()
    assert 'data-role="cache-on"' in page and "&quot;cache&quot;: true" in page
