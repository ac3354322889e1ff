"""Settings of the voting app, all from the environment.

The storage mode decides which stores exist: PostgreSQL for v0 (the
worker's writes and the reads), v1 and v2; Redis for v0 (the channel), v3
and v4. A value that does not parse stops the app at start with a message
naming the variable, never a silent default.
"""
import os

from django.core.exceptions import ImproperlyConfigured

MODES = ("v0", "v1", "v2", "v3", "v4")
POSTGRES_MODES = ("v0", "v1", "v2")
REDIS_MODES = ("v0", "v3", "v4")


def _env(name, default):
    return os.environ.get(name, default).strip()


def _flag(name, default):
    raw = _env(name, default).lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (true/false, 1/0)")


def _addr(name, default):
    raw = _env(name, default)
    host, sep, port = raw.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ImproperlyConfigured(f"{name}={raw!r} is not host:port")
    return host, int(port)


def _seconds(name, default):
    raw = _env(name, default)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number of seconds > 0")
    return value


STORAGE_MODE = _env("STORAGE_MODE", "v2")
if STORAGE_MODE not in MODES:
    raise ImproperlyConfigured(f"STORAGE_MODE={STORAGE_MODE!r} is not a storage mode; valid modes are: {', '.join(MODES)}")

# The parties a vote may name; the study seeded party1..party6 into its
# party table, and so do we (into the table, or a Redis set for v3/v4).
VOTING_PARTIES = [p.strip() for p in _env("VOTING_PARTIES", "party1,party2,party3,party4,party5,party6").split(",") if p.strip()]
if not VOTING_PARTIES or any(len(p) > 100 for p in VOTING_PARTIES):
    raise ImproperlyConfigured("VOTING_PARTIES must name at least one party, each at most 100 characters, separated by commas")

# v4's cache of the two GETs; the study's was 60 s, tests shorten it.
VOTING_CACHE_SECONDS = _seconds("VOTING_CACHE_SECONDS", "60")
# v0's Redis pub/sub channel.
VOTING_CHANNEL = _env("VOTING_CHANNEL", "votes")
# How long start-up waits for the stores to answer (they may still be starting).
VOTING_WAIT_SECONDS = _seconds("VOTING_WAIT_SECONDS", "120")

POSTGRES = None
if STORAGE_MODE in POSTGRES_MODES:
    _pg_host, _pg_port = _addr("POSTGRES_ADDR", "127.0.0.1:5432")
    POSTGRES = {
        "host": _pg_host,
        "port": _pg_port,
        "dbname": _env("POSTGRES_DB", "voting"),
        "user": _env("POSTGRES_USER", "voting"),
        "password": os.environ.get("POSTGRES_PASSWORD", "voting"),
        "connect_timeout": 10,
    }
REDIS = None
if STORAGE_MODE in REDIS_MODES:
    _redis_host, _redis_port = _addr("REDIS_ADDR", "127.0.0.1:6379")
    REDIS = {"host": _redis_host, "port": _redis_port, "db": 0}

# The study ran runserver with DEBUG = True. With DEBUG, Django records every
# SQL query of a connection, but in a deque of at most queries_limit (9000)
# entries that its request_started handler empties at every request, so the
# log never outgrows one request's queries; the v0 worker, the one process
# without requests, writes through its own psycopg2 connection, not
# Django's. The pack turns DEBUG off for gunicorn.
DEBUG = _flag("DJANGO_DEBUG", "true")
# Nothing the app serves is signed: sessions and CSRF are unused.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "orchbench-voting-benchmark-key-not-a-secret")
ALLOWED_HOSTS = ["*"]

# The study's app list and middleware (Django's project template), so a
# request passes the same layers it did there.
INSTALLED_APPS = [
    "voting",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "voting_site.urls"
WSGI_APPLICATION = "voting_site.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# v3 and v4 keep nothing in SQL: without a database Django's dummy backend
# refuses any query, so an accidental one fails loudly.
DATABASES = {}
if POSTGRES is not None:
    DATABASES["default"] = {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": POSTGRES["host"],
        "PORT": str(POSTGRES["port"]),
        "NAME": POSTGRES["dbname"],
        "USER": POSTGRES["user"],
        "PASSWORD": POSTGRES["password"],
        # the study's default: a new connection for every request
        "CONN_MAX_AGE": 0,
        "OPTIONS": {"connect_timeout": 10},
    }

# v4's cache lives in each process, as Django's default cache does: every
# replica (and every gunicorn worker) caches on its own.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "voting"}}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
