"""A corpus of hostile requests over every API endpoint that takes input, and the JSON bodies pages post: each is
a JSON 400 naming the field (or 413 naming the size limit), never a 500, and nothing is half-created.

Hostile here means what a fuzzer or a careless client sends: a body nested 100,000 deep, NUL characters and lone
surrogates in values and keys, bodies over the size limit, wrong types, unknown fields, absurd numbers, keys and
headers with non-ASCII, CR/LF or spaces, and URLs of other schemes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
import pytest
from django.apps import apps
from django.test import Client

from compare.datasets.services import dataset_create
from compare.models import Dataset
from lab.tokens.services import api_token_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.judging_factories import answered_round, make_judge

pytestmark = pytest.mark.django_db

DEEP = 100_000
NUL, SURROGATE = "\x00", "\ud800"
LIMIT_MB = 16


@dataclass
class World:
    workspace: int
    connection: int
    group: int
    round: int
    dataset: int
    judge: int


@pytest.fixture
def world(workspace, owner, connections, fake_llm) -> World:
    group = make_group(workspace, owner)
    make_round(group)  # one still queued, beside the answered one the requests aim at
    round_ = answered_round(group, owner, ["one", "two"])
    dataset = dataset_create(workspace=workspace, user=owner, name="Rows", rows=[{"name": "one", "vars": {"a": 1}}])
    judge, _ = make_judge(workspace, owner, fake_llm)
    return World(workspace.pk, connections[0].pk, group.pk, round_.pk, dataset.pk, judge.pk)


def deep(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def group_body(w: World, **changes) -> dict:
    body = {
        "workspace": w.workspace,
        "title": "Tone",
        "mode": "prompts",
        "shared_variables": {"name": "Ada"},
        "variants": [
            {"label": "A", "model": "simulated::instant", "prompt": "Hi {{name}}"},
            {"label": "B", "model": "simulated::instant", "prompt": "Hello {{name}}"},
        ],
    }
    body.update(changes)
    return body


def variant(**changes) -> dict:
    return {"label": "A", "model": "simulated::instant", "prompt": "Hi", **changes}


def experiment(w: World, text: str, **changes) -> dict:
    return {"workspace": w.workspace, "file": text, "dry_run": True, **changes}


# (id, method, url, body, expected status, field the answer names). A body is a dict (sent as JSON), a str (sent as
# is, for what json.dumps cannot write) or a callable of the world.
CASES = [
    # --- deep nesting ---
    (
        "deep-shared-variables",
        "post",
        "groups/",
        lambda w: raw(group_body(w), "shared_variables", deep()),
        400,
        "shared_variables",
    ),
    (
        "deep-variant-variables",
        "post",
        "groups/preview/",
        lambda w: raw(group_body(w), "variants", f'[{{"model": "m", "prompt": "p", "variables": {{"a": {deep()}}}}}]'),
        400,
        "variants",
    ),
    (
        "deep-dataset-vars",
        "post",
        "datasets/",
        lambda w: raw({"workspace": w.workspace, "name": "d"}, "rows", f'[{{"vars": {{"a": {deep()}}}}}]'),
        400,
        "rows",
    ),
    ("deep-top-level-list", "post", "workspaces/", deep(), 400, "non_field_errors"),
    (
        "deep-row-change",
        "patch",
        "datasets/{dataset}/rows/1/",
        lambda w: raw({}, "vars", f'{{"a": {deep()}}}'),
        400,
        "vars",
    ),
    (
        "deep-judge-metrics",
        "post",
        "workspaces/{workspace}/judges/",
        lambda w: raw({"name": "j", "model": "judge::fake"}, "metrics", deep()),
        400,
        "metrics",
    ),
    (
        "deep-just-too-deep",
        "post",
        "groups/",
        lambda w: group_body(w, shared_variables={"a": json.loads(deep(40))}),
        400,
        "shared_variables",
    ),
    (
        "deep-experiment-yaml",
        "post",
        "experiments/",
        lambda w: experiment(w, "a: " + "[" * 5000 + "]" * 5000),
        400,
        "file",
    ),
    (
        "deep-dataset-import-json",
        "post",
        "datasets/import/",
        lambda w: {"workspace": w.workspace, "name": "d", "format": "json", "content": deep(5000)},
        400,
        "file",
    ),
    (
        "deep-dataset-import-yaml",
        "post",
        "datasets/preview/",
        lambda w: {"format": "yaml", "content": "[" * 5000 + "]" * 5000},
        400,
        "file",
    ),
    # --- NUL and lone surrogates, in values and in keys ---
    ("nul-title", "post", "groups/", lambda w: group_body(w, title=f"a{NUL}b"), 400, "title"),
    (
        "nul-shared-value",
        "post",
        "groups/",
        lambda w: group_body(w, shared_variables={"name": f"A{NUL}"}),
        400,
        "shared_variables",
    ),
    (
        "nul-shared-key",
        "post",
        "groups/",
        lambda w: group_body(w, shared_variables={f"na{NUL}me": "A"}),
        400,
        "shared_variables",
    ),
    (
        "surrogate-shared-value",
        "post",
        "groups/",
        lambda w: group_body(w, shared_variables={"name": SURROGATE}),
        400,
        "shared_variables",
    ),
    (
        "surrogate-shared-key",
        "post",
        "groups/",
        lambda w: group_body(w, shared_variables={SURROGATE: 1}),
        400,
        "shared_variables",
    ),
    (
        "nul-variant-variables",
        "post",
        "groups/",
        lambda w: group_body(w, variants=[variant(variables={"x": [NUL]}), variant()]),
        400,
        "variants",
    ),
    (
        "surrogate-variant-prompt",
        "post",
        "groups/",
        lambda w: group_body(w, variants=[variant(prompt=SURROGATE), variant()]),
        400,
        "variants",
    ),
    (
        "nul-variant-label",
        "post",
        "groups/preview/",
        lambda w: group_body(w, variants=[variant(label=NUL), variant()]),
        400,
        "variants",
    ),
    ("nul-system-prompt", "post", "groups/{group}/clone/", {"system_prompt": f"be{NUL}"}, 400, "system_prompt"),
    ("surrogate-top-level-key", "post", "workspaces/", {"name": "x", SURROGATE: 1}, 400, "\\ud800"),
    ("nul-top-level-key", "post", "workspaces/", {"name": "x", f"ev{NUL}il": 1}, 400, "ev\\u0000il"),
    ("nul-workspace-name", "post", "workspaces/", {"name": f"Team{NUL}"}, 400, "name"),
    ("surrogate-workspace-name", "post", "workspaces/", {"name": f"Team{SURROGATE}"}, 400, "name"),
    (
        "nul-member-username",
        "post",
        "workspaces/{workspace}/members/",
        {"username": NUL, "role": "editor"},
        400,
        "username",
    ),
    (
        "nul-connection-name",
        "post",
        "workspaces/{workspace}/connections/",
        {"name": NUL, "kind": "simulated"},
        400,
        "name",
    ),
    (
        "surrogate-connection-key",
        "post",
        "workspaces/{workspace}/connections/",
        {"name": "c", "kind": "openai", "api_key": SURROGATE},
        400,
        "api_key",
    ),
    (
        "nul-dataset-name",
        "post",
        "datasets/",
        lambda w: {"workspace": w.workspace, "name": NUL, "rows": [{"vars": {"a": 1}}]},
        400,
        "name",
    ),
    (
        "nul-dataset-vars",
        "post",
        "datasets/",
        lambda w: {"workspace": w.workspace, "name": "d", "rows": [{"vars": {"a": NUL}}]},
        400,
        "rows",
    ),
    ("nul-dataset-vars-key", "post", "datasets/{dataset}/rows/", {"rows": [{"vars": {NUL: 1}}]}, 400, "rows"),
    ("surrogate-row-change", "patch", "datasets/{dataset}/rows/1/", {"vars": {"a": SURROGATE}}, 400, "vars"),
    ("nul-dataset-rename", "patch", "datasets/{dataset}/", {"name": NUL}, 400, "name"),
    (
        "nul-in-imported-csv",
        "post",
        "datasets/import/",
        lambda w: {"workspace": w.workspace, "name": "d", "format": "csv", "content": f"a\n{NUL}"},
        400,
        "content",
    ),
    (
        "nul-in-imported-json",
        "post",
        "datasets/preview/",
        {"format": "json", "content": '[{"a": "\\u0000"}]'},
        400,
        "file",
    ),
    (
        "surrogate-in-imported-jsonl",
        "post",
        "datasets/preview/",
        {"format": "jsonl", "content": '{"a": "\\ud800"}'},
        400,
        "file",
    ),
    ("nul-in-experiment-file", "post", "experiments/", lambda w: experiment(w, 'name: "a\\0b"'), 400, "file"),
    (
        "nul-judge-prompt",
        "post",
        "workspaces/{workspace}/judges/",
        {"name": "j", "model": "judge::fake", "prompt": NUL},
        400,
        "prompt",
    ),
    (
        "surrogate-judge-metric",
        "patch",
        "workspaces/{workspace}/judges/{judge}/",
        {"metrics": [{"name": SURROGATE, "weight": 1, "low": "l", "high": "h"}]},
        400,
        "metrics",
    ),
    ("nul-token-username", "post", "auth/token/", {"username": NUL, "password": "x"}, 400, "username"),
    # --- wrong types ---
    ("type-variants-object", "post", "groups/", lambda w: group_body(w, variants={"a": 1}), 400, "variants"),
    ("type-shared-list", "post", "groups/", lambda w: group_body(w, shared_variables=[1, 2]), 400, "shared_variables"),
    ("type-blind-string", "post", "groups/", lambda w: group_body(w, blind="maybe"), 400, "blind"),
    ("type-workspace-string", "post", "groups/", lambda w: group_body(w, workspace="mine"), 400, "workspace"),
    ("type-body-list", "post", "groups/", [1, 2, 3], 400, "non_field_errors"),
    ("type-body-string", "post", "workspaces/", '"just a string"', 400, "non_field_errors"),
    ("type-repeat-list", "post", "groups/{group}/runs/", {"repeat": [1]}, 400, "repeat"),
    ("type-vote-output-string", "post", "rounds/{round}/vote/", {"output": "first"}, 400, "output"),
    ("type-vote-verdict", "post", "rounds/{round}/vote/", {"verdict": {"tie": True}}, 400, "verdict"),
    ("type-rows-string", "post", "datasets/{dataset}/rows/", {"rows": "a,b"}, 400, "rows"),
    (
        "type-judge-weight",
        "post",
        "workspaces/{workspace}/judges/",
        {"name": "j", "model": "judge::fake", "metrics": [{"name": "m", "weight": "heavy", "low": "l", "high": "h"}]},
        400,
        "metrics",
    ),
    ("type-group-judge", "put", "groups/{group}/judge/", {"judge": "the best"}, 400, "judge"),
    ("type-round-judge", "post", "rounds/{round}/judge/", {"judge": [1]}, 400, "judge"),
    ("type-experiment-files", "post", "experiments/", lambda w: experiment(w, "a: 1", files=["x"]), 400, "files"),
    ("type-connection-rpm", "patch", "workspaces/{workspace}/connections/{connection}/", {"rpm": {"n": 1}}, 400, "rpm"),
    ("malformed-json", "post", "groups/", '{"title": ', 400, "detail"),
    (
        "nan-literal",
        "post",
        "groups/",
        lambda w: json.dumps(group_body(w, params={"temperature": float("nan")})),
        400,
        "detail",
    ),
    # --- unknown fields ---
    ("unknown-group-field", "post", "groups/", lambda w: group_body(w, blid=True), 400, "blid"),
    (
        "unknown-variant-field",
        "post",
        "groups/",
        lambda w: group_body(w, variants=[variant(colour="red"), variant()]),
        400,
        "variants",
    ),
    ("unknown-param", "post", "groups/", lambda w: group_body(w, params={"temprature": 1}), 400, "params"),
    ("unknown-workspace-field", "post", "workspaces/", {"name": "x", "owner": 1}, 400, "owner"),
    (
        "unknown-connection-field",
        "patch",
        "workspaces/{workspace}/connections/{connection}/",
        {"kind": "openai"},
        400,
        "kind",
    ),
    ("unknown-vote-field", "post", "rounds/{round}/vote/", {"verdict": "tie", "weight": 10}, 400, "weight"),
    ("unknown-runs-field", "post", "groups/{group}/runs/", {"repeats": 3}, 400, "repeats"),
    ("unknown-row-field", "post", "datasets/{dataset}/rows/", {"rows": [{"vars": {"a": 1}, "id": 5}]}, 400, "rows"),
    ("unknown-judge-field", "patch", "workspaces/{workspace}/judges/{judge}/", {"temperature": 0}, 400, "temperature"),
    ("unknown-experiment-field", "post", "experiments/", lambda w: experiment(w, "a: 1", budjet=5), 400, "budjet"),
    ("key-with-space", "post", "workspaces/", {"name": "x", "na me": 1}, 400, "na me"),
    ("key-with-crlf", "post", "workspaces/", {"name": "x", "name\r\nX-Evil: 1": 1}, 400, "name\r\nX-Evil: 1"),
    ("key-non-ascii", "post", "workspaces/", {"name": "x", "nämé": 1}, 400, "nämé"),
    # --- absurd numbers ---
    ("huge-workspace-id", "post", "groups/", lambda w: group_body(w, workspace=10**30), 400, "workspace"),
    ("huge-dataset-id", "post", "groups/{group}/runs/", {"dataset": 10**30}, 400, "dataset"),
    ("negative-repeat", "post", "groups/{group}/runs/", {"repeat": -5}, 400, "repeat"),
    ("huge-repeat", "post", "groups/{group}/runs/", {"repeat": 10**12}, 400, "repeat"),
    ("huge-vote-output", "post", "rounds/{round}/vote/", {"output": 10**40}, 400, "output"),
    ("huge-judge-id", "post", "rounds/{round}/judge/", {"judge": 10**40}, 400, "judge"),
    ("huge-group-judge-id", "put", "groups/{group}/judge/", {"judge": -(10**40)}, 400, "judge"),
    ("huge-temperature", "post", "groups/", lambda w: group_body(w, params={"temperature": 1e308}), 400, "params"),
    (
        "huge-float-overflow",
        "post",
        "groups/",
        lambda w: json.dumps(group_body(w)).replace('"Tone"', '"t", "timeout_ms": 1e999'),
        400,
        "timeout_ms",
    ),
    (
        "endless-digits",
        "post",
        "groups/",
        lambda w: json.dumps(group_body(w)).replace('"Tone"', '"t", "timeout_ms": ' + "9" * 5000),
        400,
        "detail",
    ),
    ("huge-stagger", "post", "groups/", lambda w: group_body(w, stagger_ms=2**63), 400, "stagger_ms"),
    ("huge-max-tokens", "post", "groups/", lambda w: group_body(w, params={"max_tokens": 2**70}), 400, "params"),
    (
        "huge-seed",
        "post",
        "workspaces/{workspace}/judges/",
        {"name": "j", "model": "judge::fake", "seed": 10**30},
        400,
        "seed",
    ),
    ("huge-budget", "post", "experiments/", lambda w: experiment(w, "a: 1", budget="1e400"), 400, "budget"),
    (
        "huge-concurrency",
        "post",
        "workspaces/{workspace}/connections/",
        {"name": "c", "kind": "simulated", "max_concurrency": 10**20},
        400,
        "max_concurrency",
    ),
    ("huge-member-role", "post", "workspaces/{workspace}/members/", {"username": "x", "role": 10**20}, 400, "role"),
    # --- API keys and URLs ---
    (
        "key-non-ascii-value",
        "post",
        "workspaces/{workspace}/connections/",
        {"name": "c", "kind": "openai", "api_key": "sk-éü😀"},
        400,
        "api_key",
    ),
    (
        "key-crlf-value",
        "patch",
        "workspaces/{workspace}/connections/{connection}/",
        {"api_key": "sk-a\r\nX: 1"},
        400,
        "api_key",
    ),
    (
        "key-space-value",
        "patch",
        "workspaces/{workspace}/connections/{connection}/",
        {"api_key": "sk-a 1"},
        400,
        "api_key",
    ),
    (
        "ftp-base-url",
        "post",
        "workspaces/{workspace}/connections/",
        {"name": "c", "kind": "openai_compatible", "base_url": "ftp://127.0.0.1/"},
        400,
        "base_url",
    ),
    (
        "javascript-base-url",
        "patch",
        "workspaces/{workspace}/connections/{connection}/",
        {"base_url": "javascript:alert(1)"},
        400,
        "base_url",
    ),
    (
        "huge-base-url",
        "patch",
        "workspaces/{workspace}/connections/{connection}/",
        {"base_url": "http://127.0.0.1/" + "a" * 5000},
        400,
        "base_url",
    ),
    # --- sizes: over the limit is a 413 naming it; a 5 MB field fits ---
    (
        "body-over-the-limit",
        "post",
        "groups/",
        lambda w: raw(group_body(w), "title", '"' + "a" * (LIMIT_MB * 2**20) + '"'),
        413,
        "detail",
    ),
    (
        "import-over-the-limit",
        "post",
        "datasets/import/",
        lambda w: {"workspace": w.workspace, "name": "d", "format": "csv", "content": "a\n" + "b" * (LIMIT_MB * 2**20)},
        413,
        "detail",
    ),
    (
        "experiment-file-of-5mb-fits",
        "post",
        "experiments/",
        lambda w: experiment(w, "#" * (5 * 2**20 - 10)),
        400,
        "file",
    ),
    ("experiment-file-over-5mb", "post", "experiments/", lambda w: experiment(w, "#" * (5 * 2**20 + 1)), 400, "file"),
    (
        "import-of-5mb-fits",
        "post",
        "datasets/preview/",
        {"format": "csv", "content": "a\n" + ("b" * 99 + "\n") * (5 * 2**20 // 100 - 1)},
        400,
        "file",
    ),
]


def raw(body: dict, field: str, value_text: str) -> str:
    """`body` as JSON with `field` set to a JSON text written by hand (what json.dumps cannot or would not write)."""
    text = json.dumps({**body, field: None})
    return text[: text.rindex("null")] + value_text + text[text.rindex("null") + 4 :]


def counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models() if model._meta.app_label in APPS}


APPS = {"lab", "compare", "judging", "voting", "authtoken"}


def send(api, w: World, method: str, url: str, body) -> object:
    body = body(w) if callable(body) else body
    data = body if isinstance(body, str) else json.dumps(body)
    path = "/api/v1/" + url.format(**vars(w))
    return getattr(api, method)(path, data=data.encode("utf-8", "surrogatepass"), content_type="application/json")


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "field"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_a_hostile_request_is_a_json_answer_naming_the_field(api, world, method, url, body, status, field):
    before = counts()

    response = send(api, world, method, url, body)

    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    if field is not None:
        answer = response.json()
        assert field in answer, answer
        assert answer[field], answer
    if status == 413:
        assert f"the limit is {LIMIT_MB} MB (DATA_UPLOAD_MAX_MEMORY_SIZE)" in response.json()["detail"]
    if status >= 400:
        assert counts() == before, "a refused request changed the database"


@pytest.mark.parametrize("content", [b"a,b\n1,\x00\n", b'[{"a": "\\ud800"}]'], ids=["csv-nul", "json-surrogate"])
def test_an_uploaded_file_with_unstorable_text_is_refused(api, world, content):
    from django.core.files.uploadedfile import SimpleUploadedFile

    before = counts()
    name = "rows.csv" if content.startswith(b"a,b") else "rows.json"
    upload = SimpleUploadedFile(name, content)

    response = api.post("/api/v1/datasets/import/", {"workspace": world.workspace, "name": "d", "file": upload})

    assert response.status_code == 400, response.content
    assert "file" in response.json()
    assert counts() == before


QUERIES = [
    ("groups/", {"q": f"tea{NUL}"}, "q"),
    ("groups/", {"model": NUL}, "model"),
    ("groups/", {"workspace": "mine"}, "workspace"),
    ("groups/", {"workspace": str(10**30)}, None),
    ("datasets/", {"workspace": str(10**30)}, None),
    ("groups/{group}/report/", {"pass_threshold": "nan"}, "pass_threshold"),
    ("groups/{group}/report/", {"pass_threshold": NUL}, "pass_threshold"),
    ("workspaces/{workspace}/leaderboard/", {"by": NUL}, "by"),
    ("workspaces/{workspace}/leaderboard/", {"since": "0000-00-00"}, "since"),
    ("workspaces/", {"page": str(10**30)}, "detail"),
]


@pytest.mark.parametrize(("url", "query", "field"), QUERIES, ids=[f"{u}?{next(iter(q))}" for u, q, _ in QUERIES])
def test_a_hostile_query_string_is_a_json_answer_too(api, world, url, query, field):
    response = api.get("/api/v1/" + url.format(**vars(world)), query)

    assert response.status_code == (200 if field is None else 400 if field != "detail" else 404), response.content
    assert response["Content-Type"] == "application/json"
    if field is not None:
        assert field in response.json()


def test_the_corpus_covers_every_endpoint_that_takes_a_body():
    from django.urls import get_resolver

    written = {case[2].split("{")[0].rstrip("/").split("/")[0] for case in CASES}
    assert written >= {"groups", "workspaces", "datasets", "experiments", "rounds", "auth"}
    assert len(CASES) >= 60
    assert get_resolver()  # the URLconf loads


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"HTTP_AUTHORIZATION": "Token sk-é"}, 401),
        ({"HTTP_AUTHORIZATION": "Token a b"}, 401),
        ({"HTTP_AUTHORIZATION": "Token abc\r\nX-Evil: 1"}, 401),
        ({"HTTP_AUTHORIZATION": "Bearer \x00"}, 401),
        ({"CONTENT_TYPE": "application/json; charset=bz2_codec"}, 400),
        ({"CONTENT_TYPE": "application/json; charset=utf-32"}, 400),
        ({"CONTENT_LENGTH": "lots"}, 400),
    ],
    ids=[
        "non-ascii-token",
        "token-with-space",
        "token-with-crlf",
        "nul-bearer",
        "bz2-charset",
        "wrong-charset",
        "bad-length",
    ],
)
def test_hostile_headers_are_a_json_answer_too(client, owner, headers, status):
    token = api_token_create(user=owner, name="tests")[1]
    before = counts()
    extra = {"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": f"Token {token}", **headers}
    content_type = extra.pop("CONTENT_TYPE")

    response = client.generic("POST", "/api/v1/workspaces/", b'{"name": "x"}', content_type=content_type, **extra)

    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json()
    assert counts() == before


@pytest.mark.parametrize(
    ("url", "body", "key", "needle"),
    [
        (
            "/w/{workspace}/compare/save/",
            lambda w: raw(group_body(w), "shared_variables", deep()),
            "errors",
            "shared_variables",
        ),
        (
            "/w/{workspace}/compare/save/",
            lambda w: group_body(w, shared_variables={"a": NUL}),
            "errors",
            "shared_variables",
        ),
        (
            "/w/{workspace}/compare/save/",
            lambda w: group_body(w, variants=[variant(variables={SURROGATE: 1}), variant()]),
            "errors",
            "variants",
        ),
        (
            "/w/{workspace}/compare/check/",
            lambda w: raw({"models": ["simulated::instant"]}, "params", deep()),
            "problems",
            "params",
        ),
    ],
    ids=["editor-deep", "editor-nul", "editor-surrogate-key", "check-deep"],
)
def test_the_json_the_pages_post_is_checked_the_same_way(owner, world, url, body, key, needle):
    client = Client()
    client.force_login(owner)
    before = counts()
    body = body(world)
    data = body if isinstance(body, str) else json.dumps(body)

    response = client.post(url.format(**vars(world)), data=data, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert needle in json.dumps(response.json()[key])
    assert counts() == before


@pytest.mark.parametrize(
    ("url", "form", "message"),
    [
        ("/datasets/{dataset}/rows/", {"name": "r", "vars": '{"a": "\\u0000"}'}, "NUL"),
        ("/datasets/{dataset}/rows/", {"name": "r", "vars": '{"a": ' + deep(5000) + "}"}, "nested"),
        ("/datasets/{dataset}/rows/1/", {"name": "r", "vars": '{"\\ud800": 1}'}, "surrogate"),
        ("/w/new/", {"name": f"a{NUL}"}, "Null characters are not allowed"),
    ],
    ids=["row-nul", "row-deep", "row-surrogate-key", "workspace-nul"],
)
def test_page_forms_refuse_what_cannot_be_stored_and_say_why(owner, world, url, form, message):
    client = Client()
    client.force_login(owner)
    before = counts()

    response = client.post(url.format(**vars(world)), form, follow=True)

    assert response.status_code in (200, 400)
    assert message in response.content.decode()
    assert counts() == before
    assert Dataset.objects.get(pk=world.dataset).rows.get().vars == {"a": 1}


@pytest.mark.services
def test_the_real_server_answers_the_worst_of_them_in_json(transactional_db, owner, workspace, web_server):
    """Through daphne, as a client meets it: the ASGI stack adds no 500 or HTML answer of its own."""
    headers = {
        "Authorization": f"Token {api_token_create(user=owner, name='tests')[1]}",
        "Content-Type": "application/json",
    }
    w = World(workspace.pk, 0, 0, 0, 0, 0)
    cases = [
        (raw(group_body(w), "shared_variables", deep()), 400, "shared_variables"),
        (json.dumps(group_body(w, shared_variables={f"a{NUL}": SURROGATE})), 400, "shared_variables"),
        (raw(group_body(w), "title", '"' + "a" * (LIMIT_MB * 2**20) + '"'), 413, "detail"),
    ]
    before = counts()

    with httpx.Client(base_url=web_server.url, headers=headers, timeout=30) as client:
        for body, status, field in cases:
            response = client.post("/api/v1/groups/", content=body.encode("utf-8", "surrogatepass"))

            assert response.status_code == status, response.text[:300]
            assert response.headers["content-type"] == "application/json"
            assert field in response.json()
    assert counts() == before
