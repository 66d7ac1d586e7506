"""Rounds of conversations, run by the worker's code in this process against the fake server: each output records
and sends the whole list (system prompt, shared few-shot, its own messages, prefill), and a conversation longer
than the model's context fails before any request, naming the model."""

import pytest

from compare import services
from compare.models import OutputStatus
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_round

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-test-message-rounds-0123"
FEW_SHOT = [
    {"role": "user", "content": "Capital of {{example}}?"},
    {"role": "assistant", "content": "Paris."},
]


def test_each_output_sends_and_records_its_whole_conversation(workspace, owner, fake_llm):
    connection_create(workspace=workspace, name="an", kind="anthropic", base_url=fake_llm.openai_url, api_key=KEY)
    scenario = fake_llm.model(tokens=3)
    prefilled = [{"role": "user", "content": "Capital of {{country}}?"}, {"role": "assistant", "content": "It is"}]
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode="custom",
        system_prompt="One word.",
        shared_messages=FEW_SHOT,
        shared_variables={"example": "France", "country": "Peru"},
        variants=[
            {"label": "Claude", "model": f"an::{scenario}", "messages": prefilled},
            {"label": "Sim", "model": "simulated::instant", "messages": prefilled},
        ],
    )
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    sent = [
        {"role": "system", "content": "One word."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "Capital of Peru?"},
        {"role": "assistant", "content": "It is"},
    ]
    claude, simulated = round_.outputs.order_by("variant__position")
    for output in (claude, simulated):
        assert output.status == OutputStatus.OK, output.error
        assert output.messages == sent
        assert (output.rendered_system_prompt, output.rendered_prompt) == ("One word.", "Capital of Peru?")
    body = fake_llm.scenario(scenario)["last_request"]["body"]
    assert body["system"] == "One word." and body["messages"] == sent[1:]
    # The fake server counts every word it was sent: the whole conversation is the input.
    assert claude.input_tokens == 2 + 3 + 1 + 3 + 2
    assert simulated.text.startswith(" ")  # the simulated answer continues "It is"


def test_a_conversation_longer_than_the_context_fails_before_any_request_naming_the_model(workspace, owner, fake_llm):
    connection_create(workspace=workspace, name="or", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    scenario = fake_llm.model(name="fake-free")  # a context of 8,192 tokens
    group = services.group_create(
        workspace=workspace,
        user=owner,
        mode="custom",
        shared_variables={"text": "short"},
        variants=[{"label": "A", "model": f"or::{scenario}", "prompt": "Summarise {{text}}"}],
    )
    # A round whose variables outgrew the context since the group was made (as a later turn of a conversation).
    round_ = make_round(group)
    type(round_).objects.filter(pk=round_.pk).update(variables={"text": "word " * 8000})
    round_execute(round_id=round_.pk)

    output = round_.outputs.get()
    assert output.status == OutputStatus.ERROR
    assert output.error.startswith("Variant 1 (A): The conversation is about 10,0")
    assert f"more than the context of or::{scenario} (8,192 tokens)" in output.error
    assert fake_llm.scenario(scenario)["requests"] == 0
