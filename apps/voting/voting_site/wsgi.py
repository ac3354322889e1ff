"""The WSGI application gunicorn serves (the `gunicorn` server of the pack)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voting_site.settings")
application = get_wsgi_application()
