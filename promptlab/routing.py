"""Websocket routes of every app, gathered in one list for the ASGI router."""

from lab.routing import websocket_urlpatterns as lab_ws

websocket_urlpatterns = [*lab_ws]
