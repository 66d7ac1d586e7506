"""Websocket routes of the compare app."""

from django.urls import path

from .consumers import GroupConsumer

websocket_urlpatterns = [path("ws/groups/<str:pk>/", GroupConsumer.as_asgi())]
