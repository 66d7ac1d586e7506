"""Token auth endpoint: username and password in, a new personal API token out (named, read-write unless asked).

It issues the same tokens as the API tokens page, where they are listed and revoked.
"""

from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from ..tokens.models import Scope
from ..tokens.services import api_token_create


class LoginTokenIn(AuthTokenSerializer):
    name = serializers.CharField(max_length=80, required=False)
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.WRITE)


class ObtainToken(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        request=LoginTokenIn,
        responses=inline_serializer("TokenOut", {"token": serializers.CharField(), "scope": serializers.CharField()}),
    )
    def post(self, request):
        data = LoginTokenIn(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        name = data.validated_data.get("name") or f"Signed in through the API on {timezone.now():%Y-%m-%d %H:%M}"
        token, key = api_token_create(user=data.validated_data["user"], name=name, scope=data.validated_data["scope"])
        return Response({"token": key, "scope": token.scope})
