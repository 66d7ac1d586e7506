"""Input and output serializers of the lab API; the key is write-only and only its hint is returned."""

from rest_framework import serializers

from ..models import Connection, ConnectionKind, Membership, Role, Workspace
from .inputs import StrictIn


class WorkspaceOut(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Workspace
        fields = ["id", "name", "role", "created_at"]

    def get_role(self, workspace: Workspace) -> str:
        return getattr(workspace, "my_role", None) or workspace.memberships.get(user=self.context["request"].user).role


class WorkspaceIn(StrictIn):
    name = serializers.CharField(max_length=120)


class MemberIn(StrictIn):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class MemberRoleIn(StrictIn):
    role = serializers.ChoiceField(choices=Role.choices)


class MemberOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["id", "user_id", "username", "role", "created_at"]


class ConnectionOut(serializers.ModelSerializer):
    has_api_key = serializers.SerializerMethodField()
    model_count = serializers.SerializerMethodField()

    class Meta:
        model = Connection
        fields = [
            "id",
            "name",
            "kind",
            "base_url",
            "api_key_hint",
            "has_api_key",
            "max_concurrency",
            "rpm",
            "model_count",
            "models_fetched_at",
            "created_at",
        ]

    def get_has_api_key(self, connection: Connection) -> bool:
        return bool(connection.api_key_encrypted)

    def get_model_count(self, connection: Connection) -> int:
        return len(connection.models_cache or [])


class ConnectionIn(StrictIn):
    name = serializers.SlugField(max_length=60)
    kind = serializers.ChoiceField(choices=ConnectionKind.choices)
    # Shape and scheme are checked by the service (lab.connection_rules), whose message names the scheme.
    base_url = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True, default="", trim_whitespace=True)
    max_concurrency = serializers.IntegerField(min_value=1, max_value=1000, required=False, default=4)
    rpm = serializers.IntegerField(min_value=1, max_value=100000, required=False, default=60)


class ConnectionUpdateIn(StrictIn):
    name = serializers.SlugField(max_length=60, required=False)
    base_url = serializers.CharField(max_length=300, required=False, allow_blank=True)
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=True)
    max_concurrency = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    rpm = serializers.IntegerField(min_value=1, max_value=100000, required=False)


class ModelOut(serializers.Serializer):
    """One catalog entry; prices are USD per million tokens, null when unknown (never a made-up 0)."""

    id = serializers.CharField(help_text="Composite id to use in variants: <connection>::<model>")
    model = serializers.CharField(help_text="The provider's own model name")
    name = serializers.CharField()
    connection = serializers.CharField()
    connection_id = serializers.IntegerField()
    kind = serializers.CharField()
    simulated = serializers.BooleanField()
    context_length = serializers.IntegerField(allow_null=True)
    max_output_tokens = serializers.IntegerField(allow_null=True)
    supported_params = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="null when the provider publishes nothing: every parameter is assumed supported",
    )
    input_price_per_mtok = serializers.FloatField(allow_null=True)
    output_price_per_mtok = serializers.FloatField(allow_null=True)


class CatalogErrorOut(serializers.Serializer):
    connection = serializers.CharField()
    error = serializers.CharField()


class ModelListOut(serializers.Serializer):
    count = serializers.IntegerField()
    results = ModelOut(many=True)
    errors = CatalogErrorOut(many=True, help_text="Connections whose catalog could not be fetched, and why")


class ModelsRefreshedOut(serializers.Serializer):
    connection = serializers.CharField()
    count = serializers.IntegerField()
    models_fetched_at = serializers.DateTimeField()
    results = ModelOut(many=True)
