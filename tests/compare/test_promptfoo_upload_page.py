"""The experiment upload page accepts a promptfoo config (issue 41, item 3): estimated on the workspace's connections
of the providers' names, saved as the same experiment the command line makes; a refused one lists every problem."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from compare.experiments.models import Experiment
from compare.models import CompareGroup, Output
from lab.services import connection_create
from tests.fixtures.judging_factories import KEY

from .test_promptfoo_configs import CONFIGS

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def upload(path, *extra):
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in extra]
    return {"kind": "upload", "config": SimpleUploadedFile(path.name, path.read_bytes()), "files": files}


def test_a_promptfoo_config_is_estimated_and_saved_as_an_experiment(browser, workspace, fake_llm):
    connection_create(workspace=workspace, name="openai", kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    folder = CONFIGS / "files"
    named = [folder / "prompts/support.txt", folder / "tests.csv", folder / "vars/policy.txt"]

    estimate = browser.post(f"/w/{workspace.pk}/experiments/estimate/", upload(folder / "promptfooconfig.yaml", *named))

    assert estimate.status_code == 200, estimate.content.decode()
    page = estimate.content.decode()
    assert "Read as a promptfoo config: 3 tests (after var lists expand) on 2 prompt × provider columns" in page
    assert not CompareGroup.objects.exists()

    ran = browser.post(
        f"/w/{workspace.pk}/experiments/run/",
        {
            "config": estimate.context["data"],
            "source": "promptfooconfig.yaml",
            "assertions": estimate.context["assertions"],
        },
    )

    assert ran.status_code == 302
    experiment = Experiment.objects.get()
    assert experiment.group.title == "Support replies from files"
    assert [v.params for v in experiment.group.variants.order_by("position")] == [
        {"temperature": 0.2, "max_tokens": 200}
    ] * 2
    assert Output.objects.filter(round__group=experiment.group).count() == 6
    # The CSV's `__expected` columns became the rows' assertions, graded as each answer finishes.
    rows = experiment.group.dataset.rows.order_by("position")
    assert [row.assertions for row in rows] == [
        [{"type": "icontains", "value": "30 days"}, {"type": "not-contains", "value": "sorry"}],
        [{"type": "contains-any", "value": ["tracking", "track"]}],
        [{"type": "equals", "value": "Yes we do"}],
    ]


def test_confirmed_assertions_are_checked_again(browser, workspace, fake_llm):
    connection_create(workspace=workspace, name="openai", kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    estimate = browser.post(
        f"/w/{workspace.pk}/experiments/estimate/", upload(CONFIGS / "basic" / "promptfooconfig.yaml")
    )
    forged = '[[{"type": "javascript", "value": "true"}], [], []]'

    ran = browser.post(
        f"/w/{workspace.pk}/experiments/run/",
        {"config": estimate.context["data"], "source": "promptfooconfig.yaml", "assertions": forged},
    )

    assert ran.status_code == 400
    assert "runs user code" in ran.content.decode()
    assert not CompareGroup.objects.exists()


def test_a_refused_promptfoo_upload_names_every_problem(browser, workspace):
    response = browser.post(
        f"/w/{workspace.pk}/experiments/estimate/", upload(CONFIGS / "refused" / "promptfooconfig.yaml")
    )

    assert response.status_code == 400
    page = response.content.decode()
    assert "sharing: not supported" in page
    assert "bedrock:anthropic.claude-v2" in page
    assert "frequency_penalty: not supported" in page
    assert not CompareGroup.objects.exists()
