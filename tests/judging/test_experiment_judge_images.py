"""An experiment's judge and the request's images (judging/images.py, the rule comparisons' verdicts follow): a
judge whose model may read images is shown the image of the prompt each answer was written for; one whose model is
known not to judges the text only, and the evaluation's note says so on the results page."""

import io
import json

import pytest
from django.test import Client

from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from compare.experiments.urls import experiment_page_path
from judging.images import IMAGES_INTRO
from lab.files.services import file_create
from tests.fixtures.experiments import run_command
from tests.fixtures.images import image_bytes

pytestmark = pytest.mark.django_db(transaction=True)

SCORED = "  type: 1-5\n"
CLASSIFIED = "  type: binary-classification\n  criteria: Does it name a colour?\n  target: colour\n  non-target: none\n"


@pytest.fixture(autouse=True)
def shared_media(settings, session_media_root):
    """The files go where the session's worker process reads them: an experiment's evaluation may be claimed by
    that worker (started by an earlier test) as well as by the command itself."""
    settings.MEDIA_ROOT = str(session_media_root)
    return session_media_root


def image_experiment(tmp_path, workspace, owner, judge: str, evaluation: str) -> str:
    stored, _ = file_create(workspace=workspace, actor=owner, stream=io.BytesIO(image_bytes("png")), name="cat.png")
    text = (
        f"evaluation:\n  model: 'judge:{judge}'\n{evaluation}"
        "models:\n  - model: 'cands:fake?text=Red.'\n"
        "prompts:\n  - name: ask\n    prompt: 'Look: <<photo>> What colour is it?'\n"
        f"dataset:\n  - {{name: r1, vars: {{photo: {{'$file': {stored.pk}}}}}}}\n"
    )
    path = tmp_path / "images.experiment.yaml"
    path.write_text(text)
    return str(path)


def judged(tmp_path, workspace, owner, fake_llm, judge, evaluation, reply):
    fake_llm.script(judge, reply, reply)
    ran = run_command("run", image_experiment(tmp_path, workspace, owner, judge, evaluation))
    assert ran.code == 0, ran.err + ran.out
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.DONE, evaluation.reason
    return evaluation, fake_llm.requests(judge), ran.out


SCORE_REPLY = {"text": json.dumps({"metrics": {"Overall": {"reason": "names the colour", "score": 4}}})}
CLASS_REPLY = {"text": json.dumps({"reasoning": "it says red", "category": "colour"})}


@pytest.mark.parametrize("evaluation,reply", [(SCORED, SCORE_REPLY), (CLASSIFIED, CLASS_REPLY)])
def test_an_experiment_judge_that_may_read_images_is_shown_them(
    tmp_path, workspace, owner, connections, fake_llm, evaluation, reply
):
    judge = fake_llm.model()
    shown, sent, _ = judged(tmp_path, workspace, owner, fake_llm, judge, evaluation, reply)
    assert shown.inputs_note == ""
    content = sent[0]["messages"][-1]["content"]
    assert content[1] == {"type": "text", "text": f"\n\n{IMAGES_INTRO}"}
    assert content[2]["type"] == "image_url" and content[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "[image: photo]" in content[0]["text"]


@pytest.mark.parametrize("evaluation,reply", [(SCORED, SCORE_REPLY), (CLASSIFIED, CLASS_REPLY)])
def test_an_experiment_judge_whose_model_takes_no_images_judges_the_text_and_says_so(
    tmp_path, workspace, owner, connections, fake_llm, evaluation, reply
):
    judge = fake_llm.model("gpt-3.5-turbo")
    shown, sent, printed = judged(tmp_path, workspace, owner, fake_llm, judge, evaluation, reply)
    note = f"Judged the text only: the request held 1 image, and the judge's model judge::{judge} does not take images."
    assert shown.inputs_note == note
    assert "Judged: Judged the text only" in printed  # the command's report, under the reason
    assert all(isinstance(message["content"], str) for body in sent for message in body["messages"])
    browser = Client()
    browser.force_login(owner)
    page = browser.get(experiment_page_path(Experiment.objects.get().group_id)).content.decode()
    assert 'data-role="inputs-note"' in page and note.replace("'", "&#x27;") in page
