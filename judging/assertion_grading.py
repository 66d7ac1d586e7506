"""Model-graded assertions (`llm-rubric`, `g-eval`, `model-graded-closedqa`, `similar`) graded in the background: one
`assertion_grading` job per answer whose results compare stored as pending, run by a worker through the lab.jobs
lifecycle (never inside the round's finishing transaction).

The grader is the assertion's `provider`, a lab model id, asked through the judges' own client (temperature 0,
the JSON schema, the connection's limits, a retry for a reply that cannot be read); `similar` asks the connection's
OpenAI-compatible `/embeddings`. What the grader sees is lab.assertions.model_graded's prompt: the rubric, the
request and the answer, never a model name or a variant label. A grader that fails leaves its result "not graded"
with the reason, which keeps the answer out of the pass rates instead of failing it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compare.assertions.models import AssertionResult
from compare.assertions.services import EMBEDDING_KINDS, output_facts, output_grades_record, output_specs
from compare.models import Output
from lab.assertions import PENDING, AssertionSpec
from lab.assertions import model_graded as mg
from lab.engine.runtime import RunTimedOut, runtime
from lab.jobs.enqueue import enqueue_on_commit
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_claim, job_deadline, job_time_limit_s
from lab.models import Connection
from lab.providers.base import ConnectionConfig, ProviderError

from .calls import Ask, JudgeClient, JudgeModel, judge_model_resolve
from .models import ASSERTION_GRADING_JOB, AssertionGrading, AssertionGradingStatus
from .prompts import JudgePrompt
from .replies import BadReply, Read

logger = logging.getLogger(__name__)

EMBEDDINGS_TIMEOUT_S = 60.0
WORKER_POLL_S = 0.5  # how often the command line looks at a grading a worker took
Grade = tuple[bool, float, str] | str  # a result, or why the grader could not give one


def on_assertions_pending(sender, output_ids: list[int], **kwargs) -> None:
    """compare's `assertions_pending` hook, inside the transaction that stored the pending results: one job per
    answer, sent once it commits."""
    now = timezone.now()
    gradings = AssertionGrading.objects.bulk_create(
        AssertionGrading(output_id=output_id, enqueued_at=now) for output_id in output_ids
    )
    for grading in gradings:
        enqueue_on_commit(ASSERTION_GRADING_JOB, grading.pk)


def assertion_grading_execute(*, grading_id: int) -> AssertionGrading | None:
    """Claim one job, ask the graders and record what they said; None when it was not queued any more."""
    limit_s = job_time_limit_s()
    if not job_claim(kind(ASSERTION_GRADING_JOB), grading_id, deadline=job_deadline(limit_s)):
        logger.info("Assertion grading %s is not queued any more; nothing to do.", grading_id)
        return None
    grading = AssertionGrading.objects.get(pk=grading_id)
    try:
        grades, calls = _grade(grading.output_id, limit_s)
    except RunTimedOut:
        assertion_grading_fail(grading_id=grading_id, error=f"Grading ran past its time limit ({limit_s:g} s).")
        return AssertionGrading.objects.get(pk=grading_id)
    except Exception:
        assertion_grading_fail(grading_id=grading_id, error="The worker hit an unexpected error while grading.")
        raise
    with transaction.atomic():
        output_grades_record(output_id=grading.output_id, grades=grades)
        AssertionGrading.objects.transition(
            grading_id, AssertionGradingStatus.DONE, finished_at=timezone.now(), calls=calls
        )
    return AssertionGrading.objects.get(pk=grading_id)


def assertion_gradings_run_here(output_ids: list[int]) -> None:
    """compare's assertion grader hook, for the command line (which runs rounds without a worker): run these
    answers' queued gradings in this process, each exactly as a worker runs it (`assertion_grading_execute`), so a
    promptfoo config reaches its verdicts before its table is printed. A grading a worker claimed first is waited
    for, up to the job time limit (then its results stay pending and the table says so)."""
    open_ = [AssertionGradingStatus.QUEUED, AssertionGradingStatus.RUNNING]
    ids = list(
        AssertionGrading.objects.filter(output_id__in=output_ids, status__in=open_)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for grading_id in ids:
        assertion_grading_execute(grading_id=grading_id)
    # Any a worker took meanwhile: its claim in the database lets exactly one of us run it.
    until = time.monotonic() + job_time_limit_s()
    while AssertionGrading.objects.filter(pk__in=ids, status__in=open_).exists() and time.monotonic() < until:
        time.sleep(WORKER_POLL_S)


@transaction.atomic
def assertion_grading_fail(*, grading_id: int, error: str) -> bool:
    """Fail an unfinished job; its answer's pending results become not graded, with the reason. False when it had
    finished."""
    if not AssertionGrading.objects.transition(
        grading_id, AssertionGradingStatus.FAILED, error=error, finished_at=timezone.now()
    ):
        return False
    output_id = AssertionGrading.objects.values_list("output_id", flat=True).get(pk=grading_id)
    pending = AssertionResult.objects.filter(output_id=output_id, state=PENDING).values_list("pk", flat=True)
    output_grades_record(output_id=output_id, grades=dict.fromkeys(pending, f"Not graded: {error}"))
    logger.warning("Assertion grading %s failed: %s", grading_id, error)
    return True


def _grade(output_id: int, limit_s: float) -> tuple[dict[int, Grade], list[dict]]:
    output = Output.objects.select_related("round__group__workspace", "round__dataset_row", "variant").get(pk=output_id)
    specs = output_specs(output)
    pending = [row for row in AssertionResult.objects.filter(output=output, state=PENDING) if row.position < len(specs)]
    if not pending:
        return {}, []
    facts = output_facts(output)
    request = output.judge_request()
    engine = runtime()
    grades: dict[int, Grade] = {}
    calls: list[dict] = []
    for row in pending:
        spec = specs[row.position]
        try:
            grader = _grader(output.round.group.workspace, spec)  # resolved here: the loop never touches the ORM
            graded = _one(
                spec, grader, spec.rendered_value(facts.vars), facts.output, request, output.round.lane, calls
            )
            grades[row.pk] = engine.run(graded, timeout=limit_s)
        except (ValidationError, ProviderError, mg.GraderReplyError, BadReply) as exc:
            message = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
            grades[row.pk] = f"Not graded: {message}"
    return grades, calls


def _grader(workspace, spec: AssertionSpec) -> JudgeModel | tuple[ConnectionConfig, str]:
    """The judge model, or for `similar` the embeddings connection and model; ValidationError naming what is
    missing (a connection deleted or changed since the assertion was written)."""
    if spec.base_type != "similar":
        return judge_model_resolve(workspace=workspace, model_id=spec.provider)
    name, model = spec.provider.split("::", 1)
    connection = Connection.objects.filter(workspace=workspace, name=name).first()
    if connection is None or connection.kind not in EMBEDDING_KINDS:
        raise ValidationError(f"'similar' needs an OpenAI-compatible embeddings connection named '{name}'.")
    return ConnectionConfig.from_connection(connection), model


async def _one(spec: AssertionSpec, grader, value: Any, answer: str, request: str, lane: str, calls) -> Grade:
    engine = runtime()
    if spec.base_type == "similar":
        connection, model = grader
        references = [value] if isinstance(value, str) else list(value)
        vectors = await _embed(engine.client, connection, model, [answer, *references])
        calls.append({"assertion": spec.type, "kind": "embeddings", "texts": len(vectors)})
        return mg.similar_result(spec, vectors[0], vectors[1:])
    client = JudgeClient(grader, client=engine.client, limiter=engine.limiter, lane=lane)
    try:
        if spec.base_type == "llm-rubric":
            return mg.rubric_result(spec, await _ask(client, spec, mg.rubric_prompt(value, answer)))
        if spec.base_type == "model-graded-closedqa":
            return mg.closedqa_result(spec, await _ask(client, spec, mg.closedqa_prompt(request, value, answer)))
        scored = []
        for criteria in [value] if isinstance(value, str) else value:
            steps = mg.g_eval_steps(await _ask(client, spec, mg.g_eval_steps_prompt(criteria)))
            prompt = mg.g_eval_score_prompt(criteria, steps, request, answer)
            scored.append(mg.g_eval_score(await _ask(client, spec, prompt)))
        return mg.g_eval_result(spec, scored)
    finally:
        calls.extend({"assertion": spec.type, **entry} for entry in client.ledger.log)


async def _ask(client: JudgeClient, spec: AssertionSpec, prompt: mg.GraderPrompt) -> dict[str, Any]:
    def read(text: str, order) -> Read:
        try:
            return Read(values={"reply": mg.reply_json(text)}, problems={})
        except mg.GraderReplyError as exc:
            raise BadReply(str(exc)) from None

    ask = Ask(
        kind="assertion",
        subject=spec.type,
        orders=((), ()),
        build=lambda order: JudgePrompt(messages=prompt.messages, schema=prompt.schema),
        read=read,
    )
    found = await client.ask(ask)
    if "reply" not in found.values:
        raise mg.GraderReplyError(found.problem("reply"))
    return found.values["reply"]


async def _embed(
    http: httpx.AsyncClient, connection: ConnectionConfig, model: str, texts: list[str]
) -> list[list[float]]:
    """OpenAI's `POST /embeddings`: one vector per text, in the order given."""
    headers = {"Authorization": f"Bearer {connection.api_key}"} if connection.api_key else {}
    url = connection.base_url.rstrip("/") + "/embeddings"
    try:
        response = await http.post(
            url, json={"model": model, "input": texts}, headers=headers, timeout=EMBEDDINGS_TIMEOUT_S
        )
    except httpx.HTTPError as exc:
        raise ProviderError(f"The embeddings request to {connection.name} failed: {exc}") from None
    if response.status_code != 200:
        raise ProviderError(f"The embeddings connection {connection.name} answered {response.status_code}.")
    try:
        data = sorted(response.json()["data"], key=lambda item: item["index"])
        vectors = [[float(x) for x in item["embedding"]] for item in data]
    except (ValueError, KeyError, TypeError):
        raise ProviderError(f"The embeddings connection {connection.name} sent no embeddings.") from None
    if len(vectors) != len(texts):
        raise ProviderError(f"The embeddings connection {connection.name} sent {len(vectors)} of {len(texts)}.")
    return vectors
