"""`manage.py experiment run FILE` with no flags keeps every slot of its connections busy (issue 45): the moment an
answer ends, the next call takes the slot it freed, without waiting for any other answer to end.

The fake server holds every answer (`hold=1`) until the test lets the oldest one go, one at a time, and the test
counts the requests in flight after each: the next end comes only once the freed slot is taken again (or the run
has no call left for it). No clock is read: a freed slot that stayed empty until other answers ended would leave
the run waiting here, and the test fails at the wait's limit, which only guards against hanging. Before the fix, a
round's calls could go only once the round before it was written, so a slot freed by one of its calls stayed
empty until its other calls ended too (and the write and the next claim were done).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import time

import pytest
from django.db import connections

from compare.experiments import runner
from compare.models import Output, OutputStatus
from lab.fake_llm.scenario import with_prompt_options
from lab.services import connection_create
from tests.fixtures.experiments import run_command

pytestmark = pytest.mark.django_db(transaction=True)

# How long a freed slot may take to be filled again before the test gives up: only a guard against hanging, far
# above the few milliseconds it takes even on a loaded machine (the old code never filled it, however long).
HANG_GUARD_S = 30.0


def write_file(tmp_path, models: list[str], prompts: int, rows: int, values: list[str] | None = None):
    """Every prompt on every model for each row; row i's variable is `values[i]` (default: i)."""
    path = tmp_path / "experiment.yaml"
    prompt_map = ", ".join(f"p{p}: 'Prompt {p} for <<n>>.'" for p in range(prompts))
    values = values or [str(i) for i in range(rows)]
    dataset = "\n".join(f"  - {{name: r{i}, vars: {{n: '{values[i]}'}}}}" for i in range(rows))
    models_list = ", ".join(f"{{model: '{model}'}}" for model in models)
    path.write_text(f"models: [{models_list}]\nprompts: {{{prompt_map}}}\ndataset:\n{dataset}\n")
    return path


def release_one_at_a_time(fake_llm, order: list[str], totals: dict[str, int], limits: dict[str, int]) -> None:
    """Let the held answers go one by one in `order` (scenario names); before each, every scenario must have as
    many requests in flight as its limit lets (or as it has calls left), no more than that ever."""
    released = dict.fromkeys(totals, 0)
    for model in [*order, None]:
        for name in totals:
            expected_in_flight = min(limits[name], totals[name] - released[name])
            counters = fake_llm.wait_for(
                name,
                lambda c, name=name, n=expected_in_flight: c["completed"] == released[name] and c["in_flight"] == n,
                timeout=HANG_GUARD_S,
            )
            assert (counters["completed"], counters["in_flight"]) == (released[name], expected_in_flight), (
                f"{name}: after {released[name]} of {totals[name]} answers, {counters['in_flight']} in flight "
                f"(limit {limits[name]}): the freed slot stayed empty with no other answer ending"
            )
            assert counters["max_in_flight"] <= limits[name]
        if model is not None:
            fake_llm.release(model)
            released[model] += 1


def run_in_background(*args: str) -> concurrent.futures.Future:
    """The command on a thread of its own, while this one lets the answers go."""

    def run():
        try:
            return run_command(*args)
        finally:
            connections.close_all()  # this thread's: the test database is dropped at the end

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(run)
    pool.shutdown(wait=False)
    return future


def test_without_concurrency_each_freed_slot_is_taken_before_another_answer_ends(workspace, fake_llm, tmp_path):
    limit, prompts, rows = 5, 3, 20  # rounds of three calls: a freed slot cannot wait for its round's others
    model = fake_llm.model(hold=1, tokens=2)
    connection_create(
        workspace=workspace, name="held", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=limit
    )
    path = write_file(tmp_path, [f"held:{model}"], prompts, rows)
    total = prompts * rows

    running = run_in_background("run", str(path), "--workspace", workspace.name)
    try:
        release_one_at_a_time(fake_llm, [model] * total, {model: total}, {model: limit})
    finally:
        fake_llm.release(model, total)  # a failed test must not leave the command waiting for the server
        ran = running.result(timeout=HANG_GUARD_S * 4)

    assert ran.code == 0, ran.err
    outputs = Output.objects.filter(round__group__workspace=workspace)
    assert outputs.count() == total and {o.status for o in outputs} == {OutputStatus.OK}


def test_two_connections_in_one_file_are_each_kept_at_their_own_limit(workspace, fake_llm, tmp_path):
    # Per row: two calls on `wide` (limit 4), one on `narrow` (limit 2), so both take two rows at once.
    wide_a, wide_b = fake_llm.model(hold=1, tokens=2), fake_llm.model(hold=1, tokens=3)
    narrow = fake_llm.model(hold=1, tokens=2)
    for name, limit in (("wide", 4), ("narrow", 2)):
        url = fake_llm.openai_url
        connection_create(workspace=workspace, name=name, kind="openai_compatible", base_url=url, max_concurrency=limit)
    rows = 16
    path = write_file(tmp_path, [f"wide:{wide_a}", f"wide:{wide_b}", f"narrow:{narrow}"], 1, rows)

    # One scenario per model: the limit of `wide` is shared by two, so the test counts what it knows for sure
    # per scenario (its own answers) and checks the connection as a whole through each scenario's share of it.
    # Here each `wide` model gets half of its connection's four slots: the calls go round by round, in order.
    limits = {wide_a: 2, wide_b: 2, narrow: 2}
    order = list(itertools.chain.from_iterable((wide_a, narrow, wide_b) for _ in range(rows)))
    run_releasing(fake_llm, workspace, path, order, limits, rows)


def fast_and_slow(workspace, fake_llm, tmp_path, rows: int) -> tuple[str, str, dict[str, int], object]:
    """A file of `rows` rows with one call a row on `fast` (limit 4) and one on `slow` (limit 1), answers held."""
    fast, slow = fake_llm.model(hold=1, tokens=2), fake_llm.model(hold=1, tokens=2)
    limits = {fast: 4, slow: 1}
    for name, model in (("fast", fast), ("slow", slow)):
        url = fake_llm.openai_url
        connection_create(
            workspace=workspace, name=name, kind="openai_compatible", base_url=url, max_concurrency=limits[model]
        )
    return fast, slow, limits, write_file(tmp_path, [f"fast:{fast}", f"slow:{slow}"], 1, rows)


def test_a_fast_connection_is_kept_at_its_limit_while_the_rounds_wait_for_a_slow_one(workspace, fake_llm, tmp_path):
    # Per row one call on `fast` (limit 4) and one on `slow` (limit 1), whose answers end a quarter as often: the
    # rounds claimed at the start (twelve) soon all wait for `slow`, and `fast` has calls only if more are claimed.
    # Before the fix it had none once it was twelve answers ahead (the test waits at the guard, then fails).
    rows = 40
    fast, slow, limits, path = fast_and_slow(workspace, fake_llm, tmp_path, rows)

    # `slow` answers first: until one of its answers has ended, the run cannot tell how long its calls waiting
    # would wait, and claims no round beyond the others (a claimed round must not outlive its deadline waiting).
    order = [slow, fast, fast, fast, fast] * (rows // 4) + [slow] * (rows - rows // 4)
    run_releasing(fake_llm, workspace, path, order, limits, rows)


def test_the_rounds_ahead_do_not_wait_for_the_first_calls_of_a_busy_connection(
    workspace, fake_llm, tmp_path, monkeypatch
):
    # The first claim (four rounds) holds four calls for `fast` (limit 4), all sent, and four for `slow` (limit 1),
    # three of which wait for its place. The rounds ahead are claimed once the first claim's calls have gone: the
    # three waiting for `slow` must not count as not gone, or `fast` has nothing to take when its first answer
    # ends (in a run of 0.69 s answers its second wave waited FIRST_WAVE_S, a second). Raised here so that the old
    # rule waits at the guard; `fast` answers eight times before `slow` answers once.
    monkeypatch.setattr(runner, "FIRST_WAVE_S", HANG_GUARD_S * 10)
    rows = 40
    fast, slow, limits, path = fast_and_slow(workspace, fake_llm, tmp_path, rows)

    order = [fast] * 8 + [slow, fast, fast, fast, fast] * 8 + [slow] * (rows - 8)
    run_releasing(fake_llm, workspace, path, order, limits, rows)


def run_releasing(fake_llm, workspace, path, order: list[str], limits: dict[str, int], rows: int) -> None:
    """Run the file in the background, releasing the held answers one at a time in `order` (each model's limit
    checked before every release, see `release_one_at_a_time`); every answer of every model ends ok."""
    running = run_in_background("run", str(path), "--workspace", workspace.name)
    try:
        release_one_at_a_time(fake_llm, order, dict.fromkeys(limits, rows), limits)
    finally:
        for model in limits:
            fake_llm.release(model, rows)
        ran = running.result(timeout=HANG_GUARD_S * 4)

    assert ran.code == 0, ran.err
    outputs = Output.objects.filter(round__group__workspace=workspace)
    assert outputs.count() == len(limits) * rows and {o.status for o in outputs} == {OutputStatus.OK}


def test_rows_of_different_lengths_keep_the_connection_at_its_limit(workspace, fake_llm, tmp_path):
    # Every third row's answers are long: the test lets a short answer end while one is in flight, a long one only
    # when nothing else is, so the rows end out of order and the long ones pile up in the slots. At every step the
    # connection has as many requests in flight as its limit lets (or as it has calls left).
    limit, prompts, rows = 3, 2, 24
    model = fake_llm.model(hold=1, tokens=2)
    url = fake_llm.openai_url
    connection_create(workspace=workspace, name="ragged", kind="openai_compatible", base_url=url, max_concurrency=limit)
    short, long = "[fake?tokens=2]", "[fake?tokens=5]"  # the fake server takes the length from the prompt
    values = [f"{i} {long if i % 3 == 0 else short}" for i in range(rows)]
    path = write_file(tmp_path, [f"ragged:{model}"], prompts, rows, values)
    keys = {marker: with_prompt_options(model, marker) for marker in (short, long)}
    total = prompts * rows

    def counters_when(in_flight: int) -> dict[str, dict]:
        """Both lengths' counters once their requests in flight add up to `in_flight` (or at the guard)."""
        deadline = time.monotonic() + HANG_GUARD_S
        while True:
            scenarios = fake_llm.stats()["scenarios"]
            now = {marker: scenarios.get(key, {"in_flight": 0, "max_in_flight": 0}) for marker, key in keys.items()}
            if sum(c["in_flight"] for c in now.values()) == in_flight or time.monotonic() > deadline:
                return now
            time.sleep(0.02)

    running = run_in_background("run", str(path), "--workspace", workspace.name)
    try:
        for released in range(total):
            expected = min(limit, total - released)
            now = counters_when(expected)
            assert sum(c["in_flight"] for c in now.values()) == expected, (
                f"after {released} of {total} answers: {now}, limit {limit}: a freed slot stayed empty"
            )
            assert all(c["max_in_flight"] <= limit for c in now.values())
            fake_llm.release(keys[short] if now[short]["in_flight"] else keys[long])
    finally:
        for key in keys.values():
            fake_llm.release(key, total)
        ran = running.result(timeout=HANG_GUARD_S * 4)

    assert ran.code == 0, ran.err
    outputs = Output.objects.filter(round__group__workspace=workspace)
    assert outputs.count() == total and {o.status for o in outputs} == {OutputStatus.OK}
    assert {len(o.text.split()) for o in outputs} == {2, 5}
