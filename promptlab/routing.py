"""Websocket routes of every app, gathered in one list for the ASGI router."""

from compare.routing import websocket_urlpatterns as compare_ws
from lab.routing import websocket_urlpatterns as lab_ws

websocket_urlpatterns = [*lab_ws, *compare_ws]
