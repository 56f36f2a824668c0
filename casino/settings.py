"""Settings, all driven by the environment so that one file serves development, CI and production."""

import datetime
import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

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

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "casino",
    "tables",
    "sessions.apps.SeancesConfig",
    "cashbox",
    "books",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "casino.security.SessionLimitsMiddleware",
    "casino.security.TwoFactorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "casino.middleware.RefusalJournalMiddleware",
    "casino.security.SecurityHeadersMiddleware",
    # Last, as django-axes asks: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = ["casino.auth.AxesBackend", "django.contrib.auth.backends.ModelBackend"]

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
                "casino.context_processors.role",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
    )
}
# Every request is one transaction: a refusal half-way through a view writes nothing.
DATABASES["default"]["ATOMIC_REQUESTS"] = True
if os.environ.get("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

if TESTING:
    # Hashing cost is not what the tests measure.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LANGUAGE_CODE = "fr"
LANGUAGES = [("fr", "Français")]
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True
LOCALE_PATHS = [BASE_DIR / "locale"]

# Signed exports for the regulator (R23): built by a Celery task, served to the requester only.
EXPORT_ROOT = Path(os.environ.get("EXPORT_ROOT", BASE_DIR / "exports"))

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["casino.permissions.RolePermission"],
    "DEFAULT_SCHEMA_CLASS": "casino.schema.AutoSchema",
    # Per user on every API view; the token endpoint adds a stricter limit per address.
    "DEFAULT_THROTTLE_CLASSES": ["casino.throttling.UserBurstThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": "20/minute"},
    "EXCEPTION_HANDLER": "casino.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "COERCE_DECIMAL_TO_STRING": True,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Back office boule et vingt-trois",
    "DESCRIPTION": "API du registre, des séances et des caisses (arrêté du 14 mai 2007).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
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

# Celery: without a broker, tasks run in-process and their errors propagate to the caller.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or None)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE = {
    "check-approvals-nightly": {"task": "casino.tasks.check_approvals", "schedule": 24 * 60 * 60},
    # A short interruption past its limit must reach the floor within a minute (R18).
    "check-short-interruptions": {"task": "cashbox.tasks.check_short_interruptions", "schedule": 60},
    "check-control-registers": {"task": "cashbox.tasks.check_control_registers", "schedule": 5 * 60},
    "verify-journal-nightly": {"task": "casino.tasks.verify_journal", "schedule": 24 * 60 * 60},
    # The registre d'observations' 8-day deadlines are days: hourly is enough (R27).
    "check-observations": {"task": "books.tasks.check_observations", "schedule": 60 * 60},
    # The situation mensuelle is due before the 5th: checked hourly, alerting from the 3rd (R26).
    "check-monthly-statements": {"task": "books.tasks.check_monthly_statements", "schedule": 60 * 60},
}
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
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; form-action 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

# Login: five failures lock the username and address pair for 15 minutes (django-axes).
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_MINUTES = 15
AXES_COOLOFF_TIME = datetime.timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
AXES_RESET_ON_SUCCESS = True
AXES_IPWARE_PROXY_COUNT = 1 if SECURE_PROXY_SSL_HEADER else 0
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_VERBOSE = False
# Successful logins go to the security log (casino.security); axes keeps only the failures it counts.
AXES_DISABLE_ACCESS_LOG = True

# Second factor (TOTP) for the roles that sign or inspect; off in demo mode (DEBUG) so the demo logins work.
REQUIRE_2FA = env_bool("REQUIRE_2FA", PRODUCTION)
TWO_FACTOR_ROLES = {"directeur", "codir", "controleur"}
OTP_TOTP_ISSUER = "Boule et vingt-trois"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # One JSON line per login, failure, lockout, 403 and expiry (casino.security.log_event).
    "loggers": {"casino.security": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
