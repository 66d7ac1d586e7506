"""Assertions API: re-grade a comparison's stored answers (optionally with a new list), without any model call."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn

from ..access import group_for_user
from ..assertions.services import assertions_rerun


def with_promptfoo_key(data):
    """A request body with promptfoo's `assert` (a Python keyword, so no serializer field can be named so) moved
    to `assertions`; both at once is an error naming `assert`. Every input that takes assertions calls this."""
    if not hasattr(data, "keys") or "assert" not in data:
        return data
    if "assertions" in data:
        raise serializers.ValidationError({"assert": ["Give `assertions` or `assert`, not both."]})
    return {**{key: data[key] for key in data if key != "assert"}, "assertions": data["assert"]}


class RerunIn(StrictIn):
    assertions = serializers.JSONField(
        required=False,
        help_text="a new list to replace the comparison's before re-grading (promptfoo's `assert` is accepted too); "
        "without it the current list is re-applied",
    )

    def to_internal_value(self, data):
        data = with_promptfoo_key(data)
        return super().to_internal_value(data)


class RerunOut(serializers.Serializer):
    rounds = serializers.IntegerField(help_text="finished rounds re-graded")
    graded = serializers.IntegerField(help_text="answers that got a verdict")
    assertions = serializers.JSONField(help_text="the comparison's list, as now stored")


class AssertionsRerun(APIView):
    @extend_schema(request=RerunIn, responses=RerunOut)
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = RerunIn(data=request.data)
        data.is_valid(raise_exception=True)
        counts = assertions_rerun(group=group, assertions=data.validated_data.get("assertions"))
        return Response(RerunOut({**counts, "assertions": group.assertions}).data)
