"""ASGI entry: HTTP goes to Django, websockets to Channels consumers behind origin and session checks."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from . import daphne_http  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402

daphne_http.install()  # JSON answers for the requests Twisted refuses itself (a no-op outside daphne)

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# Import every view now, not on the first request: the URLconf pulls in the reports' statistics (SciPy), and the
# first request after each start paid two seconds of CPU for it, while the streams of that moment waited.
get_resolver().url_patterns  # noqa: B018 (the attribute imports them)

if settings.EMBEDDED_WORKER:
    from .embedded_worker import start_embedded_worker

    start_embedded_worker()
