"""The command line's text: the estimate, a progress bar, one block per answer and the tables of averages."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from .estimate import Estimate
from .results import GROUPINGS, Average, Cell, Results
from .runner import Progress
from .spec import FILE_NAMES

BAR_WIDTH = 30


def count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def money(value: float | Decimal | None) -> str:
    if value is None:
        return "?"
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}" if value < 1 else f"${value:,.2f}"


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
    lines = [
        "Estimate",
        f"  Combinations  {shape} on {count(max(estimate.rows, 1), 'dataset row')}",
        f"  Calls         {estimate.calls}: {count(answers.calls, 'answer')}, {count(evaluations.calls, 'evaluation')}",
        f"  Tokens        ~{estimate.tokens:,}: answers {answers.input_tokens:,} in + {answers.output_tokens:,} out, "
        f"evaluations {evaluations.input_tokens:,} in + {evaluations.output_tokens:,} out",
        f"  Cost          ~{money(estimate.cost)}: answers {money(answers.cost)}, "
        f"evaluations {money(evaluations.cost)}",
    ]
    lines += [f"  Note: {note}" for note in estimate.notes]
    return "\n".join(lines)


def progress_text(progress: Progress) -> str:
    share = progress.done / progress.total if progress.total else 1.0
    filled = round(BAR_WIDTH * share)
    left = duration(progress.left_s) if progress.done < progress.total else duration(0)
    return (
        f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {progress.done}/{progress.total} calls · "
        f"{progress.rate:.1f} calls/s · {left} left"
    )


def score_text(value: float | None, scale: str) -> str:
    if value is None:
        return "-"
    top = scale.split("-")[-1] if "-" in scale else "1"
    return f"{value:.2f}".rstrip("0").rstrip(".") + f"/{top}"


def params_text(params: dict[str, Any]) -> str:
    # In the file's names and order (the database may return a JSON object's keys in another order).
    shown = [f"{theirs} {params[ours]}" for ours, theirs in FILE_NAMES.items() if ours in params]
    return ", ".join(shown) or "provider defaults"


def _valid(cell: Cell) -> str:
    if cell.valid is None:
        return "-"
    return "yes" if cell.valid else "no"


def cell_block(index: int, cell: Cell, scale: str) -> str:
    output, evaluation = cell.output, cell.evaluation
    combo = cell.combo
    lines = [
        f"{index}. {combo.model} · {combo.parameters} · {combo.prompt} · {cell.row}",
        f"   Model        {combo.model}",
        f"   Parameters   {combo.parameters} ({params_text(output.variant.params)})",
        f"   Prompt       {combo.prompt}",
        f"   Dataset row  {cell.row}",
        f"   Answer       {output.get_status_display()}" + (f": {output.error}" if output.error else ""),
    ]
    if scale:
        lines.append(f"   Score        {score_text(cell.scale_score, scale)}")
        lines.append(f"   Reason       {(evaluation.reason if evaluation else '') or '-'}")
    if cell.valid is not None:
        errors = "; ".join(evaluation.schema_errors)
        lines.append(f"   Valid        {_valid(cell)}" + (f" ({errors})" if errors else ""))
    latency = output.latency_ms / 1000 if output.latency_ms is not None else None
    lines.append(
        f"   Generation   {latency if latency is not None else '?'} s · {output.input_tokens or 0} in + "
        f"{output.output_tokens or 0} out tokens · {money(output.cost)}"
    )
    if scale and evaluation is not None:
        seconds = evaluation.latency_ms / 1000 if evaluation.latency_ms is not None else "?"
        lines.append(
            f"   Evaluation   {seconds} s · {evaluation.input_tokens} in + {evaluation.output_tokens} out tokens · "
            f"{money(evaluation.cost)}"
        )
    return "\n".join(lines)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain columns, numbers right-aligned."""
    text = [[str(value) for value in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) if text else len(h) for i, h in enumerate(headers)]
    numeric = [all(_numeric(r[i]) for r in text) and bool(text) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in text)])


def _numeric(text: str) -> bool:
    return text.replace(".", "", 1).replace("/", "", 1).replace("$", "", 1).replace(",", "").isdigit() or text == "-"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def results_text(results: Results) -> str:
    scale = results.scale
    blocks = [cell_block(i, cell, scale) for i, cell in enumerate(results.cells, start=1)]
    rows = [
        [
            i,
            cell.combo.model,
            cell.combo.parameters,
            cell.combo.prompt,
            cell.row,
            score_text(cell.scale_score, scale),
            _valid(cell),
            _seconds(cell.output.latency_ms / 1000 if cell.output.latency_ms is not None else None),
            cell.tokens,
            _seconds(cell.evaluation.latency_ms / 1000 if cell.evaluation and cell.evaluation.latency_ms else None),
            money(cell.cost),
        ]
        for i, cell in enumerate(results.cells, start=1)
    ]
    headers = ["#", "Model", "Parameters", "Prompt", "Row", "Score", "Valid", "Gen s", "Tokens", "Eval s", "Cost"]
    parts = ["Results", "", "\n\n".join(blocks), "", "All answers", table(headers, rows)]
    for key, title in GROUPINGS:
        parts += ["", f"Averages by {title.lower()}", averages_table(title, results.averages[key], scale)]
    return "\n".join(parts)


def averages_table(title: str, averages: list[Average], scale: str) -> str:
    headers = [title, "Answers", "Failed", "Score", "Valid", "Gen s", "Tokens", "Eval s", "Cost"]
    rows = [
        [
            a.key,
            a.answers,
            a.failed,
            score_text(a.score, scale),
            _share(a.valid_share),
            _seconds(a.latency_s),
            "-" if a.tokens is None else f"{a.tokens:.0f}",
            _seconds(a.evaluation_s),
            money(a.cost),
        ]
        for a in averages
    ]
    return table(headers, rows)
