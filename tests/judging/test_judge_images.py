"""The judge and the request's images: a judge whose model may read images is shown them after the text of every
call; one whose model is known not to judges the text only, and its verdict says so."""

import io

from compare.models import Output
from judging.images import IMAGES_INTRO
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from lab.files.services import file_create
from tests.fixtures.images import image_bytes
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import relative

METRIC = Metric("Accuracy", 1, "Wrong.", "Right.")
SCORES = {"alpha": (5, "right colour"), "beta": (2, "wrong colour")}


def round_with_an_image(workspace, owner):
    stored, _ = file_create(workspace=workspace, actor=owner, stream=io.BytesIO(image_bytes("png")), name="cat.png")
    group = judged_group(workspace, owner, count=2)
    round_ = answered_round(group, owner, ["alpha is red", "beta is blue"])
    part = {"type": "image", "file": stored.pk, "variable": "photo"}
    Output.objects.filter(round=round_).update(
        messages=[{"role": "user", "content": [{"type": "text", "text": "What colour? "}, part]}],
        rendered_prompt="What colour? [image: photo]",
    )
    return round_


def judged(workspace, owner, fake_llm, round_, scenario):
    judge, scenario = make_judge(workspace, owner, fake_llm, scenario=scenario, metrics=[METRIC.as_dict()])
    fake_llm.script(scenario, relative(SCORES, metric=METRIC))
    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)
    return verdict, fake_llm.requests(scenario)


def test_a_judge_that_may_read_images_is_shown_them(workspace, owner, connections, fake_llm, media_root):
    verdict, sent = judged(workspace, owner, fake_llm, round_with_an_image(workspace, owner), fake_llm.model())
    assert verdict.status == "done" and verdict.inputs_note == ""
    content = sent[0]["messages"][-1]["content"]
    assert content[1] == {"type": "text", "text": f"\n\n{IMAGES_INTRO}"}
    assert content[2]["type"] == "image_url" and content[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "[image: photo]" in content[0]["text"]


def test_a_judge_whose_model_takes_no_images_judges_the_text_and_says_so(
    api, workspace, owner, connections, fake_llm, media_root
):
    scenario = fake_llm.model("gpt-3.5-turbo")
    round_ = round_with_an_image(workspace, owner)
    verdict, sent = judged(workspace, owner, fake_llm, round_, scenario)
    assert verdict.status == "done"
    assert verdict.inputs_note == (
        f"Judged the text only: the request held 1 image, and the judge's model judge::{scenario} does not take images."
    )
    assert all(isinstance(message["content"], str) for body in sent for message in body["messages"])
    (shown,) = api.get(f"/api/v1/rounds/{round_.pk}/verdicts/").json()["verdicts"]
    assert shown["inputs_note"] == verdict.inputs_note
