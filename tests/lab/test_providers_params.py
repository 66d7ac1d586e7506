"""Before a run, every set parameter is checked against every chosen model; refusals name model and parameter."""

import pytest

from lab.providers.base import ModelInfo
from lab.providers.params import check_params, set_params
from tests.lab.adapters import adapter_for


def test_unset_parameters_are_not_checked():
    assert set_params({"temperature": None, "top_p": "", "stop": [], "seed": 0, "max_tokens": 100}) == {
        "seed": 0,
        "max_tokens": 100,
    }
    assert check_params({"temperature": None}, [("openai::o3-mini", None)]) == []


def test_the_catalog_is_exact_where_it_lists_supported_parameters():
    info = ModelInfo(id="m", supported_params=frozenset({"max_tokens", "seed"}))

    messages = check_params({"temperature": 0.2, "seed": 1, "stop": ["x"]}, [("router::m", info)])

    assert messages == ["router::m does not support temperature", "router::m does not support stop"]


def test_a_model_whose_provider_publishes_nothing_is_assumed_to_support_everything():
    params = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 10, "seed": 1, "stop": ["x"]}

    assert check_params(params, [("local::llama3.2", None), ("local::llama3.2", ModelInfo(id="llama3.2"))]) == []


@pytest.mark.parametrize(
    ("model_id", "params", "refused"),
    [
        ("openai::o3-mini", {"temperature": 0.2}, ["openai::o3-mini does not support temperature"]),
        ("openai::o1", {"top_p": 0.5}, ["openai::o1 does not support top_p"]),
        (
            "openai::gpt-5-mini-2025-08-07",
            {"temperature": 0},
            ["openai::gpt-5-mini-2025-08-07 does not support temperature"],
        ),
        ("openai::gpt-4.1-mini", {"temperature": 0.2, "top_p": 0.5}, []),
        ("openai::gpt-5-chat-latest", {"temperature": 0.2}, []),
        ("proxy::openai/o4-mini", {"temperature": 0.2}, ["proxy::openai/o4-mini does not support temperature"]),
        (
            "claude::claude-3-5-haiku-latest",
            {"seed": 3, "temperature": 0.2},
            ["claude::claude-3-5-haiku-latest does not support seed"],
        ),
        (
            "claude::claude-sonnet-4-5",
            {"temperature": 0.2, "top_p": 0.9},
            ["claude::claude-sonnet-4-5 does not support temperature and top_p together"],
        ),
        ("claude::claude-sonnet-4-5", {"temperature": 0.2}, []),
        ("gemini::gemini-2.5-flash", {"seed": 1, "temperature": 0.2, "top_p": 0.9}, []),
    ],
)
def test_known_refusals_apply_where_the_catalog_says_nothing(model_id, params, refused):
    assert check_params(params, [(model_id, None)]) == refused


def test_every_offending_model_is_named():
    models = [("openai::o3", None), ("openai::gpt-4.1", None), ("claude::claude-haiku-4-5", None)]

    messages = check_params({"temperature": 0.1, "seed": 4}, models)

    assert messages == ["openai::o3 does not support temperature", "claude::claude-haiku-4-5 does not support seed"]


async def test_an_openrouter_catalog_from_the_server_drives_the_check(fake_llm):
    catalog = {m.id: m for m in await adapter_for(fake_llm, "openrouter").list_models()}

    messages = check_params(
        {"temperature": 0.7, "seed": 1},
        [("openrouter::fake", catalog["fake"]), ("openrouter::fake-reasoning", catalog["fake-reasoning"])],
    )

    assert messages == ["openrouter::fake-reasoning does not support temperature"]
