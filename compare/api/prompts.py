"""Prompt library API: prompts and their versions, promote, the diff of two versions, a variant saved as a version,
and the library as YAML. Thin: the rules are in compare.prompts; another workspace's prompt is a 404."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.access import workspace_for_user
from lab.models import Role

from ..access import prompt_for_user, prompt_version_for_user, variant_for_user
from ..messages import cleaned, last_user_text, message_problems
from ..prompts import library, services
from ..prompts.diff import MessageChange, inline_html, messages_diff, side_by_side
from ..prompts.models import Prompt, PromptVersion
from ..prompts.selectors import prompt_versions, workspace_prompts
from .groups import MessageOut

TEXT = {"max_length": 100_000, "trim_whitespace": False}


@extend_schema_field(MessageOut(many=True))
class MessagesField(serializers.JSONField):
    """A message list [{role, content}]; compare.messages checks its shape (problems name the message, from 1)."""


class VersionFieldsIn(serializers.Serializer):
    """A version is `text` (one user message) or `messages`: exactly one of the two."""

    text = serializers.CharField(required=False, allow_blank=True, default="", **TEXT)
    messages = MessagesField(required=False, allow_null=True, default=None)
    system_prompt = serializers.CharField(required=False, allow_blank=True, default="", **TEXT)
    variables = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    message = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    parent = serializers.IntegerField(required=False, allow_null=True, default=None, help_text="a version's id")


class PromptIn(VersionFieldsIn):
    name = serializers.CharField(max_length=200)


class SaveVersionIn(serializers.Serializer):
    """Into an existing prompt (`prompt`, its id) or a new one (`name`): one of the two."""

    prompt = serializers.IntegerField(required=False, allow_null=True, default=None)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    message = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")

    def validate(self, data: dict) -> dict:
        if (data["prompt"] is None) == (not data["name"].strip()):
            raise serializers.ValidationError({"prompt": "Name an existing prompt (prompt) or a new one (name)."})
        return data


class LibraryIn(serializers.Serializer):
    yaml = serializers.CharField(max_length=5_000_000, trim_whitespace=False)


class DiffQueryIn(serializers.Serializer):
    a = serializers.IntegerField(min_value=1, help_text="the older version's number")
    b = serializers.IntegerField(min_value=1, help_text="the newer version's number")


class TextIn(serializers.Serializer):
    """A variant's prompt, or its whole message list, to compare with a version."""

    text = serializers.CharField(allow_blank=True, required=False, default="", **TEXT)
    messages = MessagesField(required=False, allow_null=True, default=None)


class VersionOut(serializers.ModelSerializer):
    parent = serializers.SerializerMethodField()
    author = serializers.CharField(source="author_name")

    class Meta:
        model = PromptVersion
        fields = [
            "id",
            "number",
            "text",
            "messages",
            "system_prompt",
            "variables",
            "parent",
            "author",
            "message",
            "created_at",
        ]

    messages = MessageOut(many=True, help_text="the version's messages; `text` is the last user message")

    def get_parent(self, version: PromptVersion) -> dict | None:
        parent = version.parent
        if parent is None:
            return None
        return {"id": parent.pk, "prompt": parent.prompt_id, "prompt_name": parent.prompt.name, "number": parent.number}


class PromptOut(serializers.ModelSerializer):
    current = serializers.SerializerMethodField()

    class Meta:
        model = Prompt
        fields = ["id", "workspace", "name", "current", "created_at"]

    def get_current(self, prompt: Prompt) -> int | None:
        """The current version's number."""
        return prompt.current.number if prompt.current else None


class PromptDetailOut(PromptOut):
    versions = serializers.SerializerMethodField()

    class Meta(PromptOut.Meta):
        fields = [*PromptOut.Meta.fields, "versions"]

    @extend_schema(responses=VersionOut(many=True))
    def get_versions(self, prompt: Prompt) -> list[dict]:
        return VersionOut(prompt_versions(prompt), many=True).data


class TextDiffOut(serializers.Serializer):
    old_html = serializers.CharField(help_text="the older text, deletions in <del>; everything else escaped")
    new_html = serializers.CharField(help_text="the newer text, insertions in <ins>")
    inline_html = serializers.CharField(help_text="both in one column")
    changed = serializers.BooleanField()
    inserted_words = serializers.IntegerField()
    deleted_words = serializers.IntegerField()


class MessageDiffOut(serializers.Serializer):
    op = serializers.ChoiceField(choices=["equal", "changed", "added", "removed"])
    old_position = serializers.IntegerField(allow_null=True, help_text="from 1 in the older list; null when added")
    new_position = serializers.IntegerField(allow_null=True, help_text="from 1 in the newer list; null when removed")
    old_role = serializers.CharField(allow_null=True)
    new_role = serializers.CharField(allow_null=True)
    diff = TextDiffOut(help_text="of the content, word by word")


class VersionDiffOut(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    text = TextDiffOut()
    system_prompt = TextDiffOut()
    messages = MessageDiffOut(many=True, help_text="message by message, in reading order")


class TextVersionDiffOut(TextDiffOut):
    messages = MessageDiffOut(
        many=True, required=False, help_text="message by message, when `messages` was sent: the version's → these"
    )


class LibraryOut(serializers.Serializer):
    yaml = serializers.CharField()


class ImportedOut(serializers.Serializer):
    prompts = PromptOut(many=True)


def text_diff(old: str, new: str) -> dict:
    diff = side_by_side(old, new)
    return {
        "old_html": str(diff.old),
        "new_html": str(diff.new),
        "inline_html": str(inline_html(old, new)),
        "changed": diff.changed,
        "inserted_words": diff.inserted_words,
        "deleted_words": diff.deleted_words,
    }


def message_diff(changes: list[MessageChange]) -> list[dict]:
    return [
        {
            "op": c.op,
            "old_position": c.old_position,
            "new_position": c.new_position,
            "old_role": c.old_role,
            "new_role": c.new_role,
            "diff": text_diff(c.old_text, c.new_text),
        }
        for c in changes
    ]


def _parent(user, parent_id: int | None) -> PromptVersion | None:
    if parent_id is None:
        return None
    version = PromptVersion.objects.filter(pk=parent_id, prompt__workspace__memberships__user=user).first()
    if version is None:
        raise serializers.ValidationError({"parent": "No such prompt version."})
    return version


def _detail(prompt: Prompt) -> dict:
    return PromptDetailOut(Prompt.objects.select_related("current").get(pk=prompt.pk)).data


class PromptList(APIView):
    @extend_schema(operation_id="workspace_prompts_list", responses=PromptOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        return Response(PromptOut(workspace_prompts(workspace), many=True).data)

    @extend_schema(request=PromptIn, responses={201: PromptDetailOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, Role.EDITOR)
        data = PromptIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        fields["parent"] = _parent(request.user, fields.pop("parent"))
        prompt = services.prompt_create(workspace=workspace, user=request.user, **fields)
        return Response(_detail(prompt), status=status.HTTP_201_CREATED)


class PromptDetail(APIView):
    @extend_schema(responses=PromptDetailOut)
    def get(self, request, pk):
        return Response(_detail(prompt_for_user(request.user, pk)))


class PromptVersions(APIView):
    @extend_schema(request=VersionFieldsIn, responses={201: VersionOut})
    def post(self, request, pk):
        prompt = prompt_for_user(request.user, pk, write=True)
        data = VersionFieldsIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        fields["parent"] = _parent(request.user, fields.pop("parent"))
        version = services.prompt_version_create(prompt=prompt, user=request.user, **fields)
        return Response(VersionOut(version).data, status=status.HTTP_201_CREATED)


class VersionPromote(APIView):
    @extend_schema(request=None, responses=PromptDetailOut)
    def post(self, request, pk):
        version = prompt_version_for_user(request.user, pk, write=True)
        return Response(_detail(services.prompt_promote(version=version)))


class PromptDiff(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("a", int, required=True), OpenApiParameter("b", int, required=True)],
        responses=VersionDiffOut,
    )
    def get(self, request, pk):
        prompt = prompt_for_user(request.user, pk)
        query = DiffQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = {v.number: v for v in prompt.versions.filter(number__in=query.validated_data.values())}
        for field, number in query.validated_data.items():
            if number not in found:
                raise serializers.ValidationError({field: f"This prompt has no version {number}."})
        a, b = found[query.validated_data["a"]], found[query.validated_data["b"]]
        return Response(
            {
                "a": a.number,
                "b": b.number,
                "text": text_diff(a.text, b.text),
                "system_prompt": text_diff(a.system_prompt, b.system_prompt),
                "messages": message_diff(messages_diff(a.messages, b.messages)),
            }
        )


class VersionDiff(APIView):
    """What a text or a message list (e.g. a variant's in the editor) changed from a version."""

    @extend_schema(request=TextIn, responses=TextVersionDiffOut)
    def post(self, request, pk):
        version = prompt_version_for_user(request.user, pk)
        data = TextIn(data=request.data)
        data.is_valid(raise_exception=True)
        messages = data.validated_data["messages"]
        if messages is None:
            return Response(text_diff(version.text, data.validated_data["text"]))
        if problems := message_problems(messages, require_user=False):
            raise serializers.ValidationError({"messages": problems})
        changes = message_diff(messages_diff(version.messages, cleaned(messages)))
        return Response({**text_diff(version.text, last_user_text(messages)), "messages": changes})


class VariantSaveVersion(APIView):
    @extend_schema(request=SaveVersionIn, responses={201: VersionOut})
    def post(self, request, pk):
        variant = variant_for_user(request.user, pk, write=True)
        data = SaveVersionIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        prompt = None
        if fields["prompt"] is not None:
            prompt = Prompt.objects.filter(pk=fields["prompt"], workspace=variant.group.workspace).first()
            if prompt is None:
                raise serializers.ValidationError({"prompt": "No such prompt in this workspace."})
        version = services.variant_save_as_version(
            variant=variant, user=request.user, prompt=prompt, name=fields["name"], message=fields["message"]
        )
        return Response(VersionOut(version).data, status=status.HTTP_201_CREATED)


class Library(APIView):
    @extend_schema(operation_id="prompt_library_export", responses=LibraryOut)
    def get(self, request, pk):
        return Response({"yaml": library.library_export(workspace_for_user(request.user, pk))})

    @extend_schema(operation_id="prompt_library_import", request=LibraryIn, responses={201: ImportedOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, Role.EDITOR)
        data = LibraryIn(data=request.data)
        data.is_valid(raise_exception=True)
        prompts = library.library_import(workspace=workspace, user=request.user, text=data.validated_data["yaml"])
        return Response({"prompts": PromptOut(prompts, many=True).data}, status=status.HTTP_201_CREATED)
