"""Odd requests get a JSON answer naming what is wrong: a NUL in any query filter (API or page), a chunked body,
an empty multipart body and an over-long query string (the last three through the real web process, daphne)."""

import json
from importlib.metadata import version

import httpx
import pytest

from lab.audit.models import AuditEntry
from tests.fixtures.factories import PASSWORD

NUL = "text may not contain the NUL character"


@pytest.mark.django_db
def test_a_nul_in_any_query_filter_is_a_400_naming_the_parameter(api, client, owner, workspace):
    client.force_login(owner)
    for requester, url, parameter in [
        (api, f"/api/v1/workspaces/{workspace.pk}/audit/?action=%00", "action"),  # was a 500 (an HTML page)
        (api, "/api/v1/groups/?q=tea%00", "q"),  # these were ignored
        (api, f"/api/v1/groups/?workspace={workspace.pk}&model=a%00b", "model"),
        (api, "/api/v1/datasets/?workspace=%00", "workspace"),
        (client, f"/w/{workspace.pk}/audit/?action=%00", "action"),  # the audit page
    ]:
        response = requester.get(url)
        assert response.status_code == 400, (url, response.status_code)
        assert NUL in response.json()[parameter][0], response.json()
    assert not AuditEntry.objects.exists()


@pytest.fixture
def token_client(transactional_db, web_server, owner):
    """An HTTP client of the real web process, signed in with an API token."""
    with httpx.Client(base_url=web_server.url, timeout=30) as http:
        token = http.post("/api/v1/auth/token/", json={"username": owner.username, "password": PASSWORD}).json()
        http.headers["Authorization"] = f"Token {token['token']}"
        yield http


def test_a_chunked_body_is_a_411_saying_to_send_its_length(token_client, workspace):
    def chunks():
        yield json.dumps({"workspace": workspace.pk, "name": "Chunked", "rows": [{"vars": {"a": 1}}]}).encode()

    response = token_client.post("/api/v1/datasets/", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 411 and "Content-Length" in response.json()["detail"]  # was a 400: "required"
    sized = token_client.post(
        "/api/v1/datasets/", json={"workspace": workspace.pk, "name": "Sized", "rows": [{"vars": {"a": 1}}]}
    )
    assert sized.status_code == 201, sized.text


def test_an_empty_multipart_body_is_a_400_naming_the_fields_or_the_boundary(token_client):
    for content_type, expected in [
        (
            "multipart/form-data; boundary=xyz",
            {"workspace": ["This field is required."], "name": ["This field is required."]},
        ),
        ("multipart/form-data", {"detail": "Multipart form parse error - Invalid boundary in multipart: None"}),
    ]:
        for body in [b"--xyz--\r\n", b"\r\n"]:
            response = token_client.post(
                "/api/v1/datasets/import/", content=body, headers={"Content-Type": content_type}
            )
            assert response.status_code == 400, (content_type, body)  # was a 400 with no body at all
            assert response.json() == expected


def test_a_query_string_past_the_line_limit_is_a_414_naming_it(token_client):
    response = token_client.get(f"/api/v1/datasets/?workspace={'1' * 20_000}")
    assert response.status_code == 414  # the connection was closed without an answer
    assert response.json()["detail"].startswith("The request line is longer than 16,384 bytes")
    within_but_with_headers = token_client.get(f"/api/v1/datasets/?workspace={'1' * 16_300}")
    assert within_but_with_headers.status_code == 431  # was a bare 400
    assert "request line and headers are over 16,384 bytes" in within_but_with_headers.json()["detail"]
    assert token_client.get(f"/api/v1/datasets/?q={'1' * 8_000}").status_code == 200


def test_the_http_layer_runs_on_the_versions_it_was_checked_with():
    # promptlab/daphne_http.py relies on Twisted's and daphne's internals: on another version, read it again.
    assert (version("Twisted"), version("daphne")) == ("26.10.0", "4.2.3")
