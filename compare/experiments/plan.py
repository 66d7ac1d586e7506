"""From a checked file to what will run in a workspace: models, parameters, judge and rows checked against it, and
the custom comparison's variants (one per combination of model, parameter set and prompt).

Problems name the file, the entry and the field, like the file's own, so a person fixes the file, not the lab.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from lab.providers.base import ModelInfo
from lab.providers.params import check_params
from lab.templating import missing_names

from ..catalog import resolve_model
from ..hooks import scorer
from ..models import MAX_EXPERIMENT_VARIANTS, Dataset
from .spec import FILE_NAMES, Combination, ConfigError, ExperimentConfig, Row

LABEL_LENGTH = 80


@dataclass
class Plan:
    config: ExperimentConfig
    infos: dict[str, ModelInfo | None]  # catalog entry of every model (and the judge), None when unlisted
    rows: list[Row]  # the file's rows, or the referenced dataset's
    dataset: Dataset | None = None  # the workspace dataset the file names, used as it is
    warnings: list[str] = field(default_factory=list)
    family_warnings: list[str] = field(default_factory=list)  # the judge shares a family with these models
    kinds: dict[str, str] = field(default_factory=dict)  # model id → its connection's kind

    @property
    def variants(self) -> list[dict[str, Any]]:
        """group_create's variants, in the order of the combinations."""
        labels = combination_labels(self.config.combinations)
        return [
            {
                "label": label,
                "model": c.model,
                "prompt": c.prompt.template,
                **({"messages": c.prompt.own_messages()} if c.prompt.messages else {}),
                "variables": c.prompt.variables,
                "params": c.params.params,
                **c.tool_overrides(("tools", "tool_choice", "response_schema")),
            }
            for c, label in zip(self.config.combinations, labels, strict=True)
        ]


def combination_labels(combinations: list[Combination]) -> list[str]:
    """ "model · parameters · prompt", made unique; one too long for a column drops whole names from the end
    (never cutting one in the middle) and says which combination it is, "model · #3"."""
    labels: list[str] = []
    for position, combination in enumerate(combinations, start=1):
        parts = [combination.model, combination.params.name, combination.prompt.name]
        label = " · ".join(parts)
        if len(label) > LABEL_LENGTH or label in labels:
            label = f" · #{position}"
            for keep in (2, 1):
                if len(candidate := " · ".join(parts[:keep]) + label) <= LABEL_LENGTH:
                    label = candidate
                    break
            else:
                label = f"#{position}"
        labels.append(label)
    return labels


def plan_check(*, config: ExperimentConfig, workspace) -> Plan:
    """Check the file against the workspace; raises ConfigError listing every problem."""
    plan, problems = _plan(config, workspace, rendering=True)
    if problems:
        raise ConfigError(problems)
    return plan


def plan_problems(*, config: ExperimentConfig, workspace, rendering: bool) -> list[str]:
    """The workspace's problems with a file that has problems of its own, so that both are reported in one pass.
    `rendering` is False when the file's variables or rows were not all read: their placeholders would be missing."""
    return _plan(config, workspace, rendering=rendering)[1]


def _plan(config: ExperimentConfig, workspace, *, rendering: bool) -> tuple[Plan, list[str]]:
    problems: list[str] = []
    source = config.source
    plan = Plan(config=config, infos={}, rows=list(config.rows))
    for index, model in enumerate(config.models, start=1):
        try:
            connection, plan.infos[model] = resolve_model(workspace, model)
        except ValidationError as exc:
            written = config.written.get(model, model)
            problems.append(f"{source}: models[{index}] ({written}): model: {' '.join(exc.messages)}")
            continue
        plan.kinds[model] = connection.kind
        if plan.infos[model] is None and connection.models_cache:
            plan.warnings.append(f"{model} is not in the catalog of {connection.name}; its price is unknown.")
    problems += _check_params(config, plan.infos, plan.kinds)
    count = len(config.combinations)
    if config.combinations and not 1 <= count <= MAX_EXPERIMENT_VARIANTS:
        problems.append(
            f"{source}: combinations: {count} combinations of model, parameters and prompt; an experiment runs at most "
            f"{MAX_EXPERIMENT_VARIANTS} (each is run on every dataset row)"
        )
    if config.dataset_ref is not None:
        plan.dataset, plan.rows = _dataset(workspace, config.dataset_ref, source, problems)
    if config.evaluation is not None:
        problems += _check_judge(config, workspace, plan)
    # Rows of a dataset that was not found would only repeat that problem as missing values.
    if rendering and (config.dataset_ref is None or plan.dataset is not None):
        problems += _check_rendering(config, plan.rows)
    return plan, problems


def _check_params(config: ExperimentConfig, infos: dict[str, ModelInfo | None], kinds: dict[str, str]) -> list[str]:
    problems: list[str] = []
    index_of = {params.name: i for i, params in enumerate(config.param_sets, start=1)}
    checked: set[tuple[str, str]] = set()
    for combination in config.combinations:
        key = (combination.params.name, combination.model)
        if key in checked or combination.model not in infos:
            continue
        checked.add(key)
        where = f"model-parameters[{index_of[combination.params.name]}] ({combination.params.name})"
        model = [(combination.model, infos[combination.model])]
        for message in check_params(combination.params.params, model, kinds=kinds, names=FILE_NAMES):
            problems.append(f"{config.source}: {where}: {message}; drop it from this set or use another model")
    return problems


def _dataset(workspace, ref: str | int, source: str, problems: list[str]) -> tuple[Dataset | None, list[Row]]:
    datasets = Dataset.objects.filter(workspace=workspace)
    found = list(datasets.filter(pk=ref) if isinstance(ref, int) else datasets.filter(name=str(ref)))
    where = f"{source}: dataset[1] ({ref}): dataset"
    if not found:
        problems.append(f"{where}: this workspace has no such dataset")
        return None, []
    if len(found) > 1:
        problems.append(f"{where}: {len(found)} datasets have this name; use its id")
        return None, []
    rows = [Row(row.name or f"row-{row.position}", row.vars) for row in found[0].rows.order_by("position")]
    if not rows:
        problems.append(f"{where}: the dataset has no rows")
    return found[0], rows


def _check_judge(config: ExperimentConfig, workspace, plan: Plan) -> list[str]:
    """Problems with the judge; its sharing a family with a model is a warning unless `family: refuse`."""
    judge = scorer()
    evaluation = config.evaluation
    candidates = [
        (f"models[{i}] ({config.written.get(model, model)})", model) for i, model in enumerate(config.models, start=1)
    ]
    problems, sharing = (
        judge.check(workspace=workspace, model_id=evaluation.model, candidates=candidates) if judge else ([], [])
    )
    if not problems:
        plan.infos[evaluation.model] = resolve_model(workspace, evaluation.model)[1]
    if evaluation.family == "refuse":
        problems += [
            f"{message} (evaluation: family is refuse; choose a judge of another family)" for message in sharing
        ]
    else:
        plan.family_warnings += sharing
    return [f"{config.source}: evaluation: model: {message}" for message in problems]


def _check_rendering(config: ExperimentConfig, rows: list[Row]) -> list[str]:
    """Every prompt must find every placeholder's value in every row (with the shared and the prompt's variables)."""
    problems: list[str] = []
    index_of = {prompt.name: i for i, prompt in enumerate(config.prompts, start=1)}
    for prompt in config.prompts:
        where = f"{config.source}: prompts[{index_of[prompt.name]}] ({prompt.name})"
        if not prompt.messages:
            problems += _missing(f"{where}: prompt", prompt.template, config, rows, prompt.variables)
        for number, message in enumerate(prompt.messages, start=1):
            problems += _missing(f"{where}: message {number}", message["content"], config, rows, prompt.variables)
    if config.system_prompt:
        problems += _missing(f"{config.source}: system-prompt", config.system_prompt, config, rows, {})
    return problems


def _missing(where: str, template: str, config: ExperimentConfig, rows: list[Row], own: dict) -> list[str]:
    lacking: dict[str, list[str]] = {}
    for row in rows or [None]:
        values = {**config.variables, **(row.vars if row else {}), **own}
        for name in missing_names(template, values):
            lacking.setdefault(name, []).append(row.name if row else "")
    problems = []
    for name, row_names in lacking.items():
        if not rows:
            problems.append(f"{where}: uses <<{name}>>, which has no value: add a dataset with it, or variables")
            continue
        shown = ", ".join(row_names[:5]) + (f" and {len(row_names) - 5} more" if len(row_names) > 5 else "")
        problems.append(f"{where}: uses <<{name}>>, which dataset rows {shown} do not give")
    return problems
