"""Prompt Lab settings: one file, every value from the environment with a safe default.

Two run modes share all code and differ only in transport:
- embedded (DATABASE_URL and REDIS_URL unset): SQLite, in-memory channel layer, Celery on an in-memory
  broker with a worker thread inside the web process;
- services: Postgres, channels_redis and a Redis-brokered Celery with separate web, worker and beat processes.
"""

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
import dj_email_url
from django.core.exceptions import ImproperlyConfigured
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-never-use-in-production-0123456789abcdefghijkl"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")


def env_job_seconds(name: str, default: str) -> str:
    """JOBS_<name>, or the COMPARE_* name these settings had before they were seen to govern every job kind."""
    old = {"GRACE_S": "COMPARE_ROUND_GRACE_S"}.get(name, f"COMPARE_{name}")
    return os.environ.get(f"JOBS_{name}", os.environ.get(old, default))


def _site_url() -> str:
    """SITE_URL, or the first allowed host on PORT (what `make run` serves on): the address in links printed
    outside a request, by the experiment command and demo_setup."""
    if site_url := os.environ.get("SITE_URL", "").strip():
        return site_url.rstrip("/")
    host = next((host.lstrip(".") for host in ALLOWED_HOSTS if host != "*"), "127.0.0.1")
    return f"http://{host}:{os.environ.get('PORT', '8000')}"


SITE_URL = _site_url()

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
RUN_MODE = "services" if REDIS_URL else "embedded"

# daphne serves the site (`make web`, `make run`) but is not an app here: as one, it would make every process (the
# workers, the experiment command) import Twisted, a quarter of a second, only for `runserver` to speak ASGI.
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "csp",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.socialaccount.providers.github",
    "allauth.socialaccount.providers.google",
    "lab",
    "compare",
    "judging",
    "voting",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "lab.middleware.BodyLimitMiddleware",  # an oversized body is a JSON 413 naming the limit, before anything reads it
    "lab.accounts.limits.PasswordLimitMiddleware",  # too many password attempts where no form answers it: a 429
    "lab.outages.OutageMiddleware",  # Postgres or Redis away: a 503 with Retry-After, JSON on the API, never a 500
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "promptlab.urls"
ASGI_APPLICATION = "promptlab.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "lab.context_processors.workspaces",
            ],
        },
    },
]

if DATABASE_URL:
    # Under ASGI every request runs in its own thread, so persistent per-thread connections would pile up
    # (Django's docs advise against them there); a bounded pool per process makes bursts wait, not fail.
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
    # When Postgres is away a request fails within DB_POOL_TIMEOUT_S (a 503 with Retry-After, lab/outages.py)
    # instead of holding its thread. psycopg_pool retries a failed connection with a doubling delay (1, 2, 4 … s):
    # after a long outage the next try could be half a minute off, and every request waited for it. Giving a
    # try up after DB_RECONNECT_TIMEOUT_S lets the next request start a fresh one, so the site is back within
    # about two seconds of the database (tests/faults/test_postgres_down.py).
    DATABASES["default"]["OPTIONS"] = {
        "pool": {
            "min_size": 1,
            "max_size": int(os.environ.get("DB_POOL_MAX_SIZE", "10")),
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT_S", "5")),
            "reconnect_timeout": float(os.environ.get("DB_RECONNECT_TIMEOUT_S", "5")),
        },
        # libpq's own limit on one connection attempt (a server that does not answer, rather than refuses).
        "connect_timeout": int(os.environ.get("DB_CONNECT_TIMEOUT_S", "3")),
    }
    # With a pool, Django turns this into psycopg_pool's `check`: a pooled connection is tested before it is handed
    # out, so after a Postgres restart the pool replaces its dead connections instead of giving each of them to a
    # request (or a round's write) that then fails.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # The embedded worker thread writes while requests read; wait instead of failing.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Tests create many users; a fast hasher there keeps the suite quick. Never set this in production.
if env_bool("FAST_PASSWORD_HASHING", False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "lab:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "lab:login"
REGISTRATION_OPEN = env_bool("REGISTRATION_OPEN", True)

# --- Accounts, single sign-on, mail, API tokens and the audit log (django-allauth; see README "Accounts") ---
# Local username/password, sign-up (closed by REGISTRATION_OPEN=0), e-mail verification and password reset are
# allauth's account flows; OpenID Connect, GitHub and Google appear only when their keys are set, so
# `make run` needs none of it. The rules (who may sign up, which domains) live in lab/accounts/adapters.py.
# The first backend is the only one that checks a password, behind the guessing limits (lab/accounts/limits.py);
# the others stay listed so the sessions they signed in before it existed stay valid.
AUTHENTICATION_BACKENDS = [
    "lab.accounts.limits.LimitedPasswordBackend",
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
# Password guessing limits for every way to present a password (lab/accounts/limits.py), kept in the database so
# they hold while Redis is down: this many attempts per account, and per client address, within the window.
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "5"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "30"))
LOGIN_WINDOW_S = int(os.environ.get("LOGIN_WINDOW_S", "300"))
# allauth's own login limits (kept in the cache, so Redis) are replaced by those; its others stay.
ACCOUNT_RATE_LIMITS = {"login": None, "login_failed": None}
# Proxies whose X-Forwarded-For is believed (addresses or networks, e.g. 127.0.0.1 or 172.16.0.0/12): the client
# address the limits key on is the one the nearest trusted proxy saw (lab/client_address.py). Empty: no proxy.
try:
    TRUSTED_PROXIES = [ipaddress.ip_network(entry, strict=False) for entry in env_list("TRUSTED_PROXIES")]
except ValueError as error:
    raise ImproperlyConfigured(f"TRUSTED_PROXIES: {error}") from None
ACCOUNT_ADAPTER = "lab.accounts.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "lab.accounts.adapters.SocialAccountAdapter"
ACCOUNT_FORMS = {"login": "lab.accounts.forms.LoginForm", "change_password": "lab.accounts.forms.ChangePasswordForm"}
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email", "password1*"]
# "optional" sends a verification mail and lets people in; "mandatory" waits for the click; "none" sends none.
ACCOUNT_EMAIL_VERIFICATION = os.environ.get("ACCOUNT_EMAIL_VERIFICATION", "optional")
ACCOUNT_LOGOUT_REDIRECT_URL = LOGOUT_REDIRECT_URL
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "http" if DEBUG else "https"
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_LOGIN_ON_GET = False  # a provider's button posts, so a link cannot sign anyone in
SOCIALACCOUNT_STORE_TOKENS = False  # we only need who someone is, not their tokens at the provider
# A provider's sign-in never takes over an existing local account that has the same address.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
OIDC_ISSUER_URL = os.environ.get("OIDC_ISSUER_URL", "")
OIDC_ALLOWED_EMAIL_DOMAINS = [domain.lower().lstrip("@") for domain in env_list("OIDC_ALLOWED_EMAIL_DOMAINS")]
OIDC_ALLOW_SIGNUP = env_bool("OIDC_ALLOW_SIGNUP", True)
SOCIALACCOUNT_PROVIDERS: dict = {}
if OIDC_ISSUER_URL and os.environ.get("OIDC_CLIENT_ID"):
    SOCIALACCOUNT_PROVIDERS["openid_connect"] = {
        "OAUTH_PKCE_ENABLED": True,
        "APPS": [
            {
                "provider_id": "oidc",
                "name": os.environ.get("OIDC_PROVIDER_NAME", "Single sign-on"),
                "client_id": os.environ["OIDC_CLIENT_ID"],
                "secret": os.environ.get("OIDC_CLIENT_SECRET", ""),
                "settings": {"server_url": OIDC_ISSUER_URL},
            }
        ],
    }
for _provider in ("github", "google"):
    if os.environ.get(f"{_provider.upper()}_CLIENT_ID"):
        SOCIALACCOUNT_PROVIDERS[_provider] = {
            "APPS": [
                {
                    "client_id": os.environ[f"{_provider.upper()}_CLIENT_ID"],
                    "secret": os.environ.get(f"{_provider.upper()}_CLIENT_SECRET", ""),
                }
            ],
            "SCOPE": ["user:email"] if _provider == "github" else ["profile", "email"],
        }
# A provider's button posts to us and we redirect to the provider: browsers hold that redirect to the form-action
# policy, so each configured provider's sign-in origin is allowed there (the OIDC authorize endpoint is assumed
# to be on the issuer's origin, as it is for Keycloak, Okta, Entra ID, Auth0 and Authentik).
_SIGN_IN_ORIGINS = {"github": "https://github.com", "google": "https://accounts.google.com"}
if OIDC_ISSUER_URL:
    _issuer = urlsplit(OIDC_ISSUER_URL)
    _SIGN_IN_ORIGINS["openid_connect"] = f"{_issuer.scheme}://{_issuer.netloc}"
SIGN_IN_FORM_ORIGINS = sorted(_SIGN_IN_ORIGINS[name] for name in SOCIALACCOUNT_PROVIDERS)
# Mail: the console in development; EMAIL_URL (smtp://user:password@host:587/?tls=True) in production.
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Prompt Lab <promptlab@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
_email = dj_email_url.parse(os.environ.get("EMAIL_URL", "") or "console://")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST, EMAIL_PORT = _email["EMAIL_HOST"] or "localhost", _email["EMAIL_PORT"] or 25
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_USER"] or "", _email["EMAIL_HOST_PASSWORD"] or ""
EMAIL_USE_TLS, EMAIL_USE_SSL, EMAIL_TIMEOUT = _email["EMAIL_USE_TLS"], _email["EMAIL_USE_SSL"], 30
# Invitations and API tokens.
INVITATION_DEFAULT_DAYS = int(os.environ.get("INVITATION_DEFAULT_DAYS", "7"))
# Audit entries older than this are deleted by the daily prune task (0 keeps them for ever).
AUDIT_RETENTION_DAYS = int(os.environ.get("AUDIT_RETENTION_DAYS", "365"))

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploaded files (lab/files/) go through Django's storage API: local files under MEDIA_ROOT by default; any
# django-storages backend by changing STORAGES["default"]. They are served only through the members-only view
# (GET /api/v1/files/<id>/), never from a public URL, so MEDIA_URL is not routed.
MEDIA_ROOT = os.environ.get("MEDIA_ROOT") or str(BASE_DIR / "media")
# An uploaded image's limits: bytes (checked while the upload streams) and pixels (checked from the header).
FILES_MAX_BYTES = int(os.environ.get("FILES_MAX_BYTES", str(20 * 1024 * 1024)))
FILES_MAX_PIXELS = int(os.environ.get("FILES_MAX_PIXELS", str(40_000_000)))
# A dataset zip (compare/datasets/zips.py): at most this many files, unpacking to at most this many bytes, none
# compressed more than this ratio (a zip bomb is refused from the zip's directory, before anything is unpacked).
DATASET_ZIP_MAX_MEMBERS = int(os.environ.get("DATASET_ZIP_MAX_MEMBERS", "1000"))
DATASET_ZIP_MAX_UNCOMPRESSED = int(os.environ.get("DATASET_ZIP_MAX_UNCOMPRESSED", str(200 * 1024 * 1024)))
DATASET_ZIP_MAX_RATIO = int(os.environ.get("DATASET_ZIP_MAX_RATIO", "100"))

# --- Security (production values pass `manage.py check --deploy`) ---
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# Content-Security-Policy on every response (django-csp): only what this site ships may load or run, so a model
# answer or user text that slipped past sanitising still cannot run script. No inline script or style anywhere.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # the API docs draw their icons from data: URLs
        "connect-src": ["'self'"],  # fetch, and the websockets of the same host
        "frame-src": ["'none'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'", *SIGN_IN_FORM_ORIGINS],
        "frame-ancestors": ["'none'"],
    }
}

# --- API ---
# The largest field takes 5 MiB of text (an experiment file, a dataset import); JSON escaping and the other
# fields need room beside it. Above this a body is refused with a JSON 413 (lab.middleware).
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(16 * 1024 * 1024)))
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "lab.tokens.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "lab.tokens.auth.TokenScopeAllows",
    ],
    "EXCEPTION_HANDLER": "lab.api.errors.exception_handler",
    # JSON that the database can store and the stack can hold (lab.values), or a 400 naming the field.
    "DEFAULT_PARSER_CLASSES": [
        "lab.api.parsers.CheckedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Prompt Lab API",
    "DESCRIPTION": "Compare prompts and models side by side, vote, judge and report.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Docs assets are served from our own static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation's error answers are documented once, by the shared machinery that gives them.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "lab.api.schema.document_error_responses",
    ],
    # Several apps have fields called "mode" and "status"; name their enums after what they are.
    "ENUM_NAME_OVERRIDES": {
        "CompareModeEnum": "compare.models.Mode",
        "RoundStatusEnum": "compare.models.RoundStatus",
        "OutputStatusEnum": "compare.models.OutputStatus",
        "JudgeModeEnum": "judging.rubric.JudgeMode",
        "JudgeScaleEnum": "judging.rubric.Scale",
        "JudgeKindEnum": "judging.classification.JudgeKind",
        "JudgeUncertaintyEnum": "judging.classification.Uncertainty",
        "ConnectionKindEnum": "lab.models.ConnectionKind",
        "VerdictStatusEnum": "judging.models.VerdictStatus",
        "DatasetFormatEnum": "compare.datasets.files.FORMATS",
        "DatasetImportFormatEnum": "compare.datasets.files.IMPORT_FORMATS",
        "ExperimentFileFormatEnum": "compare.api.experiments.FILE_FORMATS",
        "MessageRoleEnum": "lab.providers.message_rules.ROLES",
        "RoleEnum": "lab.models.Role",
    },
}

# --- Realtime ---
# Connections that stay open (the channel layer's, the worker's limiter) meet a restarted Redis as a broken
# socket on their next command; redis-py retries such a command on a new connection only when told to. About
# 3 s of retries in all, then the error goes up. Not on a timeout: the command may have run (a message popped).
REDIS_CONNECTION_RETRY = {
    "retry": Retry(ExponentialBackoff(cap=1.6, base=0.1), 5, supported_errors=(RedisConnectionError,)),
    "retry_on_error": [RedisConnectionError],
}
# The channel layer waits on Redis for up to 5 s at a time (BZPOPMIN), as long as redis-py's default read
# timeout: an idle socket's wait could time out a moment before Redis answered, and close the websocket.
CHANNEL_LAYER_HOST = {"address": REDIS_URL, "socket_timeout": 15, **REDIS_CONNECTION_RETRY}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis's layer, with fewer trips to Redis per event (see lab/channel_layer.py).
            "BACKEND": "lab.channel_layer.RedisChannelLayer",
            "CONFIG": {"hosts": [CHANNEL_LAYER_HOST], "capacity": 1500, "expiry": 30},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Cache (reports and leaderboards): shared through Redis in services mode so every web process sees the
# versions a vote replaces; in embedded mode the worker runs inside the one web process, so memory is enough.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "promptlab",
            # A Redis that does not answer (rather than refuses) costs a request at most this, not the OS's minutes.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Celery (at-least-once: ack after the task, requeue when a worker dies) ---
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "300"))
CELERY_TASK_TIME_LIMIT = CELERY_TASK_SOFT_TIME_LIMIT + 30
# Redis redelivers an unacked message after this long; it must outlast the longest task, or a slow
# round would run twice in parallel. The claim in the database makes a redelivery harmless anyway.
CELERY_VISIBILITY_TIMEOUT = max(int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "900")), CELERY_TASK_TIME_LIMIT * 2)
# An open websocket asks again this often (seconds) whether its user may still see what it streams: a member
# removed from a workspace stops hearing its events within this long.
REALTIME_REAUTHORISE_S = float(os.environ.get("REALTIME_REAUTHORISE_S", "10"))

# --- Jobs (rounds, verdicts, evaluations): how long one may run, and how the sweeper treats stuck ones ---
# A claimed job's deadline is its slowest call's timeout (plus stagger) and this slack for writing results.
JOBS_GRACE_S = int(env_job_seconds("GRACE_S", "15"))
# How often the sweeper runs (a few cheap queries); a dead worker's job fails at most this long after its deadline,
# and a job whose enqueue failed (broker down at commit) is sent again within this long of the broker's return.
JOBS_SWEEP_INTERVAL_S = int(env_job_seconds("SWEEP_INTERVAL_S", "10"))
# A job still queued after this long is enqueued again (its message may have been lost) …
JOBS_REQUEUE_AFTER_S = int(env_job_seconds("REQUEUE_AFTER_S", "120"))
# … and one still queued after this long is failed: no worker is coming.
JOBS_QUEUE_EXPIRY_S = int(env_job_seconds("QUEUE_EXPIRY_S", "3600"))
# Every worker process writes a heartbeat this often (lab/jobs/workers.py) …
JOBS_HEARTBEAT_S = float(os.environ.get("JOBS_HEARTBEAT_S", "5"))
# … and is taken for gone when none came for this long: the jobs it had claimed are run again by a live worker
# (a worker that starts takes back at once those of the process it replaces), and pages say no worker is running.
JOBS_WORKER_LOST_AFTER_S = float(os.environ.get("JOBS_WORKER_LOST_AFTER_S", "30"))
# A cached answer (compare/response_cache.py, opt-in per experiment or run) is reused for this many days after it
# was stored; older entries are ignored and `manage.py response_cache_prune` deletes them. 0: never expire.
RESPONSE_CACHE_MAX_AGE_DAYS = int(os.environ.get("RESPONSE_CACHE_MAX_AGE_DAYS", "30"))
# --- Scheduling provider calls (lab/engine/queue_deadlines.py) ---
# How long one call may wait for its connection's turn before it fails ("waited N s for connection X"); the wait
# is not part of the answer's timeout, which starts when the request is sent. Short for a round someone is
# watching, long for batch work that queues behind a connection's limits.
SCHEDULER_QUEUE_DEADLINE_S = {
    "interactive": float(os.environ.get("SCHEDULER_INTERACTIVE_QUEUE_DEADLINE_S", "60")),
    "batch": float(os.environ.get("SCHEDULER_BATCH_QUEUE_DEADLINE_S", "3600")),
}
# Batch jobs (rounds, evaluations) one process holds on its engine loop while they may still wait for their
# connections (lab/engine/admission.py; a round whose calls have all gone takes no place): their calls wait there
# without holding a worker thread. The cap leaves the rest of the queue to other workers and lets an experiment's
# budget cap cancel what nobody has claimed yet; a full process stops taking batch messages, so its threads stay
# free for interactive rounds. 0: as many as the worker has threads.
SCHEDULER_BATCH_JOBS_PER_PROCESS = int(os.environ.get("SCHEDULER_BATCH_JOBS_PER_PROCESS", "0"))
SCHEDULER_BATCH_RESEND_S = float(os.environ.get("SCHEDULER_BATCH_RESEND_S", "1"))
# The length of the rpm and tpm windows. A minute in production; tests shorten it to run the same code in seconds.
SCHEDULER_WINDOW_S = float(os.environ.get("SCHEDULER_WINDOW_S", "60"))

CELERY = {
    # The in-memory broker named with a host: without one kombu warns "No hostname was supplied" on every use.
    "broker_url": REDIS_URL or "memory://localhost/",
    "task_acks_late": True,
    "task_reject_on_worker_lost": True,
    "worker_prefetch_multiplier": 1,
    # Threads, not processes: an interactive round's task only waits while the process's one engine loop streams
    # it, and a batch round's task hands it to the loop and returns (lab/engine/runtime.py, admission.py), so one
    # worker process streams many rounds at once and keeps its connections to providers and Redis open between
    # them. Prefork also works (one loop per child). Each task thread may hold a database connection, so keep
    # DB_POOL_MAX_SIZE in proportion.
    "worker_pool": os.environ.get("CELERY_WORKER_POOL", "threads"),
    "worker_concurrency": int(os.environ.get("CELERY_WORKER_CONCURRENCY", "16")),
    "task_serializer": "json",
    "result_serializer": "json",
    "accept_content": ["json"],
    "task_ignore_result": True,
    # Every send_task reads the app's result backend, which Celery otherwise makes once per thread, and making one
    # scans every installed package's entry points. Django runs each ASGI request's sync code on a thread of its
    # own, so every round started from the API paid that scan before its message left. No result backend is
    # configured (the disabled one holds no connection), so one shared by all threads is safe.
    "result_backend_thread_safe": True,
    "task_soft_time_limit": CELERY_TASK_SOFT_TIME_LIMIT,
    "task_time_limit": CELERY_TASK_TIME_LIMIT,
    # polling_interval: how long a worker's wait for a message (Redis BRPOP) lasts before it asks again, 1 s by
    # default. A worker whose batch admission is full stops consuming the batch queue and starts again as soon as a
    # round leaves room (lab/jobs/batch.py), but the queue is listened to again only from the next wait: with 1 s,
    # one worker kept a connection of 100 half idle between waves (bench/bench_experiment_workers.py). An idle
    # worker asks Redis ten times a second instead of once.
    "broker_transport_options": {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT, "polling_interval": 0.1},
    "broker_connection_retry_on_startup": True,
    # A round in flight when the broker connection drops keeps streaming (the threads pool cannot stop it anyway);
    # its message goes back to the queue and the redelivery finds the round claimed (compare.rounds.worker.round_claim).
    # Celery 5.7.0 dies on that path (see requirements.txt), so it is pinned to 5.6.3.
    "worker_cancel_long_running_tasks_on_connection_loss": False,
    "worker_hijack_root_logger": False,
    "timezone": "UTC",
    # Two lanes (lab.jobs.kinds.Lane): a worker started without -Q serves both, interactive first.
    "task_queues": {"interactive": {}, "batch": {}},
    "task_default_queue": "interactive",
    # The jobs sweep runs in the beat process itself, so it bounds a dead worker's jobs with no worker alive.
    "beat_scheduler": "promptlab.beat:Scheduler",
    "beat_schedule": {
        "jobs-sweep": {"task": "lab.sweep_jobs", "schedule": float(JOBS_SWEEP_INTERVAL_S)},
        "lab-audit-prune": {"task": "lab.audit_prune", "schedule": 24 * 3600.0},
    },
}
# Embedded mode runs a worker thread in the web process; tests and management commands turn it off.
EMBEDDED_WORKER = RUN_MODE == "embedded" and env_bool("EMBEDDED_WORKER", True)

# --- Secrets at rest ---
# Comma-separated Fernet keys, newest first. Without any, a key is derived from SECRET_KEY so a fresh
# embedded lab still encrypts; production sets real keys (see .env.example).
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEYS")

# --- Provider keys that seed a new workspace's connections ---
PROVIDER_SEED = {
    "openai": os.environ.get("OPENAI_API_KEY", ""),
    "anthropic": os.environ.get("ANTHROPIC_API_KEY", ""),
    "openrouter": os.environ.get("OPENROUTER_API_KEY", ""),
    "gemini": os.environ.get("GEMINI_API_KEY", ""),
    "openai_compatible": os.environ.get("OPENAI_COMPATIBLE_BASE_URL", ""),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
