"""The estimate's calibration reads a model's newest answers in the workspace, a comparison at a time."""

import pytest

from compare.experiments.estimate import HISTORY, _answers_history
from compare.models import Output, OutputStatus, Round
from lab.services import workspace_create
from tests.fixtures.compare_factories import make_group

pytestmark = pytest.mark.django_db

MODEL = "simulated::instant"
OTHER = "simulated::writer"  # a second variant, whose answers are another model's


def _answered(group, count: int, *, output_tokens: int) -> None:
    """`count` rounds of the group, each variant answered with `output_tokens` tokens as a provider reported them."""
    rounds = Round.objects.bulk_create(Round(group=group, number=n, variables={}) for n in range(1, count + 1))
    Output.objects.bulk_create(
        Output(
            round=round_,
            variant=variant,
            status=OutputStatus.OK,
            rendered_prompt="x" * 40,  # 10 tokens at 4 characters a token
            input_tokens=20,
            output_tokens=output_tokens,
            tokens_estimated=False,
        )
        for round_ in rounds
        for variant in group.variants.all()
    )


def test_the_newest_comparisons_answers_make_the_calibration(workspace, owner):
    older = make_group(workspace, owner, models=(MODEL, OTHER))
    _answered(older, 50, output_tokens=10)
    newer = make_group(workspace, owner, models=(MODEL, OTHER))
    _answered(newer, HISTORY, output_tokens=40)
    elsewhere = make_group(workspace_create(owner=owner, name="Elsewhere"), owner, models=(MODEL, OTHER))
    _answered(elsewhere, 5, output_tokens=1000)  # another workspace's answers never count

    calibration = _answers_history(workspace, MODEL)

    assert calibration.output_mean == 40  # HISTORY answers of the newest comparison, none of the older one
    assert calibration.input_ratio == pytest.approx(20 / 10)


def test_a_short_newest_comparison_is_topped_up_from_the_one_before(workspace, owner):
    older = make_group(workspace, owner, models=(MODEL, OTHER))
    _answered(older, HISTORY, output_tokens=10)
    newer = make_group(workspace, owner, models=(MODEL, OTHER))
    _answered(newer, 50, output_tokens=40)

    calibration = _answers_history(workspace, MODEL)

    assert calibration.output_mean == pytest.approx((50 * 40 + (HISTORY - 50) * 10) / HISTORY)
