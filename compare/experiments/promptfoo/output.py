"""promptfoo's output for a run: each answer graded by its test's assertions (`defaultTest`'s first), a pass/fail
table (one row per test, one column per prompt × provider, providers outermost) and promptfoo's JSON results.

The JSON carries promptfoo's keys for what the two tools share (`results.results[]` with `promptIdx`, `testIdx`,
`provider.id`, `vars`, `success`, `score`, `response.output`, `gradingResult.componentResults[]`; `results.stats`),
so a tool reading promptfoo's file reads this one. Grading reads stored answers only: no model is called again.
A model-graded component's result is the one its grader stored (the command has the graders run first,
`promptfoo_grade`), so the page and the table agree; a grader that failed makes the cell an error, as promptfoo
counts a test whose grading threw (`stats.errors`), never a pass or a failure.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lab.assertions import GRADED, NOT_GRADED, PENDING, AnswerFacts, ComponentResult, combine, grade

from ...assertions.models import AssertionResult
from ...assertions.services import tool_facts
from ...models import OutputStatus
from ..results import Results
from .templates import var_texts
from .translate import Translation, column_of, test_index_of

CELL_WIDTH = 28
OUTPUT_VERSION = 3


@dataclass
class Verdict:
    test_index: int
    column: int
    success: bool
    score: float
    reason: str
    output: Any  # the answer's text; its tool calls or its parsed JSON as promptfoo shows them (_shown)
    error: str = ""
    latency_ms: int | None = None
    cost: float | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    components: list[dict[str, Any]] = field(default_factory=list)


def promptfoo_verdicts(translation: Translation, results: Results) -> list[Verdict]:
    """One verdict per answer, in promptfoo's order (tests, then columns)."""
    verdicts = []
    stored = _stored_results([cell.output.pk for cell in results.cells])
    for cell in results.cells:
        test = translation.tests[test_index_of(cell.row)]
        output = cell.output
        cost = float(output.cost) if output.cost is not None else None
        tokens = {"prompt": output.input_tokens or 0, "completion": output.output_tokens or 0}
        tokens["total"] = tokens["prompt"] + tokens["completion"]
        verdict = Verdict(
            test_index=test.index,
            column=column_of(cell.combo.position),
            success=False,
            score=0.0,
            reason="",
            output=_shown(output, translation.columns[column_of(cell.combo.position)].provider),
            latency_ms=output.latency_ms,
            cost=cost,
            tokens=tokens,
        )
        if output.status != OutputStatus.OK:
            verdict.error = output.error or f"The answer {output.status}."
            verdict.reason = verdict.error
        else:
            # Assertion values see the vars as promptfoo renders them (lab.assertions fills `{{var}}` in values).
            facts = AnswerFacts(output.text, output.latency_ms, cost, var_texts(test.vars), **tool_facts(output))
            graded = grade(translation.default_assertions + test.specs, facts).components
            components = [_as_stored(c, stored.get((output.pk, position))) for position, c in enumerate(graded)]
            grading = combine(components, threshold=test.threshold)
            not_done = [c for c in components if c.state != GRADED]
            if not_done:
                # promptfoo counts a grading that threw as an error of the test, apart from its failures.
                verdict.error = not_done[0].reason
                verdict.reason = verdict.error
            else:
                verdict.score, verdict.reason = float(grading.score), grading.reason
                verdict.success = bool(grading.passed)
            verdict.components = [
                {
                    "pass": c.passed if c.state == GRADED else False,
                    "score": float(c.score) if c.state == GRADED else 0.0,
                    "reason": c.reason,
                    "assertion": c.spec.as_dict(),
                    **({"error": c.reason} if c.state != GRADED else {}),
                }
                for c in components
            ]
        verdicts.append(verdict)
    return sorted(verdicts, key=lambda v: (v.test_index, v.column))


def _shown(output, provider) -> Any:
    """The answer as promptfoo's OpenAI provider gives it: its calls when the model wrote no text, and its JSON
    parsed when the provider asked for a `json_schema` response (the text when it does not parse)."""
    if not output.text and output.tool_calls:
        return tool_facts(output)["tool_calls"]
    if provider.response_schema is not None and output.text:
        try:
            return json.loads(output.text)
        except ValueError:
            return output.text
    return output.text


def _stored_results(output_ids: list[int]) -> dict[tuple[int, int], AssertionResult]:
    """The model-graded results the graders stored, by (answer, position in its list)."""
    rows = AssertionResult.objects.filter(output_id__in=output_ids).exclude(state=PENDING)
    return {(row.output_id, row.position): row for row in rows}


def _as_stored(component: ComponentResult, row: AssertionResult | None) -> ComponentResult:
    """A pending component as its grader stored it (still pending without a stored result)."""
    if component.state != PENDING:
        return component
    if row is None or row.state == PENDING:
        return component
    if row.state == NOT_GRADED:
        return ComponentResult(False, 0.0, row.reason, component.spec, NOT_GRADED)
    return ComponentResult(bool(row.passed), float(row.score or 0.0), row.reason, component.spec)


def table_text(translation: Translation, verdicts: list[Verdict]) -> str:
    """promptfoo's terminal table: a row per test (its vars), a column per prompt × provider; PASS/FAIL and the
    answer's start in each cell; then the counts."""
    columns = translation.columns
    names = list(dict.fromkeys(name for test in translation.tests for name in test.vars))
    described = any(test.description for test in translation.tests)
    header = [*(["description"] if described else []), *names]
    header += [f"[{c.provider.label}] {c.prompt.label}" for c in columns]
    by_cell = {(v.test_index, v.column): v for v in verdicts}
    rows = []
    for test in translation.tests:
        cells = [_short(test.description)] if described else []
        cells += [_short(test.vars.get(name, "")) for name in names]
        for column in columns:
            verdict = by_cell.get((test.index, column.index))
            if verdict is None:
                cells.append("[NOT RUN]")
            elif verdict.success:
                shown = verdict.output if isinstance(verdict.output, str) else json.dumps(verdict.output)
                cells.append(_short(f"[PASS] {shown}"))
            elif verdict.error and verdict.components:  # the answer came, its grading did not
                cells.append(_short(f"[ERROR] {verdict.error}"))
            else:
                cells.append(_short(f"[FAIL] {verdict.reason}"))
        rows.append(cells)
    widths = [min(CELL_WIDTH, max(len(str(h)) for h in [head] + [r[i] for r in rows])) for i, head in enumerate(header)]
    lines = [_line(header, widths), _line(["─" * w for w in widths], widths)]
    lines += [_line(row, widths) for row in rows]
    successes, failures, errors = counts(verdicts)
    total = successes + failures + errors
    rate = f"{100 * successes / total:.2f}%" if total else "n/a"
    lines += ["", f"Successes: {successes}", f"Failures: {failures}", f"Errors: {errors}", f"Pass Rate: {rate}"]
    return "\n".join(lines)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return textwrap.shorten(" ".join(text.split()), CELL_WIDTH, placeholder="…") or text[:CELL_WIDTH]


def _line(cells: list[str], widths: list[int]) -> str:
    return " │ ".join(cell.ljust(width)[:width] for cell, width in zip(cells, widths, strict=True)).rstrip()


def counts(verdicts: list[Verdict]) -> tuple[int, int, int]:
    """(successes, failures, errors), as promptfoo counts them: a call that failed is an error, not a failure."""
    errors = sum(1 for v in verdicts if v.error)
    successes = sum(1 for v in verdicts if v.success)
    return successes, len(verdicts) - successes - errors, errors


def output_json(translation: Translation, verdicts: list[Verdict], *, source: str, group_id: int) -> dict[str, Any]:
    columns = translation.columns
    tests = translation.tests
    successes, failures, errors = counts(verdicts)
    results = []
    for v in verdicts:
        column, test = columns[v.column], tests[v.test_index]
        results.append(
            {
                "promptIdx": v.column,
                "testIdx": v.test_index,
                "provider": {"id": column.provider.id, "label": column.provider.label},
                "prompt": {"raw": column.prompt.text, "label": column.prompt.label},
                "testCase": {
                    **({"description": test.description} if test.description else {}),
                    "vars": test.vars,
                    "assert": test.assertions,
                },
                "vars": test.vars,
                "response": {"output": v.output, "tokenUsage": v.tokens, "cost": v.cost},
                "error": v.error or None,
                "success": v.success,
                "score": v.score,
                "latencyMs": v.latency_ms,
                "cost": v.cost,
                "failureReason": 0 if v.success else (2 if v.error else 1),
                "gradingResult": None
                if v.error and not v.components
                else {"pass": v.success, "score": v.score, "reason": v.reason, "componentResults": v.components},
            }
        )
    tokens = {key: sum(v.tokens.get(key, 0) for v in verdicts) for key in ("total", "prompt", "completion")}
    return {
        "evalId": f"lab-{group_id}",
        "results": {
            "version": OUTPUT_VERSION,
            "timestamp": datetime.now(UTC).isoformat(),
            "prompts": [{"raw": c.prompt.text, "label": c.prompt.label, "provider": c.provider.id} for c in columns],
            "results": results,
            "stats": {"successes": successes, "failures": failures, "errors": errors, "tokenUsage": tokens},
        },
        "config": {"description": translation.data.get("description", ""), "source": source},
        "shareableUrl": None,
    }
