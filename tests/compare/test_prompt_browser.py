"""The prompt library, the answer diff and the baseline page in a real Chromium: hostile prompt and answer text
stays inert text inside the diffs (no dialog, no element, no request), the diffs mark what changed, and the pages
are captured for docs/screenshots (run with ARTEFACTS_DIR=docs to refresh them there)."""

import uuid

import pytest

from compare.models import Mode, Output
from compare.prompts import services as prompts
from compare.services import group_create
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import fake_connections
from tests.fixtures.processes import free_port
from tests.fixtures.voting_factories import finished_round
from tests.judging.scripts import pointwise

pytestmark = [pytest.mark.browser, pytest.mark.services]


def hostile(base: str) -> str:
    return (
        f'<script>window.__xss = 1; alert(1)</script> <img src="{base}/i.png" onerror="alert(2)"> '
        '<a href="javascript:alert(3)">link</a> {{topic}}'
    )


def inert(page, scope: str) -> list[str]:
    """Elements inside `scope` other than the diff's own marks (and a message's role chip): there should be none."""
    return page.evaluate(
        """scope => [...document.querySelectorAll(scope + ' *')]
            .filter(el => !['INS', 'DEL', 'DIV', 'H3', 'P'].includes(el.tagName)
                          && !(el.tagName === 'SPAN' && el.className === 'role-chip')).map(el => el.tagName)""",
        scope,
    )


def library(workspace, owner, base):
    prompt = prompts.prompt_create(
        workspace=workspace,
        user=owner,
        name="Support reply",
        text="Answer the customer about {{topic}} politely, in two sentences.",
        message="first draft",
    )
    second = prompts.prompt_version_create(
        prompt=prompt,
        user=owner,
        text=f"Answer the customer about {{{{topic}}}} warmly and briefly, in one sentence. {hostile(base)}",
        message="shorter, warmer",
        parent=prompt.current,
    )
    group = group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Support tone",
        shared_variables={"topic": "a late parcel"},
        variants=[
            {"label": "Polite", "model": INSTANT, "prompt": "", "prompt_version": prompt.current.pk},
            {"label": "Warm", "model": INSTANT, "prompt": "", "prompt_version": second.pk},
        ],
    )
    round_ = finished_round(group, owner, enqueue=False)
    polite, warm = round_.outputs.order_by("variant__position")
    Output.objects.filter(pk=polite.pk).update(text="We are sorry your parcel is late. It will arrive on Friday.")
    Output.objects.filter(pk=warm.pk).update(
        text=f"So sorry about the wait! Your parcel arrives Friday. {hostile(base)}"
    )
    return prompt, group


def baseline_runs(workspace, fake_llm, tmp_path):
    fake_connections(workspace, fake_llm)
    judge = f"fake?id=shots-{uuid.uuid4().hex[:8]}"
    fake_llm.script(judge, *[pointwise({"Overall": (5, "Good.")}, about="a careful answer")] * 12)
    rows = "\n".join(f"  - {{name: q{i}, vars: {{n: {i}}}}}" for i in range(1, 13))

    def file(answer):
        path = tmp_path / f"{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(
            f"name: Release gate\nevaluation: {{type: 1-5, model: 'judge:{judge}'}}\n"
            f"models: [{{model: 'cands:fake?text={answer}'}}]\nprompts: {{ask: 'Answer question <<n>>.'}}\n"
            f"dataset:\n{rows}\n"
        )
        return str(path)

    assert run_command("run", file("a%20careful%20answer")).code == 0
    ran = run_command("run", file("a%20sloppy%20reply"), "--baseline", "latest")
    assert ran.code == 4, ran.err
    from compare.models import CompareGroup

    return CompareGroup.objects.order_by("-pk").first()


@pytest.mark.django_db(transaction=True)
def test_the_library_diffs_and_baseline_pages_show_changes_and_keep_hostile_text_inert(
    page_factory, web_server, owner, workspace, fake_llm, screenshots, tmp_path
):
    base = f"http://127.0.0.1:{free_port()}"  # closed: nothing listens there
    prompt, group = off_loop(library, workspace, owner, base)
    current = off_loop(baseline_runs, workspace, fake_llm, tmp_path)

    page = page_factory(1280, 900)
    dialogs, requests = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    log_in(page, web_server.url, owner.username)

    # The prompt page: versions with lineage, the diff of v1 → v2, and the versions' standing (voting's partial).
    page.goto(f"{web_server.url}/prompts/{prompt.pk}/?a=1&b=2")
    assert page.locator(".version-list li").count() == 2
    assert "from v1" in page.inner_text(".version-list li[data-version='2']")
    diff = "[data-role=prompt-diff]"
    assert page.locator(f"{diff} ins").count() >= 1 and page.locator(f"{diff} del").count() >= 1
    assert "<script>window.__xss = 1; alert(1)</script>" in page.inner_text(diff)
    assert inert(page, diff) == []
    until(page, "document.querySelector('.standing tr[data-version=\"2\"]')")
    shoot(page, screenshots, "prompt-versions-diff", full_page=True)

    # The comparison page: "highlight what differs" between the two answers.
    page.goto(f"{web_server.url}/compare/{group.pk}/")
    page.check("[data-role=diff-toggle]")
    until(page, "document.querySelector('[data-role=answer-diff] ins')")
    body = "[data-role=answer-diff] [data-role=diff-body]"
    assert "So sorry about the wait!" in page.inner_text(f"{body} [data-side=b]")
    assert '<img src="' in page.inner_text(f"{body} [data-side=b]")
    assert inert(page, f"{body} .diff-columns") == []
    page.locator("[data-role=answer-diff]").scroll_into_view_if_needed()
    shoot(page, screenshots, "answer-diff-toggle")

    # The editor (clone and edit): the variant made from v1 shows what its edited prompt changed from it.
    page.goto(f"{web_server.url}/compare/{group.pk}/edit/")
    first = page.locator(".ecol").first
    assert first.locator("[data-role=version-pick]").input_value() == str(prompt.versions.get(number=1).pk)
    first.locator(".ecol-prompt textarea").fill("Answer the customer about {{topic}} kindly, in two sentences.")
    first.locator("[data-role=version-diff] summary").click()
    until(page, "document.querySelector('.ecol [data-role=version-diff-body] ins')")
    assert first.locator("[data-role=version-diff-body] del").inner_text() == "politely"
    shoot(page, screenshots, "editor-version-diff")

    # The baseline page: the same verdict the command line printed, and each answer's diff.
    page.goto(f"{web_server.url}/compare/{current.pk}/experiment/baseline/")
    assert page.inner_text("#verdict-title") == "Verdict: significant regression"
    assert page.inner_text("[data-role=verdict]").startswith("Significant regression: scores are lower by 1.000")
    assert page.locator(".baseline-pairs tbody tr.worse").count() == 12
    shoot(page, screenshots, "baseline-comparison", full_page=True)

    assert dialogs == []
    assert not [url for url in requests if url.startswith(base)]
    assert page.evaluate("() => window.__xss") is None
