"""The shared HTTP plumbing: SSE framing, advised waits, which statuses are retried, scrubbing keys out of text."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from urllib.parse import quote

import httpx
import pytest

from lab.providers.base import Finish, ProviderError
from lab.providers.http import (
    SSEEvent,
    body_retry_delay,
    is_spend_limit,
    iter_sse,
    provider_message,
    retry_after_seconds,
    scrub,
)
from tests.lab.adapters import KEY, adapter_for, chat, events_of


async def lines(*items: str):
    for item in items:
        yield item


async def test_sse_skips_comment_lines_and_joins_multi_line_data():
    stream = lines(": OPENROUTER PROCESSING", "", "event: delta", 'data: {"a":', "data: 1}", "", "data: [DONE]", "")

    events = [event async for event in iter_sse(stream)]

    assert events == [SSEEvent("delta", '{"a":\n1}'), SSEEvent("message", "[DONE]")]


async def test_sse_keeps_a_last_event_that_lacks_its_blank_line():
    events = [event async for event in iter_sse(lines("data:no-space"))]

    assert events == [SSEEvent("message", "no-space")]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "100", "retry-after": "7"}, 0.1),  # the precise one wins
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_the_advised_wait_is_read_from_the_headers(headers, seconds):
    assert retry_after_seconds(httpx.Headers(headers)) == seconds


def test_a_retry_after_date_becomes_the_seconds_until_then():
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)

    assert 28 <= retry_after_seconds(httpx.Headers({"retry-after": later})) <= 30


def test_geminis_retry_delay_in_the_error_body_is_read():
    body = '{"error": {"code": 429, "details": [{"@type": "RetryInfo", "retryDelay": "37s"}]}}'

    assert body_retry_delay(body) == 37.0


@pytest.mark.parametrize(
    ("body", "spend"),
    [
        ('{"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}', True),
        ('{"error": {"message": "Insufficient credits. Add more using https://openrouter.ai/credits"}}', True),
        ('{"error": {"message": "Quota exceeded for quota metric GenerateRequestsPerDayPerProjectPerModel"}}', True),
        ('{"error": {"message": "Rate limit reached for gpt-4.1 on requests per min (RPM)"}}', False),
        ('{"error": {"status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded per minute"}}', False),
    ],
)
def test_spend_limits_are_told_apart_from_rate_limits(body, spend):
    assert is_spend_limit(body) is spend


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "Model not found", "type": "invalid_request_error"}}',
        '{"type": "error", "error": {"type": "not_found_error", "message": "Model not found"}}',
        '[{"error": {"code": 404, "message": "Model not found", "status": "NOT_FOUND"}}]',
        '{"detail": "Model not found"}',
        "Model not found",
    ],
)
def test_the_providers_error_message_is_found_in_each_shape(body):
    assert provider_message(body) == "Model not found"


ODD_KEY = "k3y+with/odd=chars"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (f"Incorrect API key provided: {KEY}.", KEY),
        (f"GET https://host/v1beta/models?key={KEY}&pageSize=5", KEY),
        ("GET https://host/v1beta/models?key=some-other-key-entirely", KEY),
        (f"Authorization: Bearer {KEY}", KEY),
        (f"url-encoded: {quote(ODD_KEY, safe='')}", ODD_KEY),
    ],
)
def test_scrub_removes_the_key_in_every_form(text, key):
    scrubbed = scrub(text, [key])

    assert key not in scrubbed and quote(key, safe="") not in scrubbed
    assert "some-other-key" not in scrubbed
    assert "[redacted]" in scrubbed


@pytest.mark.parametrize("status", ["408", "409", "429", "500", "502", "503", "504", "529"])
async def test_transient_statuses_are_retried(fake_llm, status):
    model = fake_llm.model(tokens=1, fault=status, fail_times=1)

    events = await events_of(adapter_for(fake_llm, "openai_compatible"), chat(model))

    assert events[-1] == Finish("stop")
    assert fake_llm.scenario(model)["requests"] == 2


@pytest.mark.parametrize("status", ["400", "401", "403", "404", "422"])
async def test_client_errors_are_not_retried(fake_llm, status):
    model = fake_llm.model(fault=status)

    with pytest.raises(ProviderError):
        await events_of(adapter_for(fake_llm, "openai_compatible"), chat(model))

    assert fake_llm.scenario(model)["requests"] == 1
