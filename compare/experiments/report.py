"""The command line's text: the estimate, a progress bar, one block per answer and the tables of averages.

The blocks and the table follow Toor's printed layout (`Score: 5`, `Reason:` wrapped, times in ms and tokens on
their own lines, models as the file wrote them), with our additions (the answer's status, schema validity, cost)
in the same style. A cost that is not known is "unknown", never $0.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from .costs import count, money, priced
from .estimate import Estimate, Part
from .results import GROUPINGS, Average, Cell, Results
from .runner import Progress

BAR_WIDTH = 30
# A block's labels are right-aligned as Toor aligns them: the names to 15 characters, the timings and tokens to 35.
NAME_WIDTH, FIGURE_WIDTH = 15, 35
TEXT_WIDTH = 65  # a long value (the judge's reason) is wrapped at this width, as Toor wraps it


def _part_cost(part: Part) -> str:
    return priced(part.cost, calls=part.calls, unpriced=part.unpriced_calls)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def estimate_text(estimate: Estimate, config) -> str:
    answers, evaluations = estimate.answers, estimate.evaluations
    product = " × ".join(
        [
            count(len(config.models), "model"),
            count(len(config.param_sets), "parameter set"),
            count(len(config.prompts), "prompt"),
        ]
    )
    shape = f"{estimate.combinations} ({'listed' if config.explicit_combinations else product})"
    total = priced(estimate.cost, calls=estimate.calls, unpriced=answers.unpriced_calls + evaluations.unpriced_calls)
    lines = [
        "Estimate",
        f"  Combinations  {shape} on {count(max(estimate.rows, 1), 'dataset row')}",
        f"  Calls         {estimate.calls}: {count(answers.calls, 'answer')}, {count(evaluations.calls, 'evaluation')}",
        f"  Tokens        ~{estimate.tokens:,}: answers {answers.input_tokens:,} in + {answers.output_tokens:,} out, "
        f"evaluations {evaluations.input_tokens:,} in + {evaluations.output_tokens:,} out",
        f"  Cost          ~{total}: answers {_part_cost(answers)}, evaluations {_part_cost(evaluations)}",
    ]
    lines += [f"  Note: {note}" for note in estimate.notes]
    lines += warnings_lines(estimate.warnings)
    return "\n".join(lines)


def warnings_lines(warnings: Sequence[str]) -> list[str]:
    return [f"  Warning: {warning}" for warning in warnings]


def progress_text(progress: Progress) -> str:
    """`[####....] 19/40 calls · 21 not started · 3.1 calls/s · 0 s left`: the calls made of all, and apart those
    that will never be made, so the bar is full when the run is over."""
    share = (progress.done + progress.not_started) / progress.total if progress.total else 1.0
    filled = round(BAR_WIDTH * share)
    left = duration(0) if progress.finished else duration(progress.left_s)
    not_started = f" · {progress.not_started} not started" if progress.not_started else ""
    return (
        f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {progress.done}/{progress.total} calls{not_started} · "
        f"{progress.rate:.1f} calls/s · {left} left"
    )


def score_text(value: float | None) -> str:
    """A score on its type's own scale, as Toor prints it: 5, 3.5; "-" when not judged."""
    if value is None:
        return "-"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _valid(cell: Cell) -> str:
    if cell.valid is None:
        return "-"
    return "yes" if cell.valid else "no"


def _field(label: str, value: Any, width: int = NAME_WIDTH) -> list[str]:
    """`│          Score: 5`, a long value wrapped under itself."""
    head = f"│{label.rjust(width)}: "
    text = str(value)
    if len(text) <= TEXT_WIDTH and text.isprintable() and not text.endswith(" "):
        return [head + text]  # what textwrap would return, without its cost (most fields, 24,000 in 3,000 answers)
    wrapped = textwrap.wrap(text, width=TEXT_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]
    return [head + wrapped[0], *("│" + " " * (width + 2) + line for line in wrapped[1:])]


def _figure(label: str, value: Any) -> list[str]:
    return _field(label, value, FIGURE_WIDTH)


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value} ms"


def cell_block(cell: Cell, scale: str) -> str:
    output, evaluation = cell.output, cell.evaluation
    combo = cell.combo
    lines = [
        *_field("Model", combo.model),
        *_field("Parameters", combo.parameters),
        *_field("Prompt", combo.prompt),
        *_field("Dataset", cell.row),
    ]
    if not cell.ok or output.is_cut_off:
        status = "cut off at the token limit" if output.is_cut_off else output.get_status_display()
        lines += _field("Answer", status + (f": {output.error}" if output.error else ""))
    elif output.cached:
        lines += _field("Answer", "from the cache (no call made, cost 0)")
    if cell.category:
        lines += _field("Category", cell.category)
    elif scale:
        lines += _field("Score", score_text(cell.scale_score))
    if scale:
        lines += _field("Reason", (evaluation.reason if evaluation else "") or "-")
        if evaluation and evaluation.inputs_note:
            lines += _field("Judged", evaluation.inputs_note)
    if cell.valid is not None:
        errors = "; ".join(evaluation.schema_errors) if evaluation else ""  # the answer's own check
        lines += _field("Valid", _valid(cell) + (f" ({errors})" if errors else ""))
    lines += _figure("Prompt generation time", _ms(output.latency_ms))
    lines += _figure("Prompt generation input tokens", output.input_tokens or 0)
    lines += _figure("Prompt generation output tokens", output.output_tokens or 0)
    lines += _figure("Prompt generation cost", money(output.cost))
    if scale and evaluation is not None and evaluation.judge_calls:
        lines += _figure("Evaluation time", _ms(evaluation.latency_ms))
        lines += _figure("Evaluation input tokens", evaluation.input_tokens)
        lines += _figure("Evaluation output tokens", evaluation.output_tokens)
        lines += _figure("Evaluation cost", money(evaluation.cost))
    return "\n".join([*lines, " " + "─" * 32])


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain columns three spaces apart under a rule, numbers right-aligned."""
    text = [[str(value) for value in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) if text else len(h) for i, h in enumerate(headers)]
    numeric = [all(_numeric(r[i]) for r in text) and bool(text) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)]
        return "   ".join(parts).rstrip()

    rule = "─" * (sum(widths) + 3 * (len(widths) - 1))
    return "\n".join([line(headers), rule, *(line(r) for r in text)])


def _numeric(text: str) -> bool:
    return text.replace(".", "", 1).replace("$", "", 1).replace(",", "").replace(" ms", "").isdigit() or text in (
        "-",
        "unknown",
    )


def _ms_mean(seconds: float | None) -> str:
    return "-" if seconds is None else f"{round(seconds * 1000)} ms"


def _cell_cost(cell: Cell) -> str:
    calls = cell.call_costs
    known = [c for c in calls if c is not None]
    return priced(sum(known, Decimal(0)), calls=len(calls), unpriced=len(calls) - len(known))


def results_text(results: Results) -> str:
    scale = results.scale
    structured = any(cell.valid is not None for cell in results.cells)
    blocks = [cell_block(cell, scale) for cell in results.cells]
    headers = ["Model", "Parameters", "Prompt", "Dataset"]
    headers += ["Category" if any(cell.category for cell in results.cells) else "Score"] if scale else []
    headers += ["Valid"] if structured else []
    headers += ["Gen time", "Tokens", "Eval time", "Cost"]
    rows = []
    for cell in results.cells:
        row = [cell.combo.model, cell.combo.parameters, cell.combo.prompt, cell.row]
        row += [_cell_score(cell)] if scale else []
        row += [_valid(cell)] if structured else []
        evaluation_ms = cell.evaluation.latency_ms if cell.evaluation and cell.evaluation.judge_calls else None
        answer_time = "cached" if cell.output.cached else _ms(cell.output.latency_ms)
        row += [answer_time, cell.tokens, _ms(evaluation_ms), _cell_cost(cell)]
        rows.append(row)
    warnings = warnings_lines(results.experiment.estimate.get("warnings") or [])
    parts = ["Results", *warnings, "", "\n".join(blocks), "", table(headers, rows)]
    for key, title in GROUPINGS:
        parts += ["", f"Averages by {title.lower()}", averages_table(title, results.averages[key], scale, structured)]
    return "\n".join(parts)


def _cell_score(cell: Cell) -> str:
    if cell.output.is_cut_off:
        return "cut off"
    if not cell.ok:
        return cell.output.get_status_display().lower()
    return cell.category or score_text(cell.scale_score)


def averages_table(title: str, averages: list[Average], scale: str, structured: bool) -> str:
    unstarted = any(a.not_started for a in averages)
    headers = [title, "Answers", "Failed"] + (["Not started"] if unstarted else [])
    headers += (["Score"] if scale else []) + (["Valid"] if structured else [])
    headers += ["Gen time", "Tokens", "Eval time", "Cost"]
    rows = []
    for a in averages:
        row = [a.key, a.answers, a.failed] + ([a.not_started] if unstarted else [])
        row += [score_text(a.score)] if scale else []
        row += [_valid_text(a)] if structured else []
        row += [
            _ms_mean(a.latency_s),
            "-" if a.tokens is None else f"{a.tokens:.0f}",
            _ms_mean(a.evaluation_s),
            priced(a.cost or 0, calls=a.priced_calls + a.unpriced_calls, unpriced=a.unpriced_calls),
        ]
        rows.append(row)
    text = table(headers, rows)
    shares = [(a.key, a.categories) for a in averages if a.categories]
    if shares:
        text += "\n" + "\n".join(f"  {key}: {categories_text(categories)}" for key, categories in shares)
    return text


def _valid_text(average: Average) -> str:
    """`75% (95% interval 30–95%)`: the share of checked answers matching the schema with its Wilson interval."""
    if average.valid_share is None:
        return "-"
    return f"{average.valid_share:.0%} (95% interval {average.valid_low:.0%}–{average.valid_high:.0%})"


def categories_text(categories: dict) -> str:
    """`concise 4/5 (80%, 95% interval 38–96%)`, per category."""
    return "; ".join(
        f"{name} {s.count}/{s.classified} ({s.share:.0%}, 95% interval {s.ci_low:.0%}–{s.ci_high:.0%})"
        for name, s in categories.items()
    )
