"""The API key never shows: not in errors, exception chains or log records, whatever the provider echoes back.

The fake server behaves like a careless provider and repeats the caller's key in every error it sends, so
these tests fail if any path forgets to scrub.
"""

import logging
import traceback

import pytest

from lab.providers.base import ProviderError, StreamError
from tests.lab.adapters import HTTP_KINDS, KEY, adapter_for, chat, closed_port_url, events_of

pytestmark = pytest.mark.parametrize("kind", HTTP_KINDS)


def everything_said(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc)


async def test_the_key_never_appears_in_any_error_or_log_record(fake_llm, kind, caplog):
    caplog.set_level(logging.DEBUG)
    adapter = adapter_for(fake_llm, kind)
    said = [repr(adapter.config)]

    for options in (
        {"fault": "401"},
        {"fault": "spend_limit"},
        {"fault": "500"},  # retried, logged, then given up
        {"fault": "429", "fail_times": 1, "retry_after_ms": 10},
        {"fault": "mid_stream", "tokens": 4},
    ):
        try:
            events = await events_of(adapter, chat(fake_llm.model(**options)))
        except ProviderError as exc:
            said.append(everything_said(exc))
        else:
            said += [e.message for e in events if isinstance(e, StreamError)]
    for failing_call in (
        adapter.complete(chat(fake_llm.model(fault="401"))),
        adapter_for(
            fake_llm, kind, base_url=fake_llm.url("v1beta" if kind == "gemini" else "v1", fault="403")
        ).list_models(),
        adapter_for(fake_llm, kind, base_url=closed_port_url()).list_models(),
    ):
        with pytest.raises(ProviderError) as failure:
            await failing_call
        said.append(everything_said(failure.value))
    said += [record.getMessage() for record in caplog.records] + [caplog.text]

    text = "\n".join(said)
    assert text.count("[redacted]") >= 5  # the server did echo the key, and it was removed each time
    assert "retrying in" in caplog.text
    assert KEY not in text
