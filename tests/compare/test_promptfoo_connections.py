"""The connections a promptfoo config's Ollama and `apiBaseUrl` providers run on: the person's own, found again by
URL on the next run, their key following the environment; a team connection of the same name is never touched."""

import pytest

from compare.experiments.promptfoo.connections import promptfoo_connections, promptfoo_environment
from compare.experiments.promptfoo.providers import read_providers
from lab.models import Connection
from lab.services import connection_create

pytestmark = pytest.mark.django_db


def providers(*entries):
    return read_providers(list(entries), lambda where, message: pytest.fail(f"{where}: {message}"))


def test_an_ollama_server_is_the_person_s_own_found_again_by_url(workspace, owner):
    team = connection_create(
        workspace=workspace, name="ollama", kind="openai_compatible", base_url="http://10.0.0.9/v1"
    )
    before = list(Connection.objects.filter(pk=team.pk).values())
    environ = {"OLLAMA_BASE_URL": "http://127.0.0.1:11434"}

    first = promptfoo_connections(
        workspace=workspace, user=owner, environ=environ, providers=providers("ollama:chat:llama3.2")
    )
    again = promptfoo_connections(
        workspace=workspace, user=owner, environ=environ, providers=providers("ollama:chat:qwen2")
    )
    rotated = promptfoo_connections(
        workspace=workspace,
        user=owner,
        environ={**environ, "OLLAMA_API_KEY": "sk-local-0123456789"},
        providers=providers("ollama:chat:qwen2"),
    )

    assert [(d.provider, d.name, d.action) for d in first + again + rotated] == [
        ("ollama", "ollama-owner", "created"),
        ("ollama", "ollama-owner", "unchanged"),
        ("ollama", "ollama-owner", "updated"),
    ]
    mine = Connection.objects.get(name="ollama-owner")
    assert (mine.owner, mine.kind, mine.base_url) == (owner, "openai_compatible", "http://127.0.0.1:11434/v1")
    assert list(Connection.objects.filter(pk=team.pk).values()) == before


def test_providers_sharing_an_api_base_url_share_one_connection(workspace, owner):
    found = promptfoo_connections(
        workspace=workspace,
        user=owner,
        environ={"OPENAI_API_KEY": "sk-mine-0123456789"},
        providers=providers(
            {"id": "openai:chat:a", "config": {"apiBaseUrl": "http://127.0.0.1:8001/v1"}},
            {"id": "openai:chat:b", "config": {"apiBaseUrl": "http://127.0.0.1:8001/v1/"}},
            {"id": "openai:chat:c", "config": {"apiBaseUrl": "http://127.0.0.1:8002/v1"}},
        ),
    )

    # The OpenAI key makes the person's `openai` connection too (lab.connection_env), then one per server.
    assert [(d.provider, d.name, d.action) for d in found] == [
        ("openai", "openai-owner", "created"),
        ("openai-base-1", "openai-base-1-owner", "created"),
        ("openai-base-2", "openai-base-2-owner", "created"),
    ]
    assert Connection.objects.get(name="openai-base-1-owner").api_key() == "sk-mine-0123456789"


def test_promptfoo_s_spellings_of_the_variables_are_read():
    environ = promptfoo_environment({"OPENAI_API_BASE_URL": "http://x/v1", "GOOGLE_API_KEY": "g"})
    assert (environ["OPENAI_BASE_URL"], environ["GEMINI_API_KEY"]) == ("http://x/v1", "g")
    # The lab's own spelling wins when both are set.
    assert promptfoo_environment({"GEMINI_API_KEY": "a", "GOOGLE_API_KEY": "b"})["GEMINI_API_KEY"] == "a"
