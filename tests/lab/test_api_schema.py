"""The OpenAPI schema tells the truth: a bounded schemathesis run over every operation finds no server error, no
answer outside the schema and no undocumented status; and the list endpoints are described as the pages they are.

The run calls the Django app in this process (WSGI), as a user who owns a workspace with a comparison, a round,
a dataset and a judge, so the generated ids sometimes hit real objects; schemathesis draws 20 cases per operation.
"""

from __future__ import annotations

import copy

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from compare.datasets.services import dataset_create
from lab.tokens.services import api_token_create
from tests.fixtures.compare_factories import make_group
from tests.fixtures.judging_factories import answered_round

EXAMPLES_PER_OPERATION = 20
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
LISTS = [
    "groups",
    "datasets",
    "workspaces",
    "workspaces/{id}/connections",
    "workspaces/{id}/members",
    "workspaces/{id}/judges",
    "workspaces/{id}/invitations",
    "workspaces/{id}/audit",
    "tokens",
]


@pytest.fixture
def wsgi_app(db):
    """The app as a server runs it, but inside the test's transaction: Django's own test client likewise keeps
    requests from closing the connection that holds it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield get_wsgi_application()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def served_schema(django_db_setup, django_db_blocker) -> dict:
    """The schema as /api/schema/ serves it, fetched once: generating it takes about half a second."""
    with django_db_blocker.unblock():  # the request passes the session and auth machinery, which may read it
        return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application()).raw_schema


@pytest.fixture
def api_schema(served_schema, wsgi_app):
    schema = schemathesis.openapi.from_dict(copy.deepcopy(served_schema))
    schema.app = wsgi_app
    return schema


@pytest.fixture
def token(owner, workspace) -> str:
    group = make_group(workspace, owner)
    answered_round(group, owner, ["one", "two"])
    dataset_create(workspace=workspace, user=owner, name="Rows", rows=[{"name": "one", "vars": {"a": 1}}])
    return api_token_create(user=owner, name="tests")[1]


def operations() -> list[tuple[str, str]]:
    """(path, method) of every operation, read from the schema as drf-spectacular writes it."""
    document = SchemaGenerator(patterns=None).get_schema(request=None, public=True)
    return [(path, method.upper()) for path, methods in document["paths"].items() for method in methods]


@pytest.mark.parametrize(("path", "method"), operations())
def test_every_operation_keeps_to_the_schema(api_schema, token, path, method):
    operation = api_schema[path][method]
    headers = {"Authorization": f"Token {token}"}

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy())
    def keeps_to_the_schema(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    keeps_to_the_schema()


@pytest.mark.parametrize("path", LISTS)
def test_the_list_endpoints_are_described_as_pages(api_schema, path):
    operation = api_schema.raw_schema["paths"][f"/api/v1/{path}/"]["get"]
    reference = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = api_schema.raw_schema["components"]["schemas"][reference.rsplit("/", 1)[-1]]

    assert set(page["properties"]) == {"count", "next", "previous", "results"}
    assert page["properties"]["results"]["type"] == "array"


def test_no_two_serializers_claim_one_schema_component(db, tmp_path):
    """drf-spectacular names a component after its serializer class; two classes of one name would make one of
    them describe the other's answers (it warns, and --fail-on-warn turns that into a failure)."""
    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
