"""Experiments from the command line.

    manage.py experiment run FILE [--workspace W] [--user NAME] [--concurrency N] [--processes N] [--budget USD]
        [--dry-run] [--baseline RUN]
    manage.py experiment export GROUP > file.yaml

`run` checks the file, prints the estimate (`--dry-run` stops there), saves the experiment as a custom comparison,
runs its rounds in this process, or spread over `--processes` (no worker needed, and none is sent the rounds; in a
long run the sweeper may hand a running worker some), and prints one block per answer and the tables of averages.
With `--baseline` (a comparison id, or `latest`: the pinned baseline of experiments of this name, else the newest
earlier run) it then compares each answer with the baseline's and gives a paired significance verdict. Exit status:
0 all ran (and no significant regression); 1 answers or evaluations failed, or did not finish (a process of the run
stopped); 2 the file or the options have errors (nothing ran); 3 the budget cap stopped it; 4 a significant
regression against the baseline.

A promptfoo config (`promptfooconfig.yaml`: `providers`, `prompts`, `tests` …) is recognised and run unchanged
(compare.experiments.promptfoo): it also prints promptfoo's pass/fail table, writes promptfoo's JSON with
`--output FILE.json`, and exits 100 when any test fails (the codes for budget and regression stay).

Provider variables in the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, …) make a connection private to the
person the command runs as (`--user`, default the workspace's first owner) and the file's models of that provider
run on it; the team's connections are never changed from here (lab.connection_env).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from compare.experiments import report, spread
from compare.experiments.baseline import baseline_compare, baseline_resolve, experiment_baseline_set
from compare.experiments.baseline_text import baseline_text
from compare.experiments.budget import budget_check
from compare.experiments.config import config_from_data, config_read
from compare.experiments.export import export_yaml, group_export
from compare.experiments.files import DirectoryFiles
from compare.experiments.models import EvaluationStatus, Experiment
from compare.experiments.promptfoo.command import (
    EXIT_TESTS_FAILED,
    promptfoo_finish,
    promptfoo_grade,
    promptfoo_on_connections,
    promptfoo_prepare,
    promptfoo_read,
    promptfoo_summary,
)
from compare.experiments.promptfoo.connections import promptfoo_connections
from compare.experiments.results import experiment_results, failed_cells
from compare.experiments.runner import (
    Outcome,
    Progress,
    experiment_run_here,
    experiment_share_run,
    rounds_at_start,
    run_plan,
    spread_refusal,
)
from compare.experiments.selectors import (
    experiment_spent,
    workspace_by_name_or_id,
    workspace_member,
    workspace_owner,
)
from compare.experiments.services import (
    experiment_create,
    experiment_plan,
    experiment_start,
    experiment_start_in_parts,
)
from compare.experiments.spec import ConfigError, config_on_connections
from compare.experiments.spread import Plan
from compare.experiments.urls import experiment_page_path
from compare.models import CompareGroup, OutputStatus
from lab import gc_tuning
from lab.connection_env import connections_from_environment
from lab.engine.runtime import runtime
from lab.providers.http import tls_context_soon

EXIT_FAILED, EXIT_CONFIG, EXIT_BUDGET, EXIT_REGRESSION = 1, 2, 3, 4
# Lines for a log, not for a person at a terminal: every HTTP request, and a round someone else already ran.
QUIET_LOGGERS = ("httpx", "httpcore", "compare.rounds.execution")
PROGRESS_EVERY_S = 1.0  # when the output is not a terminal, a progress line at most this often
UNFINISHED = (OutputStatus.QUEUED, OutputStatus.RUNNING)


class Command(BaseCommand):
    # A run starts at once: Django's system checks import every URL conf and view (two seconds here, before the
    # first call). `manage.py check` and every web process still check the configuration.
    requires_system_checks: list[str] = []
    help = "Run an experiment file (models × parameters × prompts × dataset rows), or export a comparison as one."

    def add_arguments(self, parser):
        # The metavar names the actions a person uses; `run-share` (a child process's, below) stays out of the help.
        actions = parser.add_subparsers(dest="action", required=True, metavar="{run,export}")
        run = actions.add_parser("run", help="check, estimate and run an experiment file (YAML or JSON)")
        run.add_argument("file")
        run.add_argument("--workspace", help="the workspace's name or id (needed when there are several)")
        run.add_argument(
            "--user",
            help="the member the run is by, and who owns the connections made from provider variables in the "
            "environment (default: the workspace's first owner)",
        )
        run.add_argument(
            "--concurrency",
            type=int,
            help="calls in flight at most (default: each connection the experiment uses at its own limit)",
        )
        run.add_argument(
            "--processes",
            type=_processes,
            default=1,
            help="spread the run over this many processes (default 1), each running its share of the rounds and then "
            "whatever is still queued; --concurrency is divided between them; needs Redis and Postgres. Pays when "
            "the command is CPU-bound (many calls at once) and the machine has a core to spare",
        )
        run.add_argument("--budget", help="stop starting calls once this many dollars are spent")
        run.add_argument("--dry-run", action="store_true", help="stop after the estimate")
        run.add_argument(
            "--output",
            metavar="FILE.json",
            help="a promptfoo config's results in promptfoo's JSON layout (default: the config's outputPath)",
        )
        run.add_argument(
            "--debug", action="store_true", help="keep DEBUG's query log while running (every query slower)"
        )
        run.add_argument(
            "--baseline",
            metavar="RUN_OR_LATEST",
            help="compare with this run (a comparison id, or 'latest'); exit 4 on a significant regression",
        )
        export = actions.add_parser("export", help="write a comparison as an experiment file")
        export.add_argument("group", help="the comparison's id")
        # A child process of `run --processes N` (compare.experiments.spread): no help, for no person runs it.
        share = actions.add_parser(spread.SHARE_ACTION)
        share.add_argument("experiment", type=int)
        share.add_argument("--share", type=int, required=True)
        share.add_argument("--shares", type=int, required=True)
        share.add_argument("--rounds", type=int, required=True)
        share.add_argument("--calls", type=int)
        share.add_argument("--debug", action="store_true")

    def run_from_argv(self, argv):
        # From a shell (not call_command): the process exists for this command, so its collector is set for a long
        # run and skipped at exit (lab.gc_tuning).
        gc_tuning.settle_for_a_long_run()
        tls_context_soon()  # built beside the file's reading and checks rather than before the first requests
        try:
            super().run_from_argv(argv)
        finally:
            gc_tuning.freeze_before_exit()

    def handle(self, *args, action: str, **options):
        if action == "export":
            self._export(options["group"])
        elif action == spread.SHARE_ACTION:
            with _quiet(QUIET_LOGGERS), _production_cursors(unless=options["debug"]):
                code = self._run_share(options)
            if code:
                sys.exit(code)
        else:
            with _quiet(QUIET_LOGGERS), _production_cursors(unless=options["debug"]):
                self._run(options)

    def _run_share(self, options: dict) -> int:
        gone = spread.parent_gone()
        experiment = Experiment.objects.select_related("group").get(pk=options["experiment"])
        plan = Plan(rounds=options["rounds"], calls=options["calls"])
        running = experiment_share_run(
            experiment=experiment, plan=plan, share=options["share"], shares=options["shares"]
        )
        return spread.share_wait(running, gone=gone)

    def _export(self, group_id: str) -> None:
        group = CompareGroup.objects.filter(pk=int(group_id) if group_id.isdigit() else None).first()
        if group is None:
            raise CommandError(f"No comparison {group_id}.", returncode=EXIT_CONFIG)
        self.stdout.write(export_yaml(group_export(group)), ending="")

    def _run(self, options: dict) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file.", returncode=EXIT_CONFIG)
        if options["concurrency"] is not None and options["concurrency"] < 1:
            raise CommandError("--concurrency: at least 1.", returncode=EXIT_CONFIG)
        if options["processes"] > 1 and (refusal := spread_refusal()):
            raise CommandError(f"--processes {options['processes']} {refusal}", returncode=EXIT_CONFIG)
        budget = _budget(options["budget"])
        try:
            workspace = workspace_by_name_or_id(options["workspace"])
        except ValidationError as exc:
            raise CommandError(f"--workspace: {' '.join(exc.messages)}", returncode=EXIT_CONFIG) from None
        user = self._user(workspace, options["user"])
        text, files = path.read_text(encoding="utf-8"), DirectoryFiles(path.parent)
        try:
            promptfoo = promptfoo_read(text, source=str(path), files=files)
        except ConfigError as exc:
            self._config_errors(exc)
        output = self._output_path(options["output"], promptfoo, path.parent)
        private = self._connections_from_environment(workspace, user, promptfoo)
        try:
            if promptfoo is None:
                config = config_read(text, source=str(path), files=files, workspace=workspace)
            else:
                promptfoo = promptfoo_on_connections(promptfoo, private)
                config = config_from_data(promptfoo.data, source=str(path), files=files, workspace=workspace)
            config = config_on_connections(config, private)
            planned = experiment_plan(config=config, workspace=workspace)
            estimate = planned[1]
        except ConfigError as exc:
            self._config_errors(exc)
        baseline = self._baseline(workspace, config.name, options["baseline"])
        self.stdout.write(f'Experiment "{config.name}" from {path} in workspace "{workspace.name}"\n')
        if promptfoo is not None:
            self.stdout.write(promptfoo_summary(promptfoo) + "\n")
        self.stdout.write(report.estimate_text(estimate, config) + "\n")
        try:
            budget_check(budget=budget, calls=estimate.calls, unpriced_calls=estimate.unpriced_calls)
        except ValidationError as exc:
            raise CommandError(f"--budget: {' '.join(exc.messages)}", returncode=EXIT_CONFIG) from None
        if options["dry_run"]:
            self.stdout.write("\nDry run: nothing was run or saved.\n")
            return
        # The engine's loop, HTTP client and limiter start on a thread of their own while the experiment is saved
        # (25 ms less before the first call).
        threading.Thread(target=runtime, name="engine-start", daemon=True).start()
        try:
            experiment = experiment_create(
                workspace=workspace, user=user, config=config, source=str(path), budget=budget, planned=planned
            )
        except ConfigError as exc:
            self._config_errors(exc)
        if promptfoo is not None:
            promptfoo_prepare(experiment, promptfoo)
        concurrency, processes = options["concurrency"], options["processes"]
        if concurrency is None and promptfoo is not None:
            concurrency = promptfoo.max_concurrency
        parts = None
        try:
            if processes == 1 and budget is None:  # see experiment_start_in_parts
                first = rounds_at_start(run_plan(experiment, concurrency))
                parts = experiment_start_in_parts(experiment=experiment, user=user, first=first)
            else:
                experiment_start(experiment=experiment, user=user, run_here=True)
        except ValidationError as exc:  # a row that cannot be sent to its model (its context, an image): no call made
            raise CommandError(" ".join(exc.messages), returncode=EXIT_CONFIG) from None
        rows = report.count(max(1, len(planned[0].rows)), "round")
        plan = run_plan(experiment, concurrency, processes).describe()
        self.stdout.write(f"\nRunning {rows} (one per dataset row), {plan}\n")
        outcome = experiment_run_here(
            experiment=experiment,
            concurrency=concurrency,
            processes=processes,
            debug=options["debug"],
            on_progress=_ProgressPrinter(self.stderr),
            parts=parts,
        )
        if promptfoo is not None:
            promptfoo_grade(experiment)
        experiment.refresh_from_db()
        if baseline is not None:
            experiment_baseline_set(experiment=experiment, baseline=baseline)
        self._finish(experiment, baseline, outcome, promptfoo=promptfoo, output=output)

    def _user(self, workspace, username: str | None):
        if username is None:
            return workspace_owner(workspace)
        user = workspace_member(workspace, username)
        if user is None:
            raise CommandError(f"--user: {username!r} is not a member of this workspace.", returncode=EXIT_CONFIG)
        return user

    def _output_path(self, written: str | None, promptfoo, folder: Path) -> Path | None:
        """`--output` (from the working directory), else the config's `outputPath` (beside the config)."""
        if promptfoo is None:
            if written:
                raise CommandError("--output: only for promptfoo configs.", returncode=EXIT_CONFIG)
            return None
        path = Path(written) if written else (folder / promptfoo.output_path if promptfoo.output_path else None)
        if path is not None and path.suffix != ".json":
            raise CommandError(f"--output: {path} is not a .json file.", returncode=EXIT_CONFIG)
        return path

    def _connections_from_environment(self, workspace, user, promptfoo=None) -> dict[str, str]:
        """The person's private connections from the environment, by the provider name files use."""
        try:
            if promptfoo is None:
                applied = connections_from_environment(workspace=workspace, user=user, environ=os.environ)
            else:
                applied = promptfoo_connections(
                    workspace=workspace, user=user, environ=os.environ, providers=promptfoo.providers
                )
        except ValidationError as exc:
            raise CommandError(
                f"Connections from the environment: {' '.join(exc.messages)}", returncode=EXIT_CONFIG
            ) from None
        for item in applied:
            self.stdout.write(f"Connection {item.describe()}\n")
        return {item.provider: item.name for item in applied if item.usable}

    def _config_errors(self, exc: ConfigError):
        for message in exc.messages:
            self.stderr.write(message)
        count = len(exc.messages)
        raise CommandError(
            f"The experiment has {count} problem(s) (listed above); nothing was run.", returncode=EXIT_CONFIG
        )

    def _baseline(self, workspace, name: str, value: str | None):
        if value is None:
            return None
        try:
            return baseline_resolve(workspace=workspace, name=name, value=value)
        except ValidationError as exc:
            raise CommandError(f"--baseline: {' '.join(exc.messages)}", returncode=EXIT_CONFIG) from None

    def _finish(
        self, experiment, baseline=None, outcome: Outcome | None = None, *, promptfoo=None, output=None
    ) -> None:
        results = experiment_results(experiment)
        self.stdout.write("\n" + report.results_text(results) + "\n")
        tests_failed = False
        if promptfoo is not None:
            table, tests_failed = promptfoo_finish(promptfoo, results, output=output, group_id=experiment.group_id)
            self.stdout.write("\n" + table + "\n")
            if output is not None:
                self.stdout.write(f"Wrote {output}\n")
        group = experiment.group
        page = settings.SITE_URL + experiment_page_path(group.pk)
        self.stdout.write(f'\nSaved as comparison {group.pk} "{group.title}": {page}\n')
        failed = failed_cells(results)
        unfinished = [cell for cell in results.cells if cell.output.status in UNFINISHED]
        overall = results.overall
        calls = overall.priced_calls + overall.unpriced_calls
        spent = report.priced(experiment_spent(experiment), calls=calls, unpriced=overall.unpriced_calls)
        # The same counts as the averages' table, the page and the API (results.Average, selectors.experiment_progress).
        summary = f"{report.count(overall.answers, 'answer')}, {overall.failed} failed"
        summary += f", {overall.not_started} not started" if overall.not_started else ""
        summary += f", {len(unfinished)} not finished" if unfinished else ""
        judge_failed = sum(1 for c in results.cells if c.evaluation and c.evaluation.status == EvaluationStatus.FAILED)
        summary += f", {report.count(judge_failed, 'evaluation')} failed" if judge_failed else ""
        summary += f"; spent {spent}."
        comparison = baseline_compare(baseline=baseline, current=experiment) if baseline is not None else None
        if comparison is not None:
            url = settings.SITE_URL + reverse("compare:experiment_baseline", args=[group.pk])
            self.stdout.write("\n" + baseline_text(comparison, url=url) + "\n")
        stopped = outcome.stopped if outcome else []
        for process in stopped:
            self.stderr.write(process.describe())
        if stopped and unfinished:
            self.stderr.write(
                "The rounds a stopped process had claimed stay running until their deadline, when the jobs sweeper "
                "fails them; the rounds it had not claimed were run by the other processes."
            )
        if experiment.stopped_reason:
            raise CommandError(f"{experiment.stopped_reason} {summary}", returncode=EXIT_BUDGET)
        if promptfoo is not None and comparison is not None and comparison.is_regression:
            raise CommandError(f"Regression against the baseline: {comparison.sentence}", returncode=EXIT_REGRESSION)
        if promptfoo is not None and (tests_failed or failed or unfinished):
            raise CommandError(f"Some tests failed: {summary}", returncode=EXIT_TESTS_FAILED)
        if failed:
            for cell in failed[:10]:
                why = cell.output.error or (cell.evaluation.reason if cell.evaluation else "")
                self.stderr.write(f"Failed: {cell.combo.label} · {cell.row}: {why}")
            raise CommandError(f"Some calls failed: {summary}", returncode=EXIT_FAILED)
        if unfinished:
            raise CommandError(f"Some calls did not finish: {summary}", returncode=EXIT_FAILED)
        if comparison is not None and comparison.is_regression:
            raise CommandError(f"Regression against the baseline: {comparison.sentence}", returncode=EXIT_REGRESSION)
        self.stdout.write(f"Done: {summary}\n")


@contextmanager
def _quiet(names: tuple[str, ...]):
    """Only warnings and errors from these loggers while the command runs; their levels are restored after."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextmanager
def _production_cursors(*, unless: bool):
    """Run with DEBUG off (unless asked): with it on, every query of a long run goes through Django's debug
    cursor, which times it and keeps its SQL, several percent of the command's CPU. Nothing else the command
    does reads DEBUG; the setting is restored after."""
    if unless:
        yield
        return
    debug, settings.DEBUG = settings.DEBUG, False
    try:
        yield
    finally:
        settings.DEBUG = debug


def _processes(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes (a whole number, at least 1).")
    return number


def _budget(value: str | None) -> Decimal | None:
    if value is None:
        return None
    try:
        budget = Decimal(value.lstrip("$"))
    except InvalidOperation:
        budget = Decimal(0)
    if not budget.is_finite() or budget <= 0:
        raise CommandError(f"--budget: {value!r} is not an amount of dollars above 0.", returncode=EXIT_CONFIG)
    return budget


class _ProgressPrinter:
    """A bar redrawn in place on a terminal; elsewhere (a log, a test) a line at most every second and the last."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = stream.isatty()
        self.last_at = 0.0
        self.last_line = ""
        self.finished = False

    def __call__(self, progress: Progress) -> None:
        final = progress.finished
        if self.finished:
            return
        line = report.progress_text(progress)
        if self.tty:
            self.stream.write("\r" + line, ending="\n" if final else "")
            self.stream.flush()
        elif final or (line != self.last_line and time.monotonic() - self.last_at >= PROGRESS_EVERY_S):
            self.stream.write(line)
        else:
            return
        self.last_at, self.last_line, self.finished = time.monotonic(), line, final
