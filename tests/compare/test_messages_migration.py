"""Comparisons made before message lists keep working: rows written in the old shape (compare at 0012) get one
user message per variant and the messages each answer was sent, and a re-run sends the provider the very bytes
the old code sent for a system + user comparison."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from compare.models import CompareGroup, Output, OutputStatus, Variant
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_round

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("compare", "0012_jobs_claimed_by_worker")
SCENARIO = "fake?tokens=2&id=messages-migration"
# What the adapter sent for this comparison before message lists (OpenAI-compatible, streamed), byte for byte.
OLD_BODY = (
    '{"model":"fake?tokens=2&id=messages-migration","messages":[{"role":"system","content":"You are terse."},'
    '{"role":"user","content":"Name a tea from Japan."}],"temperature":0.2,"stream":true,'
    '"stream_options":{"include_usage":true}}'
)


def old_comparison(apps, workspace, owner) -> int:
    """A comparison, its variant, a finished round and its answer as the old code wrote them; the group's id."""
    group = apps.get_model("compare", "CompareGroup").objects.create(
        workspace_id=workspace.pk,
        created_by_id=owner.pk,
        title="Old",
        mode="custom",
        system_prompt="You are {{style}}.",
        shared_variables={"style": "terse", "country": "Japan"},
        params={"temperature": 0.2},
    )
    variant = apps.get_model("compare", "Variant").objects.create(
        group=group, position=1, label="A", model=f"local::{SCENARIO}", prompt="Name a tea from {{country}}."
    )
    round_ = apps.get_model("compare", "Round").objects.create(
        group=group, number=1, variables=group.shared_variables, status="done"
    )
    apps.get_model("compare", "Output").objects.create(
        round=round_,
        variant=variant,
        status="ok",
        rendered_system_prompt="You are terse.",
        rendered_prompt="Name a tea from Japan.",
        text="Sencha.",
    )
    return group.pk


def test_old_comparisons_get_messages_and_rerun_byte_identically(workspace, owner, fake_llm):
    connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url=fake_llm.openai_url)
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    try:
        group_id = old_comparison(executor.loader.project_state([BEFORE]).apps, workspace, owner)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    group = CompareGroup.objects.get(pk=group_id)
    assert group.shared_messages == []
    assert Variant.objects.get(group=group).messages == [{"role": "user", "content": "Name a tea from {{country}}."}]
    old_output = Output.objects.get(round__group=group)
    sent = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a tea from Japan."}]
    assert old_output.messages == sent

    rerun = make_round(group)
    round_execute(round_id=rerun.pk)

    output = rerun.outputs.get()
    assert output.status == OutputStatus.OK, output.error
    assert output.messages == sent and output.rendered_prompt == old_output.rendered_prompt
    assert fake_llm.scenario(SCENARIO)["last_request"]["raw"] == OLD_BODY
