"""Rounds saved as dataset rows (`POST /api/v1/datasets/from-rounds/`): chosen rounds, or every round of a
comparison, into a new or existing dataset, optionally with the winning answer as `reference`.

It lives in voting because the reference is the team's vote (voting.round_winners); the rows themselves are
written by compare.datasets.round_rows.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import dataset_from_body, workspace_from_body
from compare.api.datasets import DatasetDetailOut
from compare.datasets.round_rows import rounds_chosen
from compare.datasets.rows import MAX_DATASET_ROWS
from compare.selectors import dataset_with_rows

from ..round_winners import rounds_save_as_rows_voted


class FromRoundsIn(serializers.Serializer):
    workspace = serializers.IntegerField()
    rounds = serializers.ListField(
        child=serializers.IntegerField(), required=False, max_length=MAX_DATASET_ROWS, help_text="round ids"
    )
    group = serializers.IntegerField(required=False, help_text="every round of this comparison, in order")
    dataset = serializers.IntegerField(required=False, allow_null=True, default=None, help_text="append to it")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    reference = serializers.BooleanField(required=False, default=False, help_text="add the winning answer")

    def validate(self, data: dict) -> dict:
        if ("rounds" in data) == ("group" in data):
            raise serializers.ValidationError({"rounds": "Give rounds (their ids) or a comparison (group): one."})
        if data["dataset"] is None and not data["name"].strip():
            raise serializers.ValidationError({"name": "Name the new dataset, or give a dataset to add to."})
        return data


class FromRoundsOut(serializers.Serializer):
    dataset = DatasetDetailOut()
    rows_added = serializers.IntegerField(help_text="one per distinct input not yet in the dataset")
    with_reference = serializers.IntegerField(help_text="rows given the winning answer as reference")
    without_winner = serializers.IntegerField(help_text="rounds asked for a reference that have no clear winner")


class DatasetFromRounds(APIView):
    @extend_schema(request=FromRoundsIn, responses={201: FromRoundsOut})
    def post(self, request):
        data = FromRoundsIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        workspace = workspace_from_body(request.user, fields["workspace"])
        dataset = dataset_from_body(fields["dataset"], workspace)
        chosen = rounds_chosen(workspace, ids=fields.get("rounds"), group_id=fields.get("group"))
        saved = rounds_save_as_rows_voted(
            workspace=workspace,
            user=request.user,
            rounds=chosen,
            dataset=dataset,
            name=fields["name"],
            reference=fields["reference"],
        )
        body = {
            "dataset": DatasetDetailOut(dataset_with_rows(saved.dataset)).data,
            "rows_added": saved.added,
            "with_reference": saved.with_reference,
            "without_winner": len(chosen) - saved.winners if fields["reference"] else 0,
        }
        return Response(body, status=status.HTTP_201_CREATED)
