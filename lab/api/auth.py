"""Token auth endpoint: username and password in, an API token out."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView


class ObtainToken(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        request=AuthTokenSerializer,
        responses=inline_serializer("TokenOut", {"token": serializers.CharField()}),
    )
    def post(self, request):
        data = AuthTokenSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        token, _ = Token.objects.get_or_create(user=data.validated_data["user"])
        return Response({"token": token.key})
