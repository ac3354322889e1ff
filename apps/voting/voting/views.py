"""The study's five endpoints. Every answer is JSON; every refusal says why.

Status codes: 200 done, 400 a ballot or body the rules refuse (message
naming each field and value), 405 the wrong method, 503 a store that is not
there (or, in v0, no worker listening), 500 anything else, with its error."""
import json
import logging

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from . import stores, validation
from .stores.base import Unavailable

log = logging.getLogger("voting")


def _error(status, message, **extra):
    return JsonResponse({"status": "error", "message": message, **extra}, status=status)


def _only(method):
    """Refuse other methods with 405, and turn store failures into JSON errors."""

    def wrap(view):
        @csrf_exempt
        def handler(request):
            if request.method != method:
                return _error(405, f"{request.path} answers {method} only, not {request.method}")
            try:
                return view(request)
            except Unavailable as e:
                return _error(503, str(e))
            except Exception as e:  # a store's failure, reported rather than a debug page
                log.exception("%s %s failed", request.method, request.path)
                return _error(500, f"{type(e).__name__}: {e}")

        handler.__name__ = view.__name__
        return handler

    return wrap


@_only("POST")
def vote(request):
    try:
        data = json.loads(request.body)
    except ValueError as e:
        return _error(400, f"the request body is not JSON: {e}")
    try:
        ballot = validation.check(data)
        message = stores.current().record(ballot)
    except validation.Invalid as e:
        return _error(400, str(e), errors=e.errors)
    return JsonResponse({"status": "success", "message": message})


@_only("POST")
def clear_db(request):
    return JsonResponse({"status": "success", "message": stores.current().clear()})


def _read(name, compute):
    """The JSON of a read; in v4 from the process's cache while it is younger than VOTING_CACHE_SECONDS."""
    if settings.STORAGE_MODE != "v4":
        return HttpResponse(json.dumps(compute()), content_type="application/json")
    body = cache.get(name)
    if body is None:
        body = json.dumps(compute())
        cache.set(name, body, settings.VOTING_CACHE_SECONDS)
    return HttpResponse(body, content_type="application/json")


@_only("GET")
def see_all(request):
    return _read("see-all", stores.current().all_votes)


@_only("GET")
def see_cities(request):
    return _read("see-cities", stores.current().cities)


@_only("GET")
def health(request):
    """Healthy when the store answers (and, in v0, a worker listens); lists the parties it holds."""
    parties = stores.current().health()
    return JsonResponse({"status": "healthy", "storage_mode": settings.STORAGE_MODE, "parties": parties})
