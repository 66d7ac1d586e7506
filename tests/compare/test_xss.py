"""Hostile model output on the comparison page: nothing runs, nothing loads that the page did not ship, and code
is still highlighted. Every URL in the payloads points at a closed port on 127.0.0.1, and the browser's requests
are recorded to prove none went there."""

import time

import pytest

from compare.models import Mode, Round
from lab.models import ConnectionKind
from lab.services import connection_create
from tests.fixtures.browser import log_in, off_loop
from tests.fixtures.compare_factories import make_group
from tests.fixtures.processes import free_port

pytestmark = [pytest.mark.browser, pytest.mark.services]

CODE = '```python\ndef greet(name):\n    return f"Hello, {name}"\n```'


def hostile_payloads(base: str) -> list[str]:
    """Script tags, event handlers, javascript: and data: links, iframes, SVG, style, Markdown images and links,
    HTML comments and a few parser tricks. `base` is the only network address any of them names."""
    return [
        "<script>window.__xss = 1; alert(1)</script>",
        f'<script src="{base}/s1.js"></script>',
        f'<img src="{base}/i1.png" onerror="window.__xss = 2; alert(2)">',
        f'<img srcset="{base}/i2.png 1x" alt="srcset">',
        '<svg onload="alert(3)"><circle r="10"/></svg>',
        "<svg><script>alert(4)</script></svg>",
        '<svg><a href="javascript:alert(5)"><text y="20">svg link</text></a></svg>',
        '<svg><animate onbegin="alert(6)" attributeName="x" dur="1s"/></svg>',
        f'<iframe src="{base}/f1.html"></iframe>',
        '<iframe srcdoc="<script>parent.alert(7)</script>"></iframe>',
        '<a href="javascript:alert(8)">js link</a>',
        '<a href="JaVaScRiPt:alert(9)">mixed-case js link</a>',
        '<a href="&#106;avascript:alert(10)">entity js link</a>',
        '<a href="data:text/html,<script>alert(11)</script>">data link</a>',
        "[markdown js link](javascript:alert(12))",
        "[markdown data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMyk8L3NjcmlwdD4=)",
        "[reference js link][evil]\n\n[evil]: javascript:alert(14)",
        f"![markdown image]({base}/i3.png)",
        f'![markdown image with title]({base}/i4.png "title")',
        "![markdown js image](javascript:alert(15))",
        f"<style>body {{ background: url({base}/bg.png); }} .col {{ display: none; }}</style>",
        f'<link rel="stylesheet" href="{base}/evil.css">',
        f'<div style="background-image: url({base}/i5.png)">inline style</div>',
        f'<!-- <img src="{base}/comment.png" onerror="alert(16)"> --> after a comment',
        f'<object data="{base}/o.swf"></object><embed src="{base}/e.swf">',
        f'<video src="{base}/v.mp4" onerror="alert(17)"></video><audio src="{base}/a.mp3" autoplay></audio>',
        '<body onload="alert(18)">',
        '<input autofocus onfocus="alert(19)">',
        '<details open ontoggle="alert(20)"><summary>toggle</summary></details>',
        f'<math><mtext><table><mglyph><style><img src="{base}/m.png" onerror="alert(21)">'
        "</style></mglyph></table></mtext></math>",
        f'<form action="{base}/f"><button formaction="javascript:alert(22)">submit</button></form>',
        f'<meta http-equiv="refresh" content="0;url={base}/refresh">',
        f'<base href="{base}/">',
        f'<a href="{base}/ok" onclick="alert(23)" onmouseover="alert(24)">hover me</a>',
        '"><script>alert(25)</script>',
        "<scr<script>ipt>alert(26)</scr</script>ipt>",
        '<marquee onstart="alert(27)">marquee</marquee>',
        f'<table background="{base}/t.png"><tr><td>table</td></tr></table>',
        '<xss id="x" tabindex="1" onfocusin="alert(28)">custom element</xss>',
        f'<img src="{base}/i6.png" onload="alert(29)">',
        '<a href="  javascript:alert(30)">spaced js link</a>',
    ]


def dangerous_nodes(page, scope: str) -> list[str]:
    """Every element or attribute in `scope` that could run code or fetch something."""
    return page.evaluate(
        """scope => {
        const found = [];
        const tags = "script,iframe,object,embed,svg,math,img,picture,video,audio,source,style,link,meta,base,"
          + "form,input,button,textarea,select,marquee,details,xss,body";
        for (const root of document.querySelectorAll(scope)) {
          for (const el of root.querySelectorAll(tags)) found.push(`<${el.tagName.toLowerCase()}>`);
          for (const el of root.querySelectorAll("*")) {
            for (const attr of el.attributes) {
              const value = attr.value.trim().toLowerCase();
              if (attr.name.startsWith("on") || ["style", "src", "srcset", "srcdoc", "background", "action",
                  "formaction", "data"].includes(attr.name)) found.push(`${attr.name}=${attr.value}`);
              if (["href", "xlink:href"].includes(attr.name) && !/^(https?:|mailto:)/.test(value))
                found.push(`${attr.name}=${attr.value}`);
            }
          }
        }
        return found;
      }""",
        scope,
    )


def test_hostile_answers_run_nothing_load_nothing_and_code_stays_highlighted(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, fake_llm
):
    closed = free_port()  # bound and released: nothing listens there
    base = f"http://127.0.0.1:{closed}"
    payloads = hostile_payloads(base)
    assert len(payloads) >= 30
    off_loop(
        connection_create,
        workspace=workspace,
        name="local",
        kind=ConnectionKind.OPENAI_COMPATIBLE,
        base_url=fake_llm.openai_url,
    )
    answering, refusing = fake_llm.model(token_ms=2), fake_llm.model()
    fake_llm.script(answering, {"text": "\n\n".join([*payloads, CODE])})
    fake_llm.script(refusing, {"status": 400, "message": f'<img src="{base}/err.png" onerror="alert(31)">refused'})
    hostile_name = f'<img src="{base}/title.png" onerror="alert(32)">'
    group = off_loop(
        make_group,
        workspace,
        owner,
        title=f"XSS {hostile_name}",
        mode=Mode.MODELS,
        models=(f"local::{answering}", f"local::{refusing}"),
        prompts=[f"Repeat after me: {hostile_name}"] * 2,
        system_prompt="<script>alert(33)</script>",
    )

    page = page_factory(1440, 900)
    dialogs, requests, violations = [], [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: violations.append(message.text) if "Content Security" in message.text else None)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group.pk}/")
    deadline = time.monotonic() + 10
    while page.evaluate("() => document.getElementById('compare').dataset.live") != "1":
        assert time.monotonic() < deadline, "the page's socket never connected"
        time.sleep(0.05)
    page.click("[data-action=rerun]")
    round_ = None
    while round_ is None or not round_.is_finished:
        assert time.monotonic() < deadline + 20, "the round did not finish"
        time.sleep(0.1)
        round_ = Round.objects.filter(group=group).first()
        if round_:
            round_.refresh_from_db()
    page.wait_for_selector(".col[data-status=ok] .answer .highlight")
    page.wait_for_selector(".col[data-status=error] .col-error")
    time.sleep(0.5)  # give anything that might run or load the chance to

    def check(where: str) -> None:
        assert dialogs == [], f"{where}: a payload opened a dialog: {dialogs}"
        assert page.evaluate("() => window.__xss") is None, f"{where}: a payload ran"
        assert dangerous_nodes(page, ".col-body") == [], where
        strays = [url for url in requests if f"127.0.0.1:{closed}" in url]
        assert strays == [], f"{where}: requests went to the payloads' address"
        foreign = [url for url in requests if not url.startswith((web_server.url, "data:", "about:"))]
        assert foreign == [], f"{where}: the page loaded something it did not ship"
        assert violations == [], f"{where}: the page tried something its policy forbids: {violations}"
        assert page.locator(".col").count() == 2 and page.locator(".col").first.is_visible()
        keyword = page.locator(".answer .highlight .k").first
        assert keyword.inner_text() == "def"
        colour = keyword.evaluate("e => getComputedStyle(e).color")
        assert colour != page.locator(".answer p").first.evaluate("e => getComputedStyle(e).color")

    check("live")  # the answer as the socket delivered it
    answer = page.locator(".col[data-status=ok] .answer").inner_text()
    assert "<script>window.__xss = 1; alert(1)</script>" in answer  # raw HTML is shown as text
    error = page.locator(".col[data-status=error] .col-error").inner_text()
    assert 'onerror="alert(31)"' in error  # shown as text, not parsed

    requests.clear()
    page.reload()  # the answer as the server renders it
    page.wait_for_selector(".vote-panel")
    time.sleep(0.5)
    check("reloaded")

    page.goto(f"{web_server.url}/w/{workspace.pk}/")  # the hostile title in the history
    assert page.locator("a.history-title").inner_text() == f"XSS {hostile_name}"
    time.sleep(0.3)
    assert dialogs == [] and not [url for url in requests if f"127.0.0.1:{closed}" in url]
