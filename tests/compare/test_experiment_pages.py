"""The experiment and dataset pages: upload a file (with the files it names) or build one in the form, see the
estimate, run it on a real worker and read the results grid, status and export; another workspace's are 404."""

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from compare.experiments.models import Experiment
from compare.experiments.selectors import experiment_progress
from compare.experiments.urls import experiment_page_path
from compare.models import CompareGroup, Dataset, RoundStatus
from lab.models import Role
from tests.fixtures.experiments import sample
from tests.fixtures.factories import add_member


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def upload(path, *extra):
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in extra]
    return {"kind": "upload", "config": SimpleUploadedFile(path.name, path.read_bytes()), "files": files}


def wait_until_finished(experiment, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        progress = experiment_progress(experiment)
        if progress["finished"]:
            return progress
        time.sleep(0.1)
    pytest.fail(f"The experiment did not finish: {experiment_progress(experiment)}")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_an_uploaded_file_is_estimated_run_by_the_worker_and_shown_as_a_grid(
    browser, workspace, connections, celery_worker_process
):
    estimate = browser.post(f"/w/{workspace.pk}/experiments/estimate/", upload(sample("classifier.yaml")))
    assert estimate.status_code == 200
    page = estimate.content.decode()
    assert '8 <span class="muted">(4 answers, 4 evaluations)</span>' in page and "Run it" in page
    assert not CompareGroup.objects.exists()  # nothing is saved before the confirmation

    ran = browser.post(
        f"/w/{workspace.pk}/experiments/run/",
        {"config": estimate.context["data"], "source": "classifier.yaml"},
    )

    experiment = Experiment.objects.get()
    assert ran.status_code == 302 and ran["Location"] == f"/compare/{experiment.group_id}/experiment/"
    progress = wait_until_finished(experiment)
    assert (progress["done"], progress["total"], progress["stopped"]) == (8, 8, "")
    assert set(experiment.group.rounds.values_list("status", flat=True)) == {RoundStatus.DONE}
    detail = browser.get(ran["Location"]).content.decode()
    assert detail.count('class="badge good"') == 2 and detail.count('class="badge bad"') == 2
    assert detail.count("/1</span>") == 4  # every answer has its binary score
    assert "By model" in detail and "By dataset row" in detail and 'href="/compare/' in detail
    status = browser.get(f"/compare/{experiment.group_id}/experiment/status/").json()
    assert status["finished"] and status["evaluations_done"] == 4
    exported = browser.get(f"/compare/{experiment.group_id}/export/")
    assert exported["Content-Type"].startswith("application/yaml") and b"structured-output:" in exported.content


@pytest.mark.django_db
def test_the_files_a_config_names_are_uploaded_beside_it(browser, workspace, connections):
    folder = sample("with_files")
    named = [folder / "prompts/friendly.txt", folder / "prompts/evaluator.txt", folder / "data/tickets.yaml"]
    response = browser.post(f"/w/{workspace.pk}/experiments/estimate/", upload(folder / "experiment.json", *named))
    assert response.status_code == 400
    assert (
        "experiment.json: dataset[2] (file data/more.csv): file: cannot read data/more.csv: data/more.csv was "
        "not uploaded with the experiment" in response.content.decode()
    )

    response = browser.post(
        f"/w/{workspace.pk}/experiments/estimate/", upload(folder / "experiment.json", *named, folder / "data/more.csv")
    )
    assert response.status_code == 200, response.context["errors"]
    assert response.context["estimate"].answers.calls == 9


@pytest.mark.django_db
def test_a_broken_upload_shows_every_problem(browser, workspace, connections):
    response = browser.post(f"/w/{workspace.pk}/experiments/estimate/", upload(sample("broken/duplicate_names.yaml")))
    assert response.status_code == 400
    assert "4 problems to fix" in response.content.decode()
    assert "duplicate_names.yaml: prompts[2] (ask): name: prompts[1] (ask) already uses &#x27;ask&#x27;" in (
        response.content.decode()
    )


@pytest.mark.django_db
def test_an_experiment_built_in_the_form_is_estimated_and_started(browser, workspace, connections):
    form = {
        "kind": "form",
        "name": "Built here",
        "models": ["judge::fake"],
        "other_models": "cands:fake?tokens=3",
        "params-TOTAL_FORMS": "3",
        "params-INITIAL_FORMS": "0",
        "params-0-name": "cool",
        "params-0-temperature": "0.1",
        "prompts-TOTAL_FORMS": "3",
        "prompts-INITIAL_FORMS": "0",
        "prompts-0-name": "ask",
        "prompts-0-prompt": "Tell me about <<topic>>.",
        "rows": "- {name: one, vars: {topic: tea}}\n- {name: two, vars: {topic: rain}}\n",
        "output_format": "json",
    }
    page = browser.get(f"/w/{workspace.pk}/experiments/new/")
    assert page.status_code == 200 and "judge::fake" in page.content.decode()

    estimate = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)

    assert estimate.status_code == 200, estimate.context.get("errors")
    assert estimate.context["labels"] == ["judge::fake · cool · ask", "cands::fake?tokens=3 · cool · ask"]
    assert estimate.context["estimate"].answers.calls == 4
    ran = browser.post(f"/w/{workspace.pk}/experiments/run/", {"config": estimate.context["data"], "source": "form"})
    assert ran.status_code == 302
    group = Experiment.objects.get().group
    assert group.mode == "custom" and group.rounds.count() == 2 and group.dataset.rows.count() == 2


@pytest.mark.django_db
def test_another_workspaces_experiments_and_datasets_are_not_found(workspace, owner, connections, stranger):
    from compare.experiments.config import config_read
    from compare.experiments.files import DirectoryFiles
    from compare.experiments.services import experiment_create

    path = sample("minimal.yaml")
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(path.parent))
    group_id = experiment_create(workspace=workspace, user=owner, config=config).group_id
    dataset = Dataset.objects.get()
    client = Client()
    client.force_login(stranger)
    for url in [
        f"/compare/{group_id}/experiment/",
        f"/compare/{group_id}/experiment/status/",
        f"/compare/{group_id}/export/",
        f"/w/{workspace.pk}/experiments/",
        f"/w/{workspace.pk}/experiments/new/",
        f"/w/{workspace.pk}/datasets/",
        f"/datasets/{dataset.pk}/",
    ]:
        assert client.get(url).status_code == 404, url
    for url in [f"/w/{workspace.pk}/experiments/estimate/", f"/datasets/{dataset.pk}/delete/"]:
        assert client.post(url, {"kind": "upload"}).status_code == 404, url
    assert Dataset.objects.filter(pk=dataset.pk).exists()


@pytest.mark.django_db
def test_a_viewer_sees_results_but_may_not_start_experiments(workspace, connections):
    viewer = add_member(workspace, "viewer", Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    assert client.get(f"/w/{workspace.pk}/experiments/").status_code == 200
    assert client.get(f"/w/{workspace.pk}/experiments/new/").status_code == 403
    assert client.post(f"/w/{workspace.pk}/experiments/run/", {"config": "{}"}).status_code == 403


@pytest.mark.django_db
def test_a_dataset_is_previewed_imported_and_edited_on_its_pages(browser, workspace):
    content = b'{"q": "first", "n": {"deep": 1}}\n{"q": "second"}\n'
    preview = browser.post(
        f"/w/{workspace.pk}/datasets/preview/",
        {"name": "Questions", "file": SimpleUploadedFile("q.jsonl", content), "format": ""},
    )
    assert preview.status_code == 200 and "2 rows (jsonl)" in preview.content.decode()
    assert not Dataset.objects.exists()

    imported = browser.post(
        f"/w/{workspace.pk}/datasets/import/", {"name": "Questions", "format": "jsonl", "content": content.decode()}
    )
    dataset = Dataset.objects.get()
    assert imported.status_code == 302 and imported["Location"] == f"/datasets/{dataset.pk}/"
    saved = browser.post(f"/datasets/{dataset.pk}/rows/2/", {"name": "two", "vars": '{"q": "changed"}'})
    assert saved.status_code == 302
    assert list(dataset.rows.order_by("position").values_list("name", "vars")) == [
        ("", {"q": "first", "n": {"deep": 1}}),
        ("two", {"q": "changed"}),
    ]
    bad = browser.post(f"/datasets/{dataset.pk}/rows/2/", {"name": "two", "vars": "[1]"}, follow=True)
    assert "Row 2: vars: give at least one variable" in bad.content.decode()
    page = browser.get(f"/datasets/{dataset.pk}/").content.decode()
    assert "&quot;deep&quot;: 1" in page


@pytest.mark.django_db
def test_a_dataset_can_be_pasted_and_its_problems_name_the_row(browser, workspace):
    pasted = {"name": "Pasted", "text": "q,a\nfirst,1\nsecond\n", "format": "csv"}
    preview = browser.post(f"/w/{workspace.pk}/datasets/preview/", pasted)
    assert preview.status_code == 400
    assert "Row 2 (line 3): has 1 cells; the first line names 2 columns." in preview.content.decode()
    preview = browser.post(f"/w/{workspace.pk}/datasets/preview/", {**pasted, "text": "q,a\nfirst,1\n"})
    assert preview.status_code == 200 and "1 row (csv)" in preview.content.decode()


def test_the_experiment_commands_page_path_is_the_sites():
    # The command builds it from compare's experiment URLs alone (loading every app's views took two seconds).
    for pk in (1, 4321):
        assert experiment_page_path(pk) == reverse("compare:experiment", args=[pk])
