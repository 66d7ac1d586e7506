"""API for a person's own tokens: list them, make one (its key in that response only), revoke one. Thin."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import api_token_for_user
from ..tokens.models import ApiToken, Scope
from ..tokens.services import api_token_create, api_token_revoke
from .inputs import StrictIn


class ApiTokenIn(StrictIn):
    name = serializers.CharField(max_length=80)
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.READ)


class ApiTokenOut(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "scope", "prefix", "created_at", "last_used_at", "revoked_at"]


class ApiTokenCreatedOut(ApiTokenOut):
    key = serializers.CharField(help_text="Shown in this response only; it is not stored.")

    class Meta(ApiTokenOut.Meta):
        fields = [*ApiTokenOut.Meta.fields, "key"]


class TokenList(generics.GenericAPIView):
    serializer_class = ApiTokenOut

    @extend_schema(operation_id="tokens_list", responses=ApiTokenOut(many=True))
    def get(self, request):
        page = self.paginate_queryset(ApiToken.objects.filter(user=request.user))
        return self.get_paginated_response(ApiTokenOut(page, many=True).data)

    @extend_schema(request=ApiTokenIn, responses={201: ApiTokenCreatedOut})
    def post(self, request):
        data = ApiTokenIn(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = api_token_create(user=request.user, **data.validated_data)
        token.key = key
        return Response(ApiTokenCreatedOut(token).data, status=status.HTTP_201_CREATED)


class TokenDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, token_id):
        token = api_token_for_user(request.user, token_id)
        api_token_revoke(token=token, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
