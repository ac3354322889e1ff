"""manage.py serve: prepare the stores (migrations under a lock, the party list),
then replace this process with the chosen server.

VOTING_SERVER=runserver is the study's way: Django's development server,
threaded (a thread per request), without the autoreloader. VOTING_SERVER=
gunicorn is a production WSGI server: GUNICORN_WORKERS processes of
GUNICORN_THREADS threads each (gthread workers)."""
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from ._startup import prepare_stores

SERVERS = ("runserver", "gunicorn")


def _count(name, default):
    raw = os.environ.get(name, default).strip()
    if not raw.isdigit() or int(raw) < 1:
        raise CommandError(f"{name}={raw!r} is not a whole number >= 1")
    return int(raw)


class Command(BaseCommand):
    help = "Prepare the stores, then serve on HOST:PORT with VOTING_SERVER (runserver or gunicorn)."

    def handle(self, *args, **options):
        server = os.environ.get("VOTING_SERVER", "runserver").strip()
        if server not in SERVERS:
            raise CommandError(f"VOTING_SERVER={server!r} is not a server; valid servers are: {', '.join(SERVERS)}")
        bind = f"{os.environ.get('HOST', '0.0.0.0')}:{_count('PORT', '8000')}"
        if server == "runserver":
            argv = [sys.executable, "manage.py", "runserver", bind, "--noreload"]
        else:
            argv = [
                sys.executable, "-m", "gunicorn", "voting_site.wsgi:application", "--bind", bind,
                "--worker-class", "gthread", "--workers", str(_count("GUNICORN_WORKERS", "1")),
                "--threads", str(_count("GUNICORN_THREADS", "4")), "--timeout", "60",
            ]
        prepare_stores(lambda text: self.stdout.write(text))
        self.stdout.write(f"serving with {' '.join(argv[1:])}")
        self.stdout.flush()
        # manage.py is beside the project package, gunicorn imports it from there
        os.chdir(os.path.dirname(os.path.abspath(sys.modules["voting_site"].__file__)) + "/..")
        os.execv(sys.executable, argv)
