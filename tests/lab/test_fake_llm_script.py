"""The fake server's scripted replies and parameter refusals, which the judge's tests program it with."""

import httpx
import pytest

from lab.fake_llm.script import resolve
from lab.providers.base import ChatRequest, ProviderError
from tests.lab.adapters import HTTP_KINDS, adapter_for, chat

JUDGE_PROMPT = '<answer letter="B">\nAbout tea.\n</answer>\n\n<answer letter="A">\nAbout coffee.\n</answer>'


def test_references_resolve_to_the_letters_of_the_answer_blocks():
    text = '{"best": "{{letter:tea}}", "first": "{{shown:1}}", "second": "{{shown:2}}", "none": "{{letter:milk}}"}'

    assert resolve(text, JUDGE_PROMPT) == '{"best": "B", "first": "B", "second": "A", "none": "?"}'


@pytest.mark.parametrize("kind", HTTP_KINDS)
async def test_scripted_replies_come_in_order_then_the_scenario_resumes(fake_llm, kind):
    model = fake_llm.model(text="usual")
    fake_llm.script(model, {"text": "first reply"}, {"status": 400, "message": "scripted refusal"})
    adapter = adapter_for(fake_llm, kind)

    first = await adapter.complete(chat(model))
    with pytest.raises(ProviderError, match="scripted refusal"):
        await adapter.complete(chat(model))
    third = await adapter.complete(chat(model))

    assert (first.text, third.text) == ("first reply", "usual")


async def test_a_reply_with_match_waits_for_a_request_containing_its_text(fake_llm):
    model = fake_llm.model()
    fake_llm.script(model, {"match": "coffee", "text": "for coffee"}, {"text": "for anything"})
    adapter = adapter_for(fake_llm, "openai")

    tea = await adapter.complete(chat(model))  # the user message says nothing of coffee
    coffee = await adapter.complete(ChatRequest(model=model, messages=[{"role": "user", "content": "coffee?"}]))

    assert (tea.text, coffee.text) == ("for anything", "for coffee")


async def test_a_scripted_text_names_letters_from_the_prompt(fake_llm):
    model = fake_llm.model()
    fake_llm.script(model, {"text": '{"winner": "{{letter:coffee}}"}'})
    request = ChatRequest(model=model, messages=[{"role": "user", "content": JUDGE_PROMPT}])

    completion = await adapter_for(fake_llm, "anthropic").complete(request)

    assert completion.text == '{"winner": "A"}'
    assert fake_llm.requests(model)[-1]["messages"][0]["content"] == JUDGE_PROMPT


@pytest.mark.parametrize("kind", HTTP_KINDS)
async def test_a_refused_parameter_is_a_400_naming_it_and_the_request_without_it_succeeds(fake_llm, kind):
    model = fake_llm.model(refuse="temperature", text="fine")
    adapter = adapter_for(fake_llm, kind)

    with pytest.raises(ProviderError, match="'temperature' is not supported") as refused:
        await adapter.complete(chat(model, temperature=0))
    completion = await adapter.complete(chat(model))

    assert refused.value.status == 400
    assert completion.text == "fine"


def test_a_malformed_script_is_refused_with_the_reason(fake_llm):
    response = httpx.post(f"{fake_llm.base_url}/_script", json={"model": "fake", "replies": [{"nothing": 1}]})

    assert response.status_code == 400
    assert "scripted reply is" in response.json()["error"]["message"]
