"""Comparisons and rounds API: list, create, read, clone, preview and delete comparisons, run and cancel rounds.

Its In serializers check shapes and types (services check the rules), its Out serializers are the responses; the views
are thin: each reaches its object through the access helpers and calls a service."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn
from lab.models import Role
from lab.providers.message_rules import ROLES, TOOL_ROLE
from lab.templating import render_variants

from .. import selectors, services
from ..access import dataset_from_body, group_for_user, round_for_user, workspace_from_body
from ..assertions.selectors import failing_rounds, results_by_output
from ..blind import outputs_as_seen_by
from ..catalog import cached_targets
from ..models import (
    DEFAULT_STAGGER_MS,
    DEFAULT_TIMEOUT_MS,
    MAX_EXPERIMENT_VARIANTS,
    MAX_MESSAGES,
    CompareGroup,
    Mode,
    Output,
    Round,
    Variant,
)
from ..rounds.start import MAX_REPEAT, round_cancel, round_start
from ..services import MAX_STAGGER_MS
from .assertions import with_promptfoo_key


class ParamsIn(serializers.Serializer):
    """Only the known parameters; a misspelt one is an error rather than silently dropped."""

    temperature = serializers.FloatField(min_value=0, max_value=2, required=False, allow_null=True)
    top_p = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True)
    top_k = serializers.IntegerField(min_value=1, max_value=1000, required=False, allow_null=True)
    max_tokens = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False, allow_null=True)
    seed = serializers.IntegerField(min_value=0, max_value=2**53, required=False, allow_null=True)
    stop = serializers.ListField(child=serializers.CharField(max_length=100), max_length=4, required=False)
    presence_penalty = serializers.FloatField(min_value=-2, max_value=2, required=False, allow_null=True)
    frequency_penalty = serializers.FloatField(min_value=-2, max_value=2, required=False, allow_null=True)

    def to_internal_value(self, data):
        if isinstance(data, dict) and (unknown := sorted(set(data) - set(self.fields))):
            raise serializers.ValidationError(
                {name: [f"Unknown parameter; known: {', '.join(self.fields)}."] for name in unknown}
            )
        return super().to_internal_value(data)


class VariantListIn(serializers.ListSerializer):
    """Errors keyed by variant position (from 1), as every other message about a variant counts; a list of
    messages uses it too, so "message 2" is key "2"."""

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if isinstance(exc.detail, dict):
                exc.detail = {
                    str(int(key) + 1) if str(key).isdigit() else key: errors for key, errors in exc.detail.items()
                }
            raise


class MessageIn(StrictIn):
    """One message of a conversation; `content` is a template like a prompt (`{{name}}`, filters)."""

    class Meta:
        list_serializer_class = VariantListIn

    role = serializers.ChoiceField(choices=ROLES, help_text="system (first only), user or assistant")
    content = serializers.CharField(max_length=100_000, allow_blank=True, trim_whitespace=False)


class MessageOut(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLES)
    content = serializers.CharField()


class SentToolCallOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    arguments = serializers.CharField()


class RenderedMessageOut(MessageOut):
    """A message as rendered: its content is text, or a list of parts once a `{{var}}` placed an image there. In a
    tool loop (docs/tools.md) an assistant message carries its `tool_calls` and a `tool` message answers one call."""

    role = serializers.ChoiceField(choices=[*ROLES, TOOL_ROLE])
    tool_calls = SentToolCallOut(many=True, required=False, help_text="an assistant message's calls, when it made any")
    tool_call_id = serializers.CharField(required=False, help_text="the call a `tool` message is the result of")

    content = serializers.JSONField(
        help_text='text, or parts: {"type": "text", "text"} and {"type": "image", "file": <file id>, "variable"} '
        "(docs/images.md)"
    )


MESSAGES_HELP = (
    "The variant's own messages after the group's system prompt and shared messages: [{role, content}], contents "
    "templates. A trailing assistant message is a prefill the model continues, where its provider takes one "
    "(docs/messages.md). Give exactly one of `messages` and `prompt`."
)


TOOLS_HELP = (
    'Tools in OpenAI\'s function format, `{"type": "function", "function": {"name", "description", "parameters"}}` '
    "(parameters a JSON Schema); sent to every model in its own format and never executed (docs/tools.md)."
)
TOOL_CHOICE_HELP = "`auto`, `none`, `required` or one tool's name."
RESPONSE_SCHEMA_HELP = (
    '`{"name", "schema", "strict", "mode"}`: a JSON Schema the answer must follow, sent natively (`mode` "native", '
    'the default) or only checked against the answers (`mode` "validate").'
)


class ResponseSchemaIn(serializers.Serializer):
    name = serializers.CharField(max_length=64, required=False, default="response")
    schema = serializers.JSONField()
    strict = serializers.BooleanField(required=False, default=False)
    mode = serializers.ChoiceField(choices=["native", "validate"], required=False, default="native")


class ToolCallOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    arguments = serializers.CharField(help_text="the JSON text the model wrote")
    valid = serializers.BooleanField(help_text="the arguments parse as JSON and validate against the tool's schema")
    error = serializers.CharField(help_text="why they do not, or empty")


class VariantIn(StrictIn):
    label = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")
    model = serializers.CharField(max_length=300)
    prompt = serializers.CharField(
        max_length=100_000,
        allow_blank=True,
        trim_whitespace=False,
        required=False,
        help_text="Shorthand for `messages: [{role: user, content: prompt}]`; give exactly one of the two.",
    )
    messages = MessageIn(many=True, required=False, max_length=MAX_MESSAGES, help_text=MESSAGES_HELP)
    variables = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    params = ParamsIn(required=False, default=dict)
    tools = serializers.ListField(
        child=serializers.JSONField(), required=False, allow_null=True, default=None, help_text=TOOLS_HELP
    )
    tool_choice = serializers.CharField(
        max_length=80, required=False, allow_null=True, allow_blank=True, default=None, help_text=TOOL_CHOICE_HELP
    )
    response_schema = ResponseSchemaIn(required=False, allow_null=True, default=None, help_text=RESPONSE_SCHEMA_HELP)
    # A library version to run: its text fills an empty prompt, and the variant records where it came from.
    prompt_version = serializers.IntegerField(required=False, allow_null=True, default=None)

    class Meta:
        list_serializer_class = VariantListIn

    def validate(self, data: dict) -> dict:
        # A library version fills an empty prompt, so with one neither is needed.
        given = [name for name in ("prompt", "messages") if name in data]
        if len(given) == 2:
            raise serializers.ValidationError({"messages": ["Give exactly one of prompt and messages, not both."]})
        if not given and data.get("prompt_version") is None:
            raise serializers.ValidationError({"prompt": ["Give exactly one of prompt and messages."]})
        if not data.get("messages"):
            data.pop("messages", None)
            data.setdefault("prompt", "")
        return data


class GroupFieldsIn(StrictIn):
    """Everything of a group except where it lives; shared by create, preview and clone."""

    title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    mode = serializers.ChoiceField(choices=Mode.choices)
    system_prompt = serializers.CharField(
        max_length=100_000, required=False, allow_blank=True, trim_whitespace=False, default=""
    )
    shared_messages = MessageIn(
        many=True,
        required=False,
        default=list,
        max_length=MAX_MESSAGES,
        help_text="Messages every variant gets after the system prompt and before its own (few-shot turns).",
    )
    shared_variables = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    params = ParamsIn(required=False, default=dict)
    tools = serializers.ListField(child=serializers.JSONField(), required=False, default=list, help_text=TOOLS_HELP)
    tool_choice = serializers.CharField(
        max_length=80, required=False, allow_blank=True, default="", help_text=TOOL_CHOICE_HELP
    )
    response_schema = ResponseSchemaIn(required=False, allow_null=True, default=None, help_text=RESPONSE_SCHEMA_HELP)
    blind = serializers.BooleanField(required=False, default=False)
    stagger_ms = serializers.IntegerField(
        min_value=0, max_value=MAX_STAGGER_MS, required=False, default=DEFAULT_STAGGER_MS
    )
    timeout_ms = serializers.IntegerField(
        min_value=100,
        max_value=600_000,
        required=False,
        default=DEFAULT_TIMEOUT_MS,
        help_text="Every variant's answer budget, counted from when its request is sent (docs/fairness.md).",
    )
    timeout_step_ms = serializers.IntegerField(
        min_value=0,
        max_value=60_000,
        required=False,
        write_only=True,
        help_text="Deprecated: accepted and ignored. It once gave each next column more time; every column now "
        "has the same `timeout_ms`. Reads return 0.",
    )
    variants = VariantIn(many=True, max_length=MAX_EXPERIMENT_VARIANTS)
    assertions = serializers.JSONField(
        required=False,
        help_text="promptfoo-style assertions every answer is graded against ([{type, value, threshold, weight, "
        "metric}], docs/assertions.md); promptfoo's own key `assert` is accepted for it.",
    )

    def to_internal_value(self, data):
        data = with_promptfoo_key(data)
        return super().to_internal_value(data)

    def validate(self, data: dict) -> dict:
        data.pop("timeout_step_ms", None)  # accepted for old clients, never favours a column (docs/fairness.md)
        return data


class GroupIn(GroupFieldsIn):
    workspace = serializers.IntegerField()
    dataset = serializers.IntegerField(required=False, allow_null=True, default=None)


class GroupPreviewIn(GroupFieldsIn):
    """A group-create body; where the group would live does not change what it renders, except that with a
    `dataset` (of `workspace`) the first row's variables fill the prompts over the shared ones, as a run's first
    round renders them."""

    mode = serializers.ChoiceField(choices=Mode.choices, required=False, default=Mode.PROMPTS)
    workspace = serializers.IntegerField(required=False)
    dataset = serializers.IntegerField(required=False, allow_null=True)


class GroupCloneIn(GroupFieldsIn):
    """Any group field to change (use with partial=True so unset fields keep the original's values)."""

    copy_variant = serializers.IntegerField(min_value=1, required=False, allow_null=True)


class RunsIn(StrictIn):
    repeat = serializers.IntegerField(min_value=1, max_value=MAX_REPEAT, required=False, allow_null=True)
    dataset = serializers.IntegerField(required=False, allow_null=True)
    cache = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Reuse the stored answer to an identical call (this workspace's response cache) instead of making "
        "it; such answers cost 0 and are marked `cached`. Complete answers of this run are stored for next time.",
    )


# --- Output ---


class VariantOut(serializers.ModelSerializer):
    prompt = serializers.CharField(help_text="the last user message of `messages` (a template)")
    messages = MessageOut(many=True, help_text="the variant's own messages, templates")

    class Meta:
        model = Variant
        fields = [
            "id",
            "position",
            "label",
            "model",
            "prompt",
            "messages",
            "variables",
            "params",
            "tools",
            "tool_choice",
            "response_schema",
            "prompt_version",
        ]


class RoundSummaryOut(serializers.ModelSerializer):
    parent = serializers.IntegerField(
        source="parent_id", allow_null=True, read_only=True, help_text="the round this turn continues; null: turn 1"
    )
    turn = serializers.IntegerField(read_only=True, help_text="the turn of its conversation, from 1")
    message = serializers.CharField(
        read_only=True, help_text="the user's follow-up this turn sent every column (plain text); empty on turn 1"
    )

    class Meta:
        model = Round
        fields = [
            "id",
            "number",
            "parent",
            "turn",
            "status",
            "error",
            "run_id",
            "dataset_row",
            "seed",
            "use_cache",
            "message",
            "created_at",
            "started_at",
            "finished_at",
        ]


class GroupOut(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", default=None)
    variants = VariantOut(many=True)
    round_count = serializers.IntegerField(required=False)
    shared_messages = MessageOut(many=True, help_text="messages every variant gets after the system prompt")
    timeout_step_ms = serializers.SerializerMethodField(
        help_text="Deprecated, always 0: no column gets more time for its position."
    )

    class Meta:
        model = CompareGroup
        fields = [
            "id",
            "workspace",
            "title",
            "mode",
            "system_prompt",
            "shared_messages",
            "shared_variables",
            "params",
            "tools",
            "tool_choice",
            "response_schema",
            "blind",
            "revealed_at",
            "stagger_ms",
            "timeout_ms",
            "timeout_step_ms",
            "dataset",
            "cloned_from",
            "created_by",
            "created_at",
            "updated_at",
            "variants",
            "round_count",
            "assertions",
        ]

    def get_timeout_step_ms(self, group: CompareGroup) -> int:
        return 0


class GroupDetailOut(GroupOut):
    rounds = serializers.SerializerMethodField()
    warnings = serializers.SerializerMethodField()

    class Meta(GroupOut.Meta):
        fields = [*GroupOut.Meta.fields, "rounds", "warnings"]

    def get_rounds(self, group: CompareGroup) -> list[dict]:
        return RoundSummaryOut(self.context["rounds"], many=True).data

    def get_warnings(self, group: CompareGroup) -> list[str]:
        return self.context["warnings"]


class AssertionResultOut(serializers.Serializer):
    """One assertion's result on one answer, under promptfoo's names: `pass`, `score`, `reason`."""

    type = serializers.CharField()
    metric = serializers.CharField(allow_null=True, help_text="the assertion's `metric`, null when it has none")
    score = serializers.FloatField(allow_null=True, help_text="null for a cost or latency check in a blind round")
    reason = serializers.CharField()
    state = serializers.CharField(
        help_text="graded; pending while a model-graded assertion waits for its grader (pass and score null); "
        "not_graded when the grader failed (the reason says why)"
    )

    def get_fields(self):
        # `pass` is a Python keyword, so it cannot be declared as a class attribute.
        fields = super().get_fields()
        ordered = {"type": fields["type"], "metric": fields["metric"]}
        ordered["pass"] = serializers.BooleanField(source="passed", allow_null=True)
        return {**ordered, "score": fields["score"], "reason": fields["reason"], "state": fields["state"]}

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["metric"] = data["metric"] or None
        return data


class OutputOut(serializers.ModelSerializer):
    """An answer as compare.blind shows it to the caller: in blind mode, until they may see them, label, variant,
    position, model, prompts, cost, timings, token counts and error are null, and it is shown as "Answer A" …"""

    label = serializers.CharField(source="seen.variant_label", allow_null=True, read_only=True)
    shown_as = serializers.CharField(
        source="seen.label",
        read_only=True,
        help_text='the name to show it under: its label, or "Answer A", "Answer B" … in a blind round until you vote',
    )
    variant = serializers.IntegerField(source="seen.variant", allow_null=True, read_only=True)
    position = serializers.IntegerField(source="seen.position", allow_null=True, read_only=True)
    model = serializers.CharField(source="seen.model", allow_null=True, read_only=True)
    rendered_system_prompt = serializers.CharField(
        source="seen.rendered_system_prompt", allow_null=True, read_only=True
    )
    rendered_prompt = serializers.CharField(source="seen.rendered_prompt", allow_null=True, read_only=True)
    tool_calls = ToolCallOut(many=True, read_only=True, help_text="the calls the answer made, never executed")
    schema_valid = serializers.BooleanField(
        allow_null=True, read_only=True, help_text="the answer is JSON valid against the response schema; null: none"
    )
    messages = RenderedMessageOut(
        source="seen.messages",
        many=True,
        allow_null=True,
        read_only=True,
        help_text="the exact list sent, rendered, system first (null while blind mode hides the prompts)",
    )
    assertions = serializers.SerializerMethodField(
        help_text="each assertion's result, in the round's order (the comparison's, then its dataset row's)"
    )
    assertions_passed = serializers.BooleanField(
        read_only=True, allow_null=True, help_text="every assertion passed; null when none applied or not graded"
    )
    assertions_score = serializers.FloatField(
        read_only=True, allow_null=True, help_text="the weighted mean of the assertions' scores, as promptfoo's"
    )

    class Meta:
        model = Output
        fields = [
            "id",
            "label",
            "shown_as",
            "variant",
            "position",
            "model",
            "status",
            "rendered_system_prompt",
            "rendered_prompt",
            "messages",
            "text",
            "html",
            "error",
            "finish_reason",
            "tool_calls",
            "schema_valid",
            "queued_ms",
            "ttft_ms",
            "latency_ms",
            "input_tokens",
            "output_tokens",
            "tokens_estimated",
            "cost",
            "cached",
            "started_at",
            "finished_at",
            "assertions",
            "assertions_passed",
            "assertions_score",
        ]

    @extend_schema_field(AssertionResultOut(many=True))
    def get_assertions(self, output: Output) -> list[dict]:
        found = self.context.get("assertion_results")
        results = found.get(output.pk, []) if found is not None else output.assertion_results.all()
        return AssertionResultOut(results, many=True).data


class RoundOut(RoundSummaryOut):
    group = serializers.IntegerField(source="group_id")
    labels_visible = serializers.SerializerMethodField()
    outputs = serializers.SerializerMethodField()

    class Meta(RoundSummaryOut.Meta):
        fields = [*RoundSummaryOut.Meta.fields, "group", "variables", "deadline", "labels_visible", "outputs"]

    def get_labels_visible(self, round_: Round) -> bool:
        return self.context["labels_visible"]

    @extend_schema_field(OutputOut(many=True))
    def get_outputs(self, round_: Round) -> list[dict]:
        return OutputOut(self.context["outputs"], many=True, context=self.context).data


class RunsOut(serializers.Serializer):
    rounds = RoundSummaryOut(many=True)


class RenderedVariantOut(serializers.Serializer):
    position = serializers.IntegerField()
    label = serializers.CharField()
    system_prompt = serializers.CharField()
    prompt = serializers.CharField(help_text="the last user message, rendered")
    messages = RenderedMessageOut(many=True, help_text="the whole conversation as it would be sent, system first")
    input_tokens = serializers.IntegerField(
        help_text="about how many tokens the conversation is (4 characters a token)"
    )
    errors = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())


class PreviewOut(serializers.Serializer):
    variants = RenderedVariantOut(many=True)
    errors = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())


class GroupFilterIn(serializers.Serializer):
    workspace = serializers.IntegerField(required=False, allow_null=True, default=None)
    q = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    model = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


def _group_detail(group, request) -> dict:
    group = selectors.groups_for_user(request.user).get(pk=group.pk)
    failing = request.query_params.get("failing") == "1"
    context = {
        "request": request,
        "rounds": list(failing_rounds(group).order_by("-number")[:100])
        if failing
        else selectors.group_recent_rounds(group),
        "warnings": selectors.group_rendering(group).warnings,
    }
    return GroupDetailOut(group, context=context).data


def round_detail(round_, request) -> dict:
    round_ = selectors.round_with_outputs(round_)
    outputs, visible = outputs_as_seen_by(round_, request.user)
    context = {
        "request": request,
        "outputs": outputs,
        "labels_visible": visible,
        "assertion_results": results_by_output(outputs, figures=visible),
    }
    return RoundOut(round_, context=context).data


class GroupList(generics.GenericAPIView):
    serializer_class = GroupOut

    @extend_schema(
        operation_id="groups_list",
        responses=GroupOut(many=True),
        parameters=[
            OpenApiParameter("workspace", int, description="only this workspace"),
            OpenApiParameter("q", str, description="text in the title or prompts"),
            OpenApiParameter("model", str, description="a composite model id used by a variant"),
        ],
    )
    def get(self, request):
        data = GroupFilterIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        page = self.paginate_queryset(selectors.groups_for_user(request.user, **data.validated_data))
        return self.get_paginated_response(GroupOut(page, many=True).data)

    @extend_schema(request=GroupIn, responses={201: GroupDetailOut})
    def post(self, request):
        data = GroupIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_from_body(request.user, fields.pop("workspace"))
        fields["dataset"] = dataset_from_body(fields.pop("dataset"), workspace)
        group = services.group_create(workspace=workspace, user=request.user, **fields)
        return Response(_group_detail(group, request), status=status.HTTP_201_CREATED)


class GroupDetail(APIView):
    @extend_schema(
        responses=GroupDetailOut,
        parameters=[OpenApiParameter("failing", int, description="1: only rounds with a failing assertion")],
    )
    def get(self, request, pk):
        return Response(_group_detail(group_for_user(request.user, pk), request))

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        services.group_delete(group=group_for_user(request.user, pk, write=True), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupRuns(APIView):
    @extend_schema(request=RunsIn, responses={202: RunsOut})
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = RunsIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset = dataset_from_body(data.validated_data.get("dataset"), group.workspace)
        rounds = round_start(
            group=group,
            user=request.user,
            repeat=data.validated_data.get("repeat"),
            dataset=dataset,
            use_cache=data.validated_data["cache"],
        )
        return Response(RunsOut({"rounds": rounds}).data, status=status.HTTP_202_ACCEPTED)


class GroupReveal(APIView):
    @extend_schema(
        request=None,
        responses=GroupDetailOut,
        description="End a blind comparison's blind voting for everyone (its creator or a workspace owner): every "
        "round's names, figures and tallies show to all. See docs/fairness.md.",
    )
    def post(self, request, pk):
        group = services.group_reveal(group=group_for_user(request.user, pk), user=request.user)
        return Response(_group_detail(group, request))


class GroupClone(APIView):
    @extend_schema(request=GroupCloneIn, responses={201: GroupDetailOut})
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = GroupCloneIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        clone = services.group_clone(group=group, user=request.user, **data.validated_data)
        return Response(_group_detail(clone, request), status=status.HTTP_201_CREATED)


class GroupPreview(APIView):
    """Render the variants of a group-create body for given variables; nothing is saved."""

    @extend_schema(request=GroupPreviewIn, responses=PreviewOut)
    def post(self, request):
        data = GroupPreviewIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        rendered = render_variants(
            system_prompt=fields["system_prompt"],
            variables=_preview_variables(request.user, fields),
            variants=_preview_templates(request.user, fields),
            shared_messages=fields["shared_messages"],
        )
        payload = {"variants": rendered.variants, "errors": rendered.errors, "warnings": rendered.warnings}
        return Response(PreviewOut(payload).data)


def _preview_templates(user, fields: dict) -> list:
    """The variants to render; with a `workspace`, each knows its provider's rules (what it merges, whether it takes
    a prefill, its context), from the connections' cached catalogs."""
    templates = services.variant_templates(fields["variants"])
    if fields.get("workspace") is None:
        return templates
    workspace = workspace_from_body(user, fields["workspace"], role=Role.VIEWER)
    targets = cached_targets(
        workspace,
        {t.position: v["model"].strip() for t, v in zip(templates, fields["variants"], strict=True)},
        {t.position: {**fields["params"], **v["params"]} for t, v in zip(templates, fields["variants"], strict=True)},
    )
    for template in templates:
        template.target = targets.get(template.position)
    return templates


def _preview_variables(user, fields: dict) -> dict:
    """The shared variables, under the first row of `dataset` when one is given: what a run over it renders first."""
    if fields.get("dataset") is None:
        return fields["shared_variables"]
    workspace = workspace_from_body(user, fields.get("workspace"), role=Role.VIEWER)
    first = dataset_from_body(fields["dataset"], workspace).rows.order_by("position").first()
    return {**fields["shared_variables"], **(first.vars if first else {})}


class RoundDetail(APIView):
    @extend_schema(responses=RoundOut)
    def get(self, request, pk):
        return Response(round_detail(round_for_user(request.user, pk), request))


class RoundCancel(APIView):
    @extend_schema(request=None, responses=RoundOut)
    def post(self, request, pk):
        round_ = round_cancel(round=round_for_user(request.user, pk, write=True), user=request.user)
        return Response(round_detail(round_, request))
