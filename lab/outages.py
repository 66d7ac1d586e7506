"""Outages of the services the lab stands on, and what a request gets during one.

What a Redis client raises when Redis is away (stopped, restarting, unreachable): redis-py's own errors, or the
socket's (a refused connection, a timeout). Callers that can do without Redis for a while catch exactly these.

A request that needs Postgres, or the broker, while it is away is answered 503 with Retry-After: JSON under /api/,
a short page elsewhere, instead of an HTML 500. The wait before that answer is bounded by the pool's timeout
(settings DB_POOL_TIMEOUT_S) and by redis-py's and Celery's retries; docs/operations.md lists what users see.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

REDIS_DOWN = (RedisError, OSError)

# Django's wrapping of psycopg's errors: no connection to be had (the pool's timeout) or a connection lost.
DATABASE_DOWN = (OperationalError, InterfaceError)
# redis-py's errors for a Redis that does not answer, and Celery's for a broker it could not publish to. Narrower
# than REDIS_DOWN: an OSError raised elsewhere in a view is not Redis's.
REDIS_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, BrokerError)

RETRY_AFTER_S = 5

SERVICES = {
    "database": "The database is unavailable",
    "redis": "Redis (the task queue, live updates and the cache) is unavailable",
}


def outage_response(request: HttpRequest, service: str) -> HttpResponse:
    """503 naming the service that is away; a person's page says what still works and when to try again."""
    detail = f"{SERVICES[service]}; try again in a few seconds."
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": detail, "unavailable": service}, status=503)
    else:
        # No request context: the context processors would ask the database for the person's workspaces.
        page = render_to_string("503.html", {"service": service, "detail": detail, "retry_after": RETRY_AFTER_S})
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class OutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_DOWN):
            return outage_response(request, "database")
        if isinstance(exception, REDIS_UNREACHABLE):
            return outage_response(request, "redis")
        return None
