"""Websocket routes of the lab app."""

from django.urls import path

from .consumers import WorkspaceConsumer

websocket_urlpatterns = [path("ws/workspaces/<str:pk>/", WorkspaceConsumer.as_asgi())]
