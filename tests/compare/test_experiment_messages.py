"""Chat prompts in experiment files: a prompt may be `messages:` (a list of role/content) instead of `prompt:`, and a
`$file:` may name a JSON list of messages (promptfoo's chat format). The messages become the variants' messages and
are sent whole; the estimate counts them all; problems name the file, the prompt, the message and what is wrong."""

import json
import uuid

import pytest

from compare.experiments.config import config_from_data, config_read
from compare.experiments.export import export_yaml, group_export
from compare.experiments.files import DirectoryFiles, UploadedFiles
from compare.experiments.services import experiment_plan
from compare.experiments.spec import ConfigError
from compare.models import CompareGroup, Mode, Output
from compare.services import group_create
from lab import safe_yaml
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.experiments import run_command

pytestmark = pytest.mark.django_db

CHAT = [
    {"role": "system", "content": "You label support tickets with one word."},
    {"role": "user", "content": "My parcel is late."},
    {"role": "assistant", "content": "shipping"},
    {"role": "user", "content": "{{ticket}}"},
]


def read(data: dict, files: dict[str, bytes] | None = None):
    return config_from_data(data, source="chat.yaml", files=UploadedFiles(files or {}))


def refused(data: dict, files: dict[str, bytes] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        read(data, files)
    return caught.value.messages


def test_a_prompt_may_be_messages_with_angle_placeholders_translated():
    messages = [*CHAT[:3], {"role": "user", "content": "<<ticket>>"}]
    config = read({"models": ["cands:fake"], "prompts": [{"name": "few-shot", "messages": messages}]})
    [prompt] = config.prompts
    assert list(prompt.messages) == CHAT
    assert prompt.template == "{{ticket}}"  # the last user message: what `prompt` holds beside them


def test_a_file_prompt_holding_a_json_list_is_a_chat_prompt_and_any_other_file_stays_text():
    files = {"chat.json": json.dumps(CHAT).encode(), "plain.txt": b"Label {{ticket}}."}
    config = read(
        {
            "models": ["cands:fake"],
            "prompts": [
                {"name": "chat", "prompt": "$file:prompts/chat.json"},
                {"name": "listed", "messages": "$file:chat.json"},
                {"name": "plain", "prompt": "$file:plain.txt"},
            ],
        },
        files,
    )
    chat, listed, plain = config.prompts
    assert list(chat.messages) == CHAT and list(listed.messages) == CHAT
    assert plain.messages == () and plain.template == "Label {{ticket}}."


def test_a_message_s_content_may_come_from_a_file(tmp_path):
    (tmp_path / "answer.txt").write_text("shipping")
    path = tmp_path / "chat.yaml"
    path.write_text(
        "models: ['cands:fake']\nprompts:\n- name: few-shot\n  messages:\n"
        "  - {role: user, content: My parcel is late.}\n  - {role: assistant, content: '$file:answer.txt'}\n"
        "  - {role: user, content: '<<ticket>>'}\n"
    )
    config = config_read(path.read_text(), source="chat.yaml", files=DirectoryFiles(tmp_path))
    assert config.prompts[0].messages[1] == {"role": "assistant", "content": "shipping"}


@pytest.mark.parametrize(
    ("prompt", "files", "expected"),
    [
        (
            {"name": "chat", "messages": [CHAT[0], {"role": "robot", "content": "x"}]},
            {},
            "chat.yaml: prompts[1] (chat): messages: message 2: unknown role 'robot'; a role is one of system, user, "
            "assistant",
        ),
        (
            {"name": "chat", "messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]},
            {},
            "chat.yaml: prompts[1] (chat): messages: message 2: a system message may only come first",
        ),
        (
            {"name": "chat", "prompt": "$file:chat.json"},
            {"chat.json": b'[{"role": "user"}]'},
            "chat.yaml: prompts[1] (chat): prompt: chat.json: message 1: content: give the message's text",
        ),
        (
            {"name": "chat", "messages": "$file:chat.json"},
            {"chat.json": b'{"role": "user", "content": "x"}'},
            "chat.yaml: prompts[1] (chat): messages: chat.json: not a JSON list of messages, each {role, content}",
        ),
        (
            {"name": "chat", "messages": "$file:../secret.json"},
            {},
            "chat.yaml: prompts[1] (chat): messages: cannot read ../secret.json: ../secret.json was not uploaded",
        ),
        (
            {"name": "chat", "prompt": "hi", "messages": CHAT},
            {},
            "chat.yaml: prompts[1] (chat): give prompt or messages, not both",
        ),
        (
            {"name": "chat", "messages": [{"role": "assistant", "content": "Sure"}]},
            {},
            "chat.yaml: prompts[1] (chat): messages: give at least one user message",
        ),
    ],
)
def test_a_bad_chat_prompt_is_refused_naming_the_prompt_the_message_and_why(prompt, files, expected):
    problems = refused({"models": ["cands:fake"], "prompts": [prompt]}, files)
    assert any(problem.startswith(expected) for problem in problems), problems


def test_a_system_message_beside_the_file_s_system_prompt_is_refused_naming_the_prompt():
    problems = refused(
        {"models": ["cands:fake"], "system-prompt": "Be brief.", "prompts": [{"name": "chat", "messages": CHAT}]}
    )
    assert problems == [
        "chat.yaml: prompts[1] (chat): messages: message 1: a system message, but the file has a system-prompt: keep "
        "one of the two"
    ]


def test_a_missing_variable_names_the_message_that_uses_it(workspace, connections):
    config = read(
        {"models": ["cands:fake"], "prompts": [{"name": "few-shot", "messages": CHAT}], "variables": {"x": 1}}
    )
    with pytest.raises(ConfigError) as caught:
        experiment_plan(config=config, workspace=workspace)
    assert caught.value.messages == [
        "chat.yaml: prompts[1] (few-shot): message 4: uses <<ticket>>, which has no value: add a dataset with it, "
        "or variables"
    ]


def test_the_estimate_counts_the_whole_conversation(workspace, connections):
    def tokens(prompt: dict) -> int:
        data = {"models": ["cands:fake"], "prompts": [prompt], "variables": {"ticket": "Where is my refund?"}}
        return experiment_plan(config=read(data), workspace=workspace)[1].answers.input_tokens

    assert tokens({"name": "chat", "messages": CHAT}) > tokens({"name": "chat", "prompt": "{{ticket}}"}) + 10


def test_the_web_form_takes_messages_and_refuses_bad_ones_naming_them(client, owner, workspace, connections):
    client.force_login(owner)
    form = {
        "kind": "form",
        "name": "Labels",
        "other_models": "cands:fake",
        "params-TOTAL_FORMS": "0",
        "params-INITIAL_FORMS": "0",
        "prompts-TOTAL_FORMS": "1",
        "prompts-INITIAL_FORMS": "0",
        "prompts-0-name": "few-shot",
        "prompts-0-messages": json.dumps([*CHAT[:3], {"role": "user", "content": "Lost card"}]),
        "output_format": "json",
    }
    url = f"/w/{workspace.pk}/experiments/estimate/"
    assert client.post(url, form).status_code == 200
    bad = {**form, "prompts-0-messages": "- {role: user, content: hi}\n- {role: wizard, content: hello}"}
    page = client.post(url, bad).content.decode()
    assert "prompts[1] (few-shot): messages: message 2: unknown role" in page


@pytest.mark.django_db(transaction=True)
def test_a_json_chat_file_runs_and_every_message_is_sent(workspace, connections, fake_llm, tmp_path):
    model = f"fake?id=chat-{uuid.uuid4().hex[:8]}"
    (tmp_path / "chat.json").write_text(json.dumps(CHAT))
    path = tmp_path / "labels.yaml"
    path.write_text(
        f"name: Labels\nmodels: ['cands:{model}']\nprompts:\n- name: few-shot\n  prompt: $file:chat.json\n"
        "dataset:\n- {name: refund, vars: {ticket: Where is my refund?}}\n"
    )
    ran = run_command("run", str(path), "--workspace", str(workspace.pk))
    assert ran.code == 0, ran.err + ran.out
    [variant] = CompareGroup.objects.get(title="Labels").variants.all()
    assert variant.messages == CHAT and variant.prompt == "{{ticket}}"
    sent = [*CHAT[:3], {"role": "user", "content": "Where is my refund?"}]
    assert Output.objects.get(variant=variant).messages == sent
    assert fake_llm.requests(model)[-1]["messages"] == sent


def test_export_writes_chat_prompts_as_messages_with_the_shared_few_shot_and_reads_back(workspace, owner):
    group = group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        title="Labels",
        shared_messages=CHAT[1:3],
        shared_variables={"ticket": "Lost card"},
        variants=[
            {"label": "plain", "model": INSTANT, "prompt": "{{ticket}}"},
            {"label": "prefill", "model": INSTANT, "messages": [CHAT[3], {"role": "assistant", "content": "Label:"}]},
        ],
    )
    data = group_export(group)
    assert [p.get("messages") for p in data["prompts"]] == [
        [*CHAT[1:3], CHAT[3]],
        [*CHAT[1:3], CHAT[3], {"role": "assistant", "content": "Label:"}],
    ]
    config = config_from_data(safe_yaml.load(export_yaml(data)), source="labels.yaml", files=UploadedFiles({}))
    assert [list(p.messages) for p in config.prompts] == [p["messages"] for p in data["prompts"]]
