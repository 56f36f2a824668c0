"""Settings, all driven by the environment so that one file serves development, CI and production."""

import datetime
import json
import os
import sys
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from casino.ops.errors import sentry_init
from casino.ops.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default=""):
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# The test suite runs with DEBUG off (as Django forces it) but needs no production secrets.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not (DEBUG or TESTING):
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # Development and tests only: a fixed key is acceptable there, never in production.
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" if (DEBUG or TESTING) else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# Personal signing keys (WebAuthn, R28). The RP id is the site's domain and the origins the addresses the browser
# shows; a key enrolled under one RP id signs under that id only. A browser accepts no IP address as RP id: the
# development server is reached at http://localhost:$PORT for passkeys.
WEBAUTHN_RP_ID = os.environ.get("WEBAUTHN_RP_ID", "localhost" if (DEBUG or TESTING) else "")
WEBAUTHN_ORIGINS = env_list(
    "WEBAUTHN_ORIGIN",
    f"http://localhost:{os.environ.get('PORT', '8000')}" if (DEBUG or TESTING) else "",
)
WEBAUTHN_RP_NAME = os.environ.get("WEBAUTHN_RP_NAME", "Registre des jeux de boule et de vingt-trois")

INSTALLED_APPS = [
    # django.contrib.admin with a site behind the second factor and without the account admins (R28, R29).
    "casino.admin_apps.CasinoAdminConfig",
    # Before django.contrib.auth: the first app wins a management command's name, and the accounts' `changepassword`
    # sets no casino person's password (R28, casino/accounts/management/commands/changepassword.py).
    "casino.accounts.apps.AccountCommandsConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # htmx served from its own static files (django_htmx/htmx-2.min.js), never a CDN: the CSP allows 'self' only.
    "django_htmx",
    "rest_framework",
    # API tokens hashed at rest, with an expiry (rest_framework.authtoken is gone: its tokens never expired).
    "knox",
    # The templates of the API filters' form in the browsable API.
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_celery_beat",
    "health_check",
    "casino",
    "tables",
    "seances.apps.SeancesConfig",
    "cashbox",
    "books",
    # Above the apps: the director's home and the floor read every one of them.
    "floor",
]

MIDDLEWARE = [
    # First: every line logged while a request runs carries its id, and the response says it (casino/ops).
    "casino.ops.request_id.RequestIdMiddleware",
    "casino.ops.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Outside the view's transaction: writes the failed secrets a refused request rolled back (casino.accounts.security).
    "casino.accounts.security.LockoutMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # request.htmx: the floor answers its own polling with the live part of the page only.
    "django_htmx.middleware.HtmxMiddleware",
    "casino.accounts.security.SessionLimitsMiddleware",
    "casino.accounts.security.TwoFactorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "casino.web.middleware.RefusalJournalMiddleware",
    # Inside the refusals' journal, before anything reads a page form's fields (the one-time token first).
    "casino.web.middleware.NulByteMiddleware",
    # A page form that dates an act is refused before its view reads it (R30).
    "casino.web.middleware.ActTimeMiddleware",
    # After authentication and messages: a page form's one-time token is checked before its view writes.
    "casino.web.form_tokens.FormTokenMiddleware",
    "casino.accounts.security.SecurityHeadersMiddleware",
    # Last, as django-axes asks: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]
if DEBUG:
    # The demo shows the site's French 404 and 500 pages, not Django's technical ones (outermost: it sees the final
    # response).
    MIDDLEWARE.insert(1, "casino.web.errors.FrenchErrorPagesMiddleware")

AUTHENTICATION_BACKENDS = ["casino.accounts.auth.AxesBackend", "django.contrib.auth.backends.ModelBackend"]

ROOT_URLCONF = "casino.urls"
WSGI_APPLICATION = "casino.wsgi.application"

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
                "casino.web.context_processors.role",
            ],
            # {% form_token %} in every page form, without a {% load %} in each template.
            "builtins": ["casino.templatetags.form_tokens"],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
        # A kept connection is checked before a request reuses it: a database restart costs no failed request.
        conn_health_checks=True,
    )
}
# Every request is one transaction: a refusal half-way through a view writes nothing.
DATABASES["default"]["ATOMIC_REQUESTS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite fires no DELETE trigger for the rows a REPLACE (INSERT OR REPLACE) removes unless recursive triggers are
    # on: without this, `REPLACE INTO cashbox_controlregister …` rewrote a signed register past every guard (R23).
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = "PRAGMA recursive_triggers = ON;"
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # No JIT compilation: PostgreSQL compiles any query its planner costs above jit_above_cost, and the reports that
    # cross that line (a year's roster report, a season's carnet) run in tens of milliseconds, less than the
    # compilation itself (35 ms of the roster report's 106 ms at ten seasons, bench/ten_seasons.py).
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
    if TESTING:
        # A test database is thrown away: its commits (transactional tests, the flushes after them, the row-lock
        # races) need not wait for the disk. Never outside the tests.
        DATABASES["default"]["OPTIONS"]["options"] += " -c synchronous_commit=off"
if os.environ.get("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Argon2id first (casino/accounts/hashers.py, sized in docs/security.md); the others only read the hashes made before,
# which are re-made with Argon2id at the next successful login.
PASSWORD_HASHERS = [
    "casino.accounts.hashers.Argon2idPasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
if TESTING:
    # Hashing cost is not what the tests measure.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# One language, French, the language of the books (docs/architecture.md, « One language »): no LocaleMiddleware to
# negotiate another; Django's own messages (forms, admin, dates) come from its French catalogue through USE_I18N.
LANGUAGE_CODE = "fr"
LANGUAGES = [("fr", "Français")]
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True
LOCALE_PATHS = [BASE_DIR / "locale"]

# Signed exports for the regulator (R23): built by a Celery task, served to the requester only.
EXPORT_ROOT = Path(os.environ.get("EXPORT_ROOT", BASE_DIR / "exports"))
# The casinos' private signing keys (R23): one PEM file per casino, never in the database (casino/audit/signing.py);
# CASINO_SIGNING_KEY_<casino id> in the environment takes precedence. AUTOCREATE: a missing key is created on first
# need (demo and tests only).
CASINO_SIGNING_KEY_DIR = Path(os.environ.get("CASINO_SIGNING_KEY_DIR", BASE_DIR / "keys"))
CASINO_SIGNING_KEY_AUTOCREATE = env_bool("CASINO_SIGNING_KEY_AUTOCREATE", DEBUG)

# Static files ------------------------------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Production serves hashed, compressed copies (whitenoise; built by collectstatic in the image), cached for a year
# and renamed when they change. A developer (DEBUG) and the test suite, which run no collectstatic, use the plain
# files: the manifest storage refuses to render a page whose file it has not hashed.
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", not (DEBUG or TESTING))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
    # The regulator's export packages (casino/exports/storage.py): the local disk under EXPORT_ROOT, or the storage
    # EXPORT_STORAGE_BACKEND names (django-storages' S3, say) with the options of EXPORT_STORAGE_OPTIONS (JSON).
    "exports": {
        "BACKEND": os.environ.get("EXPORT_STORAGE_BACKEND") or "casino.exports.storage.LocalExportStorage",
        "OPTIONS": json.loads(os.environ.get("EXPORT_STORAGE_OPTIONS") or "{}"),
    },
}
# End of the static block.

# The anchors bucket (R23, casino/audit/anchor_bucket.py): an S3-compatible bucket created with Object Lock, where each
# day's seals file is also written in compliance mode, a new version at each write. Optional: without
# ANCHORS_S3_BUCKET the seals files are kept in the export storage only. The credentials are boto3's own
# (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the instance's role); ANCHORS_S3_OPTIONS (JSON) adds options of
# django-storages' S3 backend.
ANCHORS_S3_BUCKET = os.environ.get("ANCHORS_S3_BUCKET", "")
# The seals files are locked until the end of the tenth season after the one they are written in (DOMAIN.md R23:
# records are kept for the current season and the ten previous ones).
ANCHORS_RETENTION_SEASONS = int(os.environ.get("ANCHORS_RETENTION_SEASONS") or 10)
if ANCHORS_RETENTION_SEASONS < 10:
    raise ImproperlyConfigured("ANCHORS_RETENTION_SEASONS: at least the ten previous seasons (R23).")
if ANCHORS_S3_BUCKET:
    STORAGES["anchors"] = {
        "BACKEND": "casino.audit.anchor_bucket.ObjectLockS3Storage",
        "OPTIONS": {
            "bucket_name": ANCHORS_S3_BUCKET,
            "endpoint_url": os.environ.get("ANCHORS_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("ANCHORS_S3_REGION") or None,
            "location": os.environ.get("ANCHORS_S3_PREFIX", ""),
            "retention_seasons": ANCHORS_RETENTION_SEASONS,
            **json.loads(os.environ.get("ANCHORS_S3_OPTIONS") or "{}"),
        },
    }

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    # The token first: DRF answers 401 (with WWW-Authenticate: Token) when the first authenticator names a scheme,
    # so a bad or expired token, or none, is 401 and not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "casino.accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["casino.accounts.permissions.RolePermission"],
    "DEFAULT_SCHEMA_CLASS": "casino.web.schema.AutoSchema",
    # JSON nested past a limit is a 400, not a RecursionError (500); a body that dates an act is a 400 (R30).
    "DEFAULT_PARSER_CLASSES": [
        "casino.web.parsers.DepthLimitedJSONParser",
        "casino.web.parsers.ActTimeRefusingFormParser",
        "casino.web.parsers.ActTimeRefusingMultiPartParser",
    ],
    # Per user on every API view; the token endpoint adds a stricter limit per client address. The rates are in
    # casino/accounts/throttling.py; the counts in the shared cache below.
    "DEFAULT_THROTTLE_CLASSES": ["casino.accounts.throttling.UserBurstThrottle"],
    "EXCEPTION_HANDLER": "casino.web.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "COERCE_DECIMAL_TO_STRING": True,
}

# One cache shared by every worker, for the API throttles: the database (table created by a migration of `casino`),
# or Redis when CACHE_URL names one. The test suite keeps per-process memory so that tests without a database can
# run; tests/accounts/test_throttling.py runs the throttles on the database cache.
CACHE_TABLE = "casino_cache"
if os.environ.get("CACHE_URL", "").startswith(("redis://", "rediss://")):
    # Short timeouts: a Redis that does not answer must not hold every API request (the throttles then fail open,
    # casino/accounts/throttling.py); on the same network it answers in a millisecond.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["CACHE_URL"],
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
elif TESTING:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}}
# A running task's live progress (casino/exports/progress.py): written by the worker outside its database transaction
# (a build's snapshot would hide it until the end), read by the page that follows the export. Redis when CACHE_URL
# names one, so that the web processes read what the worker writes; else the process's memory, which the demo's tasks
# run in (TASKS_IN_THREADS) share with its pages.
CACHES["progress"] = (
    {**CACHES["default"], "KEY_PREFIX": "progress"}
    if CACHES["default"]["BACKEND"].endswith("RedisCache")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "progress"}
)

# API tokens (django-rest-knox): hashed at rest, valid API_TOKEN_HOURS (12 at most, like a session), ended by a
# password change, a deactivation or a role change (casino.accounts.security), listed and revoked at /compte/jetons/.
API_TOKEN_HOURS = min(int(os.environ.get("API_TOKEN_HOURS", "12")), 12)
REST_KNOX = {
    "TOKEN_TTL": datetime.timedelta(hours=API_TOKEN_HOURS),
    "AUTO_REFRESH": False,
    "AUTH_HEADER_PREFIX": "Token",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Back office boule et vingt-trois",
    "DESCRIPTION": "API du registre, des séances et des caisses (arrêté du 14 mai 2007).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # One tag per resource (advances, counts, seances…): the first path segment after the version.
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Served from the app itself: no CDN needed on the casino's network.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "casino.models.Role",
        "CashboxKindEnum": "tables.models.Cashbox.Kind",
        "InterruptionKindEnum": "cashbox.models.Interruption.Kind",
    },
}

# Celery ------------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
# Without a broker, tasks run in-process and their errors propagate to the caller: for a developer (DEBUG) and the
# test suite only. In production that would build exports inside web requests and never run the nightly checks,
# so the process refuses to start instead.
if not CELERY_BROKER_URL and not (DEBUG or TESTING):
    raise ImproperlyConfigured("CELERY_BROKER_URL must be set when DEBUG is off (e.g. redis://redis:6379/0).")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# The demo (`make run`: DEBUG, no broker) runs the long tasks (the export build, `runs_long` in casino/tasks.py) in a
# thread of its own process instead of inside the request, so that the export's page watches its progress as it would
# a worker's (casino/ops/tasks_in_threads.py); the short ones stay eager. Never in production (a broker is required)
# nor in the test suite, whose tests turn it on where they watch a build.
TASKS_IN_THREADS = env_bool("TASKS_IN_THREADS", DEBUG and not TESTING) and not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged once it has run, and handed back to the broker when its worker dies: a lost worker
# delays a task, it does not lose it. Every task is idempotent (an export is taken by one delivery, an alert is
# raised once per key), so a second delivery is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Defaults for every task; the export build declares longer ones (casino.tasks).
CELERY_TASK_SOFT_TIME_LIMIT = 5 * 60
CELERY_TASK_TIME_LIMIT = 6 * 60
# Redis hands an unacknowledged task to another worker after this delay: longer than the longest task (the export
# build's hard limit), or a slow build would run twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 60 * 60}
CELERY_RESULT_EXPIRES = 24 * 60 * 60
# The schedule lives in the database (django-celery-beat): a restart of beat neither forgets when a task last ran
# nor pushes the nightly checks back a day. The entries below are written into it when beat starts.
# "expire_seconds" is django-celery-beat's spelling of a relative `expires`: a run not started by then is dropped.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE = {
    # Nightly, at fixed hours of Europe/Paris (CELERY_TIMEZONE), after the last gaming day has closed.
    "check-approvals-nightly": {
        "task": "casino.tasks.check_approvals",
        "schedule": crontab(minute=0, hour=6),
        "options": {"expire_seconds": 60 * 60},
    },
    "verify-journal-nightly": {
        "task": "casino.tasks.verify_journal",
        "schedule": crontab(minute=30, hour=6),
        "options": {"expire_seconds": 60 * 60},
    },
    # A short interruption past its limit must reach the floor within a minute (R18); a run that waited longer
    # than the next one is dropped rather than piled up.
    "check-short-interruptions": {
        "task": "cashbox.tasks.check_short_interruptions",
        "schedule": crontab(),
        "options": {"expire_seconds": 50},
    },
    "check-control-registers": {
        "task": "cashbox.tasks.check_control_registers",
        "schedule": crontab(minute="*/5"),
        "options": {"expire_seconds": 4 * 60},
    },
    # A lost build is found within EXPORT_LOST_MINUTES and a minute.
    "sweep-stuck-exports": {
        "task": "casino.tasks.sweep_stuck_exports",
        "schedule": crontab(),
        "options": {"expire_seconds": 50},
    },
    # Keys kept IDEMPOTENCY_KEY_DAYS are pruned every hour.
    "prune-idempotency-keys": {
        "task": "casino.tasks.prune_idempotency_keys",
        "schedule": crontab(minute=15),
        "options": {"expire_seconds": 30 * 60},
    },
    # A gaming day ends at the casino's own hour: every quarter of an hour, each casino whose day has ended since
    # its last seal gets its journal head sealed (R23).
    "seal-gaming-days": {
        "task": "casino.tasks.seal_gaming_days",
        "schedule": crontab(minute="*/15"),
        "options": {"expire_seconds": 10 * 60},
    },
    # The registre d'observations' 8-day deadlines are days: hourly is enough (R27).
    "check-observations": {
        "task": "books.tasks.check_observations",
        "schedule": crontab(minute=5),
        "options": {"expire_seconds": 30 * 60},
    },
    # The situation mensuelle is due before the 5th: checked hourly, alerting from the 3rd (R26).
    "check-monthly-statements": {
        "task": "books.tasks.check_monthly_statements",
        "schedule": crontab(minute=10),
        "options": {"expire_seconds": 30 * 60},
    },
}
# Idempotency keys and one-time form tokens are kept this long: a retry comes within minutes, not days.
IDEMPOTENCY_KEY_DAYS = int(os.environ.get("IDEMPOTENCY_KEY_DAYS", "2"))
# A running build writes a sign of life every EXPORT_HEARTBEAT_SECONDS (casino/exports/build.py, Heartbeat). One
# silent for EXPORT_LOST_MINUTES has lost its worker (killed, out of memory, its host gone): the sweeper, every
# minute, marks it failed and relaunches it, up to EXPORT_AUTO_RELAUNCHES times in a row.
EXPORT_HEARTBEAT_SECONDS = int(os.environ.get("EXPORT_HEARTBEAT_SECONDS", "30"))
EXPORT_LOST_MINUTES = int(os.environ.get("EXPORT_LOST_MINUTES", "3"))
EXPORT_AUTO_RELAUNCHES = int(os.environ.get("EXPORT_AUTO_RELAUNCHES", "2"))
# An export pending this long is queued again (a second delivery of a queued build does nothing); pending after
# EXPORT_STUCK_MINUTES, no worker ever took it: the sweeper marks it failed and the regulator may relaunch it.
EXPORT_REQUEUE_MINUTES = int(os.environ.get("EXPORT_REQUEUE_MINUTES", "5"))
EXPORT_STUCK_MINUTES = int(os.environ.get("EXPORT_STUCK_MINUTES", "60"))
# End of the Celery block.

# Health (/sante/, casino.ops.health) ---------------------------------------------------------------------------------
# Below this many megabytes free under EXPORT_ROOT, /sante/ answers 500: the next export could not be written.
HEALTH_MIN_FREE_MB = int(os.environ.get("HEALTH_MIN_FREE_MB", "500"))
HEALTH_CELERY_TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("HEALTH_CELERY_TIMEOUT", "3")))
# The container's health check calls gunicorn directly, over plain HTTP: /sante/ answers it instead of redirecting.
SECURE_REDIRECT_EXEMPT = [r"^sante/$"]
# End of the health block.

# History is read, never reverted: a revert would rewrite what is recorded (R23).
SIMPLE_HISTORY_REVERT_DISABLED = True

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY") else None
# Production defaults; a developer's http://127.0.0.1 (DEBUG) and the test suite turn them off.
PRODUCTION = not (DEBUG or TESTING)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SECURE_HSTS_SECONDS = 31_536_000 if env_bool("HSTS", PRODUCTION) else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if SESSION_COOKIE_SECURE:
    # __Host- cookies: sent only over HTTPS, to this host, for the whole path; a subdomain cannot plant them.
    SESSION_COOKIE_NAME = "__Host-sessionid"
    CSRF_COOKIE_NAME = "__Host-csrftoken"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
# A shared tablet: 15 minutes without activity end the session, and 12 hours at most after login.
SESSION_IDLE_SECONDS = int(os.environ.get("SESSION_IDLE_SECONDS", 15 * 60))
SESSION_MAX_SECONDS = 12 * 60 * 60
SESSION_COOKIE_AGE = SESSION_MAX_SECONDS
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
# The demo's build thread (TASKS_IN_THREADS) holds SQLite's one write lock from the export's seal to its end, and every
# page saves its session (its last activity, above): on SQLite the demo keeps its sessions in signed cookies, so that
# the pages that follow an export, and any other page, read on while it is built. PostgreSQL and production keep them
# in the database.
if TASKS_IN_THREADS and DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; form-action 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

# One lockout for every secret (login page, token endpoint, every signature): five failures lock the username and
# address pair for 15 minutes (django-axes). The failures are written after the request's transaction, which a
# refusal rolls back (casino.accounts.security.DeferredFailureHandler).
AXES_HANDLER = "casino.accounts.security.DeferredFailureHandler"
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_MINUTES = 15
AXES_COOLOFF_TIME = datetime.timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
AXES_RESET_ON_SUCCESS = True
# A refused attempt during the lockout neither extends it nor counts again; the refusal is marked on the request at
# once (axes' middleware shows the lockout page) instead of when the deferred failure is written.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# The client address is the one the trusted proxy reports (casino.accounts.security.client_address): how many proxies stand
# in front of the application, and from which addresses they connect. A header from any other peer is ignored.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "1" if SECURE_PROXY_SSL_HEADER else "0"))
TRUSTED_PROXY_ADDRESSES = env_list("TRUSTED_PROXY_ADDRESSES", "127.0.0.1/32,::1/128,172.16.0.0/12")
AXES_CLIENT_IP_CALLABLE = "casino.accounts.security.client_address"
# The same count for django-ipware, should it be installed (the callable above takes precedence in axes).
AXES_IPWARE_PROXY_COUNT = TRUSTED_PROXY_COUNT
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_VERBOSE = False
# Successful logins go to the security log (casino.accounts.security); axes keeps only the failures it counts.
AXES_DISABLE_ACCESS_LOG = True

# Second factor (TOTP) for the roles that sign or inspect; off in demo mode (DEBUG) so the demo logins work.
REQUIRE_2FA = env_bool("REQUIRE_2FA", PRODUCTION)
TWO_FACTOR_ROLES = {"directeur", "codir", "controleur"}
OTP_TOTP_ISSUER = "Boule et vingt-trois"
# R28: how long an activation code (with which a person sets their own password) stays usable.
ACTIVATION_CODE_HOURS = int(os.environ.get("ACTIVATION_CODE_HOURS", "72"))

# Logging -----------------------------------------------------------------------------------------------------
# Every line is one JSON object with one schema (casino/ops/logs.py), the security log included.
# The demo's console reads as text (one line per request); production, and LOG_FORMAT=json, write JSON lines.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text" if DEBUG and not TESTING else "json")
LOGGING = logging_config(os.environ.get("LOG_LEVEL", "INFO"), readable=LOG_FORMAT == "text")
# The worker and beat keep this configuration rather than Celery's own text format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# End of the logging block.

# Observability (docs/operations.md « Metrics, errors, request ids ») ------------------------------------------
# /metrics/ answers only a bearer of this token (Prometheus' `authorization` setting); without it, 404.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# Errors to Sentry when SENTRY_DSN is set: Django's and Celery's, with no personal data (no user, cookie, address,
# request body), tagged with the request id.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
if SENTRY_DSN:
    sentry_init(SENTRY_DSN, os.environ.get("SENTRY_ENVIRONMENT", "production"))
