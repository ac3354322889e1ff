"""One redis-py client per process (its connection pool is thread-safe)."""
import threading

import redis
from django.conf import settings

_lock = threading.Lock()
_client = None


def client():
    global _client
    with _lock:
        if _client is None:
            _client = redis.Redis(socket_timeout=30, socket_connect_timeout=10, **settings.REDIS)
        return _client
