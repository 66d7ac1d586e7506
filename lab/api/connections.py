"""Connections API: a workspace's provider connections, the model catalog, and the worker health check. Its In/Out
serializers (the key is write-only and only its hint is returned), then the views; thin: access + service."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import catalog, services, tasks
from ..access import connection_for_user, workspace_for_user
from ..models import Connection, ConnectionKind, Role
from ..providers.base import DEFAULT_MAX_CONCURRENCY, ProviderError
from .inputs import StrictIn


class ConnectionOut(serializers.ModelSerializer):
    has_api_key = serializers.SerializerMethodField()
    model_count = serializers.SerializerMethodField()
    private = serializers.SerializerMethodField(
        help_text="A person's own connection, made by the command line from their environment; only they see it"
    )

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
            "tpm",
            "model_count",
            "private",
            "models_fetched_at",
            "created_at",
        ]

    def get_has_api_key(self, connection: Connection) -> bool:
        return bool(connection.api_key_encrypted)

    def get_model_count(self, connection: Connection) -> int:
        return len(connection.models_cache or [])

    def get_private(self, connection: Connection) -> bool:
        return connection.owner_id is not None


class ConnectionIn(StrictIn):
    name = serializers.SlugField(max_length=60)
    kind = serializers.ChoiceField(choices=ConnectionKind.choices)
    # Shape and scheme are checked by the service (lab.connection_rules), whose message names the scheme.
    base_url = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True, default="", trim_whitespace=True)
    max_concurrency = serializers.IntegerField(
        min_value=1, max_value=1000, required=False, default=DEFAULT_MAX_CONCURRENCY
    )
    rpm = serializers.IntegerField(min_value=1, max_value=100000, required=False, default=60)
    tpm = serializers.IntegerField(min_value=0, max_value=100_000_000, required=False, default=0)


class ConnectionUpdateIn(StrictIn):
    name = serializers.SlugField(max_length=60, required=False)
    base_url = serializers.CharField(max_length=300, required=False, allow_blank=True)
    api_key = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=True)
    max_concurrency = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    rpm = serializers.IntegerField(min_value=1, max_value=100000, required=False)
    tpm = serializers.IntegerField(min_value=0, max_value=100_000_000, required=False)


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


class ConnectionList(generics.GenericAPIView):
    serializer_class = ConnectionOut

    @extend_schema(operation_id="connections_list", responses=ConnectionOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(Connection.objects.filter(workspace=workspace).visible_to(request.user))
        return self.get_paginated_response(ConnectionOut(page, many=True).data)

    @extend_schema(request=ConnectionIn, responses={201: ConnectionOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        data = ConnectionIn(data=request.data)
        data.is_valid(raise_exception=True)
        connection = services.connection_create(workspace=workspace, actor=request.user, **data.validated_data)
        return Response(ConnectionOut(connection).data, status=status.HTTP_201_CREATED)


class ConnectionDetail(APIView):
    @extend_schema(responses=ConnectionOut)
    def get(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.VIEWER)
        return Response(ConnectionOut(connection).data)

    @extend_schema(request=ConnectionUpdateIn, responses=ConnectionOut)
    def patch(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.OWNER)
        data = ConnectionUpdateIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        connection = services.connection_update(connection=connection, actor=request.user, **data.validated_data)
        return Response(ConnectionOut(connection).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.OWNER)
        services.connection_delete(connection=connection, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @staticmethod
    def _connection(request, pk, connection_id, role) -> Connection:
        return connection_for_user(request.user, pk, connection_id, role)


class ModelList(APIView):
    """Models of all the workspace's connections; a catalog never fetched is fetched now."""

    @extend_schema(responses=ModelListOut)
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        models, errors = catalog.workspace_catalog(workspace, user=request.user)
        return Response(ModelListOut({"count": len(models), "results": models, "errors": errors}).data)


class ConnectionModelsRefresh(APIView):
    """Fetch a connection's catalog from its provider again (owner or editor); 502 with the reason when it fails."""

    @extend_schema(request=None, responses={200: ModelsRefreshedOut})
    def post(self, request, pk, connection_id):
        connection = connection_for_user(request.user, pk, connection_id, Role.EDITOR)
        try:
            models = catalog.connection_models_refresh(connection=connection)
        except ProviderError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_502_BAD_GATEWAY)
        data = {
            "connection": connection.name,
            "count": len(models),
            "models_fetched_at": connection.models_fetched_at,
            "results": [catalog.catalog_entry(connection, model) for model in models],
        }
        return Response(ModelsRefreshedOut(data).data)


class WorkerCheck(APIView):
    """Enqueue a health-check task; the page hears `worker.pong` on the workspace socket when a worker ran it."""

    @extend_schema(request=None, responses={202: None})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.EDITOR)  # it enqueues work: not for viewers
        tasks.worker_check.delay(workspace.pk)
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
